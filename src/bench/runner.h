/* Running a benchmark so that nothing it does can hang or corrupt the run.
 *
 * Each benchmark runs in a forked child (its own process group). The child opens the
 * device backend itself (a wedged GPU blocks in the driver; only the child is stuck),
 * runs, and sends its measurements to the parent over a pipe as one frame:
 *
 *     "GPUVET-BENCH/1 <payload bytes> <FNV-1a 32 of the payload, 8 hex>\n" <payload JSON>
 *
 * The parent keeps the deadline: when it passes, SIGTERM to the child's group, then
 * SIGKILL after a grace period. A child that misses the deadline becomes one error
 * measurement "timed out after N s in <bench>"; a frame whose length or checksum does
 * not match, or whose JSON does not parse, becomes "untrustworthy report" (a child that
 * crashed half-way through writing). The parent then judges every measurement
 * (baselines, limits, siblings) the same way, whatever the benchmark.
 *
 * Test-only switches (docs/bench.md): GPUVET_BENCH_TEST_HANG=<bench> makes that
 * benchmark's child block forever with SIGTERM ignored (exercises the SIGKILL path);
 * GPUVET_BENCH_TEST_GARBLE=<bench> makes it send a torn frame. */
#pragma once

#include "bench/bench.h"
#include "core/progress.h"

#define BENCH_DEFAULT_TIMEOUT_S 120
#define BENCH_GRACE_S 2

struct bench_run_result {
        const struct bench_info *info;
        enum status status;      /* worst of its measurements */
        double duration_ms;
        size_t first, count;     /* its measurements in the report */
        char backend[16];        /* the backend its child used, "" for host benchmarks */
        char note[256];          /* runner-level problem, "" when none */
};

/* The parent's progress while benchmarks run one after another (core/progress.h): which
 * of how many, what its child measures now and on which device (bench_live_note), the time
 * spent and a bound of the time left from the deadlines. Given in bench_ctx.progress,
 * bench_run_child draws it at the child's start and about every second while it runs. */
struct bench_progress {
        struct progress out;
        const char *command;   /* first word of each line: "bench", "check" */
        size_t step, n_steps;  /* the benchmark running, from 1 */
        double later_s;        /* the deadlines of the benchmarks after it */
        unsigned note_seq;     /* the child's note last drawn (a terminal redraws a new one at once) */
};
void bench_progress_init(struct bench_progress *p, const char *command, size_t n_steps, bool on);
/* The next benchmark starts; later_s: the deadlines of those after it. */
void bench_progress_next(struct bench_progress *p, double later_s);

/* The deadline bench_run_child gives b with timeout_s (0: b's own default). */
unsigned bench_deadline_s(const struct bench_info *b, unsigned timeout_s);

/* Run b in a child under timeout_s (0: BENCH_DEFAULT_TIMEOUT_S) and append its
 * measurements to rep, unjudged. Always appends at least one measurement (an error one
 * when the child produced none). Returns 0, or -ENOMEM / -errno when the child could not
 * even be started (then an error measurement says why too). */
int bench_run_child(const struct bench_info *b, const struct bench_ctx *ctx, unsigned timeout_s,
                    struct bench_report *rep, struct bench_run_result *ret);

/* Judge measurements [first, rep->n): fill the baseline of each GPU measurement from the
 * model of the GPU its subject names ("gpu0 (0000:1b:00.0)") unless the benchmark set
 * one, pick the limits of its benchmark (baseline or peak thresholds), bench_judge. */
void bench_judge_range(struct bench_report *rep, size_t first, const struct facts *facts,
                       const struct baselines *baselines);

/* The GPU model of the node's GPU a measurement's subject names ("gpu0 (0000:1b:00.0)"),
 * by its PCI address; NULL when none matches. */
struct gpu_model;
const struct gpu_model *bench_subject_model(const struct facts *facts, const char *subject);

/* The frame codec, exposed for tests. bench_frame returns a malloc'd frame of
 * *ret_len bytes around payload. bench_unframe checks it and returns a pointer to the
 * payload inside buf (NUL-terminated in place) or NULL with why. */
char *bench_frame(const char *payload, size_t len, size_t *ret_len);
char *bench_unframe(char *buf, size_t len, char *why, size_t whysize);
uint32_t bench_fnv1a32(const void *data, size_t len);

/* Resolve "auto", "cuda" or "opencl" and open it: auto is CUDA when it opens with at
 * least one device, else OpenCL. On failure returns a negative errno and a message in err
 * naming each backend tried. */
int bench_open_backend(const char *name, const struct dev_ops **ret_ops, struct dev_backend **ret_dev, char *err,
                       size_t errsize);
