/* Compare gpuvet's declarations of a vendor API with the official headers, row by row, and
 * print every difference. Built once per API with -DABI_API=cuda (or cublaslt) and
 * -DABI_HEADER='"cuda.h"': the tables are <api>_abi_ours (from <api>_ours.c) and
 * <api>_abi_official (<api>_official.c, whose compilation checked the function signatures). */
#include <stdio.h>
#include <string.h>

#include "abi.h"

#define PASTE_(a, b) a##b
#define PASTE(a, b) PASTE_(a, b)
#define STR_(a) #a
#define STR(a) STR_(a)
#define ours PASTE(ABI_API, _abi_ours)
#define ours_count PASTE(ABI_API, _abi_ours_count)
#define official PASTE(ABI_API, _abi_official)
#define official_count PASTE(ABI_API, _abi_official_count)

extern const struct abi_row ours[], official[];
extern const size_t ours_count, official_count;

int main(void) {
        if (ours_count != official_count) {
                fprintf(stderr, "abi: tables differ in length (%zu vs %zu); both come from " STR(ABI_API) "_items.def\n",
                        ours_count, official_count);
                return 1;
        }
        size_t bad = 0;
        for (size_t i = 0; i < ours_count; i++) {
                const struct abi_row *a = &ours[i], *b = &official[i];
                if (strcmp(a->name, b->name) != 0) {
                        fprintf(stderr, "abi: row %zu is %s in one table and %s in the other\n", i, a->name, b->name);
                        return 1;
                }
                if (a->value != b->value) {
                        printf("MISMATCH %s: " STR(ABI_API) "_api.h %lld, " ABI_HEADER " %lld\n", a->name, a->value, b->value);
                        bad++;
                }
        }
        printf("abi: %zu items compared with " ABI_HEADER ", %zu mismatches\n", ours_count, bad);
        return bad ? 1 : 0;
}
