#include "sys/nvidia.h"
#include "core/array.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "core/strv.h"
#include "sys/facts.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nvidia-persistenced's comm: the kernel keeps 15 characters of the name (TASK_COMM_LEN 16). */
#define PERSISTENCED_COMM "nvidia-persiste"
#define PERSISTENCED_PIDFILE "/run/nvidia-persistenced/nvidia-persistenced.pid"
/* nv-fabricmanager's comm, cut to 15 characters likewise. */
#define FABRICMANAGER_COMM "nv-fabricmanage"
/* nvidia-imex fits in comm whole. */
#define IMEX_COMM "nvidia-imex"
/* The NVLink Subnet Manager (/opt/nvidia/nvlsm/sbin/nvlsm) of fourth-generation NVSwitch
 * baseboards. */
#define NVLSM_COMM "nvlsm"
#define DPKG_STATUS "/var/lib/dpkg/status"

static void gather_version(struct fsroot *fs, struct nvidia_facts *x) {
        char *text;
        int r = fsroot_read_alloc(fs, "/proc/driver/nvidia/version", &text, NULL);
        if (r < 0) {
                x->version_errno = r;
                return;
        }
        size_t n = strcspn(text, "\n");
        snprintf(x->version_line, sizeof(x->version_line), "%.*s", (int)n, text);
        /* The open modules say "NVIDIA UNIX Open Kernel Module for x86_64  550.54.15 ...",
         * the proprietary ones "NVIDIA UNIX x86_64 Kernel Module  550.54.15 ...". */
        x->open_kernel_module = strstr(x->version_line, "Open Kernel Module") != NULL;
        r = parse_nvidia_version(text, x->driver_version, sizeof(x->driver_version));
        free(text);
        if (r < 0) {
                x->driver_version[0] = '\0';
                x->version_errno = -EINVAL;
                return;
        }
        x->have_version = true;
}

static bool has_suffix(const char *s, const char *suffix) {
        size_t n = strlen(s), m = strlen(suffix);
        return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* One modprobe.d file: "blacklist nouveau" and "options nouveau ... modeset=0". */
static void scan_modprobe_conf(const char *text, const char *path, struct nvidia_facts *x) {
        char buf[512];
        for (const char *line = text; text_next_line(&line, buf, sizeof(buf));) {

                char *save = NULL;
                const char *cmd = strtok_r(buf, " \t\r", &save);
                const char *mod = cmd ? strtok_r(NULL, " \t\r", &save) : NULL;
                if (!cmd || cmd[0] == '#' || !mod || strcmp(mod, "nouveau") != 0)
                        continue;
                if (strcmp(cmd, "blacklist") == 0 && !x->nouveau_blacklisted) {
                        x->nouveau_blacklisted = true;
                        snprintf(x->nouveau_blacklist_file, sizeof(x->nouveau_blacklist_file), "%s", path);
                } else if (strcmp(cmd, "options") == 0) {
                        for (const char *opt; (opt = strtok_r(NULL, " \t\r", &save));)
                                if (strcmp(opt, "modeset=0") == 0)
                                        x->nouveau_modeset_off = true;
                }
        }
}

static int gather_modprobe(struct fsroot *fs, struct nvidia_facts *x) {
        static const char *const dirs[] = {"/etc/modprobe.d", "/run/modprobe.d", "/lib/modprobe.d",
                                           "/usr/lib/modprobe.d"};
        char **paths;
        int r = fsroot_list_dirs(fs, dirs, ARRAY_COUNT(dirs), &paths);
        if (r < 0)
                return r;
        for (char **p = paths; *p; p++) {
                /* modprobe reads only *.conf files in these directories. */
                char *text;
                if (!has_suffix(*p, ".conf") || fsroot_read_alloc(fs, *p, &text, NULL) < 0)
                        continue;
                scan_modprobe_conf(text, *p, x);
                free(text);
        }
        strv_free(paths);
        return 0;
}

static bool all_digits(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if (!isdigit((unsigned char)*s))
                        return false;
        return true;
}

/* 1: pid's comm names the daemon, 0: it names another process, negative errno: unreadable. */
static int comm_is_persistenced(struct fsroot *fs, const char *pid) {
        char comm[32];
        int r = fsroot_read_strf(fs, comm, sizeof(comm), "/proc/%s/comm", pid);
        return r < 0 ? r : strcmp(comm, PERSISTENCED_COMM) == 0;
}

static void found_persistenced(struct nvidia_facts *x, const char *pid, const char *source) {
        x->persistenced_running = true;
        (void)parse_int(pid, &x->persistenced_pid);
        snprintf(x->persistenced_source, sizeof(x->persistenced_source), "%s", source);
}

static int gather_persistenced(struct fsroot *fs, struct nvidia_facts *x) {
        /* The pid file first: one read instead of a walk over every process. A stale file
         * (daemon gone, pid reused) is caught by that pid's directory and comm; a comm we
         * may not read (/proc mounted with hidepid) still counts as the daemon. */
        char pid[32], dir[48];
        if (fsroot_read_str(fs, PERSISTENCED_PIDFILE, pid, sizeof(pid)) == 0 && all_digits(pid) &&
            snprintf(dir, sizeof(dir), "/proc/%s", pid) < (int)sizeof(dir) && fsroot_is_dir(fs, dir) &&
            comm_is_persistenced(fs, pid) != 0) {
                found_persistenced(x, pid, PERSISTENCED_PIDFILE);
                return 0;
        }
        char **names;
        int r = fsroot_list(fs, "/proc", &names);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                x->proc_errno = r;
                return 0;
        }
        for (char **n = names; *n; n++) {
                if (!all_digits(*n) || comm_is_persistenced(fs, *n) <= 0)
                        continue;
                char source[64];
                snprintf(source, sizeof(source), "/proc/%s/comm", *n);
                found_persistenced(x, *n, source);
                break;
        }
        strv_free(names);
        return 0;
}

/* The fabric daemons, in one walk of /proc: the Fabric Manager and, from the fourth
 * NVSwitch generation (HGX B200/B300), the NVLink Subnet Manager (NVSwitch baseboards);
 * the IMEX daemon (multi-node NVLink compute trays). */
static void gather_fabric_daemon_pids(struct fsroot *fs, struct nvidia_facts *x) {
        char **names;
        if (fsroot_list(fs, "/proc", &names) < 0)
                return; /* proc_errno already says why, from the persistenced walk */
        for (char **n = names; *n && !(x->fabricmanager_pid && x->imex_pid && x->nvlsm_pid); n++) {
                char comm[32];
                if (!all_digits(*n) || fsroot_read_strf(fs, comm, sizeof(comm), "/proc/%s/comm", *n) < 0)
                        continue;
                if (!x->fabricmanager_pid && strcmp(comm, FABRICMANAGER_COMM) == 0)
                        (void)parse_int(*n, &x->fabricmanager_pid);
                else if (!x->imex_pid && strcmp(comm, IMEX_COMM) == 0)
                        (void)parse_int(*n, &x->imex_pid);
                else if (!x->nvlsm_pid && strcmp(comm, NVLSM_COMM) == 0)
                        (void)parse_int(*n, &x->nvlsm_pid);
        }
        strv_free(names);
}

/* The installed nvidia-fabricmanager[-<branch>] package in dpkg's status file: its
 * upstream version (epoch and Debian revision dropped) matches the driver's when the two
 * come from the same release. RPM's database is not a text file: on RHEL the version stays
 * unknown. */
static void gather_fabricmanager_version(struct fsroot *fs, struct nvidia_facts *x) {
        char *text;
        if (fsroot_read_alloc(fs, DPKG_STATUS, &text, NULL) < 0)
                return;
        char pkg[64] = "", version[64] = "";
        bool installed = false;
        for (char *save = NULL, *line = strtok_r(text, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
                /* strtok_r skips blank lines, so a paragraph ends at the next "Package:". */
                if (!line || strncmp(line, "Package: ", 9) == 0) {
                        if (installed && version[0] &&
                            (strcmp(pkg, "nvidia-fabricmanager") == 0 ||
                             strncmp(pkg, "nvidia-fabricmanager-", 21) == 0)) {
                                const char *v = strchr(version, ':');
                                v = v ? v + 1 : version;
                                snprintf(x->fabricmanager_version, sizeof(x->fabricmanager_version), "%.*s",
                                         (int)strcspn(v, "-"), v);
                                snprintf(x->fabricmanager_package, sizeof(x->fabricmanager_package), "%s", pkg);
                                break;
                        }
                        if (!line)
                                break;
                        snprintf(pkg, sizeof(pkg), "%s", line + 9);
                        version[0] = '\0';
                        installed = false;
                } else if (strncmp(line, "Status: ", 8) == 0) {
                        installed = strstr(line, " installed") != NULL;
                } else if (strncmp(line, "Version: ", 9) == 0) {
                        snprintf(version, sizeof(version), "%s", line + 9);
                }
        }
        free(text);
}

int nvidia_gather(struct fsroot *fs, struct facts *f) {
        struct nvidia_facts *x = &f->nvidia;
        memset(x, 0, sizeof(*x));
        gather_version(fs, x);
        /* /proc/modules is the first witness. When it cannot be read, or leaves a module
         * out, the module's own /sys/module directory (there only while it is loaded, as
         * neither driver is built in) or the driver's /proc file still prove it loaded. */
        x->module_loaded = host_module_loaded(&f->host, "nvidia") || fsroot_access(fs, "/sys/module/nvidia") == 0 ||
                           x->have_version || (x->version_errno && x->version_errno != -ENOENT);
        x->nouveau_loaded = host_module_loaded(&f->host, "nouveau") || fsroot_access(fs, "/sys/module/nouveau") == 0;
        /* Absent from everywhere, yet nothing to show it absent when /proc/modules is unreadable. */
        x->module_state_known = x->module_loaded || f->host.have_modules;
        /* taint is "" for an untainted module; "O" out-of-tree, "E" unsigned, "P" proprietary. */
        x->have_taint = fsroot_read_str(fs, "/sys/module/nvidia/taint", x->module_taint, sizeof(x->module_taint)) == 0;
        if (!x->have_taint)
                x->module_taint[0] = '\0';
        int r;
        if ((r = gather_modprobe(fs, x)) < 0 || (r = gather_persistenced(fs, x)) < 0)
                return r;
        if (x->module_loaded || !x->module_state_known) {
                gather_fabric_daemon_pids(fs, x);
                gather_fabricmanager_version(fs, x);
        }
        return 0;
}

void nvidia_facts_done(struct nvidia_facts *x) { (void)x; }
