/* gpuvet's GPU table: PCI device id -> model, architecture, compute capability and the
 * spec-sheet figures later compared against (memory bandwidth, link, TFLOPS).
 *
 * The table is data/gpus.json, compiled in as the default and overridable with
 * --data-dir DIR or GPUVET_DATA_DIR (DIR/gpus.json). Distribution pci.ids files lag new
 * GPUs (Debian 12's does not name an L40S or H200), so names come from here. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data/nicdb.h"
#include "data/xiddb.h"

#include <pthread.h>

/* The kernel module flavours a GPU runs on (bits): NVIDIA's open GPU kernel modules, the
 * proprietary ones. 0: not stated, nothing is judged. */
enum {
        GPU_MODULES_OPEN = 1u << 0,
        GPU_MODULES_PROPRIETARY = 1u << 1,
};

/* The services an NVLink fabric of a board needs on the node (bits). */
enum {
        GPU_FABRIC_FABRICMANAGER = 1u << 0, /* nv-fabricmanager: NVSwitch baseboards */
        GPU_FABRIC_NVLSM = 1u << 1,         /* nvlsm: fourth-generation NVSwitches, reached through the
                                             * baseboard's ConnectX bridge, not the PCI bus */
        GPU_FABRIC_IMEX = 1u << 2,          /* nvidia-imex: multi-node NVLink compute trays */
};

struct gpu_tflops {
        double fp64, fp64_tc, fp32, tf32, fp16, bf16, fp8, int8, fp4; /* dense; 0 = not supported */
};

struct gpu_model {
        const char *name;  /* as nvidia-smi prints it: "NVIDIA H100 80GB HBM3" */
        const char *arch;  /* key into the architecture list: "hopper" */
        int cc_major, cc_minor;
        const char *form;  /* "sxm", "pcie", "nvl", "superchip" */
        const char *host_link;   /* "pcie", or "c2c" (NVLink-C2C to a Grace CPU: GH200, GB200, GB300) */
        const char *memory_type; /* "HBM3e", "GDDR7"; NULL when not known */
        const char *min_driver;  /* a model's own floor above its architecture's (GA10x, RTX PRO 6000); NULL if none */
        bool datacenter;   /* ECC and persistence expectations differ */
        double memory_gb;
        double mem_bw_gbps;
        unsigned pcie_gen, pcie_width;
        unsigned nvlink_links;
        bool nvlink_known;  /* nvlink_links was given: 0 means the board has no NVLink */
        bool nvlink_bridge; /* the links exist only with an optional bridge (PCIe and NVL boards) */
        double nvlink_gbps_per_dir;
        unsigned max_power_w;
        struct gpu_tflops tflops;
        uint16_t device_ids[12];
        size_t n_device_ids;
        /* Subsystem device ids that pick this model among several of one device id (A16
         * and A2 are both 10de:25b6); none: any. */
        uint16_t subsystem_ids[8];
        size_t n_subsystem_ids;
        unsigned kernel_modules; /* GPU_MODULES_*: the model's own (GH200), 0: its architecture's */
};

struct gpu_arch {
        const char *id;     /* "hopper" */
        const char *name;   /* "Hopper" */
        const char *sm;     /* "sm_90" */
        int cc_major, cc_minor;
        const char *min_driver;       /* oldest driver that supports the architecture */
        const char *last_cuda_major;  /* "12" for Volta (CUDA 13 dropped it); NULL if current */
        const char *min_cuda;         /* oldest CUDA that knows it: "11.8" for Hopper */
        unsigned last_branch;         /* newest driver branch that drives it (580 for Pascal, Volta); 0 = current */
        unsigned kernel_modules;      /* GPU_MODULES_*: the flavours that drive it; 0 = not stated */
        /* The fabric services a board of each form needs (GPU_FABRIC_*): "sxm" HGX
         * baseboards, "superchip" compute trays. */
        struct {
                const char *form;
                unsigned services;
        } fabric[4];
        size_t n_fabric;
};

struct gpudb {
        struct gpu_model *models;
        size_t n_models;
        struct gpu_arch *archs;
        size_t n_archs;
        void *json; /* keeps the strings alive */
        char source[512];
        /* The Xid table, read through gpudb_xids(). A DIR/xid.json is read with the GPU table,
         * so that a bad file stops the command at once; the compiled-in table, known good
         * (the datafiles test), is parsed on first use: most runs meet no Xid, and its parse
         * was a third of a quick check's instructions. */
        struct xiddb xids;
        bool xids_loaded;
        /* The RDMA NIC table, read through gpudb_nics(), the same way. */
        struct nicdb nics;
        bool nics_loaded;
        pthread_mutex_t lazy_lock; /* guards the tables parsed on first use */
};

/* Load from DIR/gpus.json, or the compiled-in table when dir is NULL; the Xid table from
 * DIR/xid.json when present, else the compiled-in one (and so the NIC table, nics.json).
 * On a malformed file
 * returns -EINVAL and writes a message naming the file and the problem to err. */
int gpudb_load(const char *dir, struct gpudb **ret, char *err, size_t errsize);
/* The same from a buffer of len bytes (need not be NUL-terminated); source names it in
 * messages. Used by gpudb_load and by the fuzzer (tests/fuzz/fuzz_gpudb.c). */
int gpudb_load_buffer(const char *buf, size_t len, const char *source, struct gpudb **ret, char *err,
                      size_t errsize);
struct gpudb *gpudb_free(struct gpudb *db);

/* The Xid table: DIR/xid.json's when --data-dir had one, else the compiled-in one (parsed
 * here the first time; thread-safe). Empty, never NULL, if even that could not be
 * parsed (out of memory): every code then reads as unknown. NULL only for a NULL db. */
const struct xiddb *gpudb_xids(const struct gpudb *db);
/* The RDMA NIC table, likewise: DIR/nics.json's, else the compiled-in one. */
const struct nicdb *gpudb_nics(const struct gpudb *db);

const struct gpu_model *gpudb_find(const struct gpudb *db, uint32_t vendor, uint32_t device);
/* The same, choosing by subsystem device id among models that share a device id: the
 * model listing subsys_device, else the first without a subsystem list, else the first. */
const struct gpu_model *gpudb_find_subsystem(const struct gpudb *db, uint32_t vendor, uint32_t device,
                                             uint32_t subsys_device);
/* The model's driver floor: its own, else its architecture's; NULL when unknown. */
const char *gpudb_min_driver(const struct gpudb *db, const struct gpu_model *m);
const struct gpu_arch *gpudb_arch(const struct gpudb *db, const char *id);
/* The kernel module flavours the model runs on (GPU_MODULES_*): its own, else its
 * architecture's; 0 when not stated. */
unsigned gpudb_kernel_modules(const struct gpudb *db, const struct gpu_model *m);
/* The fabric services a board of this model needs on its node (GPU_FABRIC_*), by its
 * architecture and form; 0 for none. */
unsigned gpudb_fabric_services(const struct gpudb *db, const struct gpu_model *m);
