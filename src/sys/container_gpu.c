/* container.gpu_access's test (sys/container_gpu.h). */
#include "sys/container_gpu.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/strparse.h"
#include "data/ngcdb.h"

int container_default_image(const struct ngcdb *db, const char *driver, char *buf, size_t size, char *why,
                            size_t whysize) {
        const struct ngc_image *cuda = ngcdb_image(db, "cuda");
        if (!driver || !*driver) {
                snprintf(why, whysize, "the driver version is unknown");
                return -ENOENT;
        }
        if (!cuda) {
                snprintf(why, whysize, "%s has no cuda image", db->source);
                return -ENOENT;
        }
        /* Newest first: the first release whose own driver the loaded one reaches. */
        for (size_t i = cuda->n_releases; i-- > 0;) {
                const struct ngc_release *r = &cuda->releases[i];
                int cmp;
                if (version_compare(driver, r->native_driver, &cmp) == 0 && cmp >= 0) {
                        snprintf(buf, size, "%s:%s", cuda->repository, r->tag);
                        snprintf(why, whysize,
                                 "CUDA %s, the newest release driver %s runs natively (NVIDIA's CUDA base image)",
                                 r->release, driver);
                        return 0;
                }
        }
        snprintf(why, whysize, "driver %s runs no CUDA release of %s natively", driver, db->source);
        return -ENOENT;
}

void container_gpu_parse_uuids(const char *text, struct container_gpu_facts *out) {
        out->n_uuids = 0;
        char line[256];
        for (const char *p = text ? text : ""; text_next_line(&p, line, sizeof(line));) {
                char *s = line;
                s += strspn(s, " \t");
                s[strcspn(s, " \t\r")] = '\0';
                if ((strncmp(s, "GPU-", 4) == 0 || strncmp(s, "MIG-", 4) == 0) && out->n_uuids < CONTAINER_GPU_MAX)
                        snprintf(out->uuids[out->n_uuids++], sizeof(out->uuids[0]), "%s", s);
        }
}

static void keep(struct container_gpu_facts *out, const char *step, const struct container_result *r) {
        out->step = step;
        out->outcome = r->outcome;
        out->exit_status = r->exit_status;
        snprintf(out->cause, sizeof(out->cause), "%s", r->cause);
        snprintf(out->err_tail, sizeof(out->err_tail), "%s", r->err_tail);
        snprintf(out->command, sizeof(out->command), "%s", r->command);
        snprintf(out->cleanup, sizeof(out->cleanup), "%s", r->cleanup);
        out->elapsed_s += r->elapsed_ms / 1e3;
}

void container_gpu_run(const struct container_runtime *rt, unsigned timeout_s, struct container_gpu_facts *out) {
        out->rt = *rt;
        out->timeout_s = timeout_s ? timeout_s : CONTAINER_GPU_DEFAULT_TIMEOUT_S;
        out->ran = true;
        struct container_result r;
        int e = container_image_inspect(rt, out->image, out->timeout_s * 1000u, &r);
        if (e == 0)
                keep(out, "image inspect", &r);
        container_result_done(&r);
        if (e < 0 || out->outcome != CONTAINER_OK) {
                if (e < 0) {
                        out->outcome = CONTAINER_RUNTIME_ERROR;
                        snprintf(out->cause, sizeof(out->cause), "%s image inspect: %s", rt->exe, strerror(-e));
                }
                return;
        }
        static const char *const cmd[] = {"nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader", NULL};
        e = container_run_gpus(rt, out->image, cmd, out->timeout_s * 1000u, &r);
        if (e < 0) {
                out->outcome = CONTAINER_RUNTIME_ERROR;
                snprintf(out->cause, sizeof(out->cause), "%s run: %s", rt->exe, strerror(-e));
                return;
        }
        keep(out, "run", &r);
        if (r.outcome == CONTAINER_OK)
                container_gpu_parse_uuids(r.out, out);
        container_result_done(&r);
}
