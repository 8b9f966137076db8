#include "data/compat.h"
#include "core/strparse.h"
#include "data/embedded.h"
#include "data/gpudb.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMPAT_SCHEMA "gpuvet.compat/1"

/* ---- loading ---- */

struct loader {
        char *why;
        size_t whysize;
};

static int fail(struct loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct loader *l, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(l->why, l->whysize, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static bool is_version(const char *s) {
        int cmp;
        return s && version_compare(s, s, &cmp) == 0;
}

static const char *opt_str(json_t *obj, const char *key) {
        json_t *v = json_object_get(obj, key);
        return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A required dotted version ("550.54.14", "580", "12.4.1.003"). */
static int get_version(struct loader *l, json_t *obj, const char *key, const char *where, const char **ret) {
        const char *s = opt_str(obj, key);
        if (!is_version(s))
                return fail(l, "%s: \"%s\" must be a dotted version string such as \"550.54.14\"", where, key);
        *ret = s;
        return 0;
}

static int get_uint(struct loader *l, json_t *obj, const char *key, const char *where, unsigned max, unsigned *ret) {
        json_t *v = json_object_get(obj, key);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > (json_int_t)max)
                return fail(l, "%s: \"%s\" must be a whole number 0..%u", where, key, max);
        *ret = (unsigned)json_integer_value(v);
        return 0;
}

static int get_list(struct loader *l, json_t *root, const char *key, json_t **ret) {
        *ret = json_object_get(root, key);
        if (!json_is_array(*ret) || json_array_size(*ret) == 0)
                return fail(l, "\"%s\" must be a non-empty list", key);
        return 0;
}

static int parse_cuda(const char *s, unsigned *major, unsigned *minor) {
        unsigned a, b;
        if (!is_version(s) || sscanf(s, "%u.%u", &a, &b) != 2)
                return -EINVAL;
        *major = a;
        *minor = b;
        return 0;
}

static int parse_cc(const char *s, int *major, int *minor) {
        char tail;
        if (!s || sscanf(s, "%d.%d%c", major, minor, &tail) != 2 || *major < 0 || *minor < 0 || *minor > 9)
                return -EINVAL;
        return 0;
}

static int load_toolkit(struct loader *l, json_t *o, size_t i, struct compat_toolkit *t) {
        char where[64];
        snprintf(where, sizeof(where), "toolkits[%zu]", i);
        t->cuda = opt_str(o, "cuda");
        if (!t->cuda || parse_cuda(t->cuda, &t->major, &t->minor) < 0)
                return fail(l, "%s: \"cuda\" must look like \"12.4\"", where);
        snprintf(where, sizeof(where), "toolkits[%zu] (CUDA %s)", i, t->cuda);
        int r = get_version(l, o, "min_driver", where, &t->min_driver);
        if (r < 0)
                return r;
        json_t *ups = json_object_get(o, "updates");
        if (!ups)
                return 0;
        if (!json_is_array(ups))
                return fail(l, "%s: \"updates\" must be a list", where);
        t->updates = calloc(json_array_size(ups) + 1, sizeof(*t->updates));
        if (!t->updates)
                return -ENOMEM;
        size_t k;
        json_t *u;
        json_array_foreach(ups, k, u) {
                struct compat_update *x = &t->updates[t->n_updates++];
                if ((r = get_version(l, u, "cuda", where, &x->cuda)) < 0 ||
                    (r = get_version(l, u, "driver", where, &x->driver)) < 0)
                        return r;
        }
        return 0;
}

static int load_floor(struct loader *l, json_t *o, size_t i, struct compat_minor_floor *f) {
        char where[64];
        snprintf(where, sizeof(where), "minor_compat[%zu]", i);
        int r;
        if ((r = get_uint(l, o, "cuda_major", where, 99, &f->cuda_major)) < 0 ||
            (r = get_version(l, o, "min_driver", where, &f->min_driver)) < 0)
                return r;
        f->below_driver = opt_str(o, "below_driver");
        if (f->below_driver && !is_version(f->below_driver))
                return fail(l, "%s: \"below_driver\" must be a dotted version string", where);
        return 0;
}

static int load_branch(struct loader *l, json_t *o, size_t i, struct compat_branch *b) {
        char where[64];
        snprintf(where, sizeof(where), "driver_branches[%zu]", i);
        b->id = opt_str(o, "branch");
        if (!b->id || sscanf(b->id, "R%u", &b->number) != 1)
                return fail(l, "%s: \"branch\" must look like \"R580\"", where);
        b->kind = opt_str(o, "kind");
        json_t *eol = json_object_get(o, "eol"), *supported = json_object_get(o, "supported");
        b->eol = opt_str(o, "eol");
        if (!b->kind || (!b->eol && !json_is_null(eol)))
                return fail(l, "%s (%s): lacks \"kind\", or \"eol\" (a \"YYYY-MM\" string, or null when none was published)",
                            where, b->id);
        if (supported && !json_is_boolean(supported))
                return fail(l, "%s (%s): \"supported\" must be true or false", where, b->id);
        b->supported = !supported || json_is_true(supported);
        int r;
        if ((r = get_uint(l, o, "cuda_major", where, 99, &b->cuda_major)) < 0 ||
            (r = get_version(l, o, "reference_driver", where, &b->reference_driver)) < 0)
                return r;
        return 0;
}

static const struct compat_branch *find_branch(const struct compat *c, const char *id) {
        for (size_t i = 0; id && i < c->n_branches; i++)
                if (strcmp(c->branches[i].id, id) == 0)
                        return &c->branches[i];
        return NULL;
}

static int load_recommendation(struct loader *l, const struct compat *c, json_t *o, size_t i,
                               struct compat_recommendation *rec) {
        rec->arch = opt_str(o, "arch");
        if (!rec->arch)
                return fail(l, "recommendations[%zu]: lacks \"arch\"", i);
        rec->branch = find_branch(c, opt_str(o, "branch"));
        if (!rec->branch)
                return fail(l, "recommendations[%zu] (%s): \"branch\" must name one of \"driver_branches\"", i, rec->arch);
        const char *last = opt_str(o, "last_branch");
        if (last && sscanf(last, "R%u", &rec->last_branch) != 1)
                return fail(l, "recommendations[%zu] (%s): \"last_branch\" must look like \"R580\"", i, rec->arch);
        rec->note = opt_str(o, "note");
        return 0;
}

static int load_cuda_archs(struct loader *l, json_t *o, size_t i, struct compat_cuda_archs *a) {
        char where[64];
        snprintf(where, sizeof(where), "cuda_archs[%zu]", i);
        int r = get_uint(l, o, "cuda_major", where, 99, &a->cuda_major);
        if (r < 0)
                return r;
        json_t *sms = json_object_get(o, "sms");
        if (!json_is_array(sms) || json_array_size(sms) == 0)
                return fail(l, "%s: \"sms\" must be a non-empty list", where);
        a->sms = calloc(json_array_size(sms), sizeof(*a->sms));
        if (!a->sms)
                return -ENOMEM;
        size_t k;
        json_t *s;
        json_array_foreach(sms, k, s) {
                struct compat_sm *x = &a->sms[a->n_sms++];
                if ((r = get_uint(l, s, "sm", where, 999, &x->sm)) < 0)
                        return r;
                x->since = opt_str(s, "since");
                if (x->since && !is_version(x->since))
                        return fail(l, "%s: sm_%u: \"since\" must be a CUDA version such as \"11.8\"", where, x->sm);
        }
        return 0;
}

static int load_sm_list(struct loader *l, json_t *list, const char *where, unsigned *out, size_t *n) {
        if (!json_is_array(list) || json_array_size(list) == 0 || json_array_size(list) > COMPAT_MAX_SMS)
                return fail(l, "%s: \"sm\" must be a list of 1 to %d numbers", where, COMPAT_MAX_SMS);
        size_t k;
        json_t *v;
        json_array_foreach(list, k, v) {
                if (!json_is_integer(v) || json_integer_value(v) <= 0 || json_integer_value(v) > 999)
                        return fail(l, "%s: sm %zu must be a number such as 90", where, k);
                out[(*n)++] = (unsigned)json_integer_value(v);
        }
        return 0;
}

static int load_wheel(struct loader *l, json_t *o, size_t i, struct compat_wheel *w) {
        char where[96];
        w->tag = opt_str(o, "tag");
        if (!w->tag)
                return fail(l, "pytorch_wheels[%zu]: lacks \"tag\"", i);
        snprintf(where, sizeof(where), "pytorch_wheels[%zu] (%s)", i, w->tag);
        int r;
        unsigned major, minor;
        w->cuda = opt_str(o, "cuda");
        if (parse_cuda(w->cuda, &major, &minor) < 0)
                return fail(l, "%s: \"cuda\" must look like \"12.8\"", where);
        if ((r = get_version(l, o, "min_driver", where, &w->min_driver)) < 0 ||
            (r = get_version(l, o, "native_driver", where, &w->native_driver)) < 0)
                return r;
        json_t *builds = json_object_get(o, "builds");
        if (!json_is_array(builds) || json_array_size(builds) == 0)
                return fail(l, "%s: \"builds\" must be a non-empty list", where);
        w->builds = calloc(json_array_size(builds), sizeof(*w->builds));
        if (!w->builds)
                return -ENOMEM;
        size_t k;
        json_t *b;
        json_array_foreach(builds, k, b) {
                struct compat_build *x = &w->builds[w->n_builds++];
                if ((r = get_version(l, b, "torch_first", where, &x->torch_first)) < 0)
                        return r;
                x->torch_last = opt_str(b, "torch_last");
                if (x->torch_last && !is_version(x->torch_last))
                        return fail(l, "%s: \"torch_last\" must be a version or absent (still current)", where);
                if ((r = load_sm_list(l, json_object_get(b, "sm"), where, x->sm, &x->n_sm)) < 0)
                        return r;
                json_t *ptx = json_object_get(b, "ptx");
                if (ptx && (r = get_uint(l, b, "ptx", where, 999, &x->ptx)) < 0)
                        return r;
        }
        return 0;
}

static int load_ngc(struct loader *l, json_t *o, size_t i, struct compat_ngc *n) {
        char where[64];
        n->release = opt_str(o, "release");
        if (!n->release)
                return fail(l, "ngc[%zu]: lacks \"release\"", i);
        snprintf(where, sizeof(where), "ngc[%zu] (%s)", i, n->release);
        int r;
        if ((r = get_version(l, o, "cuda", where, &n->cuda)) < 0 ||
            (r = get_version(l, o, "native_driver", where, &n->native_driver)) < 0 ||
            (r = get_version(l, o, "min_driver", where, &n->min_driver)) < 0)
                return r;
        n->pytorch = opt_str(o, "pytorch");
        if (!n->pytorch)
                return fail(l, "%s: lacks \"pytorch\"", where);
        if (parse_cc(opt_str(o, "min_cc"), &n->min_cc_major, &n->min_cc_minor) < 0)
                return fail(l, "%s: \"min_cc\" must look like \"7.5\"", where);
        json_t *fwd = json_object_get(o, "forward_compat");
        if (fwd && (!json_is_array(fwd) || json_array_size(fwd) > COMPAT_MAX_FORWARD))
                return fail(l, "%s: \"forward_compat\" must be a list of at most %d driver versions", where,
                            COMPAT_MAX_FORWARD);
        size_t k;
        json_t *v;
        json_array_foreach(fwd, k, v) {
                const char *s = json_string_value(v);
                if (!is_version(s))
                        return fail(l, "%s: forward_compat %zu must be a driver version such as \"535.86\"", where, k);
                n->forward_compat[n->n_forward_compat++] = s;
        }
        json_t *verified = json_object_get(o, "verified");
        if (!json_is_boolean(verified))
                return fail(l, "%s: \"verified\" must be true or false", where);
        n->verified = json_is_true(verified);
        return 0;
}

/* Loads one top-level list; one spare zeroed element lets compat_free() release what a
 * half-loaded element allocated. */
#define LOAD_LIST(key, field, count, fn, ...)                                     \
        do {                                                                      \
                json_t *list_;                                                    \
                if ((r = get_list(l, root, key, &list_)) < 0)                     \
                        return r;                                                 \
                c->field = calloc(json_array_size(list_) + 1, sizeof(*c->field)); \
                if (!c->field)                                                    \
                        return -ENOMEM;                                           \
                size_t i_;                                                        \
                json_t *v_;                                                       \
                json_array_foreach(list_, i_, v_) {                               \
                        if ((r = fn(__VA_ARGS__ v_, i_, &c->field[c->count])) < 0) \
                                return r;                                         \
                        c->count++;                                               \
                }                                                                 \
        } while (0)

static int load_from(struct loader *l, json_t *root, struct compat *c) {
        const char *schema = opt_str(root, "schema");
        if (!schema || strcmp(schema, COMPAT_SCHEMA) != 0)
                return fail(l, "\"schema\" must be \"%s\"", COMPAT_SCHEMA);
        int r;
        LOAD_LIST("toolkits", toolkits, n_toolkits, load_toolkit, l,);
        LOAD_LIST("minor_compat", floors, n_floors, load_floor, l,);
        LOAD_LIST("driver_branches", branches, n_branches, load_branch, l,);
        LOAD_LIST("recommendations", recommendations, n_recommendations, load_recommendation, l, c,);
        LOAD_LIST("cuda_archs", cuda_archs, n_cuda_archs, load_cuda_archs, l,);
        LOAD_LIST("pytorch_wheels", wheels, n_wheels, load_wheel, l,);
        LOAD_LIST("ngc", ngc, n_ngc, load_ngc, l,);
        for (size_t i = 0; i < c->n_toolkits; i++) {
                bool has_floor = false;
                for (size_t k = 0; k < c->n_floors; k++)
                        has_floor |= c->floors[k].cuda_major == c->toolkits[i].major;
                if (!has_floor)
                        return fail(l, "CUDA %s: no \"minor_compat\" entry for CUDA %u", c->toolkits[i].cuda,
                                    c->toolkits[i].major);
        }
        return 0;
}

/* Take root (NULL: jerr says why it did not parse) into c, or free c. */
static int load_root(struct compat *c, json_t *root, const json_error_t *jerr, struct compat **ret, char *err,
                     size_t errsize) {
        if (!root) {
                if (jerr->line > 0)
                        snprintf(err, errsize, "%s: line %d: %s", c->source, jerr->line, jerr->text);
                else
                        snprintf(err, errsize, "%s", jerr->text); /* jansson names the file itself */
                compat_free(c);
                return -EINVAL;
        }
        c->json = root;
        char why[256] = "";
        struct loader l = {.why = why, .whysize = sizeof(why)};
        int r = json_is_object(root) ? load_from(&l, root, c) : fail(&l, "the top level must be an object");
        if (r < 0) {
                snprintf(err, errsize, "%s: %s", c->source, r == -ENOMEM ? "out of memory" : why);
                compat_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

int compat_load(const char *dir, struct compat **ret, char *err, size_t errsize) {
        if (!dir)
                return compat_load_buffer((const char *)embedded_compat_json, embedded_compat_json_len,
                                          "built-in compat.json", ret, err, errsize);
        struct compat *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        json_error_t jerr;
        snprintf(c->source, sizeof(c->source), "%s/compat.json", dir);
        json_t *root = json_load_file(c->source, JSON_REJECT_DUPLICATES, &jerr);
        return load_root(c, root, &jerr, ret, err, errsize);
}

int compat_load_buffer(const char *buf, size_t len, const char *source, struct compat **ret, char *err,
                       size_t errsize) {
        struct compat *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        json_error_t jerr;
        snprintf(c->source, sizeof(c->source), "%s", source);
        json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
        return load_root(c, root, &jerr, ret, err, errsize);
}

struct compat *compat_free(struct compat *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; c->toolkits && i < c->n_toolkits + 1; i++)
                free(c->toolkits[i].updates);
        free(c->toolkits);
        free(c->floors);
        free(c->branches);
        free(c->recommendations);
        for (size_t i = 0; c->cuda_archs && i < c->n_cuda_archs + 1; i++)
                free(c->cuda_archs[i].sms);
        free(c->cuda_archs);
        for (size_t i = 0; c->wheels && i < c->n_wheels + 1; i++)
                free(c->wheels[i].builds);
        free(c->wheels);
        free(c->ngc);
        json_decref(c->json);
        free(c);
        return NULL;
}

/* ---- queries: pure functions of the table and their arguments ---- */

/* a >= b for versions already validated (driver strings from the facts are checked by
 * the caller; a garbled one compares as "not new enough"). */
static bool version_ge(const char *a, const char *b) {
        int cmp;
        return a && b && version_compare(a, b, &cmp) == 0 && cmp >= 0;
}

static unsigned driver_branch_number(const char *driver) {
        return driver ? (unsigned)strtoul(driver, NULL, 10) : 0;
}

static unsigned gpu_sm(const struct compat_gpu *gpu) {
        return (unsigned)(gpu->cc_major * 10 + gpu->cc_minor);
}

static const struct compat_minor_floor *floor_of(const struct compat *c, unsigned cuda_major) {
        for (size_t i = 0; i < c->n_floors; i++)
                if (c->floors[i].cuda_major == cuda_major)
                        return &c->floors[i];
        return NULL;
}

static bool toolkit_newer(const struct compat_toolkit *a, const struct compat_toolkit *b) {
        return !b || a->major > b->major || (a->major == b->major && a->minor > b->minor);
}

static bool toolkit_runs_minor(const struct compat *c, const struct compat_toolkit *t, const char *driver) {
        const struct compat_minor_floor *f = floor_of(c, t->major);
        return f && version_ge(driver, f->min_driver);
}

const char *compat_verdict_name(enum compat_verdict v) {
        static const char *const names[_COMPAT_VERDICT_COUNT] = {
                [COMPAT_NATIVE] = "native",
                [COMPAT_MINOR] = "minor_compat",
                [COMPAT_FORWARD] = "forward_compat",
                [COMPAT_DRIVER_TOO_OLD] = "driver_too_old",
                [COMPAT_ARCH_UNSUPPORTED] = "arch_unsupported",
                [COMPAT_GPU_UNSUPPORTED] = "gpu_unsupported_by_driver",
        };
        return v >= 0 && v < _COMPAT_VERDICT_COUNT ? names[v] : "invalid";
}

const struct compat_toolkit *compat_max_native(const struct compat *c, const char *driver) {
        const struct compat_toolkit *best = NULL;
        for (size_t i = 0; c && is_version(driver) && i < c->n_toolkits; i++)
                if (version_ge(driver, c->toolkits[i].min_driver) && toolkit_newer(&c->toolkits[i], best))
                        best = &c->toolkits[i];
        return best;
}

const struct compat_toolkit *compat_max_minor(const struct compat *c, const char *driver) {
        const struct compat_toolkit *best = NULL;
        for (size_t i = 0; c && is_version(driver) && i < c->n_toolkits; i++) {
                const struct compat_toolkit *t = &c->toolkits[i];
                if ((version_ge(driver, t->min_driver) || toolkit_runs_minor(c, t, driver)) && toolkit_newer(t, best))
                        best = t;
        }
        return best;
}

const struct compat_toolkit *compat_toolkit(const struct compat *c, const char *cuda) {
        unsigned major, minor;
        if (!c || parse_cuda(cuda, &major, &minor) < 0)
                return NULL;
        for (size_t i = 0; i < c->n_toolkits; i++)
                if (c->toolkits[i].major == major && c->toolkits[i].minor == minor)
                        return &c->toolkits[i];
        return NULL;
}

bool compat_cuda_builds_sm(const struct compat *c, const char *cuda, unsigned sm) {
        unsigned major, minor;
        if (!c || parse_cuda(cuda, &major, &minor) < 0)
                return false;
        for (size_t i = 0; i < c->n_cuda_archs; i++) {
                const struct compat_cuda_archs *a = &c->cuda_archs[i];
                if (a->cuda_major != major)
                        continue;
                for (size_t k = 0; k < a->n_sms; k++)
                        if (a->sms[k].sm == sm && (!a->sms[k].since || version_ge(cuda, a->sms[k].since)))
                                return true;
        }
        return false;
}

/* Newest toolkit that builds for the GPU; with a driver, only those it runs natively. */
static const struct compat_toolkit *newest_toolkit(const struct compat *c, int cc_major, int cc_minor,
                                                   const char *driver) {
        const struct compat_toolkit *best = NULL;
        unsigned sm = (unsigned)(cc_major * 10 + cc_minor);
        for (size_t i = 0; c && i < c->n_toolkits; i++) {
                const struct compat_toolkit *t = &c->toolkits[i];
                if (compat_cuda_builds_sm(c, t->cuda, sm) && (!driver || version_ge(driver, t->min_driver)) &&
                    toolkit_newer(t, best))
                        best = t;
        }
        return best;
}

const struct compat_toolkit *compat_newest_toolkit_for(const struct compat *c, int cc_major, int cc_minor) {
        return newest_toolkit(c, cc_major, cc_minor, NULL);
}

const struct compat_toolkit *compat_newest_native_toolkit_for(const struct compat *c, int cc_major, int cc_minor,
                                                              const char *driver) {
        return driver ? newest_toolkit(c, cc_major, cc_minor, driver) : NULL;
}

const struct compat_recommendation *compat_recommendation(const struct compat *c, const char *arch) {
        for (size_t i = 0; c && arch && i < c->n_recommendations; i++)
                if (strcmp(c->recommendations[i].arch, arch) == 0)
                        return &c->recommendations[i];
        return NULL;
}

const struct compat_branch *compat_branch_of(const struct compat *c, const char *driver) {
        unsigned n = driver_branch_number(driver);
        for (size_t i = 0; c && n && i < c->n_branches; i++)
                if (c->branches[i].number == n)
                        return &c->branches[i];
        return NULL;
}

const struct compat_wheel *compat_wheel(const struct compat *c, const char *tag) {
        for (size_t i = 0; c && tag && i < c->n_wheels; i++)
                if (strcmp(c->wheels[i].tag, tag) == 0)
                        return &c->wheels[i];
        return NULL;
}

const struct compat_ngc *compat_ngc_release(const struct compat *c, const char *release) {
        for (size_t i = 0; c && release && i < c->n_ngc; i++)
                if (strcmp(c->ngc[i].release, release) == 0)
                        return &c->ngc[i];
        return NULL;
}

bool compat_driver_supports_gpu(const struct compat *c, const struct compat_gpu *gpu, const char *driver,
                                char *why, size_t whysize) {
        if (!driver || !gpu->arch)
                return true;
        const char *floor = gpu->min_driver ? gpu->min_driver : gpu->arch->min_driver;
        if (!version_ge(driver, floor)) {
                snprintf(why, whysize, "driver %s predates %s (needs >= %s)", driver,
                         gpu->min_driver ? "this GPU" : gpu->arch->name, floor);
                return false;
        }
        const struct compat_recommendation *rec = compat_recommendation(c, gpu->arch->id);
        if (rec && rec->last_branch && driver_branch_number(driver) > rec->last_branch) {
                snprintf(why, whysize, "driver %s is past R%u, the last branch that supports %s", driver,
                         rec->last_branch, gpu->arch->name);
                return false;
        }
        return true;
}

static void judge(struct compat_judgement *ret, enum compat_verdict v, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void judge(struct compat_judgement *ret, enum compat_verdict v, const char *fmt, ...) {
        ret->verdict = v;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ret->reason, sizeof(ret->reason), fmt, ap);
        va_end(ap);
}

/* The driver part shared by toolkits and wheels: native, minor-version compatibility
 * (unless the GPU is reached only through PTX, which an older driver cannot JIT) or too old. */
static void judge_driver(const struct compat *c, const char *what, unsigned cuda_major, const char *native_driver,
                         const char *minor_driver, bool ptx_only, const struct compat_gpu *gpu, const char *driver,
                         struct compat_judgement *ret) {
        char why[192];
        if (!driver) {
                judge(ret, COMPAT_NATIVE, "%s has code for sm_%u; needs driver >= %s", what, gpu_sm(gpu), native_driver);
                return;
        }
        if (!compat_driver_supports_gpu(c, gpu, driver, why, sizeof(why))) {
                judge(ret, COMPAT_GPU_UNSUPPORTED, "%s", why);
                return;
        }
        if (version_ge(driver, native_driver)) {
                judge(ret, COMPAT_NATIVE, "driver %s >= %s, %s's own minimum", driver, native_driver, what);
                return;
        }
        if (minor_driver && version_ge(driver, minor_driver)) {
                if (ptx_only)
                        judge(ret, COMPAT_DRIVER_TOO_OLD,
                              "%s reaches sm_%u only through PTX, which minor-version compatibility cannot JIT; needs driver >= %s",
                              what, gpu_sm(gpu), native_driver);
                else
                        judge(ret, COMPAT_MINOR,
                              "driver %s < %s but >= %s: CUDA %u.x minor-version compatibility (no JIT of newer PTX)",
                              driver, native_driver, minor_driver, cuda_major);
                return;
        }
        judge(ret, COMPAT_DRIVER_TOO_OLD, "%s needs driver >= %s (>= %s with minor-version compatibility)", what,
              native_driver, minor_driver ? minor_driver : native_driver);
}

void compat_judge_toolkit(const struct compat *c, const struct compat_toolkit *t, const struct compat_gpu *gpu,
                          const char *driver, struct compat_judgement *ret) {
        memset(ret, 0, sizeof(*ret));
        char what[32];
        snprintf(what, sizeof(what), "CUDA %s", t->cuda);
        if (!compat_cuda_builds_sm(c, t->cuda, gpu_sm(gpu))) {
                judge(ret, COMPAT_ARCH_UNSUPPORTED, "CUDA %s cannot build for sm_%u", t->cuda, gpu_sm(gpu));
                return;
        }
        const struct compat_minor_floor *f = floor_of(c, t->major);
        judge_driver(c, what, t->major, t->min_driver, f ? f->min_driver : NULL, false, gpu, driver, ret);
}

static bool build_has_cubin(const struct compat_build *b, const struct compat_gpu *gpu) {
        /* A cubin runs on GPUs of the same major compute capability and an equal or
         * higher minor one (sm_86 code runs on an 8.9 Ada part; sm_100 code not on 12.0). */
        for (size_t i = 0; i < b->n_sm; i++)
                if ((int)b->sm[i] / 10 == gpu->cc_major && (int)b->sm[i] % 10 <= gpu->cc_minor)
                        return true;
        return false;
}

static bool build_has_ptx(const struct compat_build *b, const struct compat_gpu *gpu) {
        return b->ptx && gpu_sm(gpu) >= b->ptx;
}

static void format_sms(const struct compat_build *b, char *buf, size_t size) {
        size_t off = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < b->n_sm && off < size; i++)
                off += (size_t)snprintf(buf + off, size - off, "%ssm_%u", i ? " " : "", b->sm[i]);
        if (b->ptx && off < size)
                snprintf(buf + off, size - off, " +PTX sm_%u", b->ptx);
}

void compat_judge_wheel(const struct compat *c, const struct compat_wheel *w, const struct compat_gpu *gpu,
                        const char *driver, struct compat_judgement *ret) {
        memset(ret, 0, sizeof(*ret));
        /* Prefer builds with cubins; PTX-only builds count only when no build has cubins.
         * The torch range is the union of the builds that run (they are contiguous). */
        bool any_cubin = false;
        for (size_t i = 0; i < w->n_builds; i++)
                any_cubin |= build_has_cubin(&w->builds[i], gpu);
        const struct compat_build *first = NULL, *last = NULL;
        for (size_t i = 0; i < w->n_builds; i++) {
                const struct compat_build *b = &w->builds[i];
                if (any_cubin ? build_has_cubin(b, gpu) : build_has_ptx(b, gpu)) {
                        if (!first)
                                first = b;
                        last = b;
                }
        }
        if (!first) {
                char sms[160];
                format_sms(&w->builds[w->n_builds - 1], sms, sizeof(sms));
                judge(ret, COMPAT_ARCH_UNSUPPORTED, "%s has no kernels for sm_%u (ships %s)", w->tag, gpu_sm(gpu), sms);
                return;
        }
        ret->torch_first = first->torch_first;
        ret->torch_last = last->torch_last;
        unsigned major, minor;
        if (parse_cuda(w->cuda, &major, &minor) < 0)
                major = 0;
        judge_driver(c, w->tag, major, w->native_driver, w->min_driver, !any_cubin, gpu, driver, ret);
}

static bool forward_compat_base(const struct compat_ngc *n, const char *driver, const char **ret_base) {
        for (size_t i = 0; i < n->n_forward_compat; i++)
                if (driver_branch_number(driver) == driver_branch_number(n->forward_compat[i]) &&
                    version_ge(driver, n->forward_compat[i])) {
                        *ret_base = n->forward_compat[i];
                        return true;
                }
        return false;
}

void compat_judge_ngc(const struct compat *c, const struct compat_ngc *n, const struct compat_gpu *gpu,
                      const char *driver, struct compat_judgement *ret) {
        memset(ret, 0, sizeof(*ret));
        char why[192];
        if (gpu->cc_major < n->min_cc_major || (gpu->cc_major == n->min_cc_major && gpu->cc_minor < n->min_cc_minor)) {
                judge(ret, COMPAT_ARCH_UNSUPPORTED, "NGC %s supports compute capability >= %d.%d, the GPU is %d.%d",
                      n->release, n->min_cc_major, n->min_cc_minor, gpu->cc_major, gpu->cc_minor);
                return;
        }
        if (!compat_cuda_builds_sm(c, n->cuda, gpu_sm(gpu))) {
                judge(ret, COMPAT_ARCH_UNSUPPORTED, "NGC %s's CUDA %s cannot build for sm_%u", n->release, n->cuda,
                      gpu_sm(gpu));
                return;
        }
        if (!driver) {
                judge(ret, COMPAT_NATIVE, "NGC %s supports the GPU; needs driver >= %s (R%u stated)", n->release,
                      n->native_driver, driver_branch_number(n->min_driver));
                return;
        }
        if (!compat_driver_supports_gpu(c, gpu, driver, why, sizeof(why))) {
                judge(ret, COMPAT_GPU_UNSUPPORTED, "%s", why);
                return;
        }
        const char *base;
        if (version_ge(driver, n->native_driver))
                judge(ret, COMPAT_NATIVE, "driver %s >= %s, the driver of NGC %s's CUDA %s", driver, n->native_driver,
                      n->release, n->cuda);
        else if (version_ge(driver, n->min_driver))
                judge(ret, COMPAT_MINOR, "driver %s >= R%u, the minimum NGC %s states (CUDA minor-version compatibility)",
                      driver, driver_branch_number(n->min_driver), n->release);
        else if (gpu->datacenter && forward_compat_base(n, driver, &base))
                judge(ret, COMPAT_FORWARD, "datacenter GPU on R%u >= %s: forward compatibility through the image's cuda-compat",
                      driver_branch_number(base), base);
        else
                judge(ret, COMPAT_DRIVER_TOO_OLD, "NGC %s needs driver >= R%u (native %s)%s", n->release,
                      driver_branch_number(n->min_driver), n->native_driver,
                      n->n_forward_compat && gpu->datacenter ? " or a forward-compatible branch" : "");
}
