/* Loading the NGC image catalogue (data/ngcdb.h) with jansson. */
#include "data/ngcdb.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/strparse.h"
#include "core/strbuf.h"
#include "data/embedded.h"

struct loader {
        const struct compat *c;
        const char *source;
        char *err;
        size_t errsize;
};

static int fail(struct loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct loader *l, const char *fmt, ...) {
        int n = snprintf(l->err, l->errsize, "%s: ", l->source);
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < l->errsize)
                vsnprintf(l->err + n, l->errsize - (size_t)n, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* a <=> b as dotted versions ("24.05" < "24.10", "12.4.1" < "12.10"); unparsable sorts first. */
static int vcmp(const char *a, const char *b) {
        int cmp;
        return version_compare(a, b, &cmp) == 0 ? cmp : -1;
}

static const char *str(json_t *o, const char *key) {
        return json_string_value(json_object_get(o, key));
}

static int load_tests(struct loader *l, json_t *tests, struct ngcdb *db) {
        if (!json_is_object(tests) || json_object_size(tests) == 0)
                return fail(l, "\"tests\" is not a non-empty object");
        if (!(db->tests = calloc(json_object_size(tests), sizeof(*db->tests))))
                return -ENOMEM;
        const char *name;
        json_t *t;
        json_object_foreach(tests, name, t) {
                struct ngc_test *x = &db->tests[db->n_tests++];
                x->name = name;
                json_t *cmd = json_object_get(t, "command");
                size_t i;
                json_t *arg;
                if (!json_is_array(cmd) || json_array_size(cmd) == 0 || json_array_size(cmd) > 7)
                        return fail(l, "tests.%s.command: expected a list of 1 to 7 strings", name);
                json_array_foreach(cmd, i, arg) {
                        if (!json_is_string(arg))
                                return fail(l, "tests.%s.command[%zu]: not a string", name, i);
                        x->command[x->n_command++] = json_string_value(arg);
                }
                x->script = str(t, "script");
                const char *compares = str(t, "compares");
                if (!compares || (strcmp(compares, "uuids") && strcmp(compares, "count")))
                        return fail(l, "tests.%s.compares: expected \"uuids\" or \"count\"", name);
                x->compares_uuids = strcmp(compares, "uuids") == 0;
                x->note = str(t, "note");
        }
        return 0;
}

static struct ngc_release *add(struct ngc_image *img, size_t *cap) {
        if (array_grow((void **)&img->releases, img->n_releases, cap, sizeof(*img->releases), 16) < 0)
                return NULL;
        struct ngc_release *r = &img->releases[img->n_releases++];
        memset(r, 0, sizeof(*r));
        return r;
}

static void set_cc(struct ngc_release *r, const char *cc) {
        int major = 0, minor = 0;
        if (cc && sscanf(cc, "%d.%d", &major, &minor) == 2) {
                r->judge.min_cc_major = major;
                r->judge.min_cc_minor = minor;
        }
}

/* The oldest compute capability CUDA release cuda builds for (compat.json's cuda_archs). */
static void cc_of_cuda(const struct compat *c, const char *cuda, struct ngc_release *r) {
        unsigned major = (unsigned)atoi(cuda), best = 0;
        for (size_t i = 0; i < c->n_cuda_archs; i++) {
                if (c->cuda_archs[i].cuda_major != major)
                        continue;
                for (size_t k = 0; k < c->cuda_archs[i].n_sms; k++) {
                        const struct compat_sm *s = &c->cuda_archs[i].sms[k];
                        if ((!s->since || vcmp(cuda, s->since) >= 0) && (!best || s->sm < best))
                                best = s->sm;
                }
        }
        r->judge.min_cc_major = (int)(best / 10);
        r->judge.min_cc_minor = (int)(best % 10);
}

/* "12.4.1" -> "12.4" */
static void major_minor(const char *cuda, char *buf, size_t size) {
        const char *dot = strchr(cuda, '.');
        const char *end = dot ? strchr(dot + 1, '.') : NULL;
        snprintf(buf, size, "%.*s", end ? (int)(end - cuda) : (int)strlen(cuda), cuda);
}

static int make_tag(struct loader *l, json_t *img, struct ngc_image *x, struct ngc_release *r) {
        char cuda_mm[16], os[32] = "";
        major_minor(r->cuda, cuda_mm, sizeof(cuda_mm));
        size_t i;
        json_t *o;
        json_array_foreach(json_object_get(img, "os"), i, o) {
                const char *from = str(o, "from");
                if (from && vcmp(r->cuda, from) >= 0) {
                        snprintf(os, sizeof(os), "%s", str(o, "os") ? str(o, "os") : "");
                        break;
                }
        }
        char out[sizeof(r->tag)] = "";
        for (const char *p = x->tag_form; *p;) {
                const char *value = NULL;
                size_t skip = 0;
                if (strncmp(p, "{release}", 9) == 0)
                        value = r->release, skip = 9;
                else if (strncmp(p, "{cuda}", 6) == 0)
                        value = cuda_mm, skip = 6;
                else if (strncmp(p, "{os}", 4) == 0)
                        value = os, skip = 4;
                if (value) {
                        if (!*value)
                                return fail(l, "%s: release %s: no os for CUDA %s in its os table", x->name, r->release,
                                            r->cuda);
                        strbuf_appendf(out, sizeof(out), "%s", value);
                        p += skip;
                } else {
                        strbuf_appendf(out, sizeof(out), "%c", *p++);
                }
        }
        snprintf(r->tag, sizeof(r->tag), "%s", out);
        return 0;
}

static void finish_release(struct ngc_image *x, struct ngc_release *r) {
        snprintf(r->label, sizeof(r->label), "%s %s", x->name, r->release);
        r->judge.release = r->label;
        r->judge.cuda = r->cuda;
        r->judge.native_driver = r->native_driver;
        r->judge.min_driver = r->min_driver;
}

static int from_ngc(struct ngc_release *r, const struct compat_ngc *n) {
        snprintf(r->cuda, sizeof(r->cuda), "%s", n->cuda);
        snprintf(r->native_driver, sizeof(r->native_driver), "%s", n->native_driver);
        snprintf(r->min_driver, sizeof(r->min_driver), "%s", n->min_driver);
        for (size_t k = 0; k < n->n_forward_compat; k++)
                r->judge.forward_compat[k] = n->forward_compat[k];
        r->judge.n_forward_compat = n->n_forward_compat;
        r->judge.min_cc_major = n->min_cc_major;
        r->judge.min_cc_minor = n->min_cc_minor;
        r->judge.verified = n->verified;
        return 0;
}

static int load_releases(struct loader *l, json_t *img, struct ngc_image *x) {
        const struct compat *c = l->c;
        json_t *rel = json_object_get(img, "releases");
        size_t cap = 0;
        const char *train = str(rel, "train"), *from = str(rel, "from"), *until = str(rel, "until");
        if (train && strcmp(train, "ngc") == 0) {
                for (size_t i = 0; i < c->n_ngc; i++) {
                        const struct compat_ngc *n = &c->ngc[i];
                        if ((from && vcmp(n->release, from) < 0) || (until && vcmp(n->release, until) > 0))
                                continue;
                        struct ngc_release *r = add(x, &cap);
                        if (!r)
                                return -ENOMEM;
                        snprintf(r->release, sizeof(r->release), "%s", n->release);
                        from_ngc(r, n);
                }
        } else if (train && strcmp(train, "toolkits") == 0) {
                for (size_t i = 0; i < c->n_toolkits; i++) {
                        const struct compat_toolkit *t = &c->toolkits[i];
                        if (from && vcmp(t->cuda, from) < 0)
                                continue;
                        /* The GA release, then each update with the driver it ships. */
                        for (size_t u = 0; u <= t->n_updates; u++) {
                                struct ngc_release *r = add(x, &cap);
                                if (!r)
                                        return -ENOMEM;
                                if (u == 0) {
                                        snprintf(r->release, sizeof(r->release), "%s.0", t->cuda);
                                        snprintf(r->native_driver, sizeof(r->native_driver), "%s", t->min_driver);
                                } else {
                                        snprintf(r->release, sizeof(r->release), "%s", t->updates[u - 1].cuda);
                                        snprintf(r->native_driver, sizeof(r->native_driver), "%s",
                                                 t->updates[u - 1].driver);
                                }
                                snprintf(r->cuda, sizeof(r->cuda), "%s", r->release);
                                snprintf(r->min_driver, sizeof(r->min_driver), "%s", r->native_driver);
                                cc_of_cuda(c, r->cuda, r);
                        }
                }
        } else if (json_is_array(json_object_get(rel, "list"))) {
                size_t i;
                json_t *o;
                json_array_foreach(json_object_get(rel, "list"), i, o) {
                        const char *release = str(o, "release"), *base = str(o, "base"), *cuda = str(o, "cuda");
                        if (!release)
                                return fail(l, "%s: releases.list[%zu] has no release", x->name, i);
                        struct ngc_release *r = add(x, &cap);
                        if (!r)
                                return -ENOMEM;
                        snprintf(r->release, sizeof(r->release), "%s", release);
                        if (base) {
                                const struct compat_ngc *n = compat_ngc_release(c, base);
                                if (!n)
                                        return fail(l, "%s %s: base %s is not an NGC release of compat.json", x->name,
                                                    release, base);
                                from_ngc(r, n);
                        } else {
                                const struct compat_toolkit *t = cuda ? compat_toolkit(c, cuda) : NULL;
                                if (!t)
                                        return fail(l, "%s %s: CUDA %s is not a toolkit of compat.json", x->name,
                                                    release, cuda ? cuda : "(none)");
                                snprintf(r->cuda, sizeof(r->cuda), "%s", cuda);
                                /* The image's CUDA needs its own driver: NVIDIA_REQUIRE_CUDA asks for it. */
                                snprintf(r->native_driver, sizeof(r->native_driver), "%s", t->min_driver);
                                snprintf(r->min_driver, sizeof(r->min_driver), "%s", t->min_driver);
                                set_cc(r, str(o, "min_cc"));
                        }
                }
        } else {
                return fail(l, "%s: releases: expected a train (ngc, toolkits) or a list", x->name);
        }
        if (x->n_releases == 0)
                return fail(l, "%s: no release", x->name);
        for (size_t i = 0; i < x->n_releases; i++) {
                finish_release(x, &x->releases[i]);
                int r = make_tag(l, img, x, &x->releases[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int load_root(struct loader *l, json_t *root, json_error_t *jerr, struct ngcdb *db) {
        if (!root) {
                snprintf(l->err, l->errsize, "%s:%d: %s", l->source, jerr->line, jerr->text);
                return -EINVAL;
        }
        db->json = root;
        if (!json_is_object(root) || !str(root, "schema") || strcmp(str(root, "schema"), "gpuvet.ngc_catalogue/1"))
                return fail(l, "not an NGC catalogue (\"schema\": \"gpuvet.ngc_catalogue/1\")");
        db->as_of = str(root, "as_of");
        int r = load_tests(l, json_object_get(root, "tests"), db);
        if (r < 0)
                return r;
        json_t *images = json_object_get(root, "images");
        if (!json_is_array(images) || json_array_size(images) == 0)
                return fail(l, "\"images\" is not a non-empty list");
        if (!(db->images = calloc(json_array_size(images), sizeof(*db->images))))
                return -ENOMEM;
        size_t i;
        json_t *img;
        json_array_foreach(images, i, img) {
                struct ngc_image *x = &db->images[db->n_images++];
                x->name = str(img, "name");
                x->title = str(img, "title");
                x->repository = str(img, "repository");
                x->tag_form = str(img, "tag");
                x->note = str(img, "note");
                if (!x->name || !x->title || !x->repository || !x->tag_form)
                        return fail(l, "images[%zu]: name, title, repository and tag are required", i);
                const char *test = str(img, "test");
                for (size_t k = 0; test && k < db->n_tests; k++)
                        if (strcmp(db->tests[k].name, test) == 0)
                                x->test = &db->tests[k];
                if (!x->test)
                        return fail(l, "%s: test \"%s\" is not in the tests table", x->name, test ? test : "");
                if ((r = load_releases(l, img, x)) < 0)
                        return r;
        }
        return 0;
}

/* Take root (NULL: jerr says why it did not parse), read from source, into *ret. */
static int load_document(json_t *root, json_error_t *jerr, const char *source, const struct compat *c,
                         struct ngcdb **ret, char *err, size_t errsize) {
        *ret = NULL;
        struct ngcdb *db = calloc(1, sizeof(*db));
        if (!db) {
                json_decref(root);
                return -ENOMEM;
        }
        snprintf(db->source, sizeof(db->source), "%s", source);
        struct loader l = {.c = c, .source = db->source, .err = err, .errsize = errsize};
        int r = load_root(&l, root, jerr, db);
        if (r < 0) {
                if (r == -ENOMEM)
                        snprintf(err, errsize, "out of memory loading %s", db->source);
                ngcdb_free(db);
                return r;
        }
        *ret = db;
        return 0;
}

int ngcdb_load(const char *dir, const struct compat *c, struct ngcdb **ret, char *err, size_t errsize) {
        if (!dir)
                return ngcdb_load_buffer(embedded_ngc_json, embedded_ngc_json_len, "built-in ngc.json", c, ret, err,
                                         errsize);
        char source[512];
        snprintf(source, sizeof(source), "%s/ngc.json", dir);
        json_error_t jerr;
        json_t *root = json_load_file(source, JSON_REJECT_DUPLICATES, &jerr);
        return load_document(root, &jerr, source, c, ret, err, errsize);
}

int ngcdb_load_buffer(const char *buf, size_t len, const char *source, const struct compat *c, struct ngcdb **ret,
                      char *err, size_t errsize) {
        json_error_t jerr;
        json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
        return load_document(root, &jerr, source, c, ret, err, errsize);
}

struct ngcdb *ngcdb_free(struct ngcdb *db) {
        if (!db)
                return NULL;
        for (size_t i = 0; i < db->n_images; i++)
                free(db->images[i].releases);
        free(db->images);
        free(db->tests);
        json_decref(db->json);
        free(db);
        return NULL;
}

const struct ngc_image *ngcdb_image(const struct ngcdb *db, const char *name) {
        for (size_t i = 0; i < db->n_images; i++)
                if (strcmp(db->images[i].name, name) == 0)
                        return &db->images[i];
        return NULL;
}

const struct ngc_release *ngc_image_release(const struct ngc_image *img, const char *tag) {
        for (size_t i = 0; i < img->n_releases; i++)
                if (strcmp(img->releases[i].tag, tag) == 0 || strcmp(img->releases[i].release, tag) == 0)
                        return &img->releases[i];
        return NULL;
}
