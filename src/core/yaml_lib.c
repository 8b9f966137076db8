/* libyaml at run time (yaml_lib.h). */
#include "core/yaml_lib.h"

#include "core/array.h"
#include "core/dynlib.h"

const struct yaml_lib *yaml_lib_load(char *err, size_t errsize) {
        static const char *const sonames[] = {"libyaml-0.so.2"};
        static const struct dynlib_fn fns[] = {
#define YAML_ENTRY(f) {#f, NULL, true, offsetof(struct yaml_lib, f)},
                YAML_FUNCTIONS(YAML_ENTRY)
#undef YAML_ENTRY
        };
        static struct dynlib lib;
        static struct yaml_lib yaml;
        if (dynlib_load_once(sonames, ARRAY_COUNT(sonames), fns, ARRAY_COUNT(fns), &yaml, &lib,
                             "reading YAML needs libyaml (Debian/Ubuntu: apt install libyaml-0-2; RHEL/Fedora: "
                             "dnf install libyaml)",
                             err, errsize) < 0)
                return NULL;
        return &yaml;
}
