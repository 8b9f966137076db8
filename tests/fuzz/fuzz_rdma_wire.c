/* libFuzzer target: the handshake lines of `gpuvet bench rdma` (src/bench/rdma_wire.h), what
 * a peer (or anything that connects to the server's port) sends. The input is split at
 * newlines and each line parsed as a hello and as a control message. Invariants, checked
 * with abort(): an accepted hello has a plan rdma_plan_check accepts and a buffer that holds
 * its largest size, and formats back to a line that parses to the same values; an accepted
 * control message formats back to one that parses to the same; an error's text is printable
 * and terminated. */
#include "bench/rdma_wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_line(const char *s, size_t n) {
        struct rdma_hello h;
        if (rdma_hello_parse(s, n, &h) == 0) {
                if (rdma_plan_check(&h.plan) != 0 || h.buf_bytes < h.plan.max_bytes)
                        abort();
                char buf[RDMA_WIRE_LINE_MAX];
                size_t len = rdma_hello_format(&h, buf, sizeof(buf));
                struct rdma_hello again;
                if (rdma_hello_parse(buf, len, &again) != 0 || memcmp(&h, &again, sizeof(h)) != 0)
                        abort();
                uint64_t sizes[64];
                size_t k = rdma_plan_sizes(&h.plan, sizes, 64);
                if (k == 0 || k > 64 || sizes[0] != h.plan.min_bytes || sizes[k - 1] != h.plan.max_bytes)
                        abort();
        }
        struct rdma_ctl c;
        if (rdma_ctl_parse(s, n, &c) == 0) {
                if (strnlen(c.text, sizeof(c.text)) == sizeof(c.text))
                        abort();
                for (const char *p = c.text; *p; p++)
                        if (*p < 0x20 || *p >= 0x7f)
                                abort();
                char buf[RDMA_WIRE_LINE_MAX];
                size_t len = rdma_ctl_format(&c, buf, sizeof(buf));
                struct rdma_ctl again;
                if (rdma_ctl_parse(buf, len, &again) != 0 || again.verb != c.verb || again.test != c.test ||
                    again.size != c.size || again.count != c.count)
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *p = (const char *)data, *end = p + size;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
                one_line(p, n);
                p += n;
        }
        return 0;
}
