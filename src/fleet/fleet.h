/* `gpuvet fleet`: many nodes' reports read into plain C structs and aggregated (verdicts,
 * failing checks, benchmark distributions, outliers, configuration drift). The writers
 * (src/report/fleet_text.c, fleet_json.c, and later an HTML page) read only what is
 * declared here; docs/fleet.md tells every field.
 *
 * Ownership: a struct fleet owns everything it points to (fleet_free). Pointers into it
 * (a node's name in an outlier, a document's path) stay valid until fleet_free. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/result.h"
#include "data/fleet_rules.h"

/* The document kinds fleet reads, by their schema string. */
enum fleet_doc_kind {
        FLEET_DOC_REPORT, /* gpuvet.report/1: check and burn */
        FLEET_DOC_BENCH,  /* gpuvet.bench/2 */
        FLEET_DOC_NCCL,   /* gpuvet.bench-nccl/1 */
        FLEET_DOC_RDMA,   /* gpuvet.bench-rdma/1 */
        FLEET_DOC_TRAIN,  /* gpuvet.bench-train/1 */
        _FLEET_DOC_COUNT,
};

/* Where a node's name came from: the directory in the Ansible play's layout
 * (RESULTS/<inventory name>/gpuvet-*.json, every report there of one hostname) when its
 * name differs from the hostname; else the document's host.hostname, else the name of the
 * directory the file sits in, else (a path without one) the file name without ".json". */
enum fleet_name_source {
        FLEET_NAME_HOSTNAME,
        FLEET_NAME_DIRECTORY,
        FLEET_NAME_FILE,
};

struct fleet_gpu {
        char *pci_bus_id; /* "0000:1b:00.0" */
        char *model;      /* gpus[].name: "NVIDIA H100 80GB HBM3" */
        char *vbios;      /* from the gpu.inforom result about it, NULL when not reported */
};

/* A check result that was not pass or skip (only those are counted). */
struct fleet_check {
        char *id;
        char *subject;
        enum status status;
};

/* One benchmark figure: a measurement's median (stats.median, else its single sample), or
 * an RDMA verdict's observed bandwidth. */
struct fleet_metric {
        char *name;    /* "<bench>/<measurement>": "memory/triad", "nccl/all_reduce", "rdma/write_bw" */
        char *unit;    /* "GB/s", "us", ... ("" when the document gives none) */
        char *subject; /* a GPU's PCI address, "host", "0->1" ... */
        double value;
        int higher_is_better; /* 1, 0, or -1 when the document does not say */
};

/* One document, as read. */
struct fleet_doc {
        char *path;
        enum fleet_doc_kind kind;
        char *command;  /* envelope's command: "check", "burn", "bench" */
        char *hostname; /* host.hostname, NULL when absent */
        char *node;     /* the node's name (see fleet_name_source) */
        char *page;     /* the absolute path of the node's own page beside it (NAME.html for NAME.json,
                         * as the Ansible play fetches them), NULL when there is none */
        enum fleet_name_source name_source;
        char *kernel_release; /* host.kernel_release (NULL: not reported) */
        char *driver_version; /* gpu.nvml's evidence, else gpu.driver_version's observed */
        char *cuda_version;   /* gpu.nvml's evidence cuda_driver_version */
        enum status verdict;  /* summary.verdict */
        struct fleet_gpu *gpus;
        size_t n_gpus;
        struct fleet_check *checks;
        size_t n_checks;
        struct fleet_metric *metrics;
        size_t n_metrics;
};

/* An input that was named or found but not read. */
struct fleet_skipped {
        char *path;
        char *reason; /* "truncated JSON (ends inside a value)", "schema gpuvet.report/2 is not read ..." */
};

struct fleet_node {
        char *name;
        enum fleet_name_source name_source;
        const char *hostname;       /* what its reports call it when that is not its name, else NULL */
        enum status verdict;        /* worst of its documents (status_worse) */
        const char *verdict_doc;    /* path of the document that gave it */
        const struct fleet_doc **docs;
        size_t n_docs;
        const char *driver_version; /* the first of its documents that reports each, or NULL */
        const char *kernel_release;
        const char *cuda_version;
};

#define FLEET_SAMPLE_NODES 5

/* Nodes with a check id at each status (a node counts once per status, however many of
 * its GPUs the result is about); sorted by nodes affected, most first, then id. */
struct fleet_check_count {
        const char *id;
        size_t nodes[_STATUS_COUNT];     /* only WARN, FAIL and ERROR are counted */
        size_t nodes_total;              /* nodes with any of those */
        const char *sample[FLEET_SAMPLE_NODES]; /* the first nodes by name */
        size_t n_sample;
};

struct fleet_stats {
        size_t n;
        double min, p10, median, p90, max, mean;
        double stddev; /* sample standard deviation (n - 1); 0 for one value */
        double mad;    /* median absolute deviation from the median (unscaled) */
};

/* One metric's distribution over one GPU model: per GPU where the figure is per GPU
 * (its subject is one of the node's GPUs), else per node. */
struct fleet_distribution {
        const char *metric;
        const char *unit;
        const char *model; /* GPU model, "(no GPU)" for nodes without one */
        enum fleet_direction direction;
        struct fleet_stats stats;
        /* Every value with its node's name, in the order of the nodes' names; kept only when
         * struct fleet's keep_values was set before fleet_aggregate (the HTML page draws
         * them), else NULL. */
        double *values;
        const char **value_nodes;
        const char **value_subjects; /* each value's subject ("gpu5 (0000:b3:00.0)", "host") */
};

enum fleet_rule_kind {
        FLEET_RULE_VARIANCE,  /* worse than the model's median by more than a share (and k MADs) */
        FLEET_RULE_VALUE_MIN, /* below an absolute floor */
        FLEET_RULE_VALUE_MAX, /* above an absolute ceiling */
};

struct fleet_outlier {
        const char *node;
        const char *doc;
        const char *metric;
        const char *unit;
        const char *model;
        const char *subject;
        double value;
        double median;
        double deviation_pct; /* (value - median) / median * 100: signed */
        double mads;          /* |value - median| / (1.4826 * MAD); 0 when MAD is 0 */
        enum fleet_rule_kind rule;
        const char *rule_pattern; /* the rules file's "metric" pattern that applied */
        enum status status;       /* WARN or FAIL */
};

/* One node's outliers on one side of their medians, told as one finding: a slow node's
 * dozens of figures share one cause, and a page of rows hides it. */
struct fleet_outlier_group {
        const char *node;
        bool below;           /* the figures are below their medians (else above) */
        enum status status;   /* the worst of its outliers' */
        size_t n, n_fail;     /* its outliers, and those failing */
        double least_pct;     /* the smallest and largest |deviation_pct| among them */
        double most_pct;
        size_t worst;         /* index in the outliers: the worst status, then furthest from its median */
        const size_t *members; /* n indices in the outliers, in their order */
};

struct fleet_drift_node {
        const char *node;
        char *value; /* "96.00.74.00.1A"; a node whose GPUs of the model differ: "A,B" */
};

/* One configuration value across the nodes that report it (a node that does not report it
 * is neither majority nor odd). */
struct fleet_drift {
        const char *attribute; /* "driver_version", "kernel_release", "cuda_version", "vbios" */
        const char *model;     /* vbios: the GPU model; NULL for the others */
        char *majority;        /* the most common value (a tie: the smaller string) */
        size_t n_majority;
        size_t n_reporting;    /* nodes that report a value */
        struct fleet_drift_node *odd; /* nodes with another value, by name */
        size_t n_odd;
};

struct fleet_rules; /* src/data/fleet_rules.h */

struct fleet {
        struct fleet_doc *docs;
        size_t n_docs;
        struct fleet_skipped *skipped;
        size_t n_skipped;
        struct fleet_node *nodes; /* by name */
        size_t n_nodes;
        size_t node_counts[_STATUS_COUNT]; /* nodes per verdict */
        enum status verdict;               /* worst node verdict; SKIP when there is no node */
        enum status overall; /* the fleet's: worst of the node verdicts, the outliers, and warn for drift */
        size_t n_drifting;   /* drifts with odd nodes */
        struct fleet_check_count *checks;
        size_t n_checks;
        struct fleet_distribution *dists; /* by metric, then model */
        size_t n_dists;
        struct fleet_outlier *outliers; /* by metric, model, then node */
        size_t n_outliers;
        struct fleet_outlier_group *outlier_groups; /* failing first, then by node, below first */
        size_t n_outlier_groups;
        size_t *outlier_group_members; /* the groups' members point here */
        struct fleet_drift *drifts; /* every attribute some node reports (n_odd may be 0) */
        size_t n_drifts;
        char *rules_source; /* "built-in fleet_rules.json" or the --rules path */
        char **patterns;    /* copies of the rules' patterns the outliers name (the rules go first) */
        size_t n_patterns;
        double duration_ms;
        bool keep_values; /* set by the caller: keep each distribution's values (see above) */
};

/* Read every input (files; directories walked for *.json) on threads (0: one per online
 * CPU) into f->docs and f->skipped, each sorted by path; progress: "files read of total"
 * on standard error meanwhile (core/progress.h). Returns 0 or -ENOMEM. */
int fleet_read_inputs(struct fleet *f, char *const *paths, size_t n_paths, unsigned threads, bool progress);

/* Aggregate f->docs under the rules into nodes, check counts, distributions, outliers and
 * drift. Returns 0 or -ENOMEM. */
int fleet_aggregate(struct fleet *f, const struct fleet_rules *rules);

void fleet_free(struct fleet *f);

const char *fleet_doc_kind_schema(enum fleet_doc_kind k);
const char *fleet_name_source_name(enum fleet_name_source s);
const char *fleet_rule_kind_name(enum fleet_rule_kind k);
const char *fleet_direction_name(enum fleet_direction d);
