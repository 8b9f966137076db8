/* The node as a reference sees it: the identity of every GPU and NIC and how they connect.
 * `gpuvet policy capture` writes it (policy/capture.c) and policy.reference compares a
 * node with what was written (checks/policy.c); both build it here, from the same facts,
 * so a node compared with its own capture never differs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "sys/nvml_facts.h"
#include "sys/topo.h"

struct facts;

struct golden_gpu {
        char bus_id[16];            /* sysfs form */
        char device_id[10];         /* "10de:2330" */
        char model[NV_STR_MAX];     /* NVML's name, else the GPU table's */
        bool model_from_nvml;
        char vbios[NV_STR_MAX];     /* "" when NVML did not tell */
        char inforom[NV_STR_MAX];   /* InfoROM image version, "" when unknown */
        int numa_node;              /* -1 when sysfs tells none */
};

struct golden_nic {
        char bus_id[16];
        char name[64]; /* RDMA device, else interface name, else "" */
        int numa_node;
};

struct golden {
        struct golden_gpu *gpus; /* facts.gpus order (PCI order) */
        size_t n_gpus;
        struct golden_nic *nics; /* PCI order */
        size_t n_nics;
        struct topo topo;        /* GPUs then NICs, in the orders above */
        char driver_version[NV_STR_MAX]; /* NVML's, else /proc/driver/nvidia/version, else "" */
};

/* Returns 0 or -ENOMEM. */
int golden_build(const struct facts *f, struct golden *ret);
void golden_done(struct golden *g);
