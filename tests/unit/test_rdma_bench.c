/* src/bench/rdma_rate.c, rdma_run.c's statistics and rdma_wire.c's plan and lines: the link
 * rates of the IBTA encodings, perftest's latency statistics and peak, the sweep's sizes, a
 * hello and a control line through format and parse, and lines that must be refused. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bench/rdma_conn.h"
#include "bench/rdma_rate.h"
#include "bench/rdma_run.h"
#include "bench/rdma_wire.h"

static void test_rates(void **state) {
        (void)state;
        struct rdma_link_rate r;
        assert_int_equal(rdma_link_rate(32, 2, &r), 0); /* 4X EDR */
        assert_int_equal(r.lanes, 4);
        assert_string_equal(r.speed, "EDR");
        assert_true(fabs(r.data_gbps - 100) < 1e-9 && fabs(r.signal_gbps - 103.125) < 1e-9);
        assert_int_equal(rdma_link_rate(128, 2, &r), 0); /* 4X NDR */
        assert_true(fabs(r.data_gbps - 400) < 1e-9);
        assert_int_equal(rdma_link_rate(4, 2, &r), 0); /* 4X QDR: signals 40, carries 32 */
        assert_true(fabs(r.data_gbps - 32) < 1e-9 && fabs(r.signal_gbps - 40) < 1e-9);
        assert_int_equal(rdma_link_rate(64, 1, &r), 0); /* 1X HDR */
        assert_true(fabs(r.data_gbps - 50) < 1e-9);
        assert_int_equal(rdma_link_rate(1, 16, &r), 0); /* 2X SDR */
        assert_true(fabs(r.data_gbps - 4) < 1e-9);
        assert_int_equal(rdma_link_rate(0, 2, &r), -EINVAL);
        assert_int_equal(rdma_link_rate(32, 3, &r), -EINVAL);
}

static void test_lat_stats(void **state) {
        (void)state;
        /* 1..10 shuffled, plus two outliers that perftest drops */
        double v[12] = {5, 3, 9, 1, 7, 1000, 2, 10, 4, 8, 6, 2000};
        struct rdma_lat_row row = {0};
        rdma_lat_stats(v, 12, &row);
        assert_true(row.t_min_us == 1 && row.t_max_us == 10);
        assert_true(fabs(row.t_typical_us - 5.5) < 1e-9 && fabs(row.t_avg_us - 5.5) < 1e-9);
        assert_true(fabs(row.t_stdev_us - sqrt(8.25)) < 1e-9);
        assert_true(row.t_p99_us == 10 && row.t_p999_us == 10);
}

static void test_peak(void **state) {
        (void)state;
        /* four 1000-byte messages; the best runs are messages 1-2 (2 us for two) and 2 alone */
        double posted[4] = {0, 10, 11, 30}, done[4] = {10, 12, 12, 40};
        double peak = rdma_peak_gbps(posted, done, 4, 1000);
        assert_true(fabs(peak - 1000.0 * 8 / 1e-6 / 1e9) < 1e-6); /* 1 us per message: 8 Gb/s */
}

static void test_sizes(void **state) {
        (void)state;
        struct rdma_plan p = {.tests = 7, .min_bytes = 2, .max_bytes = 8 << 20, .iters = 5, .lat_iters = 5, .tx_depth = 1};
        uint64_t s[64];
        assert_int_equal(rdma_plan_sizes(&p, s, 64), 23);
        assert_true(s[0] == 2 && s[1] == 4 && s[22] == 8 << 20);
        p.min_bytes = 3;
        p.max_bytes = 100;
        assert_int_equal(rdma_plan_sizes(&p, s, 64), 7); /* 3 4 8 16 32 64 100 */
        assert_true(s[0] == 3 && s[1] == 4 && s[6] == 100);
        p.min_bytes = p.max_bytes = 65536;
        assert_int_equal(rdma_plan_sizes(&p, s, 64), 1);
        assert_int_equal(rdma_plan_check(&p), 0);
        p.tests = 0;
        assert_int_equal(rdma_plan_check(&p), -EINVAL);
}

static void test_lines(void **state) {
        (void)state;
        struct rdma_hello h = {.lid = 7, .qpn = 0xabcdef, .psn = 12345, .rkey = 0xdeadbeef, .addr = 0x7f0000001000,
                               .buf_bytes = 1 << 20, .mtu = 4096, .ethernet = true,
                               .plan = {.tests = 5, .min_bytes = 2, .max_bytes = 1 << 19, .iters = 100, .lat_iters = 10,
                                        .tx_depth = 16}};
        for (int i = 0; i < 16; i++)
                h.gid[i] = (uint8_t)(i * 17);
        char buf[RDMA_WIRE_LINE_MAX];
        size_t n = rdma_hello_format(&h, buf, sizeof(buf));
        struct rdma_hello back;
        assert_int_equal(rdma_hello_parse(buf, n, &back), 0);
        assert_memory_equal(&h, &back, sizeof(h));
        /* a buffer smaller than the plan's largest size, a repeated key, a missing key */
        char bad[RDMA_WIRE_LINE_MAX];
        snprintf(bad, sizeof(bad), "%.*s", (int)n - 1, buf);
        char *b = strstr(bad, "bytes=");
        memcpy(b, "bytes=1      ", 13);
        assert_int_equal(rdma_hello_parse(bad, strlen(bad), &back), -EBADMSG);
        snprintf(bad, sizeof(bad), "%.*s lid=1", (int)n - 1, buf);
        assert_int_equal(rdma_hello_parse(bad, strlen(bad), &back), -EBADMSG);
        assert_int_equal(rdma_hello_parse("GPUVET-RDMA/1 hello lid=1", 25, &back), -EBADMSG);

        struct rdma_ctl c = {.verb = RDMA_CTL_CORRUPT, .test = RDMA_TEST_READ_BW, .size = 4096, .count = 17}, d;
        n = rdma_ctl_format(&c, buf, sizeof(buf));
        assert_string_equal(buf, "GPUVET-RDMA/1 corrupt read_bw 4096 17\n");
        assert_int_equal(rdma_ctl_parse(buf, n, &d), 0);
        assert_true(d.verb == RDMA_CTL_CORRUPT && d.test == RDMA_TEST_READ_BW && d.size == 4096 && d.count == 17);
        c = (struct rdma_ctl){.verb = RDMA_CTL_ERROR};
        snprintf(c.text, sizeof(c.text), "two\nlines");
        n = rdma_ctl_format(&c, buf, sizeof(buf));
        assert_string_equal(buf, "GPUVET-RDMA/1 error two lines\n");
        assert_int_equal(rdma_ctl_parse("GPUVET-RDMA/1 step write_bw 0", 30, &d), -EBADMSG);
        assert_int_equal(rdma_ctl_parse("GPUVET-RDMA/1 ready now", 23, &d), -EBADMSG);
}

static void test_peer(void **state) {
        (void)state;
        char host[64];
        unsigned port;
        assert_int_equal(rdma_parse_peer("node2", host, sizeof(host), &port, 18515), 0);
        assert_true(strcmp(host, "node2") == 0 && port == 18515);
        assert_int_equal(rdma_parse_peer("10.0.0.2:7000", host, sizeof(host), &port, 18515), 0);
        assert_true(strcmp(host, "10.0.0.2") == 0 && port == 7000);
        assert_int_equal(rdma_parse_peer("[fe80::1]:7001", host, sizeof(host), &port, 18515), 0);
        assert_true(strcmp(host, "fe80::1") == 0 && port == 7001);
        assert_int_equal(rdma_parse_peer("fe80::1", host, sizeof(host), &port, 18515), 0);
        assert_true(strcmp(host, "fe80::1") == 0 && port == 18515);
        assert_int_equal(rdma_parse_peer("h:0", host, sizeof(host), &port, 1), -EINVAL);
        assert_int_equal(rdma_parse_peer("h:70000", host, sizeof(host), &port, 1), -EINVAL);
        assert_int_equal(rdma_parse_peer(":1", host, sizeof(host), &port, 1), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rates), cmocka_unit_test(test_lat_stats), cmocka_unit_test(test_peak),
                cmocka_unit_test(test_sizes), cmocka_unit_test(test_lines),    cmocka_unit_test(test_peer),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
