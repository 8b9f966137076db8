/* src/sys/workload.c: a process's Slurm job, Kubernetes pod and container from its
 * cgroup (every layout workload.h names, v1 and v2 lines), hostile lines (huge, NUL
 * bytes, "..", missing fields, look-alikes, the layouts spoofed below user.slice or in a
 * container), kubelet's log names split on '_' (DNS-1123
 * names hold none), the names found in a log tree, and the bounded /proc read. Also
 * serve's start time from /proc/PID/stat (src/serve/proc_workloads.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fsroot.h"
#include "serve/proc_workloads.h"
#include "sys/workload.h"
#include "tree.h"

#define CID "4a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
#define UID "0f2b6e1c-4d3a-4b8e-9c1d-2a3b4c5d6e7f"
#define UID_ "0f2b6e1c_4d3a_4b8e_9c1d_2a3b4c5d6e7f"

static struct workload path_of(const char *path) {
        struct workload w;
        workload_from_path(path, strlen(path), &w);
        return w;
}

static struct workload cgroup_of(const char *text) {
        struct workload w;
        workload_from_cgroup(text, strlen(text), &w);
        return w;
}

static void test_slurm(void **state) {
        (void)state;
        struct workload w = path_of("/slurm/uid_1000/job_4242/step_0/task_3");
        assert_string_equal(w.slurm_job, "4242");
        assert_string_equal(w.slurm_step, "0");
        assert_string_equal(w.pod_uid, "");
        w = path_of("/slurm_node07/uid_0/job_17/step_batch");
        assert_string_equal(w.slurm_job, "17");
        assert_string_equal(w.slurm_step, "batch");
        w = path_of("/slurm/uid_1000/job_99"); /* the job's own cgroup: no step */
        assert_string_equal(w.slurm_job, "99");
        assert_string_equal(w.slurm_step, "");
        w = path_of("/system.slice/slurmstepd.scope/job_5151/step_extern/user/task_special");
        assert_string_equal(w.slurm_job, "5151");
        assert_string_equal(w.slurm_step, "extern");
        w = path_of("/system.slice/slurmstepd.scope/job_5151/step_interactive/user/task_0");
        assert_string_equal(w.slurm_step, "interactive");
        w = path_of("/system.slice/slurmstepd.scope/job_77/step_0+1/user/task_0");
        assert_string_equal(w.slurm_step, "0+1");
        w = path_of("/system.slice/n3_slurmstepd.scope/job_8/step_2/user/task_1"); /* --enable-multiple-slurmd */
        assert_string_equal(w.slurm_job, "8");
        /* cgroup.conf's CgroupSlice: another slice, at the place its name gives. */
        w = path_of("/machines.slice/n3_slurmstepd.scope/job_8/step_2/user/task_1");
        assert_string_equal(w.slurm_job, "8");
        w = path_of("/hpc.slice/hpc-jobs.slice/slurmstepd.scope/job_12/step_0/user/task_0");
        assert_string_equal(w.slurm_job, "12");
        /* Seen from a cgroup namespace: the slice above its root is "..". */
        w = path_of("/../../slurmstepd.scope/job_9/step_0/user/task_0");
        assert_string_equal(w.slurm_job, "9");
        w = path_of("/../system.slice/slurmstepd.scope/job_10/step_batch/user/task_0");
        assert_string_equal(w.slurm_step, "batch");
        w = path_of("/../../slurm/uid_1000/job_11/step_0/task_0");
        assert_string_equal(w.slurm_job, "11");
        /* Slurm 26.05's cgroup/v2: the job directory is its SLUID. */
        w = path_of("/system.slice/slurmstepd.scope/s0K3M9QWE4RT5Z/step_0/user/task_0");
        assert_string_equal(w.slurm_job, "s0K3M9QWE4RT5Z");
        /* Look-alikes are none. */
        assert_false(workload_found(&(struct workload){0}));
        const char *none[] = {
                "/slurm/job_4242/step_0",                              /* no uid level */
                "/slurm/uid_x/job_4242",                               /* uid not a number */
                "/slurm/uid_1000/job_42a/step_0",                      /* job not a number */
                "/slurm/uid_1000/job_/step_0",
                "/slurm/uid_1000/job_123456789012/step_0",             /* past 32 bits' digits */
                "/system.slice/slurmd.service",
                "/system.slice/slurmstepd.scope/system",               /* the waiting area */
                "/system.slice/slurmstepd.scope/sIOLU0000000000",      /* not base 32 */
                "/system.slice/slurmstepd.scope/s0K3M9QWE4RT5",        /* one short */
                "/system.slice/notslurmstepd.scope/job_5",
                "/machines.slice/x-y.slice/slurmstepd.scope/job_8",   /* not where systemd puts x-y.slice */
                "/user.slice/slurmstepd.scope/job_8/step_0",           /* never below user.slice */
                "/system.slice/slurmd.service/slurmstepd.scope/job_8", /* a service is no slice */
                "/slurmstepd.scope/job_5/step_0",                      /* no slice, nothing hidden */
                "/user.slice/user-1000.slice/session-3.scope",
                "/",
                "",
        };
        for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
                struct workload x = path_of(none[i]);
                if (workload_found(&x))
                        fail_msg("%s: found job %s", none[i], x.slurm_job);
        }
        /* A bad step leaves the job, without a step. */
        w = path_of("/slurm/uid_1000/job_4242/step_A*B");
        assert_string_equal(w.slurm_job, "4242");
        assert_string_equal(w.slurm_step, "");
}

static void test_kubernetes(void **state) {
        (void)state;
        /* systemd driver, each runtime, each qos; guaranteed has no qos level. */
        struct workload w = path_of("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
                                    ".slice/cri-containerd-" CID ".scope");
        assert_string_equal(w.pod_uid, UID);
        assert_string_equal(w.container_id, CID);
        assert_string_equal(w.runtime, "cri-containerd");
        w = path_of("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/crio-" CID
                    ".scope");
        assert_string_equal(w.runtime, "crio");
        assert_string_equal(w.container_id, CID);
        w = path_of("/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" CID ".scope");
        assert_string_equal(w.pod_uid, UID);
        assert_string_equal(w.runtime, "docker");
        /* kind's nested kubelet (cgroup root /kubelet). */
        w = path_of("/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
                    "kubelet-kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" CID ".scope");
        assert_string_equal(w.pod_uid, UID);
        /* cgroupfs driver: bare id, CRI-O's crio-<id>; guaranteed without qos. */
        w = path_of("/kubepods/burstable/pod" UID "/" CID);
        assert_string_equal(w.pod_uid, UID);
        assert_string_equal(w.container_id, CID);
        assert_string_equal(w.runtime, "");
        w = path_of("/kubepods/pod" UID "/crio-" CID);
        assert_string_equal(w.container_id, CID);
        assert_string_equal(w.runtime, "crio");
        /* A static pod's uid is a 32-digit hash. */
        w = path_of("/kubepods/burstable/pod5e1a7ba3cfe6d8a8cf9a2b5c0f6f2b1e/" CID);
        assert_string_equal(w.pod_uid, "5e1a7ba3cfe6d8a8cf9a2b5c0f6f2b1e");
        /* The pod's own cgroup (the pause process, or a pod-level cgroup): no container. */
        w = path_of("/kubepods/besteffort/pod" UID);
        assert_string_equal(w.pod_uid, UID);
        assert_string_equal(w.container_id, "");
        /* Seen from a cgroup namespace: the levels above its root are "..". */
        w = path_of("/../../kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" CID ".scope");
        assert_string_equal(w.pod_uid, UID);
        assert_string_equal(w.container_id, CID);
        w = path_of("/../kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/crio-" CID ".scope");
        assert_string_equal(w.pod_uid, UID);
        w = path_of("/../../burstable/pod" UID "/" CID);
        assert_string_equal(w.pod_uid, UID);
        w = path_of("/../pod" UID "/" CID);
        assert_string_equal(w.container_id, CID);
        /* Not pods. */
        const char *none[] = {
                "/kubepods/burstable/podABCDEF/" CID,                      /* not a uid */
                "/kubepods/burstable/pod0f2b6e1c-4d3a-4b8e-9c1d-2a3b4c5d6e7", /* one short */
                "/kubepods/burstable/pod0F2B6E1C-4D3A-4B8E-9C1D-2A3B4C5D6E7F", /* upper case */
                "/system.slice/something-pod" UID_ ".slice",               /* no kubepods */
                "/kubepods.slice/kubepods-burstable.slice",
                "/podman.slice",
        };
        for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
                struct workload x = path_of(none[i]);
                if (x.pod_uid[0])
                        fail_msg("%s: pod %s", none[i], x.pod_uid);
        }
        /* A container component that is not an id: the pod alone. */
        w = path_of("/kubepods/burstable/pod" UID "/" "zz" CID);
        assert_string_equal(w.container_id, "");
        w = path_of("/kubepods.slice/kubepods-pod" UID_ ".slice/crio-conmon-" CID ".scope");
        assert_string_equal(w.pod_uid, UID);
        assert_string_equal(w.container_id, "");
}

/* A user's delegated subtree (user@UID.service), a container's own cgroups, a slice of
 * another name: anyone may create cgroups named as Slurm and kubelet name theirs there
 * (review N15). None of them is a job or a pod. */
static void test_spoofed(void **state) {
        (void)state;
        const char *spoofed[] = {
                "/user.slice/user-1000.slice/user@1000.service/app.slice/slurmstepd.scope/job_4242/step_0",
                "/user.slice/user-1000.slice/user@1000.service/app.slice/system.slice/slurmstepd.scope/job_4242/step_0",
                "/user.slice/user-1000.slice/user@1000.service/slurm/uid_1000/job_4242/step_0",
                "/user.slice/user-1000.slice/session-3.scope/system.slice/slurmstepd.scope/job_1",
                "/user.slice/system.slice/slurmstepd.scope/job_1/step_0",
                "/system.slice/docker-" CID ".scope/system.slice/slurmstepd.scope/job_1/step_0",
                "/system.slice/docker-" CID ".scope/slurm/uid_0/job_1/step_0",
                "/user.slice/user-1000.slice/user@1000.service/app.slice/kubepods-besteffort-pod" UID_ ".slice",
                "/user.slice/user-1000.slice/user@1000.service/kubepods.slice/kubepods-besteffort.slice/"
                "kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" CID ".scope",
                "/user.slice/user-1000.slice/user@1000.service/kubepods/burstable/pod" UID "/" CID,
                "/user.slice/kubepods/pod" UID "/" CID,
                "/system.slice/docker-" CID ".scope/kubepods/besteffort/pod" UID "/" CID,
                "/kubepods.slice/kubepods-burstable.slice/kubepods-besteffort-pod" UID_ ".slice", /* wrong parent */
                "/kubepods.slice/kubepods-besteffort-pod" UID_ ".slice",                       /* a level missing */
                "/kubepods-besteffort-pod" UID_ ".slice",                                     /* at the root */
                "/kubepods.slice/kubepods-besteffort.slice/x/kubepods-besteffort-pod" UID_ ".slice",
                "/kubepods.slice/kubepods-weird-pod" UID_ ".slice",                           /* no such QoS */
                "/kubepods/burstable/x/pod" UID "/" CID,
                "/kubepods/weird/pod" UID "/" CID,
                "/pod" UID "/" CID,
                "/user.slice/x.slice/-crio-pod" UID_ ".slice",                                /* an empty word */
                "/kubepods.slice/kubepods--pod" UID_ ".slice",
        };
        for (size_t i = 0; i < sizeof(spoofed) / sizeof(spoofed[0]); i++) {
                struct workload x = path_of(spoofed[i]);
                if (x.slurm_job[0] || x.pod_uid[0])
                        fail_msg("%s: job '%s', pod '%s'", spoofed[i], x.slurm_job, x.pod_uid);
        }
        /* The same line in a /proc/PID/cgroup, v2 and v1. */
        struct workload w = cgroup_of("0::/user.slice/user-1000.slice/user@1000.service/app.slice/slurmstepd.scope/"
                                      "job_4242/step_0\n");
        assert_false(workload_found(&w));
        w = cgroup_of("4:memory:/user.slice/user-1000.slice/user@1000.service/slurm/uid_1000/job_4242/step_0\n");
        assert_false(workload_found(&w));
        /* A rootless container there is still a container, of no job. */
        w = path_of("/user.slice/user-1000.slice/user@1000.service/app.slice/slurmstepd.scope/job_4242/libpod-" CID
                    ".scope");
        assert_string_equal(w.container_id, CID);
        assert_string_equal(w.slurm_job, "");
}

static void test_containers(void **state) {
        (void)state;
        struct workload w = path_of("/system.slice/docker-" CID ".scope");
        assert_string_equal(w.container_id, CID);
        assert_string_equal(w.runtime, "docker");
        w = path_of("/docker/" CID);
        assert_string_equal(w.container_id, CID);
        assert_string_equal(w.runtime, "docker");
        w = path_of("/machine.slice/libpod-" CID ".scope/container");
        assert_string_equal(w.container_id, CID);
        assert_string_equal(w.runtime, "libpod");
        w = path_of("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" CID ".scope");
        assert_string_equal(w.runtime, "libpod");
        w = path_of("/libpod_parent/libpod-" CID);
        assert_string_equal(w.runtime, "libpod");
        assert_false(workload_found(&(struct workload){0}));
        w = path_of("/system.slice/docker-" CID "0.scope"); /* 65 digits */
        assert_false(workload_found(&w));
        w = path_of("/system.slice/docker.service");
        assert_false(workload_found(&w));
        w = path_of("/docker/notanid");
        assert_false(workload_found(&w));
}

static void test_cgroup_file(void **state) {
        (void)state;
        /* Hybrid: the unified line names slurmd's service, the v1 memory line the job. */
        struct workload w = cgroup_of("12:memory:/slurm/uid_1000/job_4242/step_0/task_0\n"
                                      "1:name=systemd:/system.slice/slurmd.service\n"
                                      "0::/system.slice/slurmd.service\n");
        assert_string_equal(w.slurm_job, "4242");
        /* The v2 line wins over v1 lines when it matches. */
        w = cgroup_of("11:devices:/slurm/uid_1/job_1\n0::/system.slice/slurmstepd.scope/job_2/step_0/user/task_0\n");
        assert_string_equal(w.slurm_job, "2");
        /* v1 lines of a pod; the path may hold ':' and the file may end without a newline. */
        w = cgroup_of("11:cpu,cpuacct:/kubepods/burstable/pod" UID "/" CID "\n10:memory:/kubepods/burstable/pod" UID
                      "/" CID);
        assert_string_equal(w.pod_uid, UID);
        w = cgroup_of("0::/weird:name/docker/" CID "\n");
        assert_string_equal(w.container_id, CID);
        /* Malformed lines are skipped. */
        const char *none[] = {
                "", "\n\n", "garbage", "0:/slurm/uid_1/job_1", "::", "0::", "0::/", "12:memory\n",
                "0::/system.slice/docker-" CID /* no .scope */ "x.scope\n",
        };
        for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
                w = cgroup_of(none[i]);
                if (workload_found(&w))
                        fail_msg("%s: found", none[i]);
        }
        /* A NUL byte inside a line: that line is none; the next line still counts. */
        static const char nul[] = "0::/slurm/uid_1/job_\0005/step_0\n3:memory:/slurm/uid_1/job_6/step_0\n";
        workload_from_cgroup(nul, sizeof(nul) - 1, &w);
        assert_string_equal(w.slurm_job, "6");
        static const char nul2[] = "0::/docker/\0" CID "\n";
        assert_false(workload_from_cgroup(nul2, sizeof(nul2) - 1, &w));
        /* A huge line: 1 MiB of components, then a job; only the first 64 components are
         * looked at, and nothing is read past the end. */
        size_t n = 1 << 20;
        char *big = malloc(n + 64);
        assert_non_null(big);
        memcpy(big, "0::", 3);
        for (size_t i = 3; i < n; i += 2)
                memcpy(big + i, "/a", 2);
        int tail = snprintf(big + n, 64, "/slurm/uid_1/job_7");
        workload_from_cgroup(big, n + (size_t)tail, &w);
        assert_false(workload_found(&w));
        /* One huge component. */
        memset(big + 4, 'x', n - 4);
        big[3] = '/';
        workload_from_cgroup(big, n, &w);
        assert_false(workload_found(&w));
        free(big);
}

static void test_log_names(void **state) {
        (void)state;
        struct workload w;
        assert_true(workload_split_pod_dir("ml-team_trainer-7d9f8_" UID, w.pod_namespace, w.pod, w.pod_uid));
        assert_string_equal(w.pod_namespace, "ml-team");
        assert_string_equal(w.pod, "trainer-7d9f8");
        assert_string_equal(w.pod_uid, UID);
        /* Pod names may hold dots (DNS subdomains); a static pod's uid is 32 digits. */
        assert_true(workload_split_pod_dir("kube-system_kube-apiserver-node1.example.com_5e1a7ba3cfe6d8a8cf9a2b5c0f6f2b1e",
                                           w.pod_namespace, w.pod, w.pod_uid));
        assert_string_equal(w.pod, "kube-apiserver-node1.example.com");
        const char *bad_dirs[] = {
                UID,                                          /* kubelet before 1.14: uid only */
                "ns_pod_" UID "_x",                           /* three '_' */
                "ns_pod",
                "NS_pod_" UID,                                /* upper case */
                "ns_pod.-x_" UID,                             /* ends with '-' ... */
                "-ns_pod_" UID,
                "ns__" UID,                                   /* empty pod */
                "ns_pod_" UID_,                               /* systemd's '_' form is not a dir name */
                "a234567890123456789012345678901234567890123456789012345678901234_pod_" UID, /* 64 */
                "",
        };
        for (size_t i = 0; i < sizeof(bad_dirs) / sizeof(bad_dirs[0]); i++)
                if (workload_split_pod_dir(bad_dirs[i], w.pod_namespace, w.pod, w.pod_uid))
                        fail_msg("pod dir %s accepted", bad_dirs[i]);
        /* /var/log/containers: the container name may hold '-', the id is the last 64. */
        assert_true(workload_split_container_log("trainer-7d9f8_ml-team_init-weights-" CID ".log", w.pod, w.pod_namespace,
                                                 w.container, w.container_id));
        assert_string_equal(w.pod, "trainer-7d9f8");
        assert_string_equal(w.pod_namespace, "ml-team");
        assert_string_equal(w.container, "init-weights");
        assert_string_equal(w.container_id, CID);
        const char *bad_logs[] = {
                "trainer_ml-team_pytorch-" CID,               /* no .log */
                "trainer_ml-team_pytorch" CID ".log",         /* no '-' before the id */
                "trainer_ml-team_-" CID ".log",               /* empty container */
                "trainer_ml-team_pytorch-" CID "0.log",       /* 65 digits */
                "trainer_ml_team_pytorch-" CID ".log",        /* three '_' */
                "trainer_ml-team_py.torch-" CID ".log",       /* '.' in a container name */
                /* kubelet cuts names past 255 bytes: the id is then cut too. */
                "trainer_ml-team_pytorch-4a1b2c3d4e5f.log",
                "trainer_ml-team_pytorch-" CID ".log.gz",
        };
        for (size_t i = 0; i < sizeof(bad_logs) / sizeof(bad_logs[0]); i++)
                if (workload_split_container_log(bad_logs[i], w.pod, w.pod_namespace, w.container, w.container_id))
                        fail_msg("container log %s accepted", bad_logs[i]);
}

static void test_read(void **state) {
        (void)state;
        char *root = tree_new("workload");
        tree_put(root, "proc/10/cgroup", "0::/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" CID ".scope\n");
        tree_put(root, "proc/11/cgroup", "0::/kubepods/besteffort/pod" UID "/" CID "\n");
        tree_put(root, "proc/12/cgroup", "0::/kubepods.slice/kubepods-podaaaaaaaa_bbbb_cccc_dddd_eeeeeeeeeeee.slice/"
                                         "cri-containerd-" CID ".scope\n");
        tree_put(root, "var/log/containers/trainer-7d9f8_ml-team_pytorch-" CID ".log", "");
        tree_put(root, "var/log/containers/README", "");
        tree_put(root, "var/log/pods/ml-team_trainer-7d9f8_" UID "/pytorch/0.log", "");
        tree_put(root, "var/log/pods/other_pod-1_aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeef/c/0.log", "");
        /* A cgroup file past the bound. */
        char *huge = malloc(WORKLOAD_CGROUP_MAX + 10);
        assert_non_null(huge);
        memset(huge, 'a', WORKLOAD_CGROUP_MAX + 9);
        huge[WORKLOAD_CGROUP_MAX + 9] = '\0';
        tree_put(root, "proc/13/cgroup", huge);
        free(huge);
        struct fsroot *fs = NULL;
        assert_int_equal(fsroot_open(root, &fs), 0);
        struct workload w;
        assert_int_equal(workload_read(fs, 10, &w), 0);
        workload_kubernetes_names(fs, &w);
        assert_string_equal(w.pod, "trainer-7d9f8");
        assert_string_equal(w.pod_namespace, "ml-team");
        assert_string_equal(w.container, "pytorch");
        /* Same pod; the container's entry is looked up by id, so also found. */
        assert_int_equal(workload_read(fs, 11, &w), 0);
        workload_kubernetes_names(fs, &w);
        assert_string_equal(w.container, "pytorch");
        /* No entry in /var/log/containers names the container: the pod's directory gives
         * the pod and namespace, not the container. */
        tree_unlink(root, "var/log/containers/trainer-7d9f8_ml-team_pytorch-" CID ".log");
        assert_int_equal(workload_read(fs, 10, &w), 0);
        workload_kubernetes_names(fs, &w);
        assert_string_equal(w.pod, "trainer-7d9f8");
        assert_string_equal(w.pod_namespace, "ml-team");
        assert_string_equal(w.container, ""); /* no entry names it */
        assert_int_equal(workload_read(fs, 12, &w), 0);
        workload_kubernetes_names(fs, &w);
        assert_string_equal(w.pod_uid, "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee");
        assert_string_equal(w.pod, ""); /* other_pod-1's uid differs in its last digit */
        assert_int_equal(workload_read(fs, 13, &w), -EFBIG);
        assert_int_equal(workload_read(fs, 14, &w), -ENOENT);
        assert_false(workload_found(&w));
        /* fsroot_read_alloc_max's bound: max - 1 bytes and more are refused. */
        tree_put(root, "small", "123456789");
        char *text = NULL;
        size_t len = 0;
        assert_int_equal(fsroot_read_alloc_max(fs, "/small", 11, &text, &len), 0);
        assert_int_equal(len, 9);
        free(text);
        assert_int_equal(fsroot_read_alloc_max(fs, "/small", 10, &text, &len), -EFBIG);
        assert_int_equal(fsroot_read_alloc_max(fs, "/small", 1, &text, &len), -EINVAL);
        fsroot_free(fs);
        tree_remove(root);
}

static void test_stat(void **state) {
        (void)state;
        unsigned long long t = 0;
        static const char line[] = "4242 (python3) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 4 0 987654 "
                                   "1000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";
        assert_true(proc_stat_starttime(line, sizeof(line) - 1, &t));
        assert_int_equal(t, 987654);
        /* A comm with ") " and spaces: fields count from the last ')'. */
        static const char odd[] = "7 (a) b (c)) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0\n";
        assert_true(proc_stat_starttime(odd, sizeof(odd) - 1, &t));
        assert_int_equal(t, 55);
        const char *bad[] = {"", "7 (a) S 1 2", "no parenthesis 1 2 3", "7 (a) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5x",
                             "7 (a) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99999999999999999999999"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                if (proc_stat_starttime(bad[i], strlen(bad[i]), &t))
                        fail_msg("stat %s accepted", bad[i]);
}

static void test_summary(void **state) {
        (void)state;
        char out[48];
        struct workload w = path_of("/slurm/uid_1/job_4242/step_0");
        workload_summary(&w, out, sizeof(out));
        assert_string_equal(out, "job 4242");
        w = path_of("/kubepods/pod" UID "/" CID);
        workload_summary(&w, out, sizeof(out));
        assert_string_equal(out, "pod 0f2b6e1c"); /* names unknown */
        snprintf(w.pod, sizeof(w.pod), "trainer-7d9f8");
        snprintf(w.pod_namespace, sizeof(w.pod_namespace), "ml-team");
        workload_summary(&w, out, sizeof(out));
        assert_string_equal(out, "ml-team/trainer-7d9f8");
        w = path_of("/system.slice/docker-" CID ".scope");
        workload_summary(&w, out, sizeof(out));
        assert_string_equal(out, "docker 4a1b2c3d4e5f");
        w = path_of("/docker/" CID);
        w.runtime[0] = '\0';
        workload_summary(&w, out, sizeof(out));
        assert_string_equal(out, "container 4a1b2c3d4e5f");
        w = path_of("/user.slice");
        workload_summary(&w, out, sizeof(out));
        assert_string_equal(out, "");
        /* A long pod name is cut to the buffer, terminated. */
        memset(w.pod, 'a', sizeof(w.pod) - 1);
        w.pod[sizeof(w.pod) - 1] = '\0';
        snprintf(w.pod_namespace, sizeof(w.pod_namespace), "ns");
        workload_summary(&w, out, 10);
        assert_string_equal(out, "ns/aaaaaa");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_slurm),      cmocka_unit_test(test_kubernetes), cmocka_unit_test(test_spoofed),
                cmocka_unit_test(test_containers),
                cmocka_unit_test(test_cgroup_file), cmocka_unit_test(test_log_names), cmocka_unit_test(test_read),
                cmocka_unit_test(test_stat),       cmocka_unit_test(test_summary),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
