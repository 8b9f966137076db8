#include "bench/rdma_rate.h"
#include "core/array.h"

#include <errno.h>
#include <stddef.h>

/* IBTA active_speed values and the rates of one lane, Gb/s. */
static const struct {
        uint8_t code;
        const char *name;
        double signal, data;
} speeds[] = {
        {1, "SDR", 2.5, 2.0},            /* 8b/10b */
        {2, "DDR", 5.0, 4.0},            /* 8b/10b */
        {4, "QDR", 10.0, 8.0},           /* 8b/10b */
        {8, "FDR10", 10.3125, 10.0},     /* 64b/66b */
        {16, "FDR", 14.0625, 13.636364}, /* 64b/66b */
        {32, "EDR", 25.78125, 25.0},     /* 64b/66b */
        {64, "HDR", 53.125, 50.0},       /* PAM4, 64b/66b and RS-FEC */
        {128, "NDR", 106.25, 100.0},     /* PAM4, 64b/66b and RS-FEC */
};

/* IBTA active_width values: lanes. */
static const struct {
        uint8_t code;
        unsigned lanes;
} widths[] = {{1, 1}, {2, 4}, {4, 8}, {8, 12}, {16, 2}};

int rdma_link_rate(uint8_t active_speed, uint8_t active_width, struct rdma_link_rate *ret) {
        size_t s, w;
        for (s = 0; s < ARRAY_COUNT(speeds) && speeds[s].code != active_speed; s++)
                ;
        for (w = 0; w < ARRAY_COUNT(widths) && widths[w].code != active_width; w++)
                ;
        if (s == ARRAY_COUNT(speeds) || w == ARRAY_COUNT(widths))
                return -EINVAL;
        ret->lanes = widths[w].lanes;
        ret->speed = speeds[s].name;
        ret->signal_gbps = speeds[s].signal * widths[w].lanes;
        ret->data_gbps = speeds[s].data * widths[w].lanes;
        return 0;
}
