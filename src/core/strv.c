#include "core/strv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

char **strv_free(char **v) {
        if (v)
                for (char **p = v; *p; p++)
                        free(*p);
        free(v);
        return NULL;
}

size_t strv_length(char *const *v) {
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

int strv_push(char ***v, const char *s) {
        size_t n = strv_length(*v);
        char *copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        char **grown = realloc(*v, (n + 2) * sizeof(char *));
        if (!grown) {
                free(copy);
                return -ENOMEM;
        }
        grown[n] = copy;
        grown[n + 1] = NULL;
        *v = grown;
        return 0;
}

int strv_contains(char *const *v, const char *s) {
        for (size_t i = 0; v && v[i]; i++)
                if (strcmp(v[i], s) == 0)
                        return 1;
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

void strv_sort(char **v) {
        qsort(v, strv_length(v), sizeof(char *), cmp_str);
}
