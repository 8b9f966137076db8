/* libFuzzer target: the parsers of ib_core's sysfs values (sys/rdma.h), each on the input
 * as one NUL-terminated string, and on every line of it; and the same bytes as the kernel's
 * netlink answer about an interface's PFC (sys/dcb.h). A parser that accepts must give
 * values in its documented range and names that fit their buffers. */
#include "sys/dcb.h"
#include "sys/rdma.h"

#include <errno.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const char *s) {
        int num;
        char name[32], tiny[3];
        if (rdma_parse_state(s, &num, name, sizeof(name)) == 0 && (num < 0 || num > 255 || strlen(name) >= sizeof(name)))
                abort();
        if (rdma_parse_state(s, &num, tiny, sizeof(tiny)) == 0 && strlen(tiny) >= sizeof(tiny))
                abort();
        double gbps;
        unsigned width;
        char speed[16];
        if (rdma_parse_rate(s, &gbps, &width, speed, sizeof(speed)) == 0 &&
            (!(gbps > 0 && gbps <= 100000) || !isfinite(gbps) || width > 32 || strlen(speed) >= sizeof(speed)))
                abort();
        if (rdma_parse_rate(s, &gbps, &width, tiny, sizeof(tiny)) == 0 && strlen(tiny) >= sizeof(tiny))
                abort();
        enum rdma_link_layer ll;
        if (rdma_parse_link_layer(s, &ll) == 0 && ll != RDMA_LL_INFINIBAND && ll != RDMA_LL_ETHERNET)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* Netlink messages are read in place, aligned as recv() leaves them. */
        uint64_t *aligned = malloc(size + 8);
        if (!aligned)
                return 0;
        memcpy(aligned, data, size);
        struct dcb_pfc pfc;
        int r = dcb_parse_ieee_reply(aligned, size, &pfc);
        free(aligned);
        if (r > 0 || r < -4095)
                abort(); /* 0 or a negative errno */

        char *s = malloc(size + 1);
        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        one(s);
        for (char *line = s, *next; line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                one(line);
        }
        free(s);
        return 0;
}
