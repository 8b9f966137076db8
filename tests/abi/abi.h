/* The ABI test: the same list of items (abi_items.def) evaluated once against our
 * declarations (abi_ours.c) and once against the official nvml.h (abi_official.c);
 * abi_main.c compares the two tables. */
#pragma once

#include <stddef.h>

struct abi_row {
        const char *name;
        long long value;
};

extern const struct abi_row abi_ours[];
extern const size_t abi_ours_count;
extern const struct abi_row abi_official[];
extern const size_t abi_official_count;

/* An integer type as a number, so a field or constant that changes signedness or width
 * shows up (0: not an integer, e.g. an array or pointer, whose size is compared instead). */
#define ABI_TYPE_CODE(x)                                                                                     \
        _Generic((x),                                                                                        \
                char: 1,                                                                                     \
                signed char: 2,                                                                              \
                unsigned char: 3,                                                                            \
                short: 4,                                                                                    \
                unsigned short: 5,                                                                           \
                int: 6,                                                                                      \
                unsigned int: 7,                                                                             \
                long: 8,                                                                                     \
                unsigned long: 9,                                                                            \
                long long: 10,                                                                               \
                unsigned long long: 11,                                                                      \
                default: 0)

/* Both tables are built from these, so a row means the same thing in each. */
#define ABI_ENUM(n) {#n, (long long)(n)},
#define ABI_DEFINE(n) {#n, (long long)(n)}, {"type(" #n ")", ABI_TYPE_CODE(n)},
#define ABI_SIZE(t) {"sizeof(" #t ")", (long long)sizeof(t)},
#define ABI_SCALAR(t) ABI_SIZE(t){"type(" #t ")", ABI_TYPE_CODE((t)0)},
#define ABI_OFFSET(t, f)                                                                                     \
        {"offsetof(" #t ", " #f ")", (long long)offsetof(t, f)},                                             \
                {"sizeof(" #t "." #f ")", (long long)sizeof(((t *)0)->f)},                                   \
                {"type(" #t "." #f ")", ABI_TYPE_CODE(((t *)0)->f)},

