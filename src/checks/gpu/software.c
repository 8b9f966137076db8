/* The software around CUDA that DCGM's level-1 "software" plugin looks at: the device
 * files every CUDA process opens, and environment variables that make CUDA jobs slow,
 * hang or behave unlike everyone else's. */
#include "checks/check.h"
#include "core/array.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Who may open a node, from its permission bits. */
enum node_access { ACCESS_ALL, ACCESS_GROUP, ACCESS_ROOT };

static enum node_access access_of(mode_t mode) {
        if ((mode & 0006) == 0006)
                return ACCESS_ALL;
        if ((mode & 0060) == 0060)
                return ACCESS_GROUP;
        return ACCESS_ROOT;
}

static void describe_node(char *sb, size_t size, const struct devnode *d) {
        if (d->err) {
                strbuf_appendf(sb, size, "%s%s %s", sb[0] ? "; " : "", d->name, d->err == ENOENT ? "missing" : strerror(d->err));
                return;
        }
        if (!S_ISCHR(d->mode)) {
                strbuf_appendf(sb, size, "%s%s not a character device", sb[0] ? "; " : "", d->name);
                return;
        }
        strbuf_appendf(sb, size, "%s%s %04o %u:%u", sb[0] ? "; " : "", d->name, (unsigned)(d->mode & 07777), d->major,
                       d->minor);
}

/* "nvidia7" and the like: a GPU's own node, not nvidiactl or nvidia-uvm. */
static bool is_gpu_node(const char *name) { return strncmp(name, "nvidia", 6) == 0 && name[6] >= '0' && name[6] <= '9'; }

struct node_problems {
        char missing[512];   /* names, comma separated */
        char broken[512];    /* "/dev/nvidia0 is not a character device" */
        char root_only[512]; /* names only root can open */
        enum node_access narrowest; /* the most restrictive access among the needed nodes */
};

static void judge_needed(struct node_problems *p, const struct devnode *d) {
        if (d->err == ENOENT) {
                strbuf_appendf(p->missing, sizeof(p->missing), "%s/dev/%s", p->missing[0] ? ", " : "", d->name);
        } else if (d->err) {
                strbuf_appendf(p->broken, sizeof(p->broken), "%s/dev/%s: %s", p->broken[0] ? "; " : "", d->name, strerror(d->err));
        } else if (!S_ISCHR(d->mode)) {
                strbuf_appendf(p->broken, sizeof(p->broken), "%s/dev/%s is not a character device", p->broken[0] ? "; " : "", d->name);
        } else {
                enum node_access a = access_of(d->mode);
                if (a == ACCESS_ROOT)
                        strbuf_appendf(p->root_only, sizeof(p->root_only), "%s/dev/%s", p->root_only[0] ? ", " : "", d->name);
                if (a > p->narrowest)
                        p->narrowest = a;
        }
}

static void run_device_nodes(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct devnode_facts *x = &f->devnodes;
        struct result *r = check_host_result_with_gpus(self, f, rep);
        if (!r)
                return;
        result_evidence(r, "source", "/dev/nvidia*, /proc/driver/nvidia/params, /proc/driver/nvidia/gpus/*/information");
        size_t bound = check_gpus_bound_to(f, "nvidia");
        if (bound == 0) {
                result_status(r, STATUS_SKIP, "no GPU is bound to the nvidia driver");
                return;
        }
        if (x->list_errno) {
                if (check_skip_capture_lacks(r, f, "/dev"))
                        return;
                result_observed(r, "unknown");
                result_status(r, STATUS_ERROR, "cannot list /dev: %s", strerror(x->list_errno));
                result_remedy(r, "Check that devtmpfs is mounted on /dev (`findmnt /dev`).");
                return;
        }
        if (!x->live && !x->any_device_node) {
                result_status(r, STATUS_SKIP,
                              "this capture holds no device nodes (a snapshot unpacked without root keeps none)");
                return;
        }

        char seen[1024] = "";
        for (size_t i = 0; i < x->n; i++)
                describe_node(seen, sizeof(seen), &x->nodes[i]);
        strbuf_appendf(seen, sizeof(seen), "; nvidia-caps %s", x->caps_dir ? "present" : "absent");
        result_observed(r, "%s", seen);
        result_expected(r, "/dev/nvidiactl, /dev/nvidia-uvm and one /dev/nvidia<minor> per GPU, character devices the "
                           "job users may open");

        /* The nodes CUDA opens: the control node, unified memory, and each GPU's node. */
        struct node_problems p = {0};
        judge_needed(&p, devnodes_find(x, "nvidiactl"));
        judge_needed(&p, devnodes_find(x, "nvidia-uvm"));
        size_t gpu_nodes = 0;
        for (size_t i = 0; i < x->n; i++)
                gpu_nodes += is_gpu_node(x->nodes[i].name);
        if (x->n_gpu_minors > 0) {
                for (size_t i = 0; i < x->n_gpu_minors; i++) {
                        char name[24];
                        snprintf(name, sizeof(name), "nvidia%u", x->gpu_minors[i].minor);
                        const struct devnode *d = devnodes_find(x, name);
                        struct devnode missing = {.err = ENOENT};
                        if (!d) {
                                snprintf(missing.name, sizeof(missing.name), "%s", name);
                                d = &missing;
                        }
                        judge_needed(&p, d);
                }
        } else {
                for (size_t i = 0; i < x->n; i++)
                        if (is_gpu_node(x->nodes[i].name))
                                judge_needed(&p, &x->nodes[i]);
                if (gpu_nodes < bound)
                        strbuf_appendf(p.missing, sizeof(p.missing), "%s%zu of %zu /dev/nvidia<N> GPU nodes", p.missing[0] ? ", " : "",
                                       bound - gpu_nodes, bound);
        }
        if (x->params.mode >= 0)
                result_evidence(r, "driver_device_file_mode", "%04lo", (unsigned long)x->params.mode);
        if (x->params.gid >= 0)
                result_evidence(r, "driver_device_file_gid", "%ld%s%s", x->params.gid, x->group_name[0] ? " " : "",
                                x->group_name);
        result_evidence(r, "nvidia_modprobe", "%s", !x->modprobe_present ? "absent"
                                                    : x->modprobe_setuid ? "/usr/bin/nvidia-modprobe (set-user-ID root)"
                                                                         : "/usr/bin/nvidia-modprobe (not set-user-ID)");

        if (p.broken[0]) {
                result_status(r, STATUS_FAIL, "NVIDIA device files are unusable: %s", p.broken);
                result_remedy(r, "Remove the stray files and let the driver recreate the nodes: `rm` them, then run "
                                 "`nvidia-modprobe -c 0 -u` (or `nvidia-smi`) as root, or reboot.");
        } else if (p.missing[0] && !x->modprobe_setuid) {
                result_status(r, STATUS_FAIL,
                              "%s missing and nvidia-modprobe cannot create %s: CUDA fails to initialise for users "
                              "other than root",
                              p.missing, strchr(p.missing, ',') ? "them" : "it");
                result_remedy(r, "Create the nodes at boot: `nvidia-modprobe -c 0 -u` (and `-c N` per GPU) from a "
                                 "systemd unit, or install the driver's nvidia-modprobe (set-user-ID root); "
                                 "`modprobe nvidia-uvm` if the module is not loaded.");
        } else if (p.missing[0]) {
                result_status(r, STATUS_WARN,
                              "%s missing: nvidia-modprobe creates %s when CUDA first runs, but containers and "
                              "cgroup device lists set up before that do not see %s",
                              p.missing, strchr(p.missing, ',') ? "them" : "it",
                              strchr(p.missing, ',') ? "them" : "it");
                result_remedy(r, "Create the nodes at boot (`nvidia-modprobe -c 0 -u` from a systemd unit, or "
                                 "nvidia-persistenced, which opens every GPU).");
        } else if (p.root_only[0]) {
                result_status(r, STATUS_FAIL, "only root may open %s: CUDA jobs of other users fail to initialise",
                              p.root_only);
                result_remedy(r, "Set the nvidia module's NVreg_DeviceFileMode=0666 (or 0660 with "
                                 "NVreg_DeviceFileGID=<the job users' group>) in /etc/modprobe.d and reload the "
                                 "driver, or fix the udev rule that changed them.");
        } else if (p.narrowest == ACCESS_GROUP) {
                result_status(r, STATUS_PASS, "NVIDIA device files present; only members of group %s%s%ld may open them",
                              x->group_name[0] ? x->group_name : "", x->group_name[0] ? " / gid " : "gid ",
                              x->params.gid >= 0 ? x->params.gid : -1L);
        } else {
                result_status(r, STATUS_PASS, "NVIDIA device files present for all %zu GPU%s; every user may open them",
                              bound, bound == 1 ? "" : "s");
        }
}

CHECK_INFO(gpu_device_nodes, "gpu", "gpu.device_nodes", LEVEL_QUICK, NEED_DEVNODES,
           "NVIDIA device files exist and job users may open them",
           run_device_nodes);

/* Variables documented by NVIDIA (CUDA Programming Guide, "CUDA Environment Variables",
 * and DCGM's software plugin) that no node should set for every job. */
struct env_rule {
        const char *name;
        bool zero_is_off; /* "0" (or empty) turns it off: not a finding */
        const char *why;
};

static const struct env_rule env_rules[] = {
        {"CUDA_INJECTION64_PATH", false, "loads that library into every CUDA process (a tracer or profiler)"},
        {"NSIGHT_CUDA_DEBUGGER", true, "puts CUDA in debugger mode"},
        {"CUDA_AUTO_BOOST", false, "overrides the GPU's boost clock policy for every process"},
        {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION", true, "a GPU exception writes a core dump of GPU state (minutes, and "
                                                    "disk)"},
        {"CUDA_DEVICE_WAITS_ON_EXCEPTION", true, "a faulting kernel waits for a debugger instead of failing: jobs "
                                                 "hang"},
        {"CUDA_LAUNCH_BLOCKING", true, "every kernel launch waits for the GPU: jobs run several times slower"},
        {"CUDA_PROFILE", true, "the legacy profiler logs every launch"},
        {"COMPUTE_PROFILE", true, "the legacy profiler logs every launch"},
        {"OPENCL_PROFILE", true, "the legacy profiler logs every OpenCL launch"},
};

static bool is_off(const char *value) { return !value[0] || strcmp(value, "0") == 0; }

static void run_cuda_env(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct cuda_env_facts *x = &f->cuda_env;
        struct result *r = check_host_result_with_gpus(self, f, rep);
        if (!r)
                return;
        result_evidence(r, "source", "/proc/self/environ, /etc/environment, /etc/profile.d/*.sh");
        if (x->environ_errno && x->environ_errno != ENOENT)
                result_evidence(r, "environ_error", "%s", strerror(x->environ_errno));
        result_expected(r, "no debugging, profiling or injection variables set for every job; CUDA_VISIBLE_DEVICES "
                           "left to the scheduler");

        char seen[1024] = "", found[1024] = "", remedy[512] = "";
        size_t findings = 0;
        for (size_t i = 0; i < x->n; i++) {
                const struct cuda_env_var *v = &x->vars[i];
                strbuf_appendf(seen, sizeof(seen), "%s%s=%s (%s)", seen[0] ? "; " : "", v->name, v->value, v->where);
                const char *why = NULL;
                for (size_t k = 0; k < ARRAY_COUNT(env_rules); k++)
                        if (strcmp(env_rules[k].name, v->name) == 0 && !(env_rules[k].zero_is_off && is_off(v->value)))
                                why = env_rules[k].why;
                /* Per job it is how schedulers hand out GPUs; node-wide it hides GPUs from
                 * every job. gpuvet's own environment may be a job's, so only files count. */
                if (!why && strcmp(v->name, "CUDA_VISIBLE_DEVICES") == 0 && strcmp(v->where, "environment") != 0)
                        why = "every login sees only those GPUs, whatever the scheduler grants";
                if (!why)
                        continue;
                findings++;
                strbuf_appendf(found, sizeof(found), "%s%s=%s in %s: %s", found[0] ? "; " : "", v->name, v->value,
                               strcmp(v->where, "environment") == 0 ? "gpuvet's environment" : v->where, why);
                if (strcmp(v->where, "environment") != 0)
                        strbuf_appendf(remedy, sizeof(remedy), "%s%s", remedy[0] ? ", " : "", v->where);
        }
        result_observed(r, "%s", seen[0] ? seen : "no CUDA variables set");
        if (findings == 0) {
                result_status(r, STATUS_PASS, "no environment variable that slows or changes CUDA jobs is set");
        } else {
                result_status(r, STATUS_WARN, "%s", found);
                if (remedy[0])
                        result_remedy(r, "Remove the line%s at %s (set such variables per job, when debugging); "
                                         "unset them in the shells jobs start from.",
                                      strchr(remedy, ',') ? "s" : "", remedy);
                else
                        result_remedy(r, "Unset them in the shell or service that starts jobs (`env | grep -E "
                                         "'CUDA|PROFILE|NSIGHT'` shows them); set them per job only when debugging.");
        }
}

CHECK_INFO(gpu_cuda_env, "gpu", "gpu.cuda_env", LEVEL_QUICK, NEED_CUDA_ENV,
           "no environment variable slows, hangs or redirects CUDA jobs",
           run_cuda_env);
