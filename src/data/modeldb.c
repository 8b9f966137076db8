#include "data/modeldb.h"
#include "core/array.h"
#include "data/embedded.h"
#include "data/json_doc.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MODELS_SCHEMA "gpuvet.models/1"
/* Bounds that refuse typos without refusing any real model: a 2^24 hidden size or a
 * billion-token context are not models anyone trains. */
#define DIM_MAX 16777216u
#define SEQ_MAX 1073741824u

/* A positive integer field no larger than max into *ret; false when absent or out of range. */
static bool get_dim(json_t *e, const char *key, unsigned max, unsigned *ret) {
        json_t *v = json_object_get(e, key);
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > (json_int_t)max)
                return false;
        *ret = (unsigned)json_integer_value(v);
        return true;
}

static int check_sources(json_t *root, json_t *e, const char *id, char *why, size_t whysize) {
        json_t *sources = json_object_get(root, "sources"), *src = json_object_get(e, "source");
        if (!src) {
                snprintf(why, whysize, "model %.64s: \"source\" must name one or more keys of \"sources\"", id);
                return -EINVAL;
        }
        json_t *list = json_is_string(src) ? json_pack("[O]", src) : json_incref(src);
        if (!list)
                return -ENOMEM;
        int r = 0;
        if (!json_is_array(list) || json_array_size(list) == 0) {
                snprintf(why, whysize, "model %.64s: \"source\" must name one or more keys of \"sources\"", id);
                r = -EINVAL;
        }
        size_t i;
        json_t *k;
        json_array_foreach(list, i, k) {
                if (r < 0)
                        break;
                json_t *s = json_is_string(k) ? json_object_get(sources, json_string_value(k)) : NULL;
                if (!json_is_object(s) || !json_is_string(json_object_get(s, "url"))) {
                        snprintf(why, whysize, "model %.64s: source %.64s is not in \"sources\" with a \"url\"", id,
                                 json_is_string(k) ? json_string_value(k) : "(not a string)");
                        r = -EINVAL;
                }
        }
        json_decref(list);
        return r;
}

static int parse_model(json_t *root, json_t *e, size_t i, struct model_preset *p, char *why, size_t whysize) {
        json_t *id = json_object_get(e, "id"), *name = json_object_get(e, "name");
        if (!json_is_object(e) || !json_is_string(id) || !json_is_string(name) || !*json_string_value(id)) {
                snprintf(why, whysize, "model %zu needs strings \"id\" and \"name\"", i);
                return -EINVAL;
        }
        p->id = json_string_value(id);
        p->name = json_string_value(name);
        struct est_model *m = &p->shape;
        static const struct {
                const char *key;
                size_t offset;
                unsigned max;
        } dims[] = {
                {"layers", offsetof(struct est_model, layers), 100000},
                {"hidden", offsetof(struct est_model, hidden), DIM_MAX},
                {"ffn", offsetof(struct est_model, ffn), DIM_MAX},
                {"heads", offsetof(struct est_model, heads), 65536},
                {"kv_heads", offsetof(struct est_model, kv_heads), 65536},
                {"vocab", offsetof(struct est_model, vocab), DIM_MAX},
                {"max_seq", offsetof(struct est_model, max_seq), SEQ_MAX},
        };
        for (size_t d = 0; d < ARRAY_COUNT(dims); d++)
                if (!get_dim(e, dims[d].key, dims[d].max, (unsigned *)((char *)m + dims[d].offset))) {
                        snprintf(why, whysize, "model %.64s: \"%s\" must be an integer from 1 to %u", p->id,
                                 dims[d].key, dims[d].max);
                        return -EINVAL;
                }
        if (m->hidden % m->heads || m->heads % m->kv_heads) {
                snprintf(why, whysize, "model %.64s: heads (%u) must divide hidden (%u) and kv_heads (%u) divide heads",
                         p->id, m->heads, m->hidden, m->kv_heads);
                return -EINVAL;
        }
        json_t *mlp = json_object_get(e, "mlp");
        m->mlp = est_mlp_from_name(json_is_string(mlp) ? json_string_value(mlp) : NULL);
        if (m->mlp == _EST_MLP_INVALID) {
                snprintf(why, whysize, "model %.64s: \"mlp\" must be \"gated\" (SwiGLU) or \"plain\"", p->id);
                return -EINVAL;
        }
        json_t *tied = json_object_get(e, "tied_embeddings"), *positions = json_object_get(e, "learned_positions");
        if ((tied && !json_is_boolean(tied)) || (positions && !json_is_boolean(positions))) {
                snprintf(why, whysize, "model %.64s: \"tied_embeddings\" and \"learned_positions\" are true or false",
                         p->id);
                return -EINVAL;
        }
        m->tied_embeddings = json_is_true(tied);
        m->learned_positions = json_is_true(positions);
        if (json_object_get(e, "sliding_window") && !get_dim(e, "sliding_window", SEQ_MAX, &m->sliding_window)) {
                snprintf(why, whysize, "model %.64s: \"sliding_window\" must be an integer from 1 to %u", p->id,
                         SEQ_MAX);
                return -EINVAL;
        }
        json_t *experts = json_object_get(e, "experts");
        if (experts) {
                if (!get_dim(e, "experts", 4096, &m->experts) ||
                    !get_dim(e, "experts_per_token", m->experts, &m->experts_per_token)) {
                        snprintf(why, whysize,
                                 "model %.64s: \"experts\" (1-4096) needs \"experts_per_token\" from 1 to experts", p->id);
                        return -EINVAL;
                }
        }
        json_t *params = json_object_get(e, "params_published"), *active = json_object_get(e, "active_params_published");
        if (!json_is_number(params) || !(json_number_value(params) >= 1e6 && json_number_value(params) <= 1e15) ||
            (active && (!json_is_number(active) || !(json_number_value(active) > 0) ||
                        json_number_value(active) > json_number_value(params)))) {
                snprintf(why, whysize,
                         "model %.64s: \"params_published\" must be a number from 1e6 to 1e15 "
                         "(\"active_params_published\", if given, positive and no larger)",
                         p->id);
                return -EINVAL;
        }
        p->params_published = json_number_value(params);
        p->active_params_published = active ? json_number_value(active) : 0;
        json_t *note = json_object_get(e, "source_note");
        p->source_note = json_is_string(note) ? json_string_value(note) : NULL;
        return check_sources(root, e, p->id, why, whysize);
}

static int parse(json_t *root, void *table, char *why, size_t whysize) {
        struct modeldb *db = table;
        json_t *schema = json_object_get(root, "schema"), *list = json_object_get(root, "models");
        if (!json_is_string(schema) || strcmp(json_string_value(schema), MODELS_SCHEMA) != 0) {
                snprintf(why, whysize, "\"schema\" must be \"%s\"", MODELS_SCHEMA);
                return -EINVAL;
        }
        if (!json_is_object(json_object_get(root, "sources"))) {
                snprintf(why, whysize, "\"sources\" must be an object of {\"title\", \"url\"}");
                return -EINVAL;
        }
        if (!json_is_array(list) || json_array_size(list) == 0) {
                snprintf(why, whysize, "\"models\" must be a non-empty list");
                return -EINVAL;
        }
        db->models = calloc(json_array_size(list), sizeof(*db->models));
        if (!db->models)
                return -ENOMEM;
        size_t i;
        json_t *e;
        json_array_foreach(list, i, e) {
                struct model_preset p = {0};
                int r = parse_model(root, e, i, &p, why, whysize);
                if (r < 0)
                        return r;
                if (modeldb_find(db, p.id)) {
                        snprintf(why, whysize, "model %.64s is listed twice", p.id);
                        return -EINVAL;
                }
                db->models[db->n++] = p;
        }
        return 0;
}

static void done(void *table) {
        modeldb_done(table);
}

int modeldb_load(const char *dir, struct modeldb *ret, char *err, size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        /* A directory without models.json falls back to the built-in presets (it may hold only
         * the GPU tables); a directory that is not there is a mistake, as for gpus.json. */
        if (dir && access(dir, F_OK) < 0) {
                snprintf(err, errsize, "%s: %s", dir, strerror(errno));
                return -EINVAL;
        }
        char source[512];
        json_t *root = json_doc_open(dir, "models.json", (const char *)embedded_models_json, embedded_models_json_len,
                                     source, sizeof(source), err, errsize);
        return json_doc_take(root, source, &ret->json, ret, parse, done, err, errsize);
}

int modeldb_load_buffer(const char *buf, size_t len, const char *source, struct modeldb *ret, char *err,
                        size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        return json_doc_take(json_doc_parse(buf, len, source, err, errsize), source, &ret->json, ret, parse, done, err,
                             errsize);
}

void modeldb_done(struct modeldb *db) {
        if (!db)
                return;
        free(db->models);
        json_decref(db->json);
        memset(db, 0, sizeof(*db));
}

const struct model_preset *modeldb_find(const struct modeldb *db, const char *id) {
        for (size_t i = 0; db && id && i < db->n; i++)
                if (strcasecmp(db->models[i].id, id) == 0)
                        return &db->models[i];
        return NULL;
}
