/* Counting the elements of an array. */
#pragma once

/* The number of elements of array a, a true array and not a pointer (sizeof of a pointer
 * would divide silently into a wrong count). */
#define ARRAY_COUNT(a) (sizeof(a) / sizeof((a)[0]))
