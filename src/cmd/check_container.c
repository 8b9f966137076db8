/* container.gpu_access's container run, for `gpuvet check` (cmd/check_run.h): which runtime
 * and image, whether it may run here at all, then sys/container_gpu. */
#include "cmd/check_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fsroot.h"
#include "core/progress.h"
#include "data/compat.h"
#include "data/ngcdb.h"
#include "policy/policy.h"
#include "sys/container_gpu.h"
#include "sys/facts.h"

/* A runtime with the NVIDIA Container Toolkit beside it, or a CDI spec podman can use. */
static bool toolkit_configured(const struct container_facts *c) {
        return c->nvidia_ctk[0] || c->nvidia_container_cli[0] || c->nvidia_container_runtime[0] ||
               c->nvidia_container_runtime_hook[0] || c->cdi_nvidia_specs > 0;
}

void check_container_gpu(const struct check_cli *o, struct fsroot *fs, const char *data_dir, const struct facts *f,
                         struct container_gpu_facts *out) {
        memset(out, 0, sizeof(*out));
        const struct policy *p = f->policy;
        const char *named = o->container_runtime, *named_by = "--container-runtime";
        if (!named && p && p->container_runtime) {
                named = p->container_runtime;
                named_by = "site policy";
        }
        const char *env = secure_getenv(CONTAINER_RUNTIME_ENV);
        bool explicit_runtime = named || (env && *env);
        /* A capture's node is elsewhere: its docker is not this machine's to run. */
        if (!fsroot_is_live(fs) && !explicit_runtime) {
                snprintf(out->note, sizeof(out->note),
                         "not run: --root names a capture, and the container would run on this machine "
                         "(--container-runtime or $" CONTAINER_RUNTIME_ENV " runs one anyway)");
                return;
        }
        if (f->gpus.n == 0) {
                snprintf(out->note, sizeof(out->note), "no NVIDIA GPU on the PCI bus: no container to give GPUs to");
                return;
        }
        const struct container_facts *c = &f->container;
        struct container_runtime rt;
        if (container_runtime_choose(named, named_by, c, &rt) < 0) {
                snprintf(out->note, sizeof(out->note), "no container runtime (docker, podman) installed");
                return;
        }
        if (!explicit_runtime && !toolkit_configured(c)) {
                snprintf(out->note, sizeof(out->note),
                         "the NVIDIA Container Toolkit is not installed (and no CDI spec): container.toolkit says how");
                return;
        }
        if (!explicit_runtime && rt.engine == CONTAINER_ENGINE_DOCKER && !c->dockerd[0] && !c->podman[0]) {
                snprintf(out->note, sizeof(out->note), "only the docker client is installed (no dockerd): no local "
                                                       "engine to run the container");
                return;
        }

        if (o->container_image) {
                snprintf(out->image, sizeof(out->image), "%s", o->container_image);
                snprintf(out->image_why, sizeof(out->image_why), "--container-image");
        } else if (p && p->container_image) {
                snprintf(out->image, sizeof(out->image), "%s", p->container_image);
                snprintf(out->image_why, sizeof(out->image_why), "site policy (%s)", p->path);
        } else {
                struct compat *table = NULL;
                struct ngcdb *db = NULL;
                char err[512];
                if (compat_load(data_dir, &table, err, sizeof(err)) < 0 ||
                    ngcdb_load(data_dir, table, &db, err, sizeof(err)) < 0) {
                        compat_free(table);
                        snprintf(out->note, sizeof(out->note), "no default image: %.280s", err);
                        return;
                }
                const char *driver = f->nvidia.have_version ? f->nvidia.driver_version : NULL;
                int r = container_default_image(db, driver, out->image, sizeof(out->image), out->image_why,
                                                sizeof(out->image_why));
                ngcdb_free(db);
                compat_free(table);
                if (r < 0) {
                        char why[192];
                        snprintf(why, sizeof(why), "%s", out->image_why);
                        snprintf(out->note, sizeof(out->note),
                                 "no default image: %s (name one with container.image in the site policy)", why);
                        return;
                }
        }
        struct progress line;
        check_step_line(&line, o, "container.gpu_access: a container with the GPUs",
                        o->container_timeout_s ? o->container_timeout_s : CONTAINER_GPU_DEFAULT_TIMEOUT_S);
        container_gpu_run(&rt, o->container_timeout_s, out);
        progress_clear(&line);
}
