/* Growing an array by doubling: the step every append to a heap array of gpuvet's takes. */
#pragma once

#include <stddef.h>

/* Room for item n of the array at *arr (items of size bytes, room for *cap): when n has
 * reached *cap, the array is reallocated to twice *cap (first when it has none) and *cap
 * updated. Returns 0, or -ENOMEM with *arr and *cap unchanged. */
int array_grow(void **arr, size_t n, size_t *cap, size_t size, size_t first);
