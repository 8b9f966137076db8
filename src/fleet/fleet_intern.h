/* Interning strings as small numbers, so that hundreds of thousands of figures sort and
 * group by metric and model without comparing strings. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct fleet_intern {
        const char **keys; /* by id; the strings are the caller's and must outlive the table */
        size_t n, cap;
        uint32_t *slots; /* id + 1, 0 for empty */
        size_t n_slots;
};

/* The id of key (0, 1, ... in order of first sight), added if new; -ENOMEM. */
long fleet_intern_id(struct fleet_intern *t, const char *key);
void fleet_intern_free(struct fleet_intern *t);
