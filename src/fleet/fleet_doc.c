#include "fleet/fleet_doc.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/strbuf.h"

/* Debian's libjsmn-dev: the implementation is compiled here, static, once. Strict mode
 * refuses bare words and primitives as keys. */
#define JSMN_STATIC
#define JSMN_STRICT
/* Without parent links jsmn finds the bracket a "}" closes by scanning back over every token
 * so far: quadratic in the objects of a report (81% of the time on an 8-GPU one). */
#define JSMN_PARENT_LINKS
#include <jsmn.h>

/* A tokenized document: tokens in document order, each a span of js. */
struct jdoc {
        const char *js;
        const jsmntok_t *t;
        int n;
};

/* The index after token i's subtree: tokens come in document order, so the subtree is the
 * run of tokens that start inside i's span. Needs no well-formed sizes, so a lax
 * tokenization of bad input cannot send it out of bounds. */
static int jskip(const struct jdoc *d, int i) {
        int end = d->t[i].end, k = i + 1;
        while (k < d->n && d->t[k].start < end)
                k++;
        return k;
}

/* Whether token k lies inside token parent (k after parent). */
static bool jin(const struct jdoc *d, int k, int parent) {
        return k < d->n && d->t[k].start < d->t[parent].end;
}

static bool jis(const struct jdoc *d, int i, jsmntype_t type) {
        return i >= 0 && i < d->n && d->t[i].type == type;
}

/* The values of several keys of the object at obj in one pass: ret[i] for keys[i], -1 when
 * absent (the first of a repeated key). */
static void jfields(const struct jdoc *d, int obj, const char *const *keys, size_t n, int *ret) {
        size_t lens[16];
        for (size_t i = 0; i < n; i++)
                ret[i] = -1;
        if (!jis(d, obj, JSMN_OBJECT) || n > 16)
                return;
        for (size_t i = 0; i < n; i++)
                lens[i] = strlen(keys[i]);
        int end = d->t[obj].end;
        for (int k = obj + 1; k < d->n && d->t[k].start < end;) {
                int v = k + 1;
                if (d->t[k].type != JSMN_STRING || v >= d->n || d->t[v].start >= end)
                        return;
                size_t klen = (size_t)(d->t[k].end - d->t[k].start);
                const char *key = d->js + d->t[k].start;
                for (size_t i = 0; i < n; i++)
                        if (ret[i] < 0 && lens[i] == klen && key[0] == keys[i][0] && memcmp(key, keys[i], klen) == 0) {
                                ret[i] = v;
                                break;
                        }
                k = jskip(d, v);
        }
}

/* The value of key in the object at obj, or -1. */
static int jget(const struct jdoc *d, int obj, const char *key) {
        int v;
        jfields(d, obj, &key, 1, &v);
        return v;
}

static void put_utf8(char *out, size_t *o, uint32_t cp) {
        if (cp < 0x80) {
                out[(*o)++] = (char)cp;
        } else if (cp < 0x800) {
                out[(*o)++] = (char)(0xc0 | (cp >> 6));
                out[(*o)++] = (char)(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
                out[(*o)++] = (char)(0xe0 | (cp >> 12));
                out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[(*o)++] = (char)(0x80 | (cp & 0x3f));
        } else {
                out[(*o)++] = (char)(0xf0 | (cp >> 18));
                out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
                out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[(*o)++] = (char)(0x80 | (cp & 0x3f));
        }
}

static int hex4(const char *p, const char *end, uint32_t *ret) {
        if (end - p < 4)
                return -1;
        uint32_t v = 0;
        for (int i = 0; i < 4; i++) {
                char c = p[i];
                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= (uint32_t)(c - '0');
                else if (c >= 'a' && c <= 'f')
                        v |= (uint32_t)(c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        v |= (uint32_t)(c - 'A' + 10);
                else
                        return -1;
        }
        *ret = v;
        return 0;
}

/* The string at token i with its escapes decoded (a lone surrogate or NUL becomes U+FFFD),
 * newly allocated; NULL when i is not a string or out of memory (*oom set). */
static char *jstr(const struct jdoc *d, int i, bool *oom) {
        if (!jis(d, i, JSMN_STRING))
                return NULL;
        const char *p = d->js + d->t[i].start, *end = d->js + d->t[i].end;
        /* Escapes never lengthen the text beyond 3 bytes per 2 input bytes. */
        char *out = malloc((size_t)(end - p) * 2 + 1);
        if (!out) {
                *oom = true;
                return NULL;
        }
        size_t o = 0;
        while (p < end) {
                if (*p != '\\' || p + 1 >= end) {
                        out[o++] = *p ? *p : '?';
                        p++;
                        continue;
                }
                char c = p[1];
                p += 2;
                switch (c) {
                case 'n': out[o++] = '\n'; break;
                case 't': out[o++] = '\t'; break;
                case 'r': out[o++] = '\r'; break;
                case 'b': out[o++] = '\b'; break;
                case 'f': out[o++] = '\f'; break;
                case 'u': {
                        uint32_t cp, lo;
                        if (hex4(p, end, &cp) < 0) {
                                put_utf8(out, &o, 0xfffd);
                                break;
                        }
                        p += 4;
                        if (cp >= 0xd800 && cp < 0xdc00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
                            hex4(p + 2, end, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
                                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                                p += 6;
                        } else if ((cp >= 0xd800 && cp < 0xe000) || cp == 0) {
                                cp = 0xfffd;
                        }
                        put_utf8(out, &o, cp);
                        break;
                }
                default: out[o++] = c; break;
                }
        }
        out[o] = '\0';
        return out;
}

/* The number at token i into *ret; false when it is not a finite JSON number. */
static bool jnum(const struct jdoc *d, int i, double *ret) {
        if (!jis(d, i, JSMN_PRIMITIVE))
                return false;
        const char *p = d->js + d->t[i].start;
        size_t len = (size_t)(d->t[i].end - d->t[i].start);
        char buf[64];
        if (len == 0 || len >= sizeof(buf) || !(p[0] == '-' || (p[0] >= '0' && p[0] <= '9')))
                return false;
        memcpy(buf, p, len);
        buf[len] = '\0';
        char *e;
        double v = strtod(buf, &e);
        if (*e || !isfinite(v))
                return false;
        *ret = v;
        return true;
}

/* 1 for true, 0 for false, -1 for anything else. */
static int jbool(const struct jdoc *d, int i) {
        if (!jis(d, i, JSMN_PRIMITIVE))
                return -1;
        char c = d->js[d->t[i].start];
        return c == 't' ? 1 : c == 'f' ? 0 : -1;
}

/* Whether the string at i equals s exactly (no escapes in what is compared). */
static bool jeq(const struct jdoc *d, int i, const char *s) {
        if (!jis(d, i, JSMN_STRING))
                return false;
        size_t len = strlen(s);
        return (size_t)(d->t[i].end - d->t[i].start) == len && memcmp(d->js + d->t[i].start, s, len) == 0;
}

static bool jstatus(const struct jdoc *d, int i, enum status *ret) {
        for (int k = 0; k < _STATUS_COUNT; k++)
                if (jeq(d, i, status_name((enum status)k))) {
                        *ret = (enum status)k;
                        return true;
                }
        return false;
}

const char *fleet_doc_kind_schema(enum fleet_doc_kind k) {
        static const char *const schemas[_FLEET_DOC_COUNT] = {
                [FLEET_DOC_REPORT] = "gpuvet.report/1",     [FLEET_DOC_BENCH] = "gpuvet.bench/2",
                [FLEET_DOC_NCCL] = "gpuvet.bench-nccl/1",   [FLEET_DOC_RDMA] = "gpuvet.bench-rdma/1",
                [FLEET_DOC_TRAIN] = "gpuvet.bench-train/1",
        };
        return (unsigned)k < _FLEET_DOC_COUNT ? schemas[k] : "?";
}

struct reader {
        const struct jdoc *d;
        struct fleet_doc *doc;
        size_t cap_checks, cap_metrics;
        bool oom;
};

static struct fleet_gpu *gpu_by_bus_id(struct fleet_doc *doc, const struct jdoc *d, int subject) {
        for (size_t i = 0; i < doc->n_gpus; i++)
                if (doc->gpus[i].pci_bus_id && jeq(d, subject, doc->gpus[i].pci_bus_id))
                        return &doc->gpus[i];
        return NULL;
}

/* "InfoROM valid; VBIOS 96.00.74.00.1A; InfoROM image G520.0200.00.05": gpu.inforom's
 * observed text, the one place a check report gives a GPU's VBIOS (an evidence key
 * "vbios_version" is preferred where a report has it). */
static char *vbios_from_observed(const char *observed, bool *oom) {
        const char *p = observed ? strstr(observed, "VBIOS ") : NULL;
        if (!p)
                return NULL;
        p += 6;
        size_t len = strcspn(p, "; ");
        if (len == 0)
                return NULL;
        char *v = strndup(p, len);
        if (!v)
                *oom = true;
        return v;
}

/* f: the result's id, status, subject, observed and evidence. */
static void read_special_check(struct reader *r, const int *f, int id, enum status st) {
        const struct jdoc *d = r->d;
        struct fleet_doc *doc = r->doc;
        if (jeq(d, id, "gpu.nvml")) {
                int ev = f[4];
                char *drv = jstr(d, jget(d, ev, "driver_version"), &r->oom);
                if (drv) {
                        free(doc->driver_version);
                        doc->driver_version = drv;
                }
                char *cuda = jstr(d, jget(d, ev, "cuda_driver_version"), &r->oom);
                if (cuda) {
                        free(doc->cuda_version);
                        doc->cuda_version = cuda;
                }
        } else if (jeq(d, id, "gpu.driver_version") && !doc->driver_version) {
                /* "550.54.15 (proprietary kernel module)" when the module is loaded. */
                char *obs = jstr(d, f[3], &r->oom);
                if (obs && st != STATUS_SKIP && st != STATUS_ERROR &&
                    obs[0] >= '0' && obs[0] <= '9') {
                        obs[strcspn(obs, " ")] = '\0';
                        doc->driver_version = obs;
                        obs = NULL;
                }
                free(obs);
        } else if (jeq(d, id, "gpu.inforom")) {
                struct fleet_gpu *g = gpu_by_bus_id(doc, d, f[2]);
                if (!g || g->vbios)
                        return;
                g->vbios = jstr(d, jget(d, f[4], "vbios_version"), &r->oom);
                if (!g->vbios) {
                        char *obs = jstr(d, f[3], &r->oom);
                        g->vbios = vbios_from_observed(obs, &r->oom);
                        free(obs);
                }
        }
}

static int read_checks(struct reader *r, int arr) {
        const struct jdoc *d = r->d;
        if (!jis(d, arr, JSMN_ARRAY))
                return 0;
        static const char *const keys[] = {"id", "status", "subject", "observed", "evidence"};
        for (int c = arr + 1; jin(d, c, arr); c = jskip(d, c)) {
                int f[5];
                jfields(d, c, keys, 5, f);
                int id = f[0];
                enum status st;
                if (!jis(d, id, JSMN_STRING) || !jstatus(d, f[1], &st))
                        continue;
                if (d->t[id].end - d->t[id].start > 4 && memcmp(d->js + d->t[id].start, "gpu.", 4) == 0)
                        read_special_check(r, f, id, st);
                if (st == STATUS_PASS || st == STATUS_SKIP)
                        continue;
                struct fleet_doc *doc = r->doc;
                if (array_grow((void **)&doc->checks, doc->n_checks, &r->cap_checks, sizeof(*doc->checks), 8) < 0)
                        return -ENOMEM;
                struct fleet_check *fc = &doc->checks[doc->n_checks];
                fc->id = jstr(d, id, &r->oom);
                fc->subject = jstr(d, f[2], &r->oom);
                fc->status = st;
                if (!fc->id) {
                        free(fc->subject);
                        continue;
                }
                doc->n_checks++;
        }
        return r->oom ? -ENOMEM : 0;
}

/* Takes name, unit and subject (any NULL: the metric is dropped). */
static int add_metric(struct reader *r, char *name, char *unit, char *subject, double value, int higher_is_better) {
        struct fleet_doc *doc = r->doc;
        if (name && unit && subject &&
            array_grow((void **)&doc->metrics, doc->n_metrics, &r->cap_metrics, sizeof(*doc->metrics), 8) < 0)
                r->oom = true;
        if (r->oom || !name || !unit || !subject) {
                free(name);
                free(unit);
                free(subject);
                return r->oom ? -ENOMEM : 0;
        }
        doc->metrics[doc->n_metrics++] = (struct fleet_metric){name, unit, subject, value, higher_is_better};
        return 0;
}

static char *join2(const char *a, const char *b, bool *oom) {
        size_t la = strlen(a), lb = strlen(b);
        char *s = malloc(la + lb + 2);
        if (!s) {
                *oom = true;
                return NULL;
        }
        memcpy(s, a, la);
        s[la] = '/';
        memcpy(s + la + 1, b, lb + 1);
        return s;
}

static char *dup_or_oom(const char *s, bool *oom) {
        char *c = strdup(s);
        if (!c)
                *oom = true;
        return c;
}

/* measurements[] of bench, bench nccl and bench train: the median of each one that was
 * measured (not skipped, not an error). */
static int read_measurements(struct reader *r, int arr) {
        const struct jdoc *d = r->d;
        if (!jis(d, arr, JSMN_ARRAY))
                return 0;
        static const char *const keys[] = {"status", "stats", "bench", "name", "unit", "subject", "higher_is_better"};
        for (int m = arr + 1; jin(d, m, arr); m = jskip(d, m)) {
                int f[7];
                jfields(d, m, keys, 7, f);
                enum status st;
                double v;
                if (!jstatus(d, f[0], &st) || st == STATUS_SKIP || st == STATUS_ERROR)
                        continue;
                if (!jnum(d, jget(d, f[1], "median"), &v))
                        continue;
                char *bench = jstr(d, f[2], &r->oom), *name = jstr(d, f[3], &r->oom);
                char *full = bench && name ? join2(bench, name, &r->oom) : NULL;
                free(bench);
                free(name);
                if (!full) {
                        if (r->oom)
                                return -ENOMEM;
                        continue;
                }
                char *unit = jstr(d, f[4], &r->oom);
                char *subject = jstr(d, f[5], &r->oom);
                if (!unit && !r->oom)
                        unit = dup_or_oom("", &r->oom);
                if (!subject && !r->oom)
                        subject = dup_or_oom("host", &r->oom);
                if (add_metric(r, full, unit, subject, v, jbool(d, f[6])) < 0)
                        return -ENOMEM;
        }
        return r->oom ? -ENOMEM : 0;
}

/* bench rdma's verdicts[] (arr): the bandwidth each test reached on the node's device. */
static int read_rdma(struct reader *r, int arr, int device_obj) {
        const struct jdoc *d = r->d;
        if (!jis(d, arr, JSMN_ARRAY))
                return 0;
        char *device = jstr(d, jget(d, device_obj, "name"), &r->oom);
        for (int m = arr + 1; jin(d, m, arr) && !r->oom; m = jskip(d, m)) {
                double v;
                char *test = jstr(d, jget(d, m, "test"), &r->oom);
                if (!test || !jnum(d, jget(d, m, "observed_gbps"), &v)) {
                        free(test);
                        continue;
                }
                char *full = join2("rdma", test, &r->oom);
                free(test);
                if (add_metric(r, full, dup_or_oom("GB/s", &r->oom), dup_or_oom(device ? device : "host", &r->oom),
                               v, 1) < 0)
                        break;
        }
        free(device);
        return r->oom ? -ENOMEM : 0;
}

static int read_gpus(struct reader *r, int arr) {
        const struct jdoc *d = r->d;
        if (!jis(d, arr, JSMN_ARRAY))
                return 0;
        size_t n = (size_t)d->t[arr].size;
        if (n == 0)
                return 0;
        struct fleet_doc *doc = r->doc;
        doc->gpus = calloc(n, sizeof(*doc->gpus));
        if (!doc->gpus)
                return -ENOMEM;
        for (int g = arr + 1; jin(d, g, arr) && doc->n_gpus < n; g = jskip(d, g)) {
                char *model = jstr(d, jget(d, g, "name"), &r->oom);
                if (!model)
                        continue;
                doc->gpus[doc->n_gpus].model = model;
                doc->gpus[doc->n_gpus].pci_bus_id = jstr(d, jget(d, g, "pci_bus_id"), &r->oom);
                doc->n_gpus++;
        }
        return r->oom ? -ENOMEM : 0;
}

/* Whether the brackets of buf (those outside strings) nest at most FLEET_DOC_MAX_DEPTH deep.
 * Checked before jsmn sees the bytes: with parent links, each closing bracket walks up from
 * the last token to the one it closes, as many steps as the document is deep there, so
 * 100,000 levels took 36 s and 1 MB did not finish. Under the cap a closing bracket walks at
 * most about twice the cap (an object's keys are links of the chain too): linear. */
static int check_nesting(const char *buf, size_t len, char *why, size_t whysize) {
        unsigned depth = 0;
        bool in_string = false;
        for (size_t i = 0; i < len; i++) {
                char c = buf[i];
                if (in_string) {
                        if (c == '\\')
                                i++;
                        else if (c == '"')
                                in_string = false;
                } else if (c == '"') {
                        in_string = true;
                } else if (c == '{' || c == '[') {
                        if (++depth > FLEET_DOC_MAX_DEPTH) {
                                strbuf_printf(why, whysize,
                                              "nested deeper than %u levels at byte %zu: not a report (gpuvet's "
                                              "reports nest a few levels)",
                                              FLEET_DOC_MAX_DEPTH, i);
                                return -EINVAL;
                        }
                } else if ((c == '}' || c == ']') && depth > 0) {
                        depth--;
                }
        }
        return 0;
}

static int tokenize(const char *buf, size_t len, struct fleet_scratch *s, struct jdoc *d, char *why, size_t whysize) {
        /* jsmn's offsets are ints. */
        if (len > INT32_MAX) {
                strbuf_printf(why, whysize, "too large to be a report (%zu bytes)", len);
                return -EINVAL;
        }
        int r = check_nesting(buf, len, why, whysize);
        if (r < 0)
                return r;
        /* A token takes at least one byte and all but nested brackets a separator too. */
        if (s->cap < len / 2 + 8) {
                size_t cap = len / 2 + 8;
                void *t = realloc(s->tokens, cap * sizeof(jsmntok_t));
                if (!t)
                        return -ENOMEM;
                s->tokens = t;
                s->cap = cap;
        }
        for (;;) {
                jsmn_parser p;
                jsmn_init(&p);
                int n = jsmn_parse(&p, buf, len, s->tokens, (unsigned)(s->cap > UINT32_MAX ? UINT32_MAX : s->cap));
                if (n == JSMN_ERROR_NOMEM) {
                        void *t = realloc(s->tokens, s->cap * 2 * sizeof(jsmntok_t));
                        if (!t)
                                return -ENOMEM;
                        s->tokens = t;
                        s->cap *= 2;
                        continue;
                }
                if (n == JSMN_ERROR_PART) {
                        strbuf_printf(why, whysize, "truncated JSON (ends inside a value after %zu bytes)", len);
                        return -EINVAL;
                }
                if (n == JSMN_ERROR_INVAL) {
                        strbuf_printf(why, whysize, "not JSON (invalid character at byte %u)", p.pos);
                        return -EINVAL;
                }
                if (n <= 0) {
                        strbuf_printf(why, whysize, "empty: no JSON document in %zu bytes", len);
                        return -EINVAL;
                }
                d->js = buf;
                d->t = s->tokens;
                d->n = n;
                break;
        }
        const jsmntok_t *t0 = &d->t[0];
        if (t0->type != JSMN_OBJECT) {
                strbuf_printf(why, whysize, "not a JSON object (a report is one)");
                return -EINVAL;
        }
        for (size_t i = (size_t)t0->end; i < len; i++)
                if (!strchr(" \t\r\n", buf[i])) {
                        strbuf_printf(why, whysize, "not JSON: text after the document at byte %zu", i);
                        return -EINVAL;
                }
        return 0;
}

static int read_kind(const struct jdoc *d, int schema, enum fleet_doc_kind *ret, char *why, size_t whysize) {
        if (!jis(d, schema, JSMN_STRING)) {
                strbuf_printf(why, whysize, "no \"schema\" string: not a gpuvet report");
                return -EINVAL;
        }
        for (int k = 0; k < _FLEET_DOC_COUNT; k++)
                if (jeq(d, schema, fleet_doc_kind_schema((enum fleet_doc_kind)k))) {
                        *ret = (enum fleet_doc_kind)k;
                        return 0;
                }
        int len = d->t[schema].end - d->t[schema].start;
        static const char aggregate[] = "gpuvet.fleet/";
        if ((size_t)len >= sizeof(aggregate) - 1 &&
            strncmp(d->js + d->t[schema].start, aggregate, sizeof(aggregate) - 1) == 0) {
                strbuf_printf(why, whysize, "a fleet aggregate (schema \"%.*s\", gpuvet fleet --json), not a node "
                              "report: name the nodes' reports", len > 80 ? 80 : len, d->js + d->t[schema].start);
                return FLEET_DOC_AGGREGATE;
        }
        strbuf_printf(why, whysize,
                      "schema \"%.*s\" is not one fleet reads (gpuvet.report/1, gpuvet.bench/2, "
                      "gpuvet.bench-nccl/1, gpuvet.bench-rdma/1, gpuvet.bench-train/1)",
                      len > 80 ? 80 : len, d->js + d->t[schema].start);
        return -EPROTO;
}

int fleet_doc_parse(const char *buf, size_t len, struct fleet_scratch *scratch, struct fleet_doc *doc, char *why,
                    size_t whysize) {
        memset(doc, 0, sizeof(*doc));
        struct jdoc d;
        int r = tokenize(buf, len, scratch, &d, why, whysize);
        if (r < 0)
                return r;
        /* The top level in one pass: a report is mostly its checks or measurements. */
        enum { F_SCHEMA, F_SUMMARY, F_COMMAND, F_HOST, F_GPUS, F_CHECKS, F_MEASUREMENTS, F_VERDICTS, F_DEVICE, F_COUNT };
        static const char *const keys[F_COUNT] = {"schema", "summary", "command", "host",   "gpus",
                                                  "checks", "measurements", "verdicts", "device"};
        int f[F_COUNT];
        jfields(&d, 0, keys, F_COUNT, f);
        if ((r = read_kind(&d, f[F_SCHEMA], &doc->kind, why, whysize)) < 0)
                return r;
        if (!jstatus(&d, jget(&d, f[F_SUMMARY], "verdict"), &doc->verdict)) {
                strbuf_printf(why, whysize, "no summary.verdict (pass, warn, fail, skip or error)");
                return -EINVAL;
        }
        struct reader rd = {.d = &d, .doc = doc};
        doc->command = jstr(&d, f[F_COMMAND], &rd.oom);
        int host = f[F_HOST];
        doc->hostname = jstr(&d, jget(&d, host, "hostname"), &rd.oom);
        if (doc->hostname && !doc->hostname[0]) {
                free(doc->hostname);
                doc->hostname = NULL;
        }
        doc->kernel_release = jstr(&d, jget(&d, host, "kernel_release"), &rd.oom);
        r = rd.oom ? -ENOMEM : read_gpus(&rd, f[F_GPUS]);
        if (r == 0 && doc->kind == FLEET_DOC_REPORT)
                r = read_checks(&rd, f[F_CHECKS]);
        if (r == 0 && doc->kind == FLEET_DOC_RDMA)
                r = read_rdma(&rd, f[F_VERDICTS], f[F_DEVICE]);
        else if (r == 0 && doc->kind != FLEET_DOC_REPORT)
                r = read_measurements(&rd, f[F_MEASUREMENTS]);
        if (r < 0 || rd.oom) {
                fleet_doc_clear(doc);
                strbuf_printf(why, whysize, "out of memory");
                return -ENOMEM;
        }
        return 0;
}

void fleet_doc_clear(struct fleet_doc *doc) {
        free(doc->page);
        for (size_t i = 0; i < doc->n_gpus; i++) {
                free(doc->gpus[i].pci_bus_id);
                free(doc->gpus[i].model);
                free(doc->gpus[i].vbios);
        }
        for (size_t i = 0; i < doc->n_checks; i++) {
                free(doc->checks[i].id);
                free(doc->checks[i].subject);
        }
        for (size_t i = 0; i < doc->n_metrics; i++) {
                free(doc->metrics[i].name);
                free(doc->metrics[i].unit);
                free(doc->metrics[i].subject);
        }
        free(doc->gpus);
        free(doc->checks);
        free(doc->metrics);
        free(doc->path);
        free(doc->command);
        free(doc->hostname);
        free(doc->node);
        free(doc->kernel_release);
        free(doc->driver_version);
        free(doc->cuda_version);
        memset(doc, 0, sizeof(*doc));
}

void fleet_scratch_free(struct fleet_scratch *scratch) {
        free(scratch->tokens);
        scratch->tokens = NULL;
        scratch->cap = 0;
}
