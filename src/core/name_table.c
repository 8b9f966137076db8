#include "core/name_table.h"

#include <string.h>

const char *name_table_name(const char *const *names, size_t count, int v) {
        return v >= 0 && (size_t)v < count ? names[v] : NULL;
}

int name_table_value(const char *const *names, size_t count, const char *name) {
        for (size_t v = 0; name && v < count; v++)
                if (names[v] && strcmp(names[v], name) == 0)
                        return (int)v;
        return -1;
}
