#include "cmd/nvml_use.h"
#include "cmd/cmd.h"
#include "core/fsroot.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool nvml_option(int opt, struct nvml_options *o) {
        switch (opt) {
        case 'N': o->lib = optarg; return true;
        case 'n': o->off = true; return true;
        default: return false;
        }
}

static void explain_init(struct nvml_use *u) {
        const struct nvml_facts *nv = &u->nv;
        const char *lib = u->lib ? u->lib->path : "libnvidia-ml";
        switch (nv->init_state) {
        case NVML_INIT_OK:
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
                         "reload the nvidia module or reboot", lib, nvml_return_name(nv->init_rc),
                         nvml_return_text(u->lib, nv->init_rc));
                return;
        default:
                snprintf(u->why, sizeof(u->why), "NVML (%s): nvmlInit_v2: %s (%s)", lib,
                         nvml_return_name(nv->init_rc), nvml_return_text(u->lib, nv->init_rc));
                return;
        }
}

int nvml_use_start(struct nvml_use *u, const struct nvml_options *o, struct fsroot *fs) {
        memset(u, 0, sizeof(*u));
        const char *env = getenv(NVML_LIB_ENV);
        bool named = (o->lib && *o->lib) || (env && *env);
        if (o->off) {
                snprintf(u->why, sizeof(u->why), "NVML not used (--no-nvml)");
                return 0;
        }
        if (!fsroot_is_live(fs) && !named) {
                snprintf(u->why, sizeof(u->why),
                         "NVML not used: --root %s is not this machine (name a library with --nvml-lib or $"
                         NVML_LIB_ENV " to read one)", fsroot_dir(fs));
                return 0;
        }
        char err[512];
        int r = nvml_lib_load(o->lib, NULL, &u->lib, err, sizeof(err));
        if (r == -ENOMEM) {
                fprintf(stderr, "gpuvet: %s\n", err);
                return EXIT_INTERNAL;
        }
        if (r < 0)
                snprintf(u->why, sizeof(u->why), "%s", err);
        r = nvml_facts_gather(u->lib, NULL, &u->nv);
        if (r == -ENOMEM) {
                fprintf(stderr, "gpuvet: out of memory reading NVML\n");
                return EXIT_INTERNAL;
        }
        explain_init(u);
        return 0;
}

int nvml_use_end(struct nvml_use *u, int code) {
        nvml_facts_done(&u->nv);
        if (u->nv.abandoned) {
                fflush(stdout);
                fflush(stderr);
                _exit(code);
        }
        u->lib = nvml_lib_free(u->lib);
        return code;
}
