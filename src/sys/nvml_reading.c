/* The pure helpers of sys/nvml_facts.h: what a reading, an init state or a bus id says,
 * without NVML (its calls live in src/bindings/nvml_facts.c). Here so that the gatherers,
 * checks and reports below the bindings use them without linking the bindings. */
#include "sys/nvml_facts.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

/* Hex digits up to `stop`, at most max_digits, no prefix, sign or blank (sscanf's %x takes
 * all three). Advances *p past the number and the stop character. */
static bool hex_field(const char **p, char stop, unsigned int max_digits, unsigned int *ret) {
        unsigned int v = 0, n = 0;
        const char *s = *p;
        for (; *s && *s != stop; s++, n++) {
                int d;
                if (*s >= '0' && *s <= '9')
                        d = *s - '0';
                else if (*s >= 'a' && *s <= 'f')
                        d = *s - 'a' + 10;
                else if (*s >= 'A' && *s <= 'F')
                        d = *s - 'A' + 10;
                else
                        return false;
                if (n >= max_digits)
                        return false;
                v = v * 16 + (unsigned int)d;
        }
        if (n == 0 || *s != stop)
                return false;
        *p = stop ? s + 1 : s;
        *ret = v;
        return true;
}

int nvml_bus_id_normalise(const char *in, char *out, unsigned int outsize) {
        unsigned int domain, bus, dev, fn;
        const char *p = in;
        if (outsize == 0)
                return -EINVAL;
        /* NVML pads the domain to 8 digits; PCI domains are 16 bits. */
        if (hex_field(&p, ':', 8, &domain) && hex_field(&p, ':', 2, &bus) && hex_field(&p, '.', 2, &dev) &&
            hex_field(&p, '\0', 1, &fn) && domain <= 0xffff && dev <= 0x1f && fn <= 7) {
                snprintf(out, outsize, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
                return 0;
        }
        snprintf(out, outsize, "%s", in);
        return -EINVAL;
}

int nvml_proc_sm_share(const struct nvml_gpu *g, unsigned int pid) {
        const struct nvml_proc_utils *u = &g->proc_utils;
        if (u->state != NV_OK)
                return -1;
        for (unsigned int i = 0; i < u->count; i++)
                if (u->v[i].pid == pid)
                        return u->v[i].sm == NV_UTIL_UNKNOWN ? -1 : (int)u->v[i].sm;
        return 0;
}

const char *nv_state_name(unsigned char state) {
        static const char *const names[NV_STATE_COUNT] = {
                [NV_UNREAD] = "unread",
                [NV_OK] = "ok",
                [NV_ERROR] = "error",
                [NV_TIMEOUT] = "timeout",
                [NV_NO_FUNCTION] = "no function",
        };
        return state < NV_STATE_COUNT ? names[state] : "invalid";
}

const char *nvml_init_state_name(enum nvml_init_state s) {
        static const char *const names[NVML_INIT_STATE_COUNT] = {
                [NVML_INIT_NOT_TRIED] = "not tried",
                [NVML_INIT_OK] = "ok",
                [NVML_INIT_NO_LIBRARY] = "no library",
                [NVML_INIT_DRIVER_NOT_LOADED] = "driver not loaded",
                [NVML_INIT_VERSION_MISMATCH] = "version mismatch",
                [NVML_INIT_NO_PERMISSION] = "no permission",
                [NVML_INIT_ERROR] = "error",
                [NVML_INIT_TIMEOUT] = "timeout",
        };
        return (unsigned int)s < NVML_INIT_STATE_COUNT ? names[s] : "invalid";
}
