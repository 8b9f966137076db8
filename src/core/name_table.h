/* An enum's names as a table indexed by its values, looked up both ways. */
#pragma once

#include <stddef.h>

/* names[v] when 0 <= v < count; NULL otherwise (and for a value the table leaves out). */
const char *name_table_name(const char *const *names, size_t count, int v);
/* The value whose name is name; -1 when none is (name NULL included). */
int name_table_value(const char *const *names, size_t count, const char *name);
