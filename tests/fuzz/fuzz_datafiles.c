/* libFuzzer target: the data files a user can replace with --data-dir, other than the
 * GPU table (fuzz_gpudb): compat.json (drivers, CUDA, wheels, NGC), xid.json,
 * baselines.json, nics.json and ngc.json (over the built-in compat.json). The first byte
 * picks the file (mod 5), the rest is its content. A
 * refusal must say why in a terminated message; an accepted file must answer the
 * questions detect and the checks ask of it without crashing. */
#include "bench/baselines.h"
#include "data/compat.h"
#include "data/ngc_pick.h"
#include "data/ngcdb.h"
#include "data/nicdb.h"
#include "data/xiddb.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void refused(int r, const char *err, size_t errsize) {
        if (r != -ENOMEM && (err[0] == '\0' || strnlen(err, errsize) == errsize))
                abort();
}

static void ask_compat(const struct compat *c) {
        static const char *const drivers[] = {"550.54.15", "535.86.10", "470", "", "999.99.99", "not-a-version"};
        const struct compat_gpu gpus[] = {{9, 0, true, NULL, NULL}, {12, 0, false, NULL, NULL}, {7, 0, true, NULL, "455.23"}};
        for (size_t d = 0; d < sizeof(drivers) / sizeof(drivers[0]); d++) {
                (void)compat_max_native(c, drivers[d]);
                (void)compat_max_minor(c, drivers[d]);
                (void)compat_branch_of(c, drivers[d]);
                for (size_t g = 0; g < sizeof(gpus) / sizeof(gpus[0]); g++) {
                        struct compat_judgement j;
                        for (size_t t = 0; t < c->n_toolkits; t++)
                                compat_judge_toolkit(c, &c->toolkits[t], &gpus[g], drivers[d], &j);
                        for (size_t w = 0; w < c->n_wheels; w++)
                                compat_judge_wheel(c, &c->wheels[w], &gpus[g], drivers[d], &j);
                        for (size_t n = 0; n < c->n_ngc; n++)
                                compat_judge_ngc(c, &c->ngc[n], &gpus[g], drivers[d], &j);
                        if (strnlen(j.reason, sizeof(j.reason)) == sizeof(j.reason))
                                abort(); /* a reason is a terminated sentence */
                }
        }
        for (size_t t = 0; t < c->n_toolkits; t++) {
                if (!c->toolkits[t].cuda || compat_toolkit(c, c->toolkits[t].cuda) == NULL)
                        abort(); /* every toolkit the loader kept is found by its version */
                (void)compat_cuda_builds_sm(c, c->toolkits[t].cuda, 90);
        }
        (void)compat_newest_toolkit_for(c, 9, 0);
        (void)compat_recommendation(c, "hopper");
        (void)compat_wheel(c, "cu128");
        (void)compat_ngc_release(c, "24.05");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size == 0)
                return 0;
        const char *buf = (const char *)data + 1;
        size_t len = size - 1;
        char err[512];
        err[0] = '\0';
        switch (data[0] % 5) {
        case 0: {
                struct compat *c = NULL;
                int r = compat_load_buffer(buf, len, "fuzz input", &c, err, sizeof(err));
                if (r < 0) {
                        refused(r, err, sizeof(err));
                        return 0;
                }
                ask_compat(c);
                compat_free(c);
                return 0;
        }
        case 1: {
                struct xiddb x;
                int r = xiddb_load_buffer(buf, len, "fuzz input", &x, err, sizeof(err));
                if (r < 0) {
                        refused(r, err, sizeof(err));
                        return 0;
                }
                for (size_t i = 0; i < x.n; i++)
                        if (xiddb_find(&x, x.xids[i].code) == NULL || !x.xids[i].name || !x.xids[i].action)
                                abort(); /* every entry kept is complete and found by its code */
                (void)xiddb_find(&x, -1);
                for (size_t i = 0; i < x.n_recovery; i++)
                        if (xiddb_find_recovery(&x, x.recovery[i].value) == NULL || !x.recovery[i].name ||
                            !x.recovery[i].action)
                                abort();
                xiddb_done(&x);
                return 0;
        }
        case 3: {
                struct nicdb n;
                int r = nicdb_load_buffer(buf, len, "fuzz input", &n, err, sizeof(err));
                if (r < 0) {
                        refused(r, err, sizeof(err));
                        return 0;
                }
                for (size_t i = 0; i < n.n; i++)
                        for (size_t k = 0; k < n.models[i].n_device_ids; k++)
                                if (nicdb_find(&n, n.models[i].vendor, n.models[i].device_ids[k]) != &n.models[i] ||
                                    !n.models[i].name || !(n.models[i].max_port_gbps > 0))
                                        abort(); /* every id kept finds its own model, which is complete */
                (void)nicdb_find(&n, 0xffff, 0xffff);
                nicdb_done(&n);
                return 0;
        }
        case 4: {
                static struct compat *c;
                if (!c && compat_load(NULL, &c, err, sizeof(err)) < 0)
                        abort(); /* the built-in table always loads (the datafiles test) */
                struct ngcdb *db = NULL;
                int r = ngcdb_load_buffer(buf, len, "fuzz input", c, &db, err, sizeof(err));
                if (r < 0) {
                        refused(r, err, sizeof(err));
                        return 0;
                }
                const struct compat_gpu gpus[] = {{9, 0, true, NULL, NULL}, {8, 6, false, NULL, NULL}};
                for (size_t i = 0; i < db->n_images; i++) {
                        const struct ngc_image *img = &db->images[i];
                        if (ngcdb_image(db, img->name) == NULL || !img->test)
                                abort(); /* every image kept is found by name and has its test */
                        for (size_t k = 0; k < img->n_releases; k++)
                                if (ngc_image_release(img, img->releases[k].tag) == NULL)
                                        abort();
                        struct ngc_pick pick;
                        ngc_pick(c, img, gpus, 2, "550.54.15", &pick);
                        if (pick.n_excluded > NGC_PICK_MAX_EXCLUDED)
                                abort();
                }
                ngcdb_free(db);
                return 0;
        }
        default: {
                struct baselines *b = NULL;
                int r = baselines_load_buffer(buf, len, "fuzz input", &b, err, sizeof(err));
                if (r < 0) {
                        refused(r, err, sizeof(err));
                        return 0;
                }
                for (size_t i = 0; i < b->n; i++)
                        (void)baselines_find(b, "NVIDIA H100 80GB HBM3", "memory", "d2d");
                (void)baselines_limits(b, "memory");
                (void)baselines_limits(b, "nosuch");
                baselines_free(b);
                return 0;
        }
        }
}
