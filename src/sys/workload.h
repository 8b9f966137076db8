/* Which workload a process belongs to, from its cgroup: a Slurm job, a Kubernetes pod and
 * container, or a plain container (docs/serve.md, "Processes and workloads").
 *
 * /proc/PID/cgroup names the cgroup of each hierarchy ("0::/path" on cgroup v2,
 * "N:controllers:/path" on v1). The workload managers name their cgroups in known ways:
 *   Slurm cgroup/v1   /slurm/uid_<uid>/job_<id>/step_<step>/task_<n> (slurm_<node>/ when
 *                     slurmd runs several nodes on one host)
 *   Slurm cgroup/v2   /system.slice/slurmstepd.scope/job_<id>/step_<step>/user/task_<n>
 *                     (system.slice: cgroup.conf's CgroupSlice, a systemd slice where
 *                     its name puts it; never user.slice)
 *                     (<node>_slurmstepd.scope; from 26.05 the job directory is the job's
 *                     SLUID, "s" and 13 base-32 digits, unless CgroupJobIdPaths=yes)
 *   kubelet cgroupfs  /kubepods/<qos>/pod<uid>/<container id> (guaranteed: no qos level)
 *   kubelet systemd   /kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid, _ for
 *                     ->.slice/<cri-containerd|crio|docker>-<container id>.scope
 *   docker, podman    /system.slice/docker-<id>.scope, /docker/<id>, libpod-<id>.scope
 * Jobs and pods are taken only where Slurm and kubelet create them: from the root of the
 * hierarchy (or, in a cgroup namespace, below the ".." levels above its root), a systemd
 * pod slice only at the path its name expands to. Below user.slice, or in a container's
 * own cgroups, anyone may create cgroups of those names: they are no job and no pod (a
 * plain container's scope is matched at any depth, for rootless podman). Nothing else is
 * taken for a workload: a process whose cgroup matches none is attributed to none, never
 * guessed.
 *
 * Kubernetes' names (pod, namespace, container) are not in the cgroup; kubelet's log
 * layout on the node gives them without asking the API server:
 *   /var/log/pods/<namespace>_<pod>_<pod uid>/<container>/<restarts>.log
 *   /var/log/containers/<pod>_<namespace>_<container>-<container id>.log
 * Namespaces and container names are DNS-1123 labels and pod names DNS-1123 subdomains:
 * none holds '_', so the names split unambiguously. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct fsroot;

/* What is read of /proc/PID/cgroup: a longer file is refused (-EFBIG). The kernel writes
 * one line per hierarchy, each path at most PATH_MAX. */
#define WORKLOAD_CGROUP_MAX (64u << 10)

struct workload {
        char slurm_job[24];      /* "4242", or a SLUID "s0ABCDEFGHJKM"; "" none */
        char slurm_step[24];     /* "0", "batch", "extern", "interactive", "0+1"; "" unknown */
        char pod_uid[40];        /* canonical, with '-' ("" none) */
        char container_id[72];   /* 64 hex digits ("" none) */
        char runtime[16];        /* "cri-containerd", "crio", "docker", "libpod", "" */
        /* From kubelet's log layout (workload_kubernetes_names); "" unknown. */
        char pod[254];
        char pod_namespace[64];
        char container[64];
};

/* Whether w names any workload. */
bool workload_found(const struct workload *w);

/* The workload of one cgroup path ("/kubepods/..."); len bytes, need not be
 * NUL-terminated. Fills *ret (zeroed first); returns true when a layout matched. */
bool workload_from_path(const char *path, size_t len, struct workload *ret);

/* The workload of a /proc/PID/cgroup text (len bytes): the v2 line ("0::") first, then
 * the v1 lines in order; the first that matches a layout wins. A line with a NUL byte is
 * skipped. Returns true when one matched. */
bool workload_from_cgroup(const char *text, size_t len, struct workload *ret);

/* A /var/log/pods entry "<namespace>_<pod>_<uid>" split and checked (names DNS-1123,
 * the uid a pod uid). Returns true, the parts in the buffers (sizes of struct workload). */
bool workload_split_pod_dir(const char *name, char *ret_namespace, char *ret_pod, char *ret_uid);

/* A /var/log/containers entry "<pod>_<namespace>_<container>-<64 hex>.log" split and
 * checked. Returns true with the parts. */
bool workload_split_container_log(const char *name, char *ret_pod, char *ret_namespace, char *ret_container,
                                  char *ret_container_id);

/* Read /proc/<pid>/cgroup under fs into *ret. Returns 0 (ret says whether a workload was
 * found), or a negative errno: -ENOENT (the process is gone), -EFBIG, -EACCES... */
int workload_read(struct fsroot *fs, unsigned int pid, struct workload *ret);

/* Fill w's pod, namespace and container from kubelet's log directories under fs: the
 * container's entry in /var/log/containers, else the pod's directory in /var/log/pods
 * (pod and namespace only). Nothing when w has no pod uid or nothing is found. */
void workload_kubernetes_names(struct fsroot *fs, struct workload *w);

/* w in a few words for a person (gpuvet top's JOB/POD column), into out: "job 4242",
 * "ml-team/trainer-7d9f8" (namespace/pod), "pod 0f2b6e1c" (its uid's start, names
 * unknown), "docker d0c4e2d0c4e2" (runtime and the id's first 12 digits), "" none. */
void workload_summary(const struct workload *w, char *out, size_t size);
