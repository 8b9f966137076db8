/* The NVIDIA kernel driver as the OS shows it: module, version, nouveau, persistence daemon. */
#pragma once

#include <stdbool.h>

struct fsroot;
struct facts;

struct nvidia_facts {
        bool module_loaded;          /* "nvidia" in /proc/modules, /sys/module/nvidia or its /proc file */
        bool module_state_known;     /* module_loaded, or /proc/modules was read and lacks it */
        bool have_version;
        char driver_version[32];     /* "550.54.15", from /proc/driver/nvidia/version */
        char version_line[256];      /* its first line, for evidence */
        bool open_kernel_module;     /* "Open Kernel Module" in that line */
        char module_taint[16];       /* /sys/module/nvidia/taint: "OE" = out-of-tree, unsigned */
        bool nouveau_loaded;         /* "nouveau" in /proc/modules or /sys/module/nouveau */
        bool nouveau_blacklisted;    /* "blacklist nouveau" in /etc/modprobe.d or /lib/modprobe.d */
        bool persistenced_running;   /* a process named nvidia-persistenced ("nvidia-persiste" in comm) */
        int persistenced_pid;        /* 0 when not running */

        /* Why have_version is false: -ENOENT (no file: module not loaded), -EINVAL (no
         * version in it), or the read error. 0 when have_version. */
        int version_errno;
        bool have_taint;             /* module_taint was read ("" = untainted) */
        char nouveau_blacklist_file[256]; /* the modprobe.d file that blacklists nouveau */
        bool nouveau_modeset_off;    /* "options nouveau modeset=0" in modprobe.d */
        /* How the daemon was found: "/proc/<pid>/comm" or the pid file; "" when not. */
        char persistenced_source[96];
        int proc_errno;              /* 0, or why /proc could not be listed */

        /* NVIDIA Fabric Manager (NVSwitch systems), looked for when the nvidia module is
         * loaded: a process named nv-fabricmanager, and the version of the installed
         * nvidia-fabricmanager package from the dpkg database ("" when not found there). */
        int fabricmanager_pid;              /* 0 when not running */
        char fabricmanager_version[32];     /* "550.54.15" (Debian revision dropped) */
        char fabricmanager_package[64];     /* "nvidia-fabricmanager-550" */

        /* NVIDIA IMEX daemon (multi-node NVLink compute trays: GB200/GB300 NVL72), looked for
         * the same way: a process named nvidia-imex. */
        int imex_pid;                       /* 0 when not running */

        /* NVIDIA NVLink Subnet Manager (fourth-generation NVSwitch baseboards: HGX B200,
         * B300), looked for the same way: a process named nvlsm. */
        int nvlsm_pid;                      /* 0 when not running */
};

/* Fills f->nvidia; reads /proc/driver/nvidia/version, /sys/module/nvidia/taint,
 * modprobe.d files and /proc/<pid>/comm. Uses f->host (modules). Returns 0 (unreadable
 * files become unknown fields) or -ENOMEM. */
int nvidia_gather(struct fsroot *fs, struct facts *f);
void nvidia_facts_done(struct nvidia_facts *x);
