#include "sys/rdma.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "core/strv.h"
#include "data/gpudb.h"
#include "sys/facts.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLASS_DIR "/sys/class/infiniband"

static const char *const counter_names[RDMA_CTR_COUNT] = {
        [RDMA_CTR_SYMBOL_ERROR] = "symbol_error",
        [RDMA_CTR_LINK_ERROR_RECOVERY] = "link_error_recovery",
        [RDMA_CTR_LINK_DOWNED] = "link_downed",
        [RDMA_CTR_PORT_RCV_ERRORS] = "port_rcv_errors",
        [RDMA_CTR_PORT_XMIT_DISCARDS] = "port_xmit_discards",
};

static const char *const hw_counter_names[RDMA_HW_COUNT] = {
        [RDMA_HW_OUT_OF_SEQUENCE] = "out_of_sequence",
        [RDMA_HW_PACKET_SEQ_ERR] = "packet_seq_err",
        [RDMA_HW_LOCAL_ACK_TIMEOUT_ERR] = "local_ack_timeout_err",
        [RDMA_HW_NP_ECN_MARKED] = "np_ecn_marked_roce_packets",
        [RDMA_HW_NP_CNP_SENT] = "np_cnp_sent",
        [RDMA_HW_RP_CNP_HANDLED] = "rp_cnp_handled",
        [RDMA_HW_RP_CNP_IGNORED] = "rp_cnp_ignored",
};

/* A dcbnl answer comes from the kernel's memory at once; the deadline is for a kernel
 * that does not answer at all. */
#define PFC_READ_TIMEOUT_MS 250

const char *rdma_hw_counter_name(enum rdma_hw_counter c) {
        return (unsigned)c < RDMA_HW_COUNT ? hw_counter_names[c] : "?";
}

const char *rdma_counter_name(enum rdma_counter c) {
        return (unsigned)c < RDMA_CTR_COUNT ? counter_names[c] : "?";
}

const char *rdma_link_layer_name(enum rdma_link_layer l) {
        switch (l) {
        case RDMA_LL_INFINIBAND:
                return "InfiniBand";
        case RDMA_LL_ETHERNET:
                return "Ethernet";
        default:
                return "unknown";
        }
}

/* Copy a word (letters, digits, '_', '-'; inner spaces when spaces is set: "Phy Test") of
 * at most size-1 characters; false when s holds anything else. */
static bool copy_word(const char *s, size_t len, char *buf, size_t size, bool spaces) {
        if (len == 0 || len >= size || s[0] == ' ' || s[len - 1] == ' ')
                return false;
        for (size_t i = 0; i < len; i++)
                if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && !(spaces && s[i] == ' '))
                        return false;
        memcpy(buf, s, len);
        buf[len] = '\0';
        return true;
}

int rdma_parse_state(const char *s, int *ret_num, char *name, size_t size) {
        /* ib_core prints "%d: %s" (state_show(), phys_state_show() in drivers/infiniband/core/sysfs.c). */
        const char *p = s;
        if (!isdigit((unsigned char)*p))
                return -EINVAL;
        int num = 0;
        while (isdigit((unsigned char)*p)) {
                num = num * 10 + (*p - '0');
                if (num > 255)
                        return -EINVAL;
                p++;
        }
        if (p[0] != ':' || p[1] != ' ')
                return -EINVAL;
        p += 2;
        size_t len = strlen(p);
        while (len && isspace((unsigned char)p[len - 1]))
                len--;
        char word[32];
        if (!copy_word(p, len, word, sizeof(word), true) || size == 0)
                return -EINVAL;
        *ret_num = num;
        snprintf(name, size, "%s", word);
        return 0;
}

int rdma_parse_rate(const char *s, double *ret_gbps, unsigned *ret_width, char *speed, size_t size) {
        /* rate_show(): "%d%s Gb/sec (%dX%s)", the fraction ".5" for SDR x1, the speed name
         * after a space ("4X NDR"), none for an unknown speed. */
        const char *p = s;
        if (!isdigit((unsigned char)*p))
                return -EINVAL;
        char *end;
        double gbps = strtod(p, &end);
        if (end == p || !isfinite(gbps) || gbps <= 0 || gbps > 100000 || strncmp(end, " Gb/sec", 7) != 0)
                return -EINVAL;
        p = end + 7;
        unsigned width = 0;
        char name[16] = "";
        if (*p == ' ' && p[1] == '(') {
                p += 2;
                if (!isdigit((unsigned char)*p))
                        return -EINVAL;
                while (isdigit((unsigned char)*p)) {
                        width = width * 10 + (unsigned)(*p - '0');
                        if (width > 32)
                                return -EINVAL;
                        p++;
                }
                if (width == 0 || *p != 'X')
                        return -EINVAL;
                p++;
                if (*p == ' ') {
                        p++;
                        size_t len = strcspn(p, ")");
                        if (!copy_word(p, len, name, sizeof(name), false))
                                return -EINVAL;
                        p += len;
                }
                if (*p != ')')
                        return -EINVAL;
                p++;
        }
        while (isspace((unsigned char)*p))
                p++;
        if (*p)
                return -EINVAL;
        *ret_gbps = gbps;
        *ret_width = width;
        if (size)
                snprintf(speed, size, "%s", name);
        return 0;
}

int rdma_parse_link_layer(const char *s, enum rdma_link_layer *ret) {
        size_t len = strlen(s);
        while (len && isspace((unsigned char)s[len - 1]))
                len--;
        if (len == 10 && strncmp(s, "InfiniBand", 10) == 0)
                *ret = RDMA_LL_INFINIBAND;
        else if (len == 8 && strncmp(s, "Ethernet", 8) == 0)
                *ret = RDMA_LL_ETHERNET;
        else
                return -EINVAL;
        return 0;
}

/* Read a short attribute; "" when absent, unreadable or not printable. */
static void read_text(struct fsroot *fs, char *buf, size_t size, const char *fmt, const char *a, const char *b) {
        char path[512];
        snprintf(path, sizeof(path), fmt, a, b);
        if (fsroot_read_str(fs, path, buf, size) < 0) {
                buf[0] = '\0';
                return;
        }
        for (char *c = buf; *c; c++)
                if (!isprint((unsigned char)*c)) {
                        buf[0] = '\0';
                        return;
                }
}

/* One attribute of a port directory; -errno when unreadable. */
static int port_attr(struct fsroot *fs, const char *dir, const char *name, char *buf, size_t size) {
        return fsroot_read_strf(fs, buf, size, "%.400s/%s", dir, name);
}

static void gather_port(struct fsroot *fs, const char *dir, struct rdma_port *p) {
        char v[128];
        int num;
        if (port_attr(fs, dir, "state", v, sizeof(v)) == 0 &&
            rdma_parse_state(v, &num, p->state_name, sizeof(p->state_name)) == 0)
                p->state = num;
        if (port_attr(fs, dir, "phys_state", v, sizeof(v)) == 0 &&
            rdma_parse_state(v, &num, p->phys_state_name, sizeof(p->phys_state_name)) == 0)
                p->phys_state = num;
        if (port_attr(fs, dir, "rate", v, sizeof(v)) == 0)
                (void)rdma_parse_rate(v, &p->rate_gbps, &p->width, p->speed_name, sizeof(p->speed_name));
        if (port_attr(fs, dir, "link_layer", v, sizeof(v)) == 0)
                (void)rdma_parse_link_layer(v, &p->link_layer);
        for (size_t c = 0; c < RDMA_CTR_COUNT; c++) {
                char name[64];
                uint64_t n;
                snprintf(name, sizeof(name), "counters/%s", counter_names[c]);
                if (port_attr(fs, dir, name, v, sizeof(v)) == 0 && parse_u64(v, &n) == 0 && n != RDMA_CTR_UNKNOWN)
                        p->counters[c] = n;
        }
        for (size_t c = 0; c < RDMA_HW_COUNT; c++) {
                char name[64];
                uint64_t n;
                snprintf(name, sizeof(name), "hw_counters/%s", hw_counter_names[c]);
                if (port_attr(fs, dir, name, v, sizeof(v)) == 0 && parse_u64(v, &n) == 0 && n != RDMA_CTR_UNKNOWN)
                        p->hw[c] = n;
        }
}

static int port_cmp(const void *a, const void *b) {
        const struct rdma_port *x = a, *y = b;
        return (x->num > y->num) - (x->num < y->num);
}

static void gather_netdev(struct fsroot *fs, const struct facts *f, const struct rdma_dev *d, struct rdma_port *p) {
        const char *nd = d->pci_addr[0] ? netdev_net_name(&f->netdev, d->pci_addr) : NULL;
        if (!nd)
                return;
        snprintf(p->netdev, sizeof(p->netdev), "%s", nd);
        char v[64];
        int mtu;
        read_text(fs, v, sizeof(v), "/sys/class/net/%s/%s", nd, "mtu");
        if (v[0] && parse_int(v, &mtu) == 0 && mtu > 0 && mtu <= 1 << 20)
                p->netdev_mtu = mtu;
        read_text(fs, v, sizeof(v), "/sys/class/net/%s/%s", nd, "operstate");
        /* "up", "down", "lowerlayerdown" ...: a longer value is not the kernel's. */
        if (strlen(v) < sizeof(p->netdev_operstate))
                snprintf(p->netdev_operstate, sizeof(p->netdev_operstate), "%.*s",
                         (int)sizeof(p->netdev_operstate) - 1, v);
        if (fsroot_is_live(fs)) {
                p->pfc_asked = true;
                p->pfc_errno = -dcb_read_pfc(nd, PFC_READ_TIMEOUT_MS, &p->pfc);
        }
}

static int gather_dev(struct fsroot *fs, const struct facts *f, const struct netdev *nd, struct rdma_dev *d) {
        snprintf(d->name, sizeof(d->name), "%s", nd->name);
        snprintf(d->pci_addr, sizeof(d->pci_addr), "%s", nd->pci_addr);
        read_text(fs, d->fw_ver, sizeof(d->fw_ver), CLASS_DIR "/%s/%s", d->name, "fw_ver");
        read_text(fs, d->hca_type, sizeof(d->hca_type), CLASS_DIR "/%s/%s", d->name, "hca_type");
        read_text(fs, d->board_id, sizeof(d->board_id), CLASS_DIR "/%s/%s", d->name, "board_id");
        char v[64];
        int num;
        read_text(fs, v, sizeof(v), CLASS_DIR "/%s/%s", d->name, "node_type");
        if (v[0] && rdma_parse_state(v, &num, d->node_type, sizeof(d->node_type)) < 0)
                d->node_type[0] = '\0';

        char dir[512];
        snprintf(dir, sizeof(dir), CLASS_DIR "/%s/ports", d->name);
        char **names = NULL;
        int r = fsroot_list(fs, dir, &names);
        if (r < 0) {
                d->ports_errno = -r;
                return 0;
        }
        size_t n = strv_length(names);
        d->ports = calloc(n ? n : 1, sizeof(*d->ports));
        if (!d->ports) {
                strv_free(names);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                uint64_t num64;
                if (parse_u64(names[i], &num64) < 0 || num64 == 0 || num64 > 255 || !isdigit((unsigned char)names[i][0]))
                        continue;
                struct rdma_port *p = &d->ports[d->n_ports++];
                p->num = (unsigned)num64;
                p->state = p->phys_state = -1;
                p->netdev_mtu = -1;
                for (size_t c = 0; c < RDMA_CTR_COUNT; c++)
                        p->counters[c] = RDMA_CTR_UNKNOWN;
                for (size_t c = 0; c < RDMA_HW_COUNT; c++)
                        p->hw[c] = RDMA_CTR_UNKNOWN;
                char pdir[512];
                snprintf(pdir, sizeof(pdir), "%.200s/%.32s", dir, names[i]);
                gather_port(fs, pdir, p);
                if (p->link_layer == RDMA_LL_ETHERNET)
                        gather_netdev(fs, f, d, p);
        }
        strv_free(names);
        qsort(d->ports, d->n_ports, sizeof(*d->ports), port_cmp);
        return 0;
}

/* PCI VPD is at most 32 KiB (PCI Local Bus spec, the VPD address is 15 bits). */
#define VPD_MAX (32 * 1024 + 2)
#define LPF_VPD_MARK "SMDL=SW_MNG"

/* Whether the RDMA device is an NVSwitch management port (LPF), by the vendor field the
 * Fabric Manager's start-up script looks for in its function's VPD. */
static bool is_nvswitch_lpf(struct fsroot *fs, const char *name) {
        char path[256], *vpd;
        size_t len;
        snprintf(path, sizeof(path), CLASS_DIR "/%.64s/device/vpd", name);
        if (fsroot_read_alloc_max(fs, path, VPD_MAX, &vpd, &len) < 0)
                return false;
        bool lpf = memmem(vpd, len, LPF_VPD_MARK, strlen(LPF_VPD_MARK)) != NULL;
        free(vpd);
        return lpf;
}

/* Only a fourth-generation NVSwitch baseboard has management ports, and a VPD read is
 * slow (the kernel polls config space for every four bytes): ask only on such a board. */
static bool board_has_lpf(const struct facts *f) {
        for (size_t i = 0; f->db && i < f->gpus.n; i++)
                if (gpudb_fabric_services(f->db, f->gpus.gpus[i].model) & GPU_FABRIC_NVLSM)
                        return true;
        return false;
}

int rdma_gather(struct fsroot *fs, struct facts *f) {
        struct rdma_facts *x = &f->rdma;
        x->gds_config = fsroot_access(fs, "/etc/cufile.json") == 0;
        if (f->netdev.n_rdma == 0)
                return 0;
        const bool lpf_board = board_has_lpf(f);
        x->devs = calloc(f->netdev.n_rdma, sizeof(*x->devs));
        if (!x->devs)
                return -ENOMEM;
        for (size_t i = 0; i < f->netdev.n_rdma; i++) {
                const struct netdev *nd = &f->netdev.rdma[i];
                if (lpf_board && is_nvswitch_lpf(fs, nd->name)) {
                        if (x->n_nvswitch_lpf < RDMA_MAX_LPF)
                                snprintf(x->nvswitch_lpf[x->n_nvswitch_lpf], sizeof(x->nvswitch_lpf[0]), "%s",
                                         nd->name);
                        x->n_nvswitch_lpf++;
                        continue;
                }
                int r = gather_dev(fs, f, nd, &x->devs[x->n++]);
                if (r < 0)
                        return r;
        }
        return 0;
}

void rdma_facts_done(struct rdma_facts *x) {
        for (size_t i = 0; i < x->n; i++)
                free(x->devs[i].ports);
        free(x->devs);
        memset(x, 0, sizeof(*x));
}
