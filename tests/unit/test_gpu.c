#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "checks/check.h"
#include "core/fsroot.h"
#include "core/strv.h"
#include "data/gpudb.h"
#include "tree.h"

/* A node with n GPUs: device ids from ids[], drivers from drivers[]. */
struct node {
        struct facts f;
        struct pci_dev devs[4];
        struct gpu gpus[4];
        struct gpudb *db;
        struct report rep;
};

static void node_init(struct node *n, size_t count, const uint32_t *ids, const char *const *drivers) {
        memset(n, 0, sizeof(*n));
        char err[256];
        assert_int_equal(gpudb_load(NULL, &n->db, err, sizeof(err)), 0);
        n->f.db = n->db;
        for (size_t i = 0; i < count; i++) {
                struct pci_dev *d = &n->devs[i];
                char addr[16];
                snprintf(addr, sizeof(addr), "0000:%02zx:00.0", 0x1b + i);
                memcpy(d->addr, addr, sizeof(addr));
                snprintf(d->sysfs_path, sizeof(d->sysfs_path), "/sys/devices/pci0000:00/%s", addr);
                d->have_ids = true;
                d->vendor = 0x10de;
                d->device = ids[i];
                d->class_code = 0x030200;
                snprintf(d->driver, sizeof(d->driver), "%s", drivers[i]);
                n->gpus[i].pci_index = i;
                n->gpus[i].model = gpudb_find(n->db, 0x10de, ids[i]);
        }
        n->f.pci.devs = n->devs;
        n->f.pci.n = count;
        n->f.gpus.gpus = n->gpus;
        n->f.gpus.n = count;
        n->f.host.have_modules = true;
        n->f.nvidia.module_state_known = true;
        report_init(&n->rep);
}

static void node_done(struct node *n) {
        report_done(&n->rep);
        strv_free(n->f.host.modules);
        gpudb_free(n->db);
}

static const struct result *run(struct node *n, const struct check_info *c) {
        report_done(&n->rep);
        report_init(&n->rep);
        c->run(c, &n->f, &n->rep);
        assert_true(n->rep.n_results >= 1);
        return &n->rep.results[0];
}

static const char *evidence(const struct result *r, const char *key) {
        for (size_t i = 0; i < r->n_evidence; i++)
                if (strcmp(r->evidence[i].key, key) == 0)
                        return r->evidence[i].value;
        return NULL;
}

static const uint32_t h100[] = {0x2330, 0x2330};
static const char *const nvidia2[] = {"nvidia", "nvidia"};

static void test_no_gpus(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 0, NULL, NULL);
        const struct check_info *all[] = {&check_gpu_inventory, &check_gpu_driver_binding, &check_gpu_nouveau,
                                          &check_gpu_driver_version, &check_gpu_persistenced};
        for (size_t i = 0; i < 5; i++) {
                const struct result *r = run(&n, all[i]);
                assert_int_equal(r->status, STATUS_SKIP);
                assert_string_equal(r->summary, "no NVIDIA GPU on the PCI bus");
        }
        node_done(&n);
}

static void test_inventory(void **state) {
        (void)state;
        const uint32_t ids[] = {0x2330, 0x9999};
        const char *const drv[] = {"nvidia", "nvidia"};
        struct node n;
        node_init(&n, 2, ids, drv);
        run(&n, &check_gpu_inventory);
        assert_int_equal(n.rep.n_results, 2);
        const struct result *r = &n.rep.results[0];
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->subject, "0000:1b:00.0");
        assert_string_equal(r->observed, "NVIDIA H100 80GB HBM3, Hopper, compute capability 9.0");
        assert_string_equal(r->expected, "a GPU model in gpuvet's table");
        assert_string_equal(evidence(r, "pci_id"), "10de:2330");
        r = &n.rep.results[1];
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "NVIDIA GPU 10de:9999");
        assert_non_null(strstr(r->summary, "not in gpuvet's GPU table"));
        assert_non_null(strstr(r->remedy, "--data-dir"));
        node_done(&n);
}

static void test_driver_binding(void **state) {
        (void)state;
        const uint32_t ids[] = {0x2330, 0x2330, 0x2330, 0x2330};
        const char *const drv[] = {"nvidia", "vfio-pci", "nouveau", ""};
        struct node n;
        node_init(&n, 4, ids, drv);
        run(&n, &check_gpu_driver_binding);
        assert_int_equal(n.rep.n_results, 4);
        const struct result *r = n.rep.results;
        assert_int_equal(r[0].status, STATUS_PASS);
        assert_string_equal(r[0].observed, "nvidia");
        assert_string_equal(r[0].expected, "nvidia (vfio-pci when passed through to a VM)");
        assert_int_equal(r[1].status, STATUS_PASS);
        assert_non_null(strstr(r[1].summary, "reserved for passthrough"));
        assert_int_equal(r[2].status, STATUS_FAIL);
        assert_string_equal(r[2].observed, "nouveau");
        assert_non_null(strstr(r[2].remedy, "blacklist nouveau"));
        /* nvidia drives GPU 0, so GPU 3 without a driver failed to initialise: the GPU or
         * its slot, never "install the driver". */
        assert_int_equal(r[3].status, STATUS_FAIL);
        assert_string_equal(r[3].observed, "no driver");
        assert_string_equal(r[3].summary, "the nvidia driver failed to initialise NVIDIA H100 80GB HBM3 at 0000:1e:00.0: "
                                          "CUDA cannot use it");
        assert_non_null(strstr(r[3].remedy, "RMA"));
        assert_null(strstr(r[3].remedy, "Install"));
        node_done(&n);

        /* The kernel log names it: the line is quoted (another GPU's line is not). */
        node_init(&n, 4, ids, drv);
        struct xid_event faults[2] = {
                {.addr = "0000:1c:00.0", .text = "NVRM: GPU 0000:1c:00.0: RmInitAdapter failed! (0x24:0x72:1568)"},
                {.addr = "0000:1e:00.0", .text = "NVRM: GPU 0000:1e:00.0: GPU has fallen off the bus."},
        };
        n.f.xid.faults = faults;
        n.f.xid.n_faults = 2;
        run(&n, &check_gpu_driver_binding);
        r = n.rep.results;
        assert_string_equal(r[3].summary, "the nvidia driver failed to initialise NVIDIA H100 80GB HBM3 at 0000:1e:00.0; "
                                          "kernel log: NVRM: GPU 0000:1e:00.0: GPU has fallen off the bus.: CUDA "
                                          "cannot use it");
        /* A driver too old for the GPU says so: upgrading is the remedy. */
        snprintf(faults[1].text, sizeof(faults[1].text), "NVRM: The NVIDIA GPU 10de:2330 (PCI ID: 10de:2330) installed "
                                                         "in this system is not supported by the 470.256.02 NVIDIA");
        faults[1].addr[0] = '\0';
        run(&n, &check_gpu_driver_binding);
        r = n.rep.results;
        assert_non_null(strstr(r[3].summary, "does not support"));
        assert_non_null(strstr(r[3].remedy, "gpuvet detect"));
        n.f.xid.faults = NULL;
        n.f.xid.n_faults = 0;
        node_done(&n);

        /* No driver anywhere and no module: a fresh install. */
        const char *const none[] = {"", "", "", ""};
        node_init(&n, 4, ids, none);
        run(&n, &check_gpu_driver_binding);
        assert_non_null(strstr(n.rep.results[0].summary, "no driver is bound"));
        assert_non_null(strstr(n.rep.results[0].remedy, "Install the NVIDIA driver"));
        node_done(&n);
}

static void test_nouveau(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 2, h100, nvidia2);
        const struct result *r = run(&n, &check_gpu_nouveau);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "not loaded");
        assert_string_equal(r->expected, "nouveau not loaded");
        assert_string_equal(r->summary, "nouveau is not loaded (not blacklisted either)");

        n.f.nvidia.nouveau_blacklisted = true;
        strcpy(n.f.nvidia.nouveau_blacklist_file, "/etc/modprobe.d/blacklist-nouveau.conf");
        r = run(&n, &check_gpu_nouveau);
        assert_string_equal(r->summary, "nouveau is not loaded (blacklisted in /etc/modprobe.d/blacklist-nouveau.conf)");

        n.f.nvidia.nouveau_loaded = true;
        r = run(&n, &check_gpu_nouveau);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->observed, "loaded");
        assert_non_null(strstr(r->summary, "initramfs"));
        assert_non_null(strstr(r->remedy, "options nouveau modeset=0"));
        assert_non_null(strstr(r->remedy, "update-initramfs -u"));
        assert_non_null(strstr(r->remedy, "dracut --force"));

        n.f.nvidia.nouveau_blacklisted = false;
        r = run(&n, &check_gpu_nouveau);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary, "nouveau is loaded: it holds the GPUs and keeps the nvidia driver from binding");

        /* The blacklist given on the kernel command line counts too. */
        n.f.nvidia.nouveau_loaded = false;
        n.f.host.cmdline = "ro quiet modprobe.blacklist=snd_hda_intel,nouveau";
        r = run(&n, &check_gpu_nouveau);
        assert_string_equal(r->summary, "nouveau is not loaded (blacklisted in kernel command line)");
        n.f.host.cmdline = NULL;

        n.f.host.have_modules = false;
        r = run(&n, &check_gpu_nouveau);
        assert_int_equal(r->status, STATUS_ERROR);
        node_done(&n);
}

static void test_driver_version(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 2, h100, nvidia2);
        const struct result *r = run(&n, &check_gpu_driver_version);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->observed, "nvidia module not loaded");
        assert_string_equal(r->expected, "nvidia module >= 520.61.05 (Hopper, NVIDIA H100 80GB HBM3)");
        assert_non_null(r->remedy);

        /* /proc/modules unreadable and nothing else shows the module: unknown, not absent. */
        n.f.host.have_modules = false;
        n.f.host.modules_errno = -EACCES;
        n.f.nvidia.module_state_known = false;
        r = run(&n, &check_gpu_driver_version);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "cannot read /proc/modules (Permission denied): whether the nvidia module is "
                                        "loaded is unknown");
        n.f.host.have_modules = true;
        n.f.nvidia.module_state_known = true;

        n.f.nvidia.module_loaded = true;
        n.f.nvidia.version_errno = -ENOENT;
        r = run(&n, &check_gpu_driver_version);
        assert_int_equal(r->status, STATUS_ERROR);
        assert_string_equal(r->summary, "the nvidia module is loaded but /proc/driver/nvidia/version is missing");

        n.f.nvidia.version_errno = 0;
        n.f.nvidia.have_version = true;
        strcpy(n.f.nvidia.driver_version, "550.54.15");
        strcpy(n.f.nvidia.version_line, "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build");
        n.f.nvidia.open_kernel_module = true;
        r = run(&n, &check_gpu_driver_version);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "550.54.15 (open kernel module)");
        assert_string_equal(r->summary, "nvidia driver 550.54.15 loaded (open kernel module)");

        strcpy(n.f.nvidia.driver_version, "515.105.01");
        n.f.nvidia.open_kernel_module = false;
        r = run(&n, &check_gpu_driver_version);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->observed, "515.105.01 (proprietary kernel module)");
        assert_string_equal(r->summary,
                            "driver 515.105.01 is older than 520.61.05, the first to support Hopper (NVIDIA H100 80GB HBM3)");
        node_done(&n);

        /* R580 is the last branch for Volta (and Pascal): a newer driver does not drive it. */
        static const uint32_t mixed[] = {0x1db5, 0x2235};
        node_init(&n, 2, mixed, nvidia2);
        n.f.nvidia.module_loaded = n.f.nvidia.have_version = true;
        strcpy(n.f.nvidia.driver_version, "590.48.01");
        r = run(&n, &check_gpu_driver_version);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->expected, "nvidia module >= 455.23 (this model, NVIDIA A40), of branch R580 or older "
                                         "(Volta)");
        assert_string_equal(r->summary, "driver 590.48.01 (R590) does not support Volta (Tesla V100-SXM2-32GB): R580 is "
                                        "the last branch that does");
        assert_non_null(strstr(r->remedy, "newest R580 driver"));
        strcpy(n.f.nvidia.driver_version, "580.95.05");
        r = run(&n, &check_gpu_driver_version);
        assert_int_equal(r->status, STATUS_PASS);
        /* GA10x (A40, sm_86) needs the CUDA 11.1 driver, above Ampere's 450.36.06. */
        strcpy(n.f.nvidia.driver_version, "450.80.02");
        r = run(&n, &check_gpu_driver_version);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary, "driver 450.80.02 is older than 455.23, the first to support this model "
                                        "(NVIDIA A40)");
        node_done(&n);
}

/* Blackwell (and Grace Hopper) run only on the open kernel modules, Maxwell to Volta only
 * on the proprietary ones: under the other flavour the GPUs never initialise. */
static void test_driver_module_flavour(void **state) {
        (void)state;
        static const uint32_t b300[] = {0x3182, 0x3182};
        struct node n;
        node_init(&n, 2, b300, nvidia2);
        n.f.nvidia.module_loaded = n.f.nvidia.have_version = true;
        strcpy(n.f.nvidia.driver_version, "580.95.05");
        const struct result *r = run(&n, &check_gpu_driver_version);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary, "Blackwell Ultra GPUs (NVIDIA B300 SXM6 AC) run only on the open kernel modules, "
                                        "and the proprietary module is loaded: the GPUs do not initialise");
        assert_non_null(strstr(r->remedy, "Install the open kernel modules (nvidia-open)"));
        n.f.nvidia.open_kernel_module = true;
        r = run(&n, &check_gpu_driver_version);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->summary, "nvidia driver 580.95.05 loaded (open kernel module)");
        node_done(&n);

        /* GH200 is Hopper, but Grace Hopper runs only the open modules (its own row says so). */
        static const uint32_t gh200[] = {0x2342, 0x2342};
        node_init(&n, 2, gh200, nvidia2);
        n.f.nvidia.module_loaded = n.f.nvidia.have_version = true;
        strcpy(n.f.nvidia.driver_version, "570.133.20");
        r = run(&n, &check_gpu_driver_version);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->summary, "NVIDIA GH200 480GB GPUs run only on the open kernel modules"));
        node_done(&n);

        /* Pascal and Volta: the open modules do not drive them. */
        static const uint32_t p100[] = {0x15f9, 0x15f9};
        node_init(&n, 2, p100, nvidia2);
        n.f.nvidia.module_loaded = n.f.nvidia.have_version = true;
        n.f.nvidia.open_kernel_module = true;
        strcpy(n.f.nvidia.driver_version, "580.95.05");
        r = run(&n, &check_gpu_driver_version);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_string_equal(r->summary, "Pascal GPUs (Tesla P100-SXM2-16GB) run only on the proprietary kernel modules, "
                                        "and the open module is loaded: the GPUs do not initialise");
        assert_non_null(strstr(r->remedy, "proprietary kernel modules of an R580 or older branch"));
        n.f.nvidia.open_kernel_module = false;
        assert_int_equal(run(&n, &check_gpu_driver_version)->status, STATUS_PASS);
        node_done(&n);

        /* Hopper and Ampere take either. */
        node_init(&n, 2, h100, nvidia2);
        n.f.nvidia.module_loaded = n.f.nvidia.have_version = true;
        strcpy(n.f.nvidia.driver_version, "550.54.15");
        assert_int_equal(run(&n, &check_gpu_driver_version)->status, STATUS_PASS);
        n.f.nvidia.open_kernel_module = true;
        assert_int_equal(run(&n, &check_gpu_driver_version)->status, STATUS_PASS);
        node_done(&n);
}

static void test_driver_version_passthrough(void **state) {
        (void)state;
        const char *const vfio[] = {"vfio-pci", "vfio-pci"};
        struct node n;
        node_init(&n, 2, h100, vfio);
        const struct result *r = run(&n, &check_gpu_driver_version);
        assert_int_equal(r->status, STATUS_SKIP);
        r = run(&n, &check_gpu_persistenced);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "no GPU is bound to the nvidia driver");
        node_done(&n);
}

static void test_persistenced(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 2, h100, nvidia2);
        const struct result *r = run(&n, &check_gpu_persistenced);
        assert_int_equal(r->status, STATUS_WARN);
        assert_string_equal(r->observed, "not running");
        assert_string_equal(r->expected, "nvidia-persistenced running");
        assert_non_null(strstr(r->remedy, "systemctl enable --now nvidia-persistenced"));

        n.f.nvidia.proc_errno = -EACCES;
        r = run(&n, &check_gpu_persistenced);
        assert_int_equal(r->status, STATUS_ERROR);

        n.f.nvidia.persistenced_running = true;
        n.f.nvidia.persistenced_pid = 1234;
        strcpy(n.f.nvidia.persistenced_source, "/proc/1234/comm");
        r = run(&n, &check_gpu_persistenced);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "running (pid 1234)");
        assert_string_equal(evidence(r, "source"), "/proc/1234/comm");
        node_done(&n);
}

/* The gatherer on a tiny tree: version file, taint, modprobe.d, /proc comm. */
static void test_gather(void **state) {
        (void)state;
        char *root = tree_new("gpu");
        tree_put(root, "/proc/driver/nvidia/version",
                 "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
                 "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n");
        tree_put(root, "/sys/module/nvidia/taint", "POE\n");
        tree_put(root, "/etc/modprobe.d/blacklist-nouveau.conf",
                 "# keep nouveau away\nblacklist nouveau\noptions nouveau modeset=0\n");
        tree_put(root, "/lib/modprobe.d/nouveau.txt", "blacklist other\n");
        tree_put(root, "/proc/1/comm", "systemd\n");
        tree_put(root, "/proc/812/comm", "nvidia-persiste\n");
        tree_put(root, "/proc/self/comm", "nvidia-persiste\n");
        tree_put(root, "/proc/modules", "nvidia_uvm 1 0 - Live 0x0\nnvidia 2 0 - Live 0x0\n");

        struct fsroot *fs;
        assert_int_equal(fsroot_open(root, &fs), 0);
        struct facts f;
        memset(&f, 0, sizeof(f));
        assert_int_equal(host_gather(fs, &f.host), 0);
        assert_int_equal(nvidia_gather(fs, &f), 0);
        assert_true(f.nvidia.module_loaded);
        assert_false(f.nvidia.nouveau_loaded);
        assert_true(f.nvidia.have_version);
        assert_string_equal(f.nvidia.driver_version, "550.54.15");
        assert_false(f.nvidia.open_kernel_module);
        assert_true(f.nvidia.have_taint);
        assert_string_equal(f.nvidia.module_taint, "POE");
        assert_true(f.nvidia.nouveau_blacklisted);
        assert_true(f.nvidia.nouveau_modeset_off);
        assert_string_equal(f.nvidia.nouveau_blacklist_file, "/etc/modprobe.d/blacklist-nouveau.conf");
        assert_true(f.nvidia.persistenced_running);
        assert_int_equal(f.nvidia.persistenced_pid, 812);
        assert_string_equal(f.nvidia.persistenced_source, "/proc/812/comm");
        nvidia_facts_done(&f.nvidia);

        /* A garbled version file, a stale pid file, no taint file. */
        tree_put(root, "/proc/driver/nvidia/version", "garbage\n");
        tree_put(root, "/run/nvidia-persistenced/nvidia-persistenced.pid", "1\n");
        tree_put(root, "/proc/812/comm", "bash\n");
        tree_unlink(root, "/sys/module/nvidia/taint");
        assert_int_equal(nvidia_gather(fs, &f), 0);
        assert_false(f.nvidia.have_version);
        assert_int_equal(f.nvidia.version_errno, -EINVAL);
        assert_string_equal(f.nvidia.version_line, "garbage");
        assert_false(f.nvidia.have_taint);
        assert_false(f.nvidia.persistenced_running);

        /* A live pid file is enough. */
        tree_put(root, "/run/nvidia-persistenced/nvidia-persistenced.pid", "812\n");
        tree_put(root, "/proc/812/comm", "nvidia-persiste\n");
        assert_int_equal(nvidia_gather(fs, &f), 0);
        assert_true(f.nvidia.persistenced_running);
        assert_string_equal(f.nvidia.persistenced_source, "/run/nvidia-persistenced/nvidia-persistenced.pid");

        /* hidepid: the pid's directory is there but its comm cannot be read. */
        tree_put(root, "/run/nvidia-persistenced/nvidia-persistenced.pid", "900\n");
        tree_mkdir(root, "/proc/900");
        assert_int_equal(nvidia_gather(fs, &f), 0);
        assert_true(f.nvidia.persistenced_running);
        assert_int_equal(f.nvidia.persistenced_pid, 900);

        /* A pid file naming a pid that is gone, and no daemon in /proc. */
        tree_put(root, "/run/nvidia-persistenced/nvidia-persistenced.pid", "4242\n");
        tree_put(root, "/proc/812/comm", "bash\n");
        tree_put(root, "/proc/self/comm", "bash\n");
        assert_int_equal(nvidia_gather(fs, &f), 0);
        assert_false(f.nvidia.persistenced_running);
        assert_int_equal(f.nvidia.persistenced_pid, 0);

        host_facts_done(&f.host);
        fsroot_free(fs);
        tree_remove(root);
}

static struct devnode node_of(const char *name, mode_t mode, unsigned major, unsigned minor) {
        struct devnode d = {.mode = mode, .major = major, .minor = minor};
        snprintf(d.name, sizeof(d.name), "%s", name);
        return d;
}

static void test_device_nodes(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 2, h100, nvidia2);
        struct devnode nodes[4] = {
                node_of("nvidiactl", S_IFCHR | 0666, 195, 255), node_of("nvidia-uvm", S_IFCHR | 0666, 508, 0),
                node_of("nvidia0", S_IFCHR | 0666, 195, 0), node_of("nvidia1", S_IFCHR | 0666, 195, 1)};
        struct devnode_facts *x = &n.f.devnodes;
        x->nodes = nodes;
        x->n = 4;
        x->any_device_node = true;
        x->params.mode = 0666;
        x->params.uid = x->params.gid = -1;
        x->modprobe_present = x->modprobe_setuid = true;
        const struct result *r = run(&n, &check_gpu_device_nodes);
        assert_int_equal(r->status, STATUS_PASS);
        assert_non_null(strstr(r->summary, "every user may open them"));
        assert_non_null(strstr(r->observed, "nvidiactl 0666 195:255"));

        /* A group-only setup names the group. */
        for (int i = 0; i < 4; i++)
                nodes[i].mode = S_IFCHR | 0660;
        x->params.gid = 44;
        strcpy(x->group_name, "video");
        r = run(&n, &check_gpu_device_nodes);
        assert_int_equal(r->status, STATUS_PASS);
        assert_non_null(strstr(r->summary, "only members of group video / gid 44"));

        /* Root only: every other user's CUDA job fails. */
        nodes[2].mode = S_IFCHR | 0600;
        r = run(&n, &check_gpu_device_nodes);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->summary, "only root may open /dev/nvidia0"));

        /* Missing uvm: nvidia-modprobe makes it on first use (warn), unless it cannot (fail). */
        nodes[2].mode = S_IFCHR | 0660;
        nodes[1].err = ENOENT;
        r = run(&n, &check_gpu_device_nodes);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->summary, "/dev/nvidia-uvm missing"));
        x->modprobe_setuid = false;
        r = run(&n, &check_gpu_device_nodes);
        assert_int_equal(r->status, STATUS_FAIL);

        /* The driver's own minors decide which GPU nodes must exist. */
        nodes[1].err = 0;
        x->modprobe_setuid = true;
        struct gpu_minor minors[2] = {{"0000:1b:00.0", 0}, {"0000:1c:00.0", 5}};
        x->gpu_minors = minors;
        x->n_gpu_minors = 2;
        r = run(&n, &check_gpu_device_nodes);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->summary, "/dev/nvidia5 missing"));

        /* A regular file where a node should be. */
        x->n_gpu_minors = 0;
        nodes[0].mode = S_IFREG | 0644;
        r = run(&n, &check_gpu_device_nodes);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->summary, "/dev/nvidiactl is not a character device"));

        /* A capture without nodes cannot tell; no GPU on nvidia: nothing to judge. */
        x->any_device_node = false;
        r = run(&n, &check_gpu_device_nodes);
        assert_int_equal(r->status, STATUS_SKIP);
        x->live = true;
        r = run(&n, &check_gpu_device_nodes);
        assert_int_equal(r->status, STATUS_FAIL);

        /* No /dev to list: the live node's fault, but a capture that holds no /dev at all
         * (another tool's files) cannot tell: a skip, not an error that fails the verdict. */
        x->list_errno = ENOENT;
        r = run(&n, &check_gpu_device_nodes);
        assert_int_equal(r->status, STATUS_ERROR);
        x->live = false;
        n.f.capture_lacks = CAPTURE_DEV;
        r = run(&n, &check_gpu_device_nodes);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_string_equal(r->summary, "the capture (--root) holds no /dev: /dev cannot be judged from it");
        n.f.capture_lacks = CAPTURE_PROC; /* another tree missing says nothing about /dev */
        r = run(&n, &check_gpu_device_nodes);
        assert_int_equal(r->status, STATUS_ERROR);
        n.f.capture_lacks = 0;
        x->list_errno = 0;
        x->nodes = NULL;
        x->n = 0;
        x->gpu_minors = NULL;
        strcpy(n.devs[0].driver, "vfio-pci");
        strcpy(n.devs[1].driver, "vfio-pci");
        r = run(&n, &check_gpu_device_nodes);
        assert_int_equal(r->status, STATUS_SKIP);
        node_done(&n);
}

static void test_cuda_env(void **state) {
        (void)state;
        struct node n;
        node_init(&n, 2, h100, nvidia2);
        struct cuda_env_var vars[3] = {
                {"CUDA_HOME", "/usr/local/cuda", "/etc/profile.d/cuda.sh:1"},
                {"CUDA_LAUNCH_BLOCKING", "0", "/etc/environment:2"},
                {"CUDA_VISIBLE_DEVICES", "3", "environment"},
        };
        n.f.cuda_env.vars = vars;
        n.f.cuda_env.n = 3;
        /* Harmless: a path, a flag turned off, a job's own GPU list. */
        const struct result *r = run(&n, &check_gpu_cuda_env);
        assert_int_equal(r->status, STATUS_PASS);
        assert_non_null(strstr(r->observed, "CUDA_HOME=/usr/local/cuda (/etc/profile.d/cuda.sh:1)"));

        strcpy(vars[1].value, "1");
        strcpy(vars[2].where, "/etc/environment:3");
        r = run(&n, &check_gpu_cuda_env);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->summary, "CUDA_LAUNCH_BLOCKING=1 in /etc/environment:2"));
        assert_non_null(strstr(r->summary, "CUDA_VISIBLE_DEVICES=3 in /etc/environment:3"));
        assert_non_null(strstr(r->remedy, "/etc/environment:2, /etc/environment:3"));

        n.f.cuda_env.n = 0;
        r = run(&n, &check_gpu_cuda_env);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "no CUDA variables set");
        node_done(&n);
}

/* The two gatherers on a tree (regular files stand where nodes would be: no mknod here). */
static void test_gather_env_and_nodes(void **state) {
        (void)state;
        char *root = tree_new("env");
        tree_put(root, "/etc/environment", "PATH=\"/usr/bin\"\nCUDA_CACHE_MAXSIZE=\"4294967296\"\n");
        tree_put(root, "/etc/profile.d/cuda.sh",
                 "# CUDA\nexport PATH=/usr/local/cuda/bin:$PATH\n  export CUDA_INJECTION64_PATH='/opt/t/libinj.so';\n");
        tree_put(root, "/etc/profile.d/notes.txt", "CUDA_PROFILE=1\n");
        const char environ[] = "HOME=/root\0CUDA_VISIBLE_DEVICES=0,1\0NSIGHT_CUDA_DEBUGGER=1";
        tree_put_bytes(root, "/proc/self/environ", environ, sizeof(environ));
        tree_put(root, "/proc/driver/nvidia/params", "ModifyDeviceFiles: 1\nDeviceFileUID: 0\nDeviceFileGID: 44\n"
                                                      "DeviceFileMode: 432\n");
        tree_put(root, "/proc/driver/nvidia/gpus/0000:1b:00.0/information", "Model: x\nDevice Minor: 3\n");
        tree_put(root, "/etc/group", "root:x:0:\nvideo::44:alice\n");
        tree_put(root, "/dev/nvidia3", "");
        tree_put(root, "/dev/nvidia10", "");
        tree_put(root, "/dev/nvidiactl", "");

        struct fsroot *fs;
        assert_int_equal(fsroot_open(root, &fs), 0);
        struct facts f;
        memset(&f, 0, sizeof(f));
        assert_int_equal(cuda_env_gather(fs, &f), 0);
        assert_int_equal(f.cuda_env.n, 4);
        assert_string_equal(f.cuda_env.vars[0].name, "CUDA_VISIBLE_DEVICES");
        assert_string_equal(f.cuda_env.vars[0].where, "environment");
        assert_string_equal(f.cuda_env.vars[1].name, "NSIGHT_CUDA_DEBUGGER");
        assert_string_equal(f.cuda_env.vars[2].name, "CUDA_CACHE_MAXSIZE");
        assert_string_equal(f.cuda_env.vars[2].value, "4294967296");
        assert_string_equal(f.cuda_env.vars[2].where, "/etc/environment:2");
        assert_string_equal(f.cuda_env.vars[3].name, "CUDA_INJECTION64_PATH");
        assert_string_equal(f.cuda_env.vars[3].value, "/opt/t/libinj.so");
        assert_string_equal(f.cuda_env.vars[3].where, "/etc/profile.d/cuda.sh:3");

        assert_int_equal(devnodes_gather(fs, &f), 0);
        assert_int_equal(f.devnodes.params.mode, 0660);
        assert_int_equal(f.devnodes.params.gid, 44);
        assert_string_equal(f.devnodes.group_name, "video");
        assert_int_equal(f.devnodes.n_gpu_minors, 1);
        assert_int_equal(f.devnodes.gpu_minors[0].minor, 3);
        assert_false(f.devnodes.any_device_node);
        assert_false(f.devnodes.caps_dir);
        /* Fixed names first, then GPU nodes in numeric order. */
        assert_int_equal(f.devnodes.n, 6);
        assert_string_equal(f.devnodes.nodes[0].name, "nvidiactl");
        assert_int_equal(f.devnodes.nodes[1].err, ENOENT);
        assert_string_equal(f.devnodes.nodes[4].name, "nvidia3");
        assert_string_equal(f.devnodes.nodes[5].name, "nvidia10");
        assert_true(S_ISREG(f.devnodes.nodes[4].mode));
        devnodes_facts_done(&f.devnodes);
        cuda_env_facts_done(&f.cuda_env);
        fsroot_free(fs);
        tree_remove(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_no_gpus),
                cmocka_unit_test(test_inventory),
                cmocka_unit_test(test_driver_binding),
                cmocka_unit_test(test_nouveau),
                cmocka_unit_test(test_driver_version),
                cmocka_unit_test(test_driver_module_flavour),
                cmocka_unit_test(test_driver_version_passthrough),
                cmocka_unit_test(test_persistenced),
                cmocka_unit_test(test_gather),
                cmocka_unit_test(test_device_nodes),
                cmocka_unit_test(test_cuda_env),
                cmocka_unit_test(test_gather_env_and_nodes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
