/* The link rate of an RDMA port from what ibv_query_port reports (active_speed and
 * active_width, IBTA encodings), as the signalling rate and the data rate after line
 * encoding: 8b/10b up to QDR (a 4X QDR port signals 40 Gb/s and carries 32), 64b/66b from
 * FDR10 (4X EDR: 103.125 and 100), PAM4 with FEC for HDR and NDR (4X NDR: 425 and 400). The
 * data rate is what `gpuvet bench rdma` judges bandwidth against (docs/bench.md, "rdma").
 * Ethernet (RoCE) ports report the IB speed that matches their lane rate (mlx5: 100GbE as
 * 4X EDR, 200GbE as 4X HDR, 400GbE as 4X NDR), so the same table holds. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct rdma_link_rate {
        unsigned lanes;       /* 1, 2, 4, 8, 12 */
        const char *speed;    /* "EDR"; NULL when unknown */
        double signal_gbps;   /* lanes x the lane's signalling rate */
        double data_gbps;     /* lanes x the lane's data rate after encoding */
};

/* 0, or -EINVAL for an active_speed or active_width value the table does not know (a newer
 * HCA's: XDR reports through active_speed_ex). */
int rdma_link_rate(uint8_t active_speed, uint8_t active_width, struct rdma_link_rate *ret);
