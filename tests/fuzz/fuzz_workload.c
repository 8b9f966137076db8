/* libFuzzer target: a process's workload from text a process or a node shapes
 * (src/sys/workload.c): /proc/PID/cgroup (a process picks its cgroup names where it may
 * create cgroups: a delegated subtree, a container's own), kubelet's log entry names (any
 * file name under /var/log), and /proc/PID/stat's start time (src/serve/proc_workloads.c;
 * its comm is the process's own), and gpuvet top's summary of a workload. The first byte
 * picks which. */
#include "serve/proc_workloads.h"
#include "sys/workload.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void terminated(const char *s, size_t size) {
        if (!memchr(s, '\0', size))
                abort();
}

static bool only(const char *s, const char *set) {
        for (; *s; s++)
                if (!strchr(set, *s))
                        return false;
        return true;
}

/* What a found workload holds is always one of the shapes workload.h names. */
static void check_workload(const struct workload *w) {
        terminated(w->slurm_job, sizeof(w->slurm_job));
        terminated(w->slurm_step, sizeof(w->slurm_step));
        terminated(w->pod_uid, sizeof(w->pod_uid));
        terminated(w->container_id, sizeof(w->container_id));
        terminated(w->runtime, sizeof(w->runtime));
        terminated(w->pod, sizeof(w->pod));
        terminated(w->pod_namespace, sizeof(w->pod_namespace));
        terminated(w->container, sizeof(w->container));
        size_t job = strlen(w->slurm_job);
        if (job && !(only(w->slurm_job, "0123456789") && job <= 10) &&
            !(job == 14 && w->slurm_job[0] == 's' && only(w->slurm_job + 1, "0123456789ABCDEFGHJKMNPQRSTVWXYZ")))
                abort();
        if (w->slurm_step[0] && !w->slurm_job[0])
                abort(); /* a step only inside a job */
        size_t uid = strlen(w->pod_uid);
        if (uid && !((uid == 32 || uid == 36) && only(w->pod_uid, "0123456789abcdef-")))
                abort();
        size_t cid = strlen(w->container_id);
        if (cid && !(cid == 64 && only(w->container_id, "0123456789abcdef")))
                abort();
        if (w->runtime[0] && !cid)
                abort();
        if (workload_found(w) != (job || uid || cid))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size == 0)
                return 0;
        const char *text = (const char *)data + 1;
        size_t len = size - 1;
        struct workload w;
        memset(&w, 0x55, sizeof(w)); /* whatever was there before is never read */
        switch (data[0] % 4) {
        case 0: {
                bool found = workload_from_cgroup(text, len, &w);
                check_workload(&w);
                if (found != workload_found(&w))
                        abort();
                if (w.pod[0] || w.pod_namespace[0] || w.container[0])
                        abort(); /* names come from the log layout, never from the cgroup */
                char summary[24];
                memset(summary, 'x', sizeof(summary));
                workload_summary(&w, summary, sizeof(summary));
                terminated(summary, sizeof(summary));
                if (!summary[0] && found)
                        abort(); /* a workload found is never shown as none */
                break;
        }
        case 1: {
                bool found = workload_from_path(text, len, &w);
                check_workload(&w);
                if (found != workload_found(&w) || (found && memchr(text, '\0', len)))
                        abort();
                /* A user's own subtree names no job and no pod, whatever it holds. */
                size_t lead = 0;
                while (lead < len && text[lead] == '/')
                        lead++;
                if (len - lead >= 11 && memcmp(text + lead, "user.slice", 10) == 0 && text[lead + 10] == '/' &&
                    (w.slurm_job[0] || w.pod_uid[0]))
                        abort();
                break;
        }
        case 2: {
                char *name = strndup(text, len);
                if (!name)
                        return 0;
                struct workload a = {0}, b = {0};
                if (workload_split_pod_dir(name, a.pod_namespace, a.pod, a.pod_uid)) {
                        check_workload(&a);
                        if (!a.pod[0] || !a.pod_namespace[0] || strchr(a.pod, '_') || strchr(a.pod_namespace, '_'))
                                abort();
                }
                if (workload_split_container_log(name, b.pod, b.pod_namespace, b.container, b.container_id)) {
                        check_workload(&b);
                        if (!b.container[0] || strlen(b.container_id) != 64 || strchr(b.container, '_'))
                                abort();
                }
                free(name);
                break;
        }
        default: {
                unsigned long long t;
                (void)proc_stat_starttime(text, len, &t);
                break;
        }
        }
        return 0;
}
