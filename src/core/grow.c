#include "core/grow.h"

#include <errno.h>
#include <stdlib.h>

int array_grow(void **arr, size_t n, size_t *cap, size_t size, size_t first) {
        if (n < *cap)
                return 0;
        size_t c = *cap ? *cap * 2 : first;
        void *p = realloc(*arr, c * size);
        if (!p)
                return -ENOMEM;
        *arr = p;
        *cap = c;
        return 0;
}
