/* What the stress test (burn/burn.h) found, as the checks of category burn judge it: the
 * options it ran with, each device's end, loads, faults and telemetry; with the modes' and
 * ends' names. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum burn_mode { BURN_MODE_GEMM, BURN_MODE_POWER, BURN_MODE_PULSE, BURN_MODE_MEMTEST, _BURN_MODE_COUNT };
#define BURN_MODE_BIT(m) (1u << (m))
#define BURN_MODES_ALL (BURN_MODE_BIT(_BURN_MODE_COUNT) - 1u)

const char *burn_mode_name(enum burn_mode m);
/* "gemm", "power", "pulse", "memtest", or "all"; a comma list of them. Returns the bit set,
 * 0 when any word is unknown. */
unsigned burn_modes_parse(const char *s);

/* Defaults, documented in docs/burn.md with the reasons. */
#define BURN_DEFAULT_DURATION_MS (5ull * 60 * 1000)
#define BURN_DEFAULT_SAMPLE_MS 1000u
#define BURN_DEFAULT_HANG_MS 30000u   /* a worker silent this long is hung */
#define BURN_DEFAULT_PULSE_MS 2000u   /* one full/idle cycle of the pulse mode */
#define BURN_TICK_MS 1000u            /* how often a worker reports its progress */

struct burn_options {
        unsigned modes;               /* BURN_MODE_BIT set; 0: gemm */
        uint64_t duration_ms;         /* the whole run, shared by the modes (burn_mode_slices) */
        const char *backend;          /* "auto", "cuda", "opencl" */
        const int *gpus;              /* backend device indices; NULL: every GPU the census finds */
        size_t n_gpus;
        const char *precision;        /* NULL: fp32 for gemm, the fastest the device has for power */
        unsigned verify_every;        /* gemm: verify every Nth product; 0: BURN_DEFAULT_VERIFY_EVERY */
        uint64_t pulse_period_ms;     /* 0: BURN_DEFAULT_PULSE_MS */
        uint64_t memtest_bytes;       /* 0: the memtest module's default for the device */
        uint64_t seed;                /* inputs and the random memory pattern; 0: from the clock */
        unsigned sample_ms;           /* telemetry interval; 0: BURN_DEFAULT_SAMPLE_MS */
        unsigned hang_ms;             /* 0: BURN_DEFAULT_HANG_MS */
        bool allow_cpu;               /* also load CPU devices (PoCL): tests and demos */
        bool progress;                /* print progress on standard error */
};

#define BURN_DEFAULT_VERIFY_EVERY 10u

/* Throughput over one tick of a worker. */
struct burn_rate {
        double t_s;      /* end of the tick, seconds from the run's start */
        double tflops;   /* products x flops / wall time of the tick */
        enum burn_mode mode;
};

#define BURN_MAX_FAULTS 16

/* A wrong element of a product, or a word of memory that read back wrong. */
struct burn_fault {
        enum burn_mode mode;
        uint64_t where_a, where_b;    /* gemm: row, column; memtest: byte offset, 0 */
        double expected, got;         /* gemm */
        uint64_t mem_expected, mem_got; /* memtest: the word's bits */
        char what[48];                /* gemm: "host reference" / "first result"; memtest: the pattern */
};

/* One telemetry sample of a device (NVML, at the device's PCI address). NAN: not read. */
struct burn_sample {
        double t_s;
        enum burn_mode mode;          /* what the worker was running, by its last mode line */
        bool loaded;                  /* the worker was inside a mode (not starting, not done) */
        float temp_c, mem_temp_c, power_w, power_limit_w, sm_mhz, mem_mhz, util_pct;
        bool have_reasons;
        uint64_t reasons;             /* clock event reasons (NV_CLOCKS_EVENT_*) */
};

/* What NVML told of a device over the run. */
struct burn_telemetry {
        bool nvml;                    /* an NVML GPU answered at the device's address */
        struct burn_sample *samples;
        size_t n_samples, cap_samples;
        float sm_max_mhz, temp_slowdown_c, temp_mem_max_c;
        uint64_t reasons_loaded;      /* every reason seen in a sample under load */
        bool have_ecc;
        uint64_t ecc_uncorrected_start, ecc_uncorrected_end, ecc_corrected_start, ecc_corrected_end;
        bool remap_pending_start, remap_pending_end, retired_pending_end;
        bool repair_pending_start, repair_pending_end; /* a channel or TPC repair (Blackwell) */
        /* NVML's clock-event time counters (enum nvml_violation, ns) at the first and last
         * sample that had each: a reason held between two samples shows here even when no
         * sample caught its bit. */
        bool have_violation[9];
        uint64_t violation_start_ns[9], violation_end_ns[9];
        unsigned xids, dbe_events, sbe_events;
        unsigned long long xid_codes[8]; /* the first Xids, in order */
        unsigned n_xid_codes;
};

enum burn_end {
        BURN_END_NOT_RUN,   /* the worker never started (why in error) */
        BURN_END_DONE,      /* ran every mode to the end */
        BURN_END_STOPPED,   /* stopped early by a signal to gpuvet */
        BURN_END_ERROR,     /* a device call failed (error names it) */
        BURN_END_HUNG,      /* silent past the hang deadline: killed */
        BURN_END_CRASHED,   /* the worker died or its report broke (error says so, whole) */
};
const char *burn_end_name(enum burn_end e);

/* One GEMM-type mode's load on a device (gemm, power, pulse): what it ran and the digest of
 * its first verified result, which the parent compares across GPUs of one model. */
struct burn_load {
        char workload[256];           /* as the GEMM load module describes it */
        char precision[8];
        bool have_digest;
        uint64_t digest;
        bool digest_changed;          /* a later result of the mode differed from its first */
};

struct burn_device {
        int index;                    /* the backend's device index */
        char name[128];
        char bus[16];                 /* "0000:1b:00.0" (lower case), "" when the API does not tell */
        bool is_cpu;
        char backend[16];
        enum burn_end end;
        char error[256];
        double started_s, ended_s;    /* seconds from the run's start */

        /* gemm, power and pulse */
        uint64_t products;
        double flops;                 /* of all products */
        double load_seconds;          /* wall time with products running */
        uint64_t verifications;
        uint64_t elements_sampled, faulty_vs_host, elements_compared, faulty_vs_first;
        struct burn_load loads[_BURN_MODE_COUNT]; /* by mode; memtest's unused */
        double device_seconds;        /* device-timed busy time of the products (0: not timed) */
        struct burn_rate *rates;
        size_t n_rates, cap_rates;

        /* memtest */
        uint64_t mem_bytes;           /* region tested */
        uint64_t mem_passes, mem_words, mem_errors;
        double mem_seconds;
        char mem_seed[24];

        struct burn_fault faults[BURN_MAX_FAULTS];
        unsigned n_faults;
        uint64_t faults_total;

        double temp_c, power_w;       /* the latest telemetry; NAN when there is none */
        enum burn_mode mode;          /* the mode the worker said it runs */
        bool in_mode;
        struct burn_telemetry tele;

        uint64_t last_heard_ms;       /* parent's clock (deadline_now_ms) */
};

struct burn_facts {
        bool ran;                     /* false: not_run says why */
        bool attempted;               /* burn_run was called (not burn_not_run): a not_run is a failure to run */
        char not_run[256];
        struct burn_options opt;      /* as run (pointers not kept: gpus NULL) */
        uint64_t slices_ms[_BURN_MODE_COUNT];
        char backend[16];
        bool interrupted;             /* SIGINT/SIGTERM stopped it */
        double duration_s;
        struct burn_device *devs;
        size_t n_devs;
        char census_note[256];        /* devices left out and why ("CPU device ... not loaded") */
        char telemetry_note[256];     /* why there is no telemetry, or why it stopped; "" */
        bool nvml_abandoned;          /* an NVML call of the telemetry never returned */
};
