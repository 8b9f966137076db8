/* The /metrics body: one sample of the sampler written in the Prometheus text format 0.0.4
 * or OpenMetrics 1.0.0 (docs/serve.md).
 *
 * The body has two parts. The sample's part (every series read in that round) is the same
 * for every scrape of the round, so the server renders it once per round and format
 * (body_cache.h). The tail (how old the sample is, whether the sampler still runs, and
 * OpenMetrics' "# EOF") changes with every scrape and is a few lines. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "serve/accept.h"
#include "serve/check_watch.h"
#include "serve/xid_counter.h"
#include "sys/nvml_facts.h"

/* The Xids counted since the start (xid_counter.h), per GPU index of the sample. */
struct expo_xids {
        const struct xid_count *counts;
        size_t n;
        const bool *watched;              /* per GPU */
        const unsigned long long *last;   /* per GPU: the last Xid, 0 none */
};

/* The sample's part of the body for facts f, in format fmt, into a malloc'd *ret of
 * *ret_len bytes. stale: the round is too old or the sampler stopped: then no value of
 * it is written, only each GPU's gpuvet_gpu_up 0. xids (NULL: not watched) come from
 * events, not rounds: their counters are written stale or not, the last-Xid gauge only
 * when fresh. hostname is the Hostname label.
 * Returns 0 or -ENOMEM. */
int expo_render_sample(const struct nvml_facts *f, const struct expo_xids *xids, const char *hostname,
                       enum expo_format fmt, bool stale, char **ret, size_t *ret_len);

/* A GPU's identity labels as read in an earlier round (UUID, PCI bus id, device node,
 * model), kept by the body cache so that a GPU NVML stops answering for keeps the labels
 * its series and alerts know. */
struct expo_gpu_identity {
        unsigned int index;
        struct nv_str uuid, name, pci_bus_id;
        struct nv_u32 minor_number;
};

/* Every GPU seen since the start, one per UUID. */
struct expo_known_gpus {
        unsigned int n;
        struct expo_gpu_identity *v;
};

/* Add f's GPUs whose UUID was read and not yet known, with their identity now. Returns
 * 0 or -ENOMEM. */
int expo_known_learn(struct expo_known_gpus *k, const struct nvml_facts *f);
void expo_known_done(struct expo_known_gpus *k);

struct gpu_procs;

/* expo_render_sample with --workload-labels: workloads (per GPU of f, proc_workloads.h;
 * NULL: off) add dcgm-exporter's workload labels to the GPU's DCGM series, one sample per
 * distinct workload (container, hpc_job, namespace, pod; only those known), as
 * dcgm-exporter does for a shared GPU or several jobs. Returns 0 or -ENOMEM. */
int expo_render_sample_workloads(const struct nvml_facts *f, const struct expo_xids *xids,
                                 const struct gpu_procs *workloads, const char *hostname, enum expo_format fmt,
                                 bool stale, char **ret, size_t *ret_len);

/* expo_render_sample_workloads with the GPUs seen before (known; NULL: none): a GPU of f
 * whose UUID was not read (lost) takes the identity labels its index had, and a known GPU
 * not in f at all (NVML no longer counts it) is written as gpuvet_gpu_up 0 under its last
 * labels, so a lost GPU's series keeps its identity instead of leaving. */
int expo_render_sample_known(const struct nvml_facts *f, const struct expo_xids *xids,
                             const struct gpu_procs *workloads, const struct expo_known_gpus *known,
                             const char *hostname, enum expo_format fmt, bool stale, char **ret, size_t *ret_len);

/* The processes of a fresh round (procs: per GPU of f) into a malloc'd *ret:
 * gpuvet_gpu_processes per GPU whose list NVML gave, and gpuvet_process_gpu_memory_bytes
 * per exported process whose memory NVML knows, with the GPU's labels then pid, process,
 * user, slurm_job, pod, namespace, container, container_id. Returns 0 or -ENOMEM. */
int expo_render_processes(const struct nvml_facts *f, const struct gpu_procs *procs, const char *hostname,
                          enum expo_format fmt, char **ret, size_t *ret_len);

/* The --check-report statuses (check_watch.h; NULL: no --check-report) into a malloc'd
 * *ret: gpuvet_check_report_up, and per check id gpuvet_check_status{id,status} with 1 for
 * its status and 0 for the four others. They are not NVML's, so staleness does not apply.
 * Returns 0 or -ENOMEM. */
int expo_render_checks(const struct check_view *v, enum expo_format fmt, char **ret, size_t *ret_len);

/* The tail into buf (size bytes, EXPO_TAIL_MAX is enough): gpuvet_sampler_up, and when
 * age_s >= 0 gpuvet_sample_age_seconds; "# EOF" for OpenMetrics. Returns its length. */
#define EXPO_TAIL_MAX 512
size_t expo_render_tail(char *buf, size_t size, enum expo_format fmt, double age_s, bool sampler_up);

/* A value as Prometheus writes floats: the shortest text that reads back the same
 * ("69.85", "1980", "NaN"). buf needs 32 bytes. */
void expo_format_value(char *buf, size_t size, double v);
