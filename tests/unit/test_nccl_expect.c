/* src/bench/nccl_expect.c: which of the seed's baselines a job's shape has. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bench/nccl_expect.h"

static void test_baseline_shape(void **state) {
        (void)state;
        struct nccl_fabric hdr8 = {.n_ports = 8, .port_gbits_min = 200, .port_gbits_max = 200};
        assert_string_equal(nccl_baseline_shape(8, 1, 8, &hdr8), "8gpu");
        assert_null(nccl_baseline_shape(4, 1, 4, &hdr8));
        assert_null(nccl_baseline_shape(16, 1, 16, &hdr8));
        assert_string_equal(nccl_baseline_shape(16, 2, 8, &hdr8), "8gpu-hdr");
        assert_string_equal(nccl_baseline_shape(64, 8, 8, &hdr8), "8gpu-hdr");
        /* another rate, a port short, a mix of rates, 4 ranks a node: not the seed's shape */
        struct nccl_fabric ndr8 = {.n_ports = 8, .port_gbits_min = 400, .port_gbits_max = 400};
        assert_null(nccl_baseline_shape(16, 2, 8, &ndr8));
        struct nccl_fabric hdr7 = {.n_ports = 7, .port_gbits_min = 200, .port_gbits_max = 200};
        assert_null(nccl_baseline_shape(16, 2, 8, &hdr7));
        struct nccl_fabric mixed = {.n_ports = 8, .port_gbits_min = 100, .port_gbits_max = 200};
        assert_null(nccl_baseline_shape(16, 2, 8, &mixed));
        assert_null(nccl_baseline_shape(8, 2, 4, &hdr8));
        /* an unknown node count (0) is no shape */
        assert_null(nccl_baseline_shape(8, 0, 0, &hdr8));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_baseline_shape),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
