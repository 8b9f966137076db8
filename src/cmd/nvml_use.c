#include "cmd/nvml_use.h"
#include "cmd/cmd.h"
#include "core/fsroot.h"
#include "data/gpudb.h"
#include "sys/facts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 1..600000 ms. */
static bool parse_ms(const char *s, unsigned int *ret) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (errno || end == s || *end || s[0] == '-' || v == 0 || v > 600000)
                return false;
        *ret = (unsigned int)v;
        return true;
}

int nvml_option(const char *cmd, int opt, struct nvml_options *o) {
        switch (opt) {
        case 'N': o->lib = optarg; return 1;
        case 'n': o->off = true; return 1;
        case 'c':
        case 'g':
        case 'i' | 0x100: {
                unsigned int *dest = opt == 'c' ? &o->dl.call_ms : opt == 'g' ? &o->dl.gpu_ms : &o->dl.init_ms;
                const char *which = opt == 'c' ? "call" : opt == 'g' ? "gpu" : "init";
                if (!parse_ms(optarg, dest)) {
                        fprintf(stderr, "gpuvet %s: --nvml-%s-timeout-ms: expected milliseconds 1..600000, not \"%s\"\n",
                                cmd, which, optarg);
                        return -1;
                }
                return 1;
        }
        default: return 0;
        }
}

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
        for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
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

int nvml_use_start(struct nvml_use *u, const struct nvml_options *o, struct fsroot *fs, struct facts *f) {
        memset(u, 0, sizeof(*u));
        u->nv = &f->nvml;
        u->status = nvml_init_state_name(NVML_INIT_NOT_TRIED);
        const char *env = secure_getenv(NV_LIB_ENV);
        bool named = (o->lib && *o->lib) || (env && *env);
        if (o->off) {
                snprintf(f->nvml_note, sizeof(f->nvml_note), "--no-nvml");
                snprintf(u->why, sizeof(u->why), "NVML not used (--no-nvml)");
                return 0;
        }
        if (!fsroot_is_live(fs) && !named) {
                snprintf(f->nvml_note, sizeof(f->nvml_note),
                         "--root names a capture, not this machine (name a library with --nvml-lib or %s to ask "
                         "one anyway)",
                         NV_LIB_ENV);
                snprintf(u->why, sizeof(u->why),
                         "NVML not used: --root %s is not this machine (name a library with --nvml-lib or $"
                         NV_LIB_ENV " to read one)", fsroot_dir(fs));
                return 0;
        }
        int r = nv_lib_open(o->lib, &u->lib, f->nvml_note, sizeof(f->nvml_note));
        if (r == -ENOMEM) {
                fprintf(stderr, "gpuvet: %s\n", f->nvml_note);
                return EXIT_INTERNAL;
        }
        if (r < 0)
                snprintf(u->why, sizeof(u->why), "%s", f->nvml_note); /* gather records NO_LIBRARY */
        else
                snprintf(f->nvml_lib_path, sizeof(f->nvml_lib_path), "%s", nv_lib_path(u->lib));
        r = nvml_facts_gather_some(u->lib, &o->dl, o->groups ? o->groups : NVML_GROUPS_ALL, &f->nvml);
        if (r == -ENOMEM) {
                fprintf(stderr, "gpuvet: out of memory reading NVML\n");
                return EXIT_INTERNAL;
        }
        if (r == -EAGAIN)
                fprintf(stderr, "gpuvet: could not start a thread to read NVML; reporting what was read, ignoring\n");
        explain_init(u);
        return 0;
}

int nvml_use_end(struct nvml_use *u, int code) {
        if (!u->nv)
                return code;
        nvml_facts_done(u->nv);
        if (u->nv->abandoned) {
                code = stdout_finish(code);
                fflush(stderr);
                _exit(code);
        }
        u->lib = nv_lib_close(u->lib);
        return code;
}
