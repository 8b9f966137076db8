/* NULL-terminated string vectors. */
#pragma once
#include <stddef.h>

char **strv_free(char **v);
size_t strv_length(char *const *v);
/* Append a copy of s; 0 or -ENOMEM. */
int strv_push(char ***v, const char *s);
int strv_contains(char *const *v, const char *s);
void strv_sort(char **v);
