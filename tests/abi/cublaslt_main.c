/* Compare gpuvet's cuBLASLt declarations with the official headers, row by row, and print
 * every difference. Function signatures were checked when cublaslt_official.c compiled. */
#include <stdio.h>
#include <string.h>

#include "abi.h"

extern const struct abi_row cublaslt_abi_ours[], cublaslt_abi_official[];
extern const size_t cublaslt_abi_ours_count, cublaslt_abi_official_count;

int main(void) {
        if (cublaslt_abi_ours_count != cublaslt_abi_official_count) {
                fprintf(stderr, "abi: tables differ in length (%zu vs %zu); both come from cublaslt_items.def\n",
                        cublaslt_abi_ours_count, cublaslt_abi_official_count);
                return 1;
        }
        size_t bad = 0;
        for (size_t i = 0; i < cublaslt_abi_ours_count; i++) {
                const struct abi_row *a = &cublaslt_abi_ours[i], *b = &cublaslt_abi_official[i];
                if (strcmp(a->name, b->name) != 0) {
                        fprintf(stderr, "abi: row %zu is %s in one table and %s in the other\n", i, a->name, b->name);
                        return 1;
                }
                if (a->value != b->value) {
                        printf("MISMATCH %s: cublaslt_api.h %lld, cublasLt.h %lld\n", a->name, a->value, b->value);
                        bad++;
                }
        }
        printf("abi: %zu items compared with cublasLt.h, %zu mismatches\n", cublaslt_abi_ours_count, bad);
        return bad ? 1 : 0;
}
