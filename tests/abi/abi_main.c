/* Compare gpuvet's NVML declarations with the official nvml.h, row by row, and print
 * every difference. Function signatures were checked when abi_official.c compiled. */
#include <stdio.h>
#include <string.h>

#include "abi.h"

int main(void) {
        if (abi_ours_count != abi_official_count) {
                fprintf(stderr, "abi: tables differ in length (%zu vs %zu); both come from abi_items.def\n",
                        abi_ours_count, abi_official_count);
                return 1;
        }
        size_t bad = 0;
        for (size_t i = 0; i < abi_ours_count; i++) {
                const struct abi_row *a = &abi_ours[i], *b = &abi_official[i];
                if (strcmp(a->name, b->name) != 0) {
                        fprintf(stderr, "abi: row %zu is %s in one table and %s in the other\n", i, a->name,
                                b->name);
                        return 1;
                }
                if (a->value != b->value) {
                        printf("MISMATCH %s: nvml_api.h %lld, nvml.h %lld\n", a->name, a->value, b->value);
                        bad++;
                }
        }
        printf("abi: %zu items compared with nvml.h, %zu mismatches\n", abi_ours_count, bad);
        return bad ? 1 : 0;
}
