/* libFuzzer target: the burn parent's reader of its workers' lines (src/burn/wire.c). The
 * input is cut at newlines and each line applied, in order, to one device, as the parent
 * does. Invariants, checked with abort(): a refused line changes no count; counts never go
 * down; the fault list stays within its bound and its strings terminated (an element's
 * value may be NaN: null on the wire); the rates series
 * stays within its capacity; every line the worker's own writers make is accepted. */
#include "burn/wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void accept_own(const char *line) {
        struct burn_device d;
        memset(&d, 0, sizeof(d));
        char why[128];
        size_t n = strlen(line);
        char *copy = malloc(n + 1);
        if (!copy)
                return;
        memcpy(copy, line, n + 1);
        if (n && copy[n - 1] == '\n')
                copy[n - 1] = '\0';
        if (burn_wire_apply(&d, copy, 0, why, sizeof(why)) < 0)
                abort();
        free(copy);
        free(d.rates);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        struct burn_device d;
        memset(&d, 0, sizeof(d));
        char why[128];
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                struct burn_device before = d;
                int r = burn_wire_apply(&d, line, 1.0, why, sizeof(why));
                if (r < 0 && (d.products != before.products || d.verifications != before.verifications ||
                              d.mem_errors != before.mem_errors || strnlen(why, sizeof(why)) == sizeof(why)))
                        abort();
                if (d.products < before.products || d.faults_total < before.faults_total ||
                    d.n_faults > BURN_MAX_FAULTS || d.n_rates > d.cap_rates)
                        abort();
                /* An element's value may be NaN: null on the wire says the GPU's was not finite. */
                for (unsigned i = 0; i < d.n_faults; i++)
                        if (strnlen(d.faults[i].what, sizeof(d.faults[i].what)) == sizeof(d.faults[i].what))
                                abort();
                if (strnlen(d.name, sizeof(d.name)) == sizeof(d.name) || strnlen(d.error, sizeof(d.error)) == sizeof(d.error))
                        abort();
                if (r == 1)
                        break;
        }
        free(text);
        free(d.rates);

        /* What the workers write must always read back. */
        struct burn_fault f = {.mode = BURN_MODE_GEMM, .where_a = 5, .where_b = 7, .expected = 46, .got = 47};
        memcpy(f.what, "host reference", 15);
        char *lines[] = {
                burn_wire_device("NVIDIA H100 80GB HBM3", "0000:1b:00.0", false, "cuda"),
                burn_wire_mode(BURN_MODE_GEMM, "cuBLASLt", "fp32"),
                burn_wire_tick(BURN_MODE_GEMM, 40, 1.1e15, 1.02, 1.0),
                burn_wire_verify(1024, 1, 1u << 20, 0, 0x0123456789abcdefull, &f, 1),
                burn_wire_beat(),
                burn_wire_error("cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY"),
                burn_wire_done(false),
        };
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
                if (lines[i])
                        accept_own(lines[i]);
                free(lines[i]);
        }
        return 0;
}
