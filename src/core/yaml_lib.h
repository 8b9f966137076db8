/* libyaml, loaded when a YAML file is first read rather than linked: only a site policy and
 * serve's web config are YAML, and linked, the library's mapping and relocation cost every
 * command at start-up (docs/perf.md "Issue 41: start-up"). <yaml.h> gives the types; the
 * functions come from the library through core/dynlib.h. */
#pragma once

#include <stddef.h>

#include <yaml.h>

#define YAML_FUNCTIONS(X)                                                                                     \
        X(yaml_parser_initialize) X(yaml_parser_set_input_string) X(yaml_parser_parse) X(yaml_parser_load)      \
        X(yaml_parser_delete) X(yaml_event_delete) X(yaml_document_get_root_node) X(yaml_document_get_node)    \
        X(yaml_document_delete)

struct yaml_lib {
#define YAML_MEMBER(f) __typeof__(&f) f;
        YAML_FUNCTIONS(YAML_MEMBER)
#undef YAML_MEMBER
};

/* Load libyaml-0.so.2 once; main thread only. Returns the table, or NULL with err naming
 * the library, why, and the package that installs it. */
const struct yaml_lib *yaml_lib_load(char *err, size_t errsize);
