/* RDMA devices and their ports, as /sys/class/infiniband shows them (ib_core's sysfs, the same
 * files ibstat and ibv_devinfo read): per device its firmware and board, per port its state,
 * physical state, rate, link layer and the PMA counters since boot; for an Ethernet (RoCE)
 * port the MTU and state of the network interface on the same PCI function.
 *
 * Every value that is absent, malformed or out of range stays "unknown" (the have_/-1/
 * UINT64_MAX markers below), never an error of the whole gather. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sys/dcb.h"

struct fsroot;
struct facts;

enum rdma_link_layer {
        RDMA_LL_UNKNOWN = 0,
        RDMA_LL_INFINIBAND,
        RDMA_LL_ETHERNET, /* RoCE */
        RDMA_LL_COUNT
};

/* The PMA counters judged, as named under ports/N/counters/ (ib_core's sysfs.c). */
enum rdma_counter {
        RDMA_CTR_SYMBOL_ERROR,
        RDMA_CTR_LINK_ERROR_RECOVERY,
        RDMA_CTR_LINK_DOWNED,
        RDMA_CTR_PORT_RCV_ERRORS,
        RDMA_CTR_PORT_XMIT_DISCARDS,
        RDMA_CTR_COUNT
};
#define RDMA_CTR_UNKNOWN UINT64_MAX

/* The driver's own counters judged for RoCE congestion and loss, as named under
 * ports/N/hw_counters/ (mlx5: drivers/infiniband/hw/mlx5/counters.c). */
enum rdma_hw_counter {
        RDMA_HW_OUT_OF_SEQUENCE,       /* packets received out of order: a packet before them was lost */
        RDMA_HW_PACKET_SEQ_ERR,        /* NAKs for a sequence error received: the peer lost one of ours */
        RDMA_HW_LOCAL_ACK_TIMEOUT_ERR, /* our ack timer expired: a packet or its ack was lost */
        RDMA_HW_NP_ECN_MARKED,         /* np_ecn_marked_roce_packets: ECN-marked packets received */
        RDMA_HW_NP_CNP_SENT,           /* congestion notifications we sent back */
        RDMA_HW_RP_CNP_HANDLED,        /* congestion notifications we slowed down for */
        RDMA_HW_RP_CNP_IGNORED,        /* congestion notifications we ignored: reaction point off */
        RDMA_HW_COUNT
};

/* ib_port_state (include/rdma/ib_verbs.h): 4 ACTIVE. ib_port_phys_state: 5 LinkUp. */
#define RDMA_PORT_ACTIVE 4
#define RDMA_PHYS_DISABLED 3
#define RDMA_PHYS_LINKUP 5

struct rdma_port {
        unsigned num;              /* the port number: ports/<num> */
        int state;                 /* "4: ACTIVE" -> 4; -1 unknown */
        char state_name[32];       /* "ACTIVE", "" unknown */
        int phys_state;            /* "5: LinkUp" -> 5; -1 unknown */
        char phys_state_name[32];  /* "LinkUp", "Polling", "Disabled" */
        double rate_gbps;          /* "400 Gb/sec (4X NDR)" -> 400; 0 unknown */
        unsigned width;            /* 4 from "4X"; 0 unknown */
        char speed_name[16];       /* "NDR", "HDR", "" unknown or none given */
        enum rdma_link_layer link_layer;
        uint64_t counters[RDMA_CTR_COUNT]; /* RDMA_CTR_UNKNOWN where absent or malformed */
        uint64_t hw[RDMA_HW_COUNT];        /* likewise */
        /* Ethernet ports: the network interface on the device's PCI function. */
        char netdev[64];           /* "" when none */
        int netdev_mtu;            /* -1 unknown */
        char netdev_operstate[16]; /* "up", "down", "" unknown */
        /* Its PFC settings from dcbnl, read on the live system only (a fixture root has no
         * kernel behind it): pfc_asked false under --root; pfc_errno 0 when pfc holds them. */
        bool pfc_asked;
        int pfc_errno;
        struct dcb_pfc pfc;
};

struct rdma_dev {
        char name[64];       /* "mlx5_0" */
        char pci_addr[16];   /* "0000:1c:00.0" ("" when its device link tells none) */
        char fw_ver[64];     /* "28.39.1002", "" unknown */
        char hca_type[64];   /* "MT4129", "" unknown */
        char board_id[64];   /* "MT_0000000838", "" unknown */
        char node_type[32];  /* "CA" (from "1: CA"), "" unknown */
        struct rdma_port *ports; /* sorted by number */
        size_t n_ports;
        int ports_errno;     /* why ports/ could not be listed, else 0 */
};

#define RDMA_MAX_LPF 8

struct rdma_facts {
        struct rdma_dev *devs; /* in f->netdev.rdma order (by name) */
        size_t n;
        /* GPUDirect Storage installed: /etc/cufile.json, the cuFile library's configuration
         * that the nvidia-gds package installs. */
        bool gds_config;
        /* The NVSwitch management ports of fourth-generation NVSwitch baseboards (HGX B200,
         * B300): the "limited" PCI functions (LPF) of the baseboard's ConnectX bridge, through
         * which the Fabric Manager and the NVLink Subnet Manager program the switches. Their
         * PCI VPD carries "SMDL=SW_MNG" (Fabric Manager User Guide). They carry no network
         * traffic, so they are kept out of devs and the network checks. Looked for only
         * when a GPU's board is one (gpus.json: its fabric services include NVLSM). */
        char nvswitch_lpf[RDMA_MAX_LPF][64]; /* the first RDMA_MAX_LPF names */
        size_t n_nvswitch_lpf;               /* all of them */
};

/* Gather f->rdma for every device of f->netdev.rdma (netdev_gather first). Returns 0, or
 * -ENOMEM. */
int rdma_gather(struct fsroot *fs, struct facts *f);
void rdma_facts_done(struct rdma_facts *x);

/* Pure parsers of ib_core's sysfs values (fuzzed: tests/fuzz/fuzz_rdma.c). Each returns 0,
 * or -EINVAL leaving the outputs untouched. */
/* "4: ACTIVE" / "5: LinkUp": the number (0..255) and the name (copied to name, truncated). */
int rdma_parse_state(const char *s, int *ret_num, char *name, size_t size);
/* "400 Gb/sec (4X NDR)", "25 Gb/sec (1X EDR)", "10 Gb/sec (4X)", "2.5 Gb/sec (1X SDR)":
 * Gb/s (> 0, <= 100000), width (1..32, 0 when not given) and speed name ("" when none). */
int rdma_parse_rate(const char *s, double *ret_gbps, unsigned *ret_width, char *speed, size_t size);
/* "InfiniBand", "Ethernet". */
int rdma_parse_link_layer(const char *s, enum rdma_link_layer *ret);

const char *rdma_link_layer_name(enum rdma_link_layer l);
const char *rdma_counter_name(enum rdma_counter c);
const char *rdma_hw_counter_name(enum rdma_hw_counter c);
