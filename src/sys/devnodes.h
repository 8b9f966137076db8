/* The NVIDIA device files CUDA opens: /dev/nvidiactl, /dev/nvidia<minor> per GPU,
 * /dev/nvidia-uvm(-tools), /dev/nvidia-modeset and the /dev/nvidia-caps directory, with
 * the access the driver was told to give them (NVreg_DeviceFile{Mode,UID,GID}). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct fsroot;
struct facts;

struct devnode {
        char name[24];      /* "nvidiactl", "nvidia0", "nvidia-uvm" */
        int err;            /* 0, or why stat failed (ENOENT: missing) */
        mode_t mode;        /* st_mode: type and permission bits */
        uid_t uid;
        gid_t gid;
        unsigned major, minor;
};

/* The driver's device-file parameters from /proc/driver/nvidia/params; -1 unknown. */
struct devnode_params {
        long mode; /* DeviceFileMode: 438 = 0666, the default */
        long uid;
        long gid;
};

struct devnode_facts {
        struct devnode *nodes; /* the fixed names first, then nvidia<N> by minor */
        size_t n;
        int list_errno;        /* 0, or why /dev could not be listed */
        bool any_device_node;  /* some character or block device exists in /dev (looked for in captures only) */
        bool caps_dir;         /* /dev/nvidia-caps is a directory */
        struct devnode_params params;
        /* Device minors the driver gave the GPUs ("Device Minor:" in
         * /proc/driver/nvidia/gpus/<addr>/information); the GPU's PCI address with each. */
        struct gpu_minor {
                char addr[16];
                unsigned minor;
        } *gpu_minors;
        size_t n_gpu_minors;
        char group_name[64];   /* the name of params.gid in /etc/group; "" unknown */
        /* nvidia-modprobe (set-user-ID root) creates missing nodes when CUDA first runs. */
        bool modprobe_present;
        bool modprobe_setuid;
        bool live;             /* read from the running system, not a capture */
};

/* Fills f->devnodes; reads /dev, /proc/driver/nvidia/{params,gpus/} and /etc/group.
 * Returns 0 (unreadable parts become unknown) or -ENOMEM. */
int devnodes_gather(struct fsroot *fs, struct facts *f);
void devnodes_facts_done(struct devnode_facts *x);
/* The node of that name, or NULL when it was not looked for. */
const struct devnode *devnodes_find(const struct devnode_facts *x, const char *name);
