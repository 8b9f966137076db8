#include "burn/wire.h"

#include "core/json_real.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the worker's side ------------------------------------------------------------- */

/* The object as one line, or NULL. A line over the limit is the caller's to shorten. */
static char *line_of(json_t *o) {
        if (!o)
                return NULL;
        char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
        json_decref(o);
        if (!s)
                return NULL;
        size_t n = strlen(s);
        char *line = realloc(s, n + 2);
        if (!line) {
                free(s);
                return NULL;
        }
        line[n] = '\n';
        line[n + 1] = '\0';
        return line;
}

static json_t *str_or_empty(const char *s) { return json_string(s ? s : ""); }

char *burn_wire_device(const char *name, const char *bus, bool is_cpu, const char *backend) {
        return line_of(json_pack("{s:s, s:o, s:o, s:b, s:o}", "k", "device", "name", str_or_empty(name), "bus",
                                 str_or_empty(bus), "cpu", is_cpu, "backend", str_or_empty(backend)));
}

char *burn_wire_mode(enum burn_mode m, const char *workload, const char *precision) {
        return line_of(json_pack("{s:s, s:s, s:o, s:o}", "k", "mode", "mode", burn_mode_name(m), "workload",
                                 str_or_empty(workload), "precision", str_or_empty(precision)));
}

char *burn_wire_tick(enum burn_mode m, unsigned long long products, double flops, double seconds,
                     double device_seconds) {
        return line_of(json_pack("{s:s, s:s, s:I, s:f, s:f, s:f}", "k", "tick", "mode", burn_mode_name(m), "products",
                                 (json_int_t)products, "flops", flops, "seconds", seconds, "device_seconds",
                                 device_seconds));
}

/* Faults appended until the line would pass the limit; the counts say how many there were. */
static char *line_with_faults(json_t *o, json_t *(*fault_json)(const struct burn_fault *),
                              const struct burn_fault *faults, size_t n) {
        if (!o)
                return NULL;
        json_t *list = json_array();
        if (!list || json_object_set_new(o, "faults", list) < 0) {
                json_decref(o);
                return NULL;
        }
        for (size_t i = 0; i < n && i < BURN_WIRE_FAULTS_PER_LINE; i++)
                json_array_append_new(list, fault_json(&faults[i]));
        for (;;) {
                char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
                if (!s) {
                        json_decref(o);
                        return NULL;
                }
                size_t len = strlen(s);
                free(s);
                if (len + 1 <= BURN_WIRE_LINE_MAX || json_array_size(list) == 0)
                        break;
                json_array_remove(list, json_array_size(list) - 1);
        }
        return line_of(o);
}

/* A faulty GPU's element is often NaN or infinite: null says "not a finite number" (a 0
 * here once made a NaN look like a zero). */
static json_t *gemm_fault_json(const struct burn_fault *f) {
        return json_pack("{s:I, s:I, s:o, s:o, s:s}", "row", (json_int_t)f->where_a, "col", (json_int_t)f->where_b,
                         "expected", json_real_or_null(f->expected), "got", json_real_or_null(f->got), "what", f->what);
}

char *burn_wire_verify(unsigned long long sampled, unsigned long long faulty_host, unsigned long long compared,
                       unsigned long long faulty_first, unsigned long long digest, const struct burn_fault *faults,
                       size_t n_faults) {
        char hex[17];
        snprintf(hex, sizeof(hex), "%016llx", digest);
        json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:s}", "k", "verify", "sampled", (json_int_t)sampled,
                              "faulty_host", (json_int_t)faulty_host, "compared", (json_int_t)compared,
                              "faulty_first", (json_int_t)faulty_first, "digest", hex);
        return line_with_faults(o, gemm_fault_json, faults, n_faults);
}

static json_t *mem_fault_json(const struct burn_fault *f) {
        char exp[24], got[24];
        snprintf(exp, sizeof(exp), "0x%" PRIx64, f->mem_expected);
        snprintf(got, sizeof(got), "0x%" PRIx64, f->mem_got);
        return json_pack("{s:I, s:s, s:s, s:s}", "offset", (json_int_t)f->where_a, "expected", exp, "got", got,
                         "pattern", f->what);
}

char *burn_wire_memtest(unsigned long long pass, unsigned long long bytes, unsigned long long words,
                        unsigned long long errors, double seconds, const char *seed, const struct burn_fault *faults,
                        size_t n_faults) {
        json_t *o = json_pack("{s:s, s:I, s:I, s:I, s:I, s:f, s:o}", "k", "memtest", "pass", (json_int_t)pass, "bytes",
                              (json_int_t)bytes, "words", (json_int_t)words, "errors", (json_int_t)errors, "seconds",
                              seconds, "seed", str_or_empty(seed));
        return line_with_faults(o, mem_fault_json, faults, n_faults);
}

char *burn_wire_beat(void) { return line_of(json_pack("{s:s}", "k", "beat")); }

char *burn_wire_error(const char *msg) {
        char cut[1024];
        snprintf(cut, sizeof(cut), "%s", msg ? msg : "");
        return line_of(json_pack("{s:s, s:s}", "k", "error", "msg", cut));
}

char *burn_wire_done(bool stopped) { return line_of(json_pack("{s:s, s:b}", "k", "done", "stopped", stopped)); }

/* ---- the parent's side ------------------------------------------------------------- */

static int refuse(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t size, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, size, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* A count: a non-negative integer. */
static bool get_count(json_t *o, const char *key, uint64_t *ret) {
        json_t *v = json_object_get(o, key);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
                return false;
        *ret = (uint64_t)json_integer_value(v);
        return true;
}

/* A finite, non-negative number (jansson writes 1.0 as 1.0, but accept an integer too). */
static bool get_number(json_t *o, const char *key, double *ret) {
        json_t *v = json_object_get(o, key);
        if (!json_is_number(v))
                return false;
        double d = json_number_value(v);
        if (!isfinite(d))
                return false;
        *ret = d;
        return true;
}

/* An element's value: a finite number, or null for one that was not (NaN, infinite). */
static bool get_element(json_t *o, const char *key, double *ret) {
        if (json_is_null(json_object_get(o, key))) {
                *ret = NAN;
                return true;
        }
        return get_number(o, key, ret);
}

static bool get_text(json_t *o, const char *key, char *buf, size_t size) {
        const char *s = json_string_value(json_object_get(o, key));
        if (!s)
                return false;
        snprintf(buf, size, "%s", s);
        return true;
}

static int mode_of(json_t *o, enum burn_mode *ret) {
        const char *s = json_string_value(json_object_get(o, "mode"));
        for (int m = 0; s && m < _BURN_MODE_COUNT; m++)
                if (strcmp(s, burn_mode_name((enum burn_mode)m)) == 0) {
                        *ret = (enum burn_mode)m;
                        return 0;
                }
        return -EINVAL;
}

/* Kept once each: the same cell found again by a later pass or verification adds to the
 * counts, not to the list, so the list shows as many distinct places as it can. */
static void add_fault(struct burn_device *d, const struct burn_fault *f) {
        for (unsigned i = 0; i < d->n_faults; i++) {
                const struct burn_fault *x = &d->faults[i];
                if (x->mode == f->mode && x->where_a == f->where_a && x->where_b == f->where_b &&
                    strcmp(x->what, f->what) == 0)
                        return;
        }
        if (d->n_faults < BURN_MAX_FAULTS)
                d->faults[d->n_faults++] = *f;
}

static int apply_tick(struct burn_device *d, json_t *o, double t_s, char *why, size_t size) {
        enum burn_mode m;
        uint64_t products;
        double flops, seconds, device_seconds;
        if (mode_of(o, &m) < 0 || !get_count(o, "products", &products) || !get_number(o, "flops", &flops) ||
            !get_number(o, "seconds", &seconds) || !get_number(o, "device_seconds", &device_seconds) || flops < 0 ||
            seconds < 0 || device_seconds < 0)
                return refuse(why, size, "malformed tick line");
        d->products += products;
        d->flops += flops;
        d->load_seconds += seconds;
        d->device_seconds += device_seconds;
        if (d->n_rates == d->cap_rates) {
                size_t cap = d->cap_rates ? d->cap_rates * 2 : 64;
                struct burn_rate *r = realloc(d->rates, cap * sizeof(*r));
                if (!r)
                        return 0; /* the series loses a point; the totals above stay right */
                d->rates = r;
                d->cap_rates = cap;
        }
        d->rates[d->n_rates++] = (struct burn_rate){
                .t_s = t_s, .mode = m,
                /* The GPU's own rate where the device timed it: the host's scheduling of
                 * the workers (several on few cores) is not the GPU's doing. */
                .tflops = device_seconds > 0 ? flops / device_seconds / 1e12 : seconds > 0 ? flops / seconds / 1e12 : 0};
        return 0;
}

static int apply_verify(struct burn_device *d, json_t *o, char *why, size_t size) {
        uint64_t sampled, faulty_host, compared, faulty_first;
        const char *hex = json_string_value(json_object_get(o, "digest"));
        json_t *faults = json_object_get(o, "faults");
        char *end = NULL;
        unsigned long long digest = hex ? strtoull(hex, &end, 16) : 0;
        if (!get_count(o, "sampled", &sampled) || !get_count(o, "faulty_host", &faulty_host) ||
            !get_count(o, "compared", &compared) || !get_count(o, "faulty_first", &faulty_first) || !hex ||
            strlen(hex) != 16 || !end || *end || !json_is_array(faults))
                return refuse(why, size, "malformed verify line");
        size_t i;
        json_t *e;
        json_array_foreach(faults, i, e) {
                struct burn_fault f = {.mode = BURN_MODE_GEMM};
                uint64_t row, col;
                if (!get_count(e, "row", &row) || !get_count(e, "col", &col) || !get_element(e, "expected", &f.expected) ||
                    !get_element(e, "got", &f.got) || !get_text(e, "what", f.what, sizeof(f.what)))
                        return refuse(why, size, "malformed fault in a verify line");
                f.where_a = row;
                f.where_b = col;
                add_fault(d, &f);
        }
        d->verifications++;
        d->elements_sampled += sampled;
        d->faulty_vs_host += faulty_host;
        d->elements_compared += compared;
        d->faulty_vs_first += faulty_first;
        d->faults_total += faulty_host + faulty_first;
        struct burn_load *l = &d->loads[d->mode];
        if (!l->have_digest) {
                l->have_digest = true;
                l->digest = digest;
        } else if (digest != l->digest) {
                l->digest_changed = true;
        }
        return 0;
}

static bool get_hex(json_t *o, const char *key, uint64_t *ret) {
        const char *s = json_string_value(json_object_get(o, key));
        if (!s || strncmp(s, "0x", 2) != 0 || !s[2])
                return false;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s + 2, &end, 16);
        if (errno || *end)
                return false;
        *ret = v;
        return true;
}

static int apply_memtest(struct burn_device *d, json_t *o, char *why, size_t size) {
        uint64_t pass, bytes, words, errors;
        double seconds;
        json_t *faults = json_object_get(o, "faults");
        char seed[sizeof(d->mem_seed)];
        if (!get_count(o, "pass", &pass) || !get_count(o, "bytes", &bytes) || !get_count(o, "words", &words) ||
            !get_count(o, "errors", &errors) || !get_number(o, "seconds", &seconds) || seconds < 0 ||
            !get_text(o, "seed", seed, sizeof(seed)) || !json_is_array(faults))
                return refuse(why, size, "malformed memtest line");
        size_t i;
        json_t *e;
        json_array_foreach(faults, i, e) {
                struct burn_fault f = {.mode = BURN_MODE_MEMTEST};
                if (!get_count(e, "offset", &f.where_a) || !get_hex(e, "expected", &f.mem_expected) ||
                    !get_hex(e, "got", &f.mem_got) || !get_text(e, "pattern", f.what, sizeof(f.what)))
                        return refuse(why, size, "malformed fault in a memtest line");
                add_fault(d, &f);
        }
        d->mem_passes += pass;
        d->mem_bytes = bytes > d->mem_bytes ? bytes : d->mem_bytes;
        d->mem_words += words;
        d->mem_errors += errors;
        d->mem_seconds += seconds;
        d->faults_total += errors;
        snprintf(d->mem_seed, sizeof(d->mem_seed), "%s", seed);
        return 0;
}

int burn_wire_apply(struct burn_device *d, const char *line, double t_s, char *why, size_t whysize) {
        json_error_t jerr;
        json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
        if (!json_is_object(o)) {
                json_decref(o);
                return refuse(why, whysize, "not a JSON object: %s", jerr.text);
        }
        const char *k = json_string_value(json_object_get(o, "k"));
        int r = 0;
        if (!k) {
                r = refuse(why, whysize, "line without a kind");
        } else if (strcmp(k, "device") == 0) {
                bool ok = get_text(o, "name", d->name, sizeof(d->name)) && get_text(o, "bus", d->bus, sizeof(d->bus)) &&
                          json_is_boolean(json_object_get(o, "cpu")) &&
                          get_text(o, "backend", d->backend, sizeof(d->backend));
                d->is_cpu = json_is_true(json_object_get(o, "cpu"));
                if (!ok)
                        r = refuse(why, whysize, "malformed device line");
        } else if (strcmp(k, "mode") == 0) {
                enum burn_mode m;
                char workload[sizeof(d->loads[0].workload)], precision[sizeof(d->loads[0].precision)];
                if (mode_of(o, &m) < 0 || !get_text(o, "workload", workload, sizeof(workload)) ||
                    !get_text(o, "precision", precision, sizeof(precision))) {
                        r = refuse(why, whysize, "malformed mode line");
                } else {
                        d->mode = m;
                        d->in_mode = true;
                        memcpy(d->loads[m].workload, workload, sizeof(workload));
                        memcpy(d->loads[m].precision, precision, sizeof(precision));
                }
        } else if (strcmp(k, "tick") == 0) {
                r = apply_tick(d, o, t_s, why, whysize);
        } else if (strcmp(k, "verify") == 0) {
                r = apply_verify(d, o, why, whysize);
        } else if (strcmp(k, "memtest") == 0) {
                r = apply_memtest(d, o, why, whysize);
        } else if (strcmp(k, "beat") == 0) {
                /* alive: the caller noted the time */
        } else if (strcmp(k, "error") == 0) {
                if (!get_text(o, "msg", d->error, sizeof(d->error)))
                        r = refuse(why, whysize, "malformed error line");
                else
                        d->end = BURN_END_ERROR;
        } else if (strcmp(k, "done") == 0) {
                json_t *stopped = json_object_get(o, "stopped");
                if (!json_is_boolean(stopped)) {
                        r = refuse(why, whysize, "malformed done line");
                } else {
                        d->in_mode = false;
                        if (d->end != BURN_END_ERROR)
                                d->end = json_is_true(stopped) ? BURN_END_STOPPED : BURN_END_DONE;
                        r = 1;
                }
        } else {
                r = refuse(why, whysize, "unknown line kind \"%.32s\"", k);
        }
        json_decref(o);
        return r;
}
