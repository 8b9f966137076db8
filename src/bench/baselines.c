#include "bench/baselines.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BASELINES_SCHEMA "gpuvet.baselines/1"

/* tools/embed.py output for data/baselines.json (meson.build's embed list). */
extern const char embedded_baselines_json[];
extern const size_t embedded_baselines_json_len;

/* jansson keeps no positions for values, only for syntax errors. To name the line of a
 * bad entry, scan the text once for where each element of a top-level array starts. The
 * document already parsed, so the scanner may assume valid JSON. */
static size_t element_lines(const char *buf, size_t len, const char *key, int *lines, size_t max) {
        int depth = 0, line = 1;
        size_t n = 0, keylen = strlen(key);
        bool in_target = false, want_element = false;
        for (size_t i = 0; i < len; i++) {
                char c = buf[i];
                if (c == '\n') {
                        line++;
                        continue;
                }
                if (c == ' ' || c == '\t' || c == '\r' || c == ':')
                        continue;
                if (want_element && c != ',' && c != ']') {
                        if (n < max)
                                lines[n] = line;
                        n++;
                        want_element = false;
                }
                if (c == '"') {
                        size_t start = i + 1;
                        for (i++; i < len && buf[i] != '"'; i++)
                                if (buf[i] == '\\')
                                        i++;
                        /* A key of the root object: the next '[' opens the target array. */
                        if (depth == 1 && i - start == keylen && memcmp(buf + start, key, keylen) == 0)
                                in_target = true;
                        continue;
                }
                if (c == '{' || c == '[') {
                        depth++;
                        if (c == '[' && depth == 2 && in_target)
                                want_element = true;
                } else if (c == '}' || c == ']') {
                        depth--;
                        if (depth == 1)
                                in_target = false;
                } else if (c == ',' && depth == 2 && in_target) {
                        want_element = true;
                }
        }
        return n;
}

static const char *opt_str(json_t *o, const char *key) {
        json_t *v = json_object_get(o, key);
        return json_is_string(v) ? json_string_value(v) : NULL;
}

static int load_ratios(json_t *o, struct bench_limits *ret) {
        json_t *p = json_object_get(o, "pass_ratio"), *w = json_object_get(o, "warn_ratio");
        if (!json_is_number(p) || !json_is_number(w))
                return -EINVAL;
        ret->pass_ratio = json_number_value(p);
        ret->warn_ratio = json_number_value(w);
        if (!(ret->pass_ratio > 0 && ret->pass_ratio <= 2 && ret->warn_ratio > 0 && ret->warn_ratio <= ret->pass_ratio))
                return -EINVAL;
        return 0;
}

static int load_limit(json_t *e, struct bench_limit_set *out, char *why, size_t whysize) {
        out->bench = opt_str(e, "bench");
        out->rationale = opt_str(e, "rationale");
        if (!out->bench || !out->rationale) {
                snprintf(why, whysize, "a limit needs \"bench\" and \"rationale\" strings");
                return -EINVAL;
        }
        if (load_ratios(json_object_get(e, "baseline"), &out->baseline) < 0 ||
            load_ratios(json_object_get(e, "peak"), &out->peak) < 0) {
                snprintf(why, whysize,
                         "limits of %s: \"baseline\" and \"peak\" need pass_ratio and warn_ratio with "
                         "0 < warn_ratio <= pass_ratio <= 2",
                         out->bench);
                return -EINVAL;
        }
        return 0;
}

static int load_baseline(json_t *e, struct baseline *out, char *why, size_t whysize) {
        out->gpu = opt_str(e, "gpu");
        out->bench = opt_str(e, "bench");
        out->name = opt_str(e, "name");
        out->unit = opt_str(e, "unit");
        /* Reports quote where a figure comes from: the row's words (source_note), else its
         * source when that is a string. */
        out->source = opt_str(e, "source_note");
        if (!out->source)
                out->source = opt_str(e, "source");
        if (!out->gpu || !out->bench || !out->name || !out->unit || !out->source) {
                snprintf(why, whysize, "a baseline needs \"gpu\", \"bench\", \"name\", \"unit\" strings and a "
                                       "\"source_note\" or \"source\" string");
                return -EINVAL;
        }
        json_t *v = json_object_get(e, "value");
        if (!json_is_number(v) || !(json_number_value(v) > 0) || !isfinite(json_number_value(v))) {
                snprintf(why, whysize, "baseline %s %s/%s: \"value\" must be a positive number", out->gpu, out->bench,
                         out->name);
                return -EINVAL;
        }
        out->value = json_number_value(v);
        return 0;
}

static int load_document(const char *buf, size_t len, const char *source, struct baselines **ret, char *err,
                         size_t errsize) {
        json_error_t jerr;
        json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root) {
                snprintf(err, errsize, "%s: line %d: %s", source, jerr.line, jerr.text);
                return -EINVAL;
        }
        struct baselines *b = calloc(1, sizeof(*b));
        if (!b) {
                json_decref(root);
                snprintf(err, errsize, "%s: out of memory", source);
                return -ENOMEM;
        }
        b->json = root;
        snprintf(b->source, sizeof(b->source), "%s", source);
        char why[256] = "";
        int line = 1, r = 0;
        const char *schema = opt_str(root, "schema");
        json_t *limits = json_object_get(root, "limits"), *list = json_object_get(root, "baselines");
        if (!schema || strcmp(schema, BASELINES_SCHEMA) != 0) {
                snprintf(why, sizeof(why), "\"schema\" must be \"%s\"", BASELINES_SCHEMA);
                r = -EINVAL;
                goto out;
        }
        if (!json_is_array(limits) || !json_is_array(list)) {
                snprintf(why, sizeof(why), "\"limits\" and \"baselines\" must be lists");
                r = -EINVAL;
                goto out;
        }
        b->limits = calloc(json_array_size(limits) + 1, sizeof(*b->limits));
        b->v = calloc(json_array_size(list) + 1, sizeof(*b->v));
        int *lines = calloc(json_array_size(list) + json_array_size(limits) + 1, sizeof(int));
        if (!b->limits || !b->v || !lines) {
                free(lines);
                r = -ENOMEM;
                goto out;
        }
        size_t i;
        json_t *e;
        size_t nl = element_lines(buf, len, "limits", lines, json_array_size(limits));
        json_array_foreach(limits, i, e) {
                if ((r = load_limit(e, &b->limits[b->n_limits], why, sizeof(why))) < 0) {
                        line = i < nl ? lines[i] : 0;
                        break;
                }
                b->n_limits++;
        }
        if (r == 0) {
                nl = element_lines(buf, len, "baselines", lines, json_array_size(list));
                json_array_foreach(list, i, e) {
                        if ((r = load_baseline(e, &b->v[b->n], why, sizeof(why))) < 0) {
                                line = i < nl ? lines[i] : 0;
                                break;
                        }
                        b->n++;
                }
        }
        free(lines);
out:
        if (r < 0) {
                if (r == -ENOMEM)
                        snprintf(err, errsize, "%s: out of memory", source);
                else
                        snprintf(err, errsize, "%s: line %d: %s", source, line, why);
                baselines_free(b);
                return r;
        }
        *ret = b;
        return 0;
}

int baselines_load_buffer(const char *buf, size_t len, const char *source, struct baselines **ret, char *err,
                          size_t errsize) {
        return load_document(buf, len, source, ret, err, errsize);
}

int baselines_load(const char *dir, struct baselines **ret, char *err, size_t errsize) {
        if (dir) {
                char path[512];
                snprintf(path, sizeof(path), "%s/baselines.json", dir);
                if (access(path, F_OK) == 0) {
                        FILE *f = fopen(path, "rb");
                        if (!f) {
                                snprintf(err, errsize, "%s: %s", path, strerror(errno));
                                return -errno;
                        }
                        char *buf = NULL;
                        size_t len = 0, cap = 0;
                        for (;;) {
                                if (len == cap) {
                                        cap = cap ? cap * 2 : 65536;
                                        char *grown = cap <= (16u << 20) ? realloc(buf, cap) : NULL;
                                        if (!grown) {
                                                free(buf);
                                                fclose(f);
                                                snprintf(err, errsize, "%s: too large or out of memory", path);
                                                return -EFBIG;
                                        }
                                        buf = grown;
                                }
                                size_t got = fread(buf + len, 1, cap - len, f);
                                len += got;
                                if (got == 0)
                                        break;
                        }
                        bool failed = ferror(f);
                        fclose(f);
                        if (failed) {
                                free(buf);
                                snprintf(err, errsize, "%s: read error", path);
                                return -EIO;
                        }
                        int r = load_document(buf, len, path, ret, err, errsize);
                        free(buf);
                        return r;
                }
        }
        return load_document(embedded_baselines_json, embedded_baselines_json_len, "built-in baselines.json", ret,
                             err, errsize);
}

struct baselines *baselines_free(struct baselines *b) {
        if (!b)
                return NULL;
        free(b->v);
        free(b->limits);
        json_decref(b->json);
        free(b);
        return NULL;
}

const struct baseline *baselines_find(const struct baselines *b, const char *gpu, const char *bench,
                                      const char *name) {
        if (!b || !gpu)
                return NULL;
        for (size_t i = 0; i < b->n; i++)
                if (strcmp(b->v[i].gpu, gpu) == 0 && strcmp(b->v[i].bench, bench) == 0 && strcmp(b->v[i].name, name) == 0)
                        return &b->v[i];
        return NULL;
}

const struct bench_limit_set *baselines_limits(const struct baselines *b, const char *bench) {
        if (!b)
                return NULL;
        const struct bench_limit_set *def = NULL;
        for (size_t i = 0; i < b->n_limits; i++) {
                if (strcmp(b->limits[i].bench, bench) == 0)
                        return &b->limits[i];
                if (strcmp(b->limits[i].bench, "default") == 0)
                        def = &b->limits[i];
        }
        return def;
}
