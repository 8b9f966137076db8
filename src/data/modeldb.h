/* gpuvet's model presets for `gpuvet estimate`: data/models.json, compiled in and
 * overridable with --data-dir DIR or GPUVET_DATA_DIR (DIR/models.json when present). */
#pragma once

#include <stddef.h>

#include "data/model_shape.h"

struct model_preset {
        const char *id;   /* "llama-2-70b": what --model takes */
        const char *name; /* "Llama 2 70B" */
        struct est_model shape;
        double params_published;        /* the model card's or paper's count */
        double active_params_published; /* MoE: per token; 0 for a dense model */
        const char *source_note;        /* NULL when none */
};

struct modeldb {
        struct model_preset *models;
        size_t n;
        void *json; /* keeps the strings alive */
};

/* Load DIR/models.json, or the compiled-in table when dir is NULL or DIR has none. Returns
 * 0; -EINVAL with "FILE: problem" in err for a malformed file or a DIR that does not exist;
 * -ENOMEM. */
int modeldb_load(const char *dir, struct modeldb *ret, char *err, size_t errsize);
/* The same from len bytes (need not be NUL-terminated); source names it in messages. */
int modeldb_load_buffer(const char *buf, size_t len, const char *source, struct modeldb *ret, char *err,
                        size_t errsize);
void modeldb_done(struct modeldb *db);
/* The preset with this id (case-insensitive), or NULL. */
const struct model_preset *modeldb_find(const struct modeldb *db, const char *id);
