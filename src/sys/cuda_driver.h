/* The CUDA driver library as a CUDA program meets it: does libcuda.so.1 load, which
 * driver version is it, does cuInit succeed, how many devices does it count.
 *
 * cuInit may hang on a wedged GPU and is not fork-safe (a process that forks after it
 * cannot use CUDA in the child, and the device probes of `check --level standard` are
 * forked children), so it runs in a child process of its own: started early, it
 * overlaps NVML's reads, and the caller collects it under a deadline. A child that hangs
 * is killed and left behind; the report names the call it was in. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define CUDA_DRIVER_LIB_ENV "GPUVET_CUDA_LIB" /* bindings/cuda.h's CUDA_LIB_ENV, for messages */
#define CUDA_DRIVER_TIMEOUT_MS_DEFAULT 20000u /* cuInit wakes every GPU without persistence mode */

enum cuda_driver_state {
        CUDA_DRIVER_NOT_PROBED = 0, /* note says why */
        CUDA_DRIVER_PROBE_ERROR,    /* pipe or fork failed: note */
        CUDA_DRIVER_NO_LIBRARY,     /* dlopen failed: note has dlerror's text */
        CUDA_DRIVER_NO_SYMBOL,      /* the library lacks cuInit: note names it */
        CUDA_DRIVER_TIMEOUT,        /* the call in `stage` ran past the deadline */
        CUDA_DRIVER_CRASHED,        /* the child died in `stage`: note says how */
        CUDA_DRIVER_INIT_FAILED,    /* cuInit returned init_rc */
        CUDA_DRIVER_OK,             /* cuInit succeeded; see device_count */
};

/* Where the child was: the call a timeout or a crash is blamed on. */
enum cuda_driver_stage {
        CUDA_STAGE_START = 0,
        CUDA_STAGE_DLOPEN,
        CUDA_STAGE_DRIVER_VERSION,
        CUDA_STAGE_INIT,
        CUDA_STAGE_DEVICE_COUNT,
        CUDA_STAGE_DONE,
};

struct cuda_driver_facts {
        enum cuda_driver_state state;
        enum cuda_driver_stage stage;
        char note[256];
        char lib_name[256];    /* what was asked for: "libcuda.so.1" or $GPUVET_CUDA_LIB */
        char lib_path[512];    /* the file the loader opened, links followed: "" when none */
        char lib_version[32];  /* "570.86.10" from that file's name; "" when it has none */
        bool lib_in_compat;    /* the path is a CUDA forward-compatibility package's */
        int api_version;       /* cuDriverGetVersion: 12080 for CUDA 12.8; 0 unknown */
        int api_version_rc;
        int init_rc;
        char init_rc_name[64]; /* the driver's cuGetErrorName for a code we do not list */
        unsigned int init_ms;  /* how long cuInit took (or had run, at a timeout) */
        int device_count;      /* cuDeviceGetCount; -1 unknown */
        int device_count_rc;
        bool visible_devices_cleared; /* CUDA_VISIBLE_DEVICES was set here; the probe ran without it */
        unsigned int timeout_ms;
        unsigned int elapsed_ms; /* the probe's whole run, as the caller waited for it */
};

struct cuda_driver_probe;

/* Fork the probe's child of lib (NULL: $GPUVET_CUDA_LIB or libcuda.so.1) now but hold it
 * at a gate (a pipe it reads before anything else): it loads nothing until
 * cuda_driver_probe_release. So a caller forks before it starts threads and decides
 * later, once it knows whether the probe is wanted. The deadline of timeout_ms (0: the
 * default) counts from the release. Returns NULL only when out of memory; a failed fork
 * is reported by cuda_driver_probe_finish as CUDA_DRIVER_PROBE_ERROR. */
struct cuda_driver_probe *cuda_driver_probe_hold(const char *lib, unsigned int timeout_ms);
/* Open the gate: the child loads the library and calls cuInit; the deadline starts now. */
void cuda_driver_probe_release(struct cuda_driver_probe *p);
/* Close the gate unopened instead: the child leaves without loading the library and is
 * reaped (killed if it has not left within 200 ms). *out (when out is not NULL)
 * becomes NOT_PROBED with note why; p is freed. Returns true when the child exited with
 * status 0 by itself, false when it had to be killed or was never forked. */
bool cuda_driver_probe_cancel(struct cuda_driver_probe *p, struct cuda_driver_facts *out, const char *why);
/* Whether $GPUVET_CUDA_LIB names a library to probe (instead of libcuda.so.1). */
bool cuda_driver_lib_named(void);
/* Wait for the probe until its deadline, fill *out and free p (a held probe is released
 * first). */
void cuda_driver_probe_finish(struct cuda_driver_probe *p, struct cuda_driver_facts *out);
/* *out for a probe that was not run, saying why. */
void cuda_driver_not_probed(struct cuda_driver_facts *out, const char *why);

/* The CUDA call a stage stands for ("cuInit"); "starting the probe" for START. */
const char *cuda_driver_stage_call(enum cuda_driver_stage s);

/* A CUresult the probe recorded: its name ("CUDA_ERROR_NO_DEVICE") and sentence from
 * gpuvet's table (bindings/cuda_errors.c), NULL for a code not in it. */
const char *cuda_driver_rc_name(int rc);
const char *cuda_driver_rc_text(int rc);
/* The driver version in a library file name: "libcuda.so.570.86.10" -> "570.86.10".
 * Returns false (buf "") when the name carries none ("libcuda.so.1"). */
bool cuda_driver_version_from_name(const char *path, char *buf, size_t size);
