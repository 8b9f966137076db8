/* libFuzzer target: models.json (data/models.json, replaceable with --data-dir), the model
 * presets of gpuvet estimate. A refusal must say why in a terminated message; every preset
 * an accepted file keeps must be found by its id and give finite, non-negative estimates
 * for training and inference in every layout the shape allows. */
#include "data/modeldb.h"
#include "estimate/estimate.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_finite(double v) {
        if (!(v >= 0) || isinf(v))
                abort(); /* a negative, NaN or infinite size or count */
}

static void estimate_preset(const struct model_preset *p) {
        const struct est_model *m = &p->shape;
        check_finite(est_params_total(m));
        check_finite(est_params_active(m));
        if (est_params_active(m) > est_params_total(m))
                abort(); /* a token meets no more parameters than the model holds */
        static const unsigned degrees[] = {1, 2, 8};
        for (size_t t = 0; t < sizeof(degrees) / sizeof(degrees[0]); t++)
                for (int mode = EST_TRAIN; mode <= EST_INFER; mode++) {
                        struct est_config c = {.mode = (enum est_mode)mode, .precision = EST_BF16, .optimizer = EST_ADAM,
                                               .zero = 3, .tp = degrees[t], .pp = 2, .dp = 4, .seq = m->max_seq,
                                               .micro_batch = 1, .global_batch = 4, .recompute = EST_RECOMPUTE_NONE,
                                               .batch = 1, .kv_cache = true};
                        struct est_memory mem;
                        int r = est_memory(m, &c, &mem);
                        if (r == 0) {
                                check_finite(mem.total);
                                check_finite(mem.activations);
                                check_finite(mem.kv_cache);
                        } else if (r != -EINVAL || (m->heads % degrees[t] == 0 && m->layers >= 2)) {
                                abort(); /* refused a layout the shape allows */
                        }
                        check_finite(est_flops_per_token(c.mode, est_params_active(m), m->layers, m->hidden, c.seq));
                }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char err[512];
        err[0] = '\0';
        struct modeldb db;
        int r = modeldb_load_buffer((const char *)data, size, "fuzz input", &db, err, sizeof(err));
        if (r < 0) {
                if (r != -ENOMEM && (err[0] == '\0' || strnlen(err, sizeof(err)) == sizeof(err)))
                        abort();
                return 0;
        }
        for (size_t i = 0; i < db.n; i++) {
                if (modeldb_find(&db, db.models[i].id) != &db.models[i] || !db.models[i].name)
                        abort(); /* every preset kept is complete and found by its id */
                estimate_preset(&db.models[i]);
        }
        modeldb_done(&db);
        return 0;
}
