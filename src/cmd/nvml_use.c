#include "cmd/nvml_use.h"
#include "cmd/cmd.h"
#include "core/array.h"
#include "core/deadline.h"
#include "core/fsroot.h"
#include "data/gpudb.h"
#include "sys/facts.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* After a good init: the first system reading that failed or hung makes the status. The
 * device count comes first: without it no GPU is read at all. */
static void explain_system(struct nvml_use *u) {
        const struct nvml_facts *nv = u->nv;
        struct {
                unsigned char state;
                int rc;
                const char *fn;
        } r[] = {
                {nv->device_count.state, nv->device_count.rc, nv->device_count.fn},
                {nv->driver_version.state, nv->driver_version.rc, nv->driver_version.fn},
                {nv->nvml_version.state, nv->nvml_version.rc, nv->nvml_version.fn},
                {nv->cuda_driver_version.state, nv->cuda_driver_version.rc, nv->cuda_driver_version.fn},
        };
        for (size_t i = 0; i < ARRAY_COUNT(r); i++) {
                if (nvml_reading_problem(u, -1, r[i].state, r[i].rc, r[i].fn, u->problem, sizeof(u->problem))) {
                        u->status = r[i].state == NV_TIMEOUT ? "timeout" : "error";
                        return;
                }
        }
}

static void explain_init(struct nvml_use *u) {
        const struct nvml_facts *nv = u->nv;
        const char *lib = u->lib ? nv_lib_path(u->lib) : "libnvidia-ml";
        u->status = nvml_init_state_name(nv->init_state);
        switch (nv->init_state) {
        case NVML_INIT_OK:
                explain_system(u);
                return;
        case NVML_INIT_NOT_TRIED:
        case NVML_INIT_NO_LIBRARY:
        case NVML_INIT_STATE_COUNT:
                return;
        case NVML_INIT_TIMEOUT:
                snprintf(u->why, sizeof(u->why), "NVML (%s): nvmlInit_v2 did not return within %u ms", lib,
                         nv->dl.init_ms);
                return;
        case NVML_INIT_VERSION_MISMATCH:
                snprintf(u->why, sizeof(u->why),
                         "NVML (%s): nvmlInit_v2: %s (%s): the loaded kernel module and the library differ; "
                         "reload the nvidia module or reboot", lib, nv_rc_name(nv->init_rc),
                         nv_rc_text(u->lib, nv->init_rc));
                return;
        default:
                snprintf(u->why, sizeof(u->why), "NVML (%s): nvmlInit_v2: %s (%s)", lib,
                         nv_rc_name(nv->init_rc), nv_rc_text(u->lib, nv->init_rc));
                return;
        }
}

/* One reading of NVML before it is in the facts: what was decided, loaded and gathered,
 * in memory of its own (check gathers the facts meanwhile, and facts_gather clears struct
 * facts). On a thread, everything below `stop` is written by that thread until it is
 * joined; abandoned NVML workers never write here (they publish into nv only before
 * nvml_facts_gather_some returns, and nv.gpus is a heap block that moves with nv). */
struct nvml_reading {
        struct nvml_options o; /* the caller's; on a thread its deadlines ask reading_stop */
        bool (*caller_stop)(void *stop_ctx);
        void *caller_stop_ctx;
        atomic_bool stop; /* the caller gave up before joining: cut the gather short */
        pthread_t thread;
        bool threaded;

        bool asked;  /* NVML is to be read (else note and why say why not) */
        int open_r;  /* nv_lib_open's */
        int gather_r; /* nvml_facts_gather_some's */
        struct nvml_lib *lib;
        struct nvml_facts nv;
        double done_ms; /* monotonic_ms() when the gather returned */
        char note[sizeof(((struct facts *)0)->nvml_note)];
        char lib_path[sizeof(((struct facts *)0)->nvml_lib_path)];
        char why[sizeof(((struct nvml_use *)0)->why)];
};

static bool reading_stop(void *ctx) {
        struct nvml_reading *r = ctx;
        return atomic_load(&r->stop) || (r->caller_stop && r->caller_stop(r->caller_stop_ctx));
}

/* Whether NVML is read at all; when not, r->note and r->why say why. Reads fs's settings
 * only (no file): on the caller's thread. */
static void reading_decide(struct nvml_reading *r, struct fsroot *fs) {
        const struct nvml_options *o = &r->o;
        const char *env = secure_getenv(NV_LIB_ENV);
        bool named = (o->lib && *o->lib) || (env && *env);
        if (o->off) {
                snprintf(r->note, sizeof(r->note), "--no-nvml");
                snprintf(r->why, sizeof(r->why), "NVML not used (--no-nvml)");
                return;
        }
        if (!fsroot_is_live(fs) && !named) {
                snprintf(r->note, sizeof(r->note),
                         "--root names a capture, not this machine (name a library with --nvml-lib or %s to ask "
                         "one anyway)",
                         NV_LIB_ENV);
                snprintf(r->why, sizeof(r->why),
                         "NVML not used: --root %s is not this machine (name a library with --nvml-lib or $"
                         NV_LIB_ENV " to read one)", fsroot_dir(fs));
                return;
        }
        r->asked = true;
}

/* Load and gather into r. Prints nothing: nvml_settle says what went wrong, in order, on
 * the caller's thread. */
static void reading_read(struct nvml_reading *r) {
        const struct nvml_options *o = &r->o;
        r->open_r = nv_lib_open(o->lib, &r->lib, r->note, sizeof(r->note));
        if (r->open_r == -ENOMEM)
                return;
        if (r->open_r < 0)
                snprintf(r->why, sizeof(r->why), "%s", r->note); /* gather records NO_LIBRARY */
        else
                snprintf(r->lib_path, sizeof(r->lib_path), "%s", nv_lib_path(r->lib));
        r->gather_r = nvml_facts_gather_some(r->lib, &o->dl, o->groups ? o->groups : NVML_GROUPS_ALL, &r->nv);
        r->done_ms = monotonic_ms();
}

static void *reading_main(void *arg) {
        reading_read(arg);
        return NULL;
}

/* The reading into the facts and u, with its messages. Frees nothing of r. */
static int nvml_settle(struct nvml_use *u, struct nvml_reading *r, struct facts *f) {
        memcpy(f->nvml_note, r->note, sizeof(f->nvml_note));
        memcpy(f->nvml_lib_path, r->lib_path, sizeof(f->nvml_lib_path));
        memcpy(u->why, r->why, sizeof(u->why));
        u->nv = &f->nvml;
        u->status = nvml_init_state_name(NVML_INIT_NOT_TRIED);
        u->read_ms = r->done_ms;
        if (!r->asked)
                return 0;
        u->lib = r->lib;
        r->lib = NULL;
        if (r->open_r == -ENOMEM) {
                fprintf(stderr, "gpuvet: %s\n", f->nvml_note);
                return EXIT_INTERNAL;
        }
        /* Moved: the GPU and timeout arrays go with it. The stop hook was the reading's. */
        f->nvml = r->nv;
        memset(&r->nv, 0, sizeof(r->nv));
        f->nvml.dl.stop_requested = r->caller_stop;
        f->nvml.dl.stop_ctx = r->caller_stop_ctx;
        if (r->gather_r == -ENOMEM) {
                fprintf(stderr, "gpuvet: out of memory reading NVML\n");
                return EXIT_INTERNAL;
        }
        if (r->gather_r == -EAGAIN)
                fprintf(stderr, "gpuvet: could not start a thread to read NVML; reporting what was read, ignoring\n");
        explain_init(u);
        return 0;
}

static void reading_init(struct nvml_reading *r, const struct nvml_options *o) {
        memset(r, 0, sizeof(*r));
        r->o = *o;
        r->caller_stop = o->dl.stop_requested;
        r->caller_stop_ctx = o->dl.stop_ctx;
        atomic_init(&r->stop, false);
}

int nvml_use_start(struct nvml_use *u, const struct nvml_options *o, struct fsroot *fs, struct facts *f) {
        memset(u, 0, sizeof(*u));
        struct nvml_reading r;
        reading_init(&r, o);
        reading_decide(&r, fs);
        if (r.asked)
                reading_read(&r);
        return nvml_settle(u, &r, f);
}

int nvml_use_begin(struct nvml_use *u, const struct nvml_options *o, struct fsroot *fs) {
        memset(u, 0, sizeof(*u));
        struct nvml_reading *r = malloc(sizeof(*r));
        if (!r) {
                fprintf(stderr, "gpuvet: out of memory reading NVML\n");
                return EXIT_INTERNAL;
        }
        reading_init(r, o);
        u->reading = r;
        reading_decide(r, fs);
        if (!r->asked)
                return 0;
        r->o.dl.stop_requested = reading_stop;
        r->o.dl.stop_ctx = r;
        /* The thread takes no signals (the watchdog's SIGALRM, SIGINT belong to the main
         * thread); the gather's own workers block them as well. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r->threaded = pthread_create(&r->thread, NULL, reading_main, r) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (!r->threaded)
                reading_read(r); /* no thread to spare: read now, as nvml_use_start would */
        return 0;
}

/* Wait for the reading's thread. */
static void reading_join(struct nvml_reading *r) {
        if (!r->threaded)
                return;
        /* The gather returns on time whatever NVML does (its deadlines), so this does too. */
        pthread_join(r->thread, NULL);
        r->threaded = false;
}

int nvml_use_join(struct nvml_use *u, struct facts *f) {
        struct nvml_reading *r = u->reading;
        reading_join(r);
        u->reading = NULL;
        int code = nvml_settle(u, r, f);
        free(r);
        return code;
}

int nvml_use_end(struct nvml_use *u, int code) {
        struct nvml_reading *r = u->reading;
        if (r) {
                /* Begun but never joined: the command failed meanwhile (its facts). Cut the
                 * gather short (calls in flight are abandoned), then end it as below. */
                atomic_store(&r->stop, true);
                reading_join(r);
                u->reading = NULL;
                u->nv = &r->nv;
                u->lib = r->lib;
        }
        if (!u->nv)
                return code;
        nvml_facts_done(u->nv);
        if (u->nv->abandoned) {
                code = stdout_finish(code);
                fflush(stderr);
                _exit(code);
        }
        u->lib = nv_lib_close(u->lib);
        if (r) {
                u->nv = NULL;
                free(r);
        }
        return code;
}

int nvml_explain_init(const char *cmd, const struct nvml_facts *f, const char *load_err) {
        switch (f->init_state) {
        case NVML_INIT_OK:
                return -1;
        case NVML_INIT_NO_LIBRARY:
                fprintf(stderr, "gpuvet %s: NVML could not be loaded: %s\n", cmd, load_err);
                break;
        case NVML_INIT_TIMEOUT:
                fprintf(stderr, "gpuvet %s: nvmlInit_v2 did not return in time (a wedged GPU or driver)\n", cmd);
                break;
        default:
                fprintf(stderr, "gpuvet %s: nvmlInit_v2: %s (%s)\n", cmd, nv_rc_text(f->lib, f->init_rc),
                        nvml_init_state_name(f->init_state));
                break;
        }
        return EXIT_FAILED;
}
