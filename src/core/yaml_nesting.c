#include "core/yaml_nesting.h"
#include "core/yaml_lib.h"

#include <errno.h>
#include <stdbool.h>

int yaml_nesting_check(const struct yaml_lib *y, const char *buf, size_t len, unsigned max, unsigned long *line) {
        yaml_parser_t parser;
        if (!y->yaml_parser_initialize(&parser))
                return -ENOMEM;
        y->yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
        unsigned depth = 0;
        int r = 0;
        for (bool done = false; !done;) {
                yaml_event_t ev;
                if (!y->yaml_parser_parse(&parser, &ev)) {
                        if (parser.error == YAML_MEMORY_ERROR)
                                r = -ENOMEM;
                        break;
                }
                switch (ev.type) {
                case YAML_SEQUENCE_START_EVENT:
                case YAML_MAPPING_START_EVENT:
                        if (++depth > max) {
                                *line = (unsigned long)ev.start_mark.line + 1;
                                r = -E2BIG;
                                done = true;
                        }
                        break;
                case YAML_SEQUENCE_END_EVENT:
                case YAML_MAPPING_END_EVENT:
                        if (depth > 0)
                                depth--;
                        break;
                case YAML_STREAM_END_EVENT: done = true; break;
                default: break;
                }
                y->yaml_event_delete(&ev);
        }
        y->yaml_parser_delete(&parser);
        return r;
}
