/* libFuzzer target: the whole quick check on machine files made from the input.
 *
 * The input is split at ASCII record separators (0x1e) into the contents of the files
 * below, written into a small tree that holds one GPU behind one bridge; then facts are
 * gathered, every check runs and the JSON report is built, as `gpuvet check --root` would.
 * This reaches the parsers that live inside gatherers (cpuinfo, modules, swaps,
 * interrupts, daemon.json, CDI specs, config space, efivars) with the real call paths. */
#include "checks/check.h"
#include "core/fsroot.h"
#include "report/report_json.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define GPU_DIR "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
#define BRIDGE_DIR "sys/devices/pci0000:00/0000:00:01.0"
#define NIC_DIR BRIDGE_DIR "/0000:01:00.1"
#define IB_DIR NIC_DIR "/infiniband/mlx5_0"

/* Fed from the input, in this order (seeds in corpus/gather follow it). */
static const char *const fuzzed[] = {
        "proc/cpuinfo",
        "proc/meminfo",
        "proc/modules",
        "proc/swaps",
        "proc/interrupts",
        "proc/cmdline",
        "proc/driver/nvidia/version",
        "etc/docker/daemon.json",
        "etc/containerd/config.toml",
        "etc/cdi/nvidia.yaml",
        GPU_DIR "/current_link_speed",
        GPU_DIR "/numa_node",
        GPU_DIR "/local_cpulist",
        GPU_DIR "/aer_dev_correctable",
        GPU_DIR "/resource",
        "sys/devices/system/node/node0/cpulist",
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
        "sys/kernel/mm/transparent_hugepage/enabled",
        "etc/os-release",
        BRIDGE_DIR "/config",
        "etc/modprobe.d/nvidia.conf",
        "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
        "sys/module/nvidia/taint",
        "proc/sys/kernel/numa_balancing",
        "dev/kmsg",
        /* An RDMA device beside the GPU (network checks); appended, so older seeds keep
         * their meaning. */
        IB_DIR "/ports/1/state",
        IB_DIR "/ports/1/phys_state",
        IB_DIR "/ports/1/rate",
        IB_DIR "/ports/1/link_layer",
        IB_DIR "/ports/1/counters/symbol_error",
        IB_DIR "/fw_ver",
        IB_DIR "/hca_type",
        NIC_DIR "/net/ens1np0/mtu",
        "proc/uptime",
};
#define N_FUZZED (sizeof(fuzzed) / sizeof(fuzzed[0]))

/* On tmpfs where there is one: ext4 flushes a file truncated and written again when it is
 * closed (auto_da_alloc), and that wait cut the executions a second by four. */
static char root[64];
static struct gpudb *db;

/* What each fuzzed file holds now: a run rewrites only the files whose content changed
 * (a mutation mostly touches one), which doubles the executions a second. */
static struct {
        unsigned char *content;
        size_t len;
        bool written;
} held[N_FUZZED];

static void write_file(const char *path, const void *content, size_t len) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                abort();
        if (len && write(fd, content, len) != (ssize_t)len)
                abort();
        close(fd);
}

static void put(const char *rel, const void *content, size_t len) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                (void)mkdir(path, 0755);
                *p = '/';
        }
        write_file(path, content, len);
}

static void put_fuzzed(size_t i, const void *content, size_t len) {
        if (held[i].written && held[i].len == len && (!len || memcmp(held[i].content, content, len) == 0))
                return;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", root, fuzzed[i]);
        write_file(path, content, len);
        unsigned char *copy = realloc(held[i].content, len ? len : 1);
        if (!copy)
                abort();
        if (len)
                memcpy(copy, content, len);
        held[i].content = copy;
        held[i].len = len;
        held[i].written = true;
}

static void link_at(const char *rel, const char *target) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        (void)symlink(target, path);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void)st;
        (void)flag;
        (void)ftw;
        (void)remove(path); /* best effort: a leftover tree harms nothing */
        return 0;
}

/* The tree lives in memory on tmpfs: it goes with the process. */
static void remove_tree(void) {
        (void)nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_tree(void) {
        struct stat shm;
        bool tmpfs = stat("/dev/shm", &shm) == 0 && S_ISDIR(shm.st_mode) && access("/dev/shm", W_OK) == 0;
        snprintf(root, sizeof(root), "%s/gpuvet-fuzz-gather-XXXXXX", tmpfs ? "/dev/shm" : "/tmp");
        if (!mkdtemp(root))
                abort();
        atexit(remove_tree);
        put(GPU_DIR "/vendor", "0x10de\n", 7);
        put(GPU_DIR "/device", "0x2330\n", 7);
        put(GPU_DIR "/class", "0x030200\n", 9);
        put(BRIDGE_DIR "/vendor", "0x8086\n", 7);
        put(BRIDGE_DIR "/device", "0x352a\n", 7);
        put(BRIDGE_DIR "/class", "0x060400\n", 9);
        put("sys/bus/pci/drivers/nvidia/.keep", "", 0);
        put("sys/bus/pci/devices/.keep", "", 0);
        link_at("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
        link_at("sys/bus/pci/devices/0000:01:00.0", "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0");
        link_at(GPU_DIR "/driver", "../../../../bus/pci/drivers/nvidia");
        put(NIC_DIR "/vendor", "0x15b3\n", 7);
        put(NIC_DIR "/device", "0x1021\n", 7);
        put(NIC_DIR "/class", "0x020700\n", 9);
        link_at("sys/bus/pci/devices/0000:01:00.1", "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.1");
        put(IB_DIR "/ports/1/counters/link_downed", "0\n", 2);
        put("sys/class/infiniband/.keep", "", 0);
        put("sys/class/net/.keep", "", 0);
        link_at("sys/class/infiniband/mlx5_0", "../../devices/pci0000:00/0000:00:01.0/0000:01:00.1/infiniband/mlx5_0");
        link_at(IB_DIR "/device", "../../../0000:01:00.1");
        put(NIC_DIR "/net/ens1np0/operstate", "up\n", 3);
        link_at("sys/class/net/ens1np0", "../../devices/pci0000:00/0000:00:01.0/0000:01:00.1/net/ens1np0");
        link_at(NIC_DIR "/net/ens1np0/device", "../../../0000:01:00.1");
        put("sys/devices/system/cpu/online", "0\n", 2);
        put("sys/devices/system/node/online", "0\n", 2);
        put("usr/bin/docker", "", 0);
        put("usr/bin/dockerd", "", 0);
        for (size_t i = 0; i < N_FUZZED; i++)
                put(fuzzed[i], "", 0); /* its directories, once */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (!db) {
                char err[256];
                make_tree();
                if (gpudb_load(NULL, &db, err, sizeof(err)) < 0)
                        abort();
        }
        size_t start = 0;
        for (size_t i = 0; i < N_FUZZED; i++) {
                size_t end = start;
                while (end < size && data[end] != 0x1e)
                        end++;
                put_fuzzed(i, data + (start < size ? start : size), start < size ? end - start : 0);
                start = end + 1;
        }

        struct fsroot *fs;
        if (fsroot_open(root, &fs) < 0)
                abort();
        struct facts facts;
        if (facts_gather(fs, db, &facts) == 0) {
                struct report rep;
                report_init(&rep);
                for (size_t i = 0; i < check_registry_count; i++)
                        check_registry[i]->run(check_registry[i], &facts, &rep);
                report_tally(&rep);
                for (size_t i = 0; i < rep.n_results; i++) {
                        const struct result *r = &rep.results[i];
                        /* Every result says what it found, and a skip or error says why. */
                        if (!r->summary || !*r->summary)
                                abort();
                }
                struct run_info run = {.command = "check", .level = LEVEL_QUICK, .root = root};
                free(report_json(&facts, &rep, &run));
                report_done(&rep);
        }
        facts_done(&facts);
        fsroot_free(fs);
        return 0;
}
