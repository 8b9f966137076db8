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

#include "data/xiddb.h"

struct gpu_tflops {
        double fp64, fp64_tc, fp32, tf32, fp16, bf16, fp8, int8; /* dense; 0 = not supported */
};

struct gpu_model {
        const char *name;  /* as nvidia-smi prints it: "NVIDIA H100 80GB HBM3" */
        const char *arch;  /* key into the architecture list: "hopper" */
        int cc_major, cc_minor;
        const char *form;  /* "sxm", "pcie", "nvl", "superchip" */
        bool datacenter;   /* ECC and persistence expectations differ */
        double memory_gb;
        double mem_bw_gbps;
        unsigned pcie_gen, pcie_width;
        unsigned nvlink_links;
        double nvlink_gbps_per_dir;
        unsigned max_power_w;
        struct gpu_tflops tflops;
        uint16_t device_ids[12];
        size_t n_device_ids;
};

struct gpu_arch {
        const char *id;     /* "hopper" */
        const char *name;   /* "Hopper" */
        const char *sm;     /* "sm_90" */
        int cc_major, cc_minor;
        const char *min_driver;       /* oldest driver that supports the architecture */
        const char *last_cuda_major;  /* "12" for Volta (CUDA 13 dropped it); NULL if current */
        const char *min_cuda;         /* oldest CUDA that knows it: "11.8" for Hopper */
};

struct gpudb {
        struct gpu_model *models;
        size_t n_models;
        struct gpu_arch *archs;
        size_t n_archs;
        void *json; /* keeps the strings alive */
        char source[512];
        struct xiddb xids; /* the Xid table, loaded with the GPU table from the same place */
};

/* Load from DIR/gpus.json, or the compiled-in table when dir is NULL; the Xid table from
 * DIR/xid.json when present, else the compiled-in one. On a malformed file
 * returns -EINVAL and writes a message naming the file and the problem to err. */
int gpudb_load(const char *dir, struct gpudb **ret, char *err, size_t errsize);
/* The same from a buffer of len bytes (need not be NUL-terminated); source names it in
 * messages. Used by gpudb_load and by the fuzzer (tests/fuzz/fuzz_gpudb.c). */
int gpudb_load_buffer(const char *buf, size_t len, const char *source, struct gpudb **ret, char *err,
                      size_t errsize);
struct gpudb *gpudb_free(struct gpudb *db);

const struct gpu_model *gpudb_find(const struct gpudb *db, uint32_t vendor, uint32_t device);
const struct gpu_arch *gpudb_arch(const struct gpudb *db, const char *id);
