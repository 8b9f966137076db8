/* Reading a site policy (policy.h): YAML through libyaml's document loader, then a walk
 * that knows every key. Problems are collected, not stopped at, so one run names them all. */
#include "policy/policy.h"
#include "checks/check.h"
#include "core/strparse.h"
#include "core/yaml_lib.h"
#include "core/yaml_nesting.h"
#include "sys/nvml_facts.h"
#include "sys/topo.h"
#include "tune/settings.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* A policy is a page of settings plus a reference of a few KiB per GPU; anything near
 * this size is not one. */
#define POLICY_MAX_BYTES (4u << 20)
/* The problems listed before "and more": enough to fix a file in one pass. */
#define POLICY_MAX_ERRORS 20
/* Wider than any node: bounds what a reference may allocate. */
#define POLICY_MAX_DEVICES 1024

struct walk {
        const char *name;
        const struct yaml_lib *y;
        yaml_document_t *doc;
        char *errors;
        size_t len, cap;
        unsigned n_errors;
        bool oom;
};

static unsigned line_of(const yaml_node_t *n) { return n ? (unsigned)n->start_mark.line + 1 : 0; }

static void problem(struct walk *w, const yaml_node_t *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem(struct walk *w, const yaml_node_t *at, const char *fmt, ...) {
        if (++w->n_errors > POLICY_MAX_ERRORS)
                return;
        char raw[768], msg[768 * 4];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(raw, sizeof(raw), fmt, ap);
        va_end(ap);
        /* Messages quote the file's values: a control character in one must not break the
         * one-problem-per-line output (or write to the terminal). */
        size_t o = 0;
        for (const unsigned char *c = (const unsigned char *)raw; *c; c++) {
                if (*c < 0x20 || *c == 0x7f)
                        o += (size_t)snprintf(msg + o, sizeof(msg) - o, "\\x%02x", *c);
                else
                        msg[o++] = (char)*c;
        }
        msg[o] = '\0';
        char line[sizeof(msg) + 256];
        int n = snprintf(line, sizeof(line), "%s:%u: %s\n", w->name, line_of(at), msg);
        if (n < 0)
                return;
        size_t need = w->len + (size_t)n + 1;
        if (need > w->cap) {
                size_t cap = w->cap ? w->cap * 2 : 512;
                while (cap < need)
                        cap *= 2;
                char *p = realloc(w->errors, cap);
                if (!p) {
                        w->oom = true;
                        return;
                }
                w->errors = p;
                w->cap = cap;
        }
        memcpy(w->errors + w->len, line, (size_t)n + 1);
        w->len += (size_t)n;
}

static yaml_node_t *node(struct walk *w, int id) { return w->y->yaml_document_get_node(w->doc, id); }

static const char *scalar(const yaml_node_t *n) {
        return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static const char *kind_name(const yaml_node_t *n) {
        switch (n ? n->type : YAML_NO_NODE) {
        case YAML_SCALAR_NODE: return "a value";
        case YAML_SEQUENCE_NODE: return "a list";
        case YAML_MAPPING_NODE: return "a mapping";
        default: return "nothing";
        }
}

static bool is_null(const yaml_node_t *n) {
        const char *s = scalar(n);
        return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
               (!*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0);
}

static bool want(struct walk *w, const yaml_node_t *n, yaml_node_type_t type, const char *what) {
        if (n && n->type == type && !(type == YAML_SCALAR_NODE && is_null(n)))
                return true;
        problem(w, n, "%s: expected %s, found %s", what,
                type == YAML_MAPPING_NODE ? "a mapping (key: value lines)" : type == YAML_SEQUENCE_NODE ? "a list" : "a value",
                is_null(n) ? "an empty value" : kind_name(n));
        return false;
}

/* Iterate a mapping's pairs, refusing duplicate keys (YAML forbids them; libyaml keeps both). */
typedef void (*pair_fn)(struct walk *w, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx);

static void each_pair(struct walk *w, yaml_node_t *map, const char *what, pair_fn fn, void *ctx) {
        if (!want(w, map, YAML_MAPPING_NODE, what))
                return;
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
                yaml_node_t *k = node(w, p->key), *v = node(w, p->value);
                const char *key = scalar(k);
                if (!key) {
                        problem(w, k, "%s: a key must be a plain word, not %s", what, kind_name(k));
                        continue;
                }
                bool dup = false;
                for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p && !dup; q++) {
                        const char *other = scalar(node(w, q->key));
                        dup = other && strcmp(other, key) == 0;
                }
                if (dup) {
                        problem(w, k, "%s: \"%s\" is given twice", what, key);
                        continue;
                }
                fn(w, key, k, v, ctx);
        }
}

static void unknown_key(struct walk *w, yaml_node_t *k, const char *section, const char *key, const char *known) {
        problem(w, k, "unknown key \"%s\" in %s (known: %s)", key, section, known);
}

/* ---- typed values ------------------------------------------------------------------- */

static bool get_string(struct walk *w, yaml_node_t *v, const char *what, char **ret) {
        if (!want(w, v, YAML_SCALAR_NODE, what))
                return false;
        const char *s = scalar(v);
        if (v->data.scalar.length != strlen(s)) {
                problem(w, v, "%s: contains a NUL character", what);
                return false;
        }
        char *copy = strdup(s);
        if (!copy) {
                w->oom = true;
                return false;
        }
        free(*ret);
        *ret = copy;
        return true;
}

static bool get_uint(struct walk *w, yaml_node_t *v, const char *what, unsigned long long min, unsigned long long max,
                     unsigned long long *ret) {
        if (!want(w, v, YAML_SCALAR_NODE, what))
                return false;
        const char *s = scalar(v);
        uint64_t x;
        bool digits = *s && strspn(s, "0123456789") == strlen(s);
        if (!digits || parse_u64(s, &x) < 0) {
                problem(w, v, "%s: expected a whole number, not \"%s\"", what, s);
                return false;
        }
        if (x < min || x > max) {
                problem(w, v, "%s: %s is out of range (%llu to %llu)", what, s, min, max);
                return false;
        }
        *ret = x;
        return true;
}

static bool get_unsigned(struct walk *w, yaml_node_t *v, const char *what, unsigned min, unsigned max, unsigned *ret) {
        unsigned long long x;
        if (!get_uint(w, v, what, min, max, &x))
                return false;
        *ret = (unsigned)x;
        return true;
}

static bool get_number(struct walk *w, yaml_node_t *v, const char *what, double min, double max, double *ret) {
        if (!want(w, v, YAML_SCALAR_NODE, what))
                return false;
        const char *s = scalar(v);
        char *end;
        errno = 0;
        double x = strtod(s, &end);
        /* strtod also takes "inf", "nan" and hex floats; a policy means plain decimals. */
        bool plain = *s && strspn(s, "0123456789.") == strlen(s);
        if (!plain || errno || *end || !isfinite(x)) {
                problem(w, v, "%s: expected a number, not \"%s\"", what, s);
                return false;
        }
        if (x < min || x > max) {
                problem(w, v, "%s: %s is out of range (%g to %g)", what, s, min, max);
                return false;
        }
        *ret = x;
        return true;
}

/* A NUMA node: -1 (none) or 0..1023. */
static bool get_numa_node(struct walk *w, yaml_node_t *v, const char *what, int *ret) {
        const char *s = scalar(v);
        if (s && strcmp(s, "-1") == 0) {
                *ret = -1;
                return true;
        }
        unsigned x;
        if (!get_unsigned(w, v, what, 0, 1023, &x))
                return false;
        *ret = (int)x;
        return true;
}

/* An RDMA port as the network checks name their subjects: "mlx5_0/1" (device name of
 * letters, digits and '_', at most 63; port 1-255). */
static bool is_rdma_port_subject(const char *s) {
        size_t name = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        if (name == 0 || name > 63 || s[name] != '/')
                return false;
        const char *port = s + name + 1;
        size_t digits = strspn(port, "0123456789");
        if (digits == 0 || digits > 3 || port[digits] != '\0' || port[0] == '0')
                return false;
        return atoi(port) <= 255;
}

static bool get_bus_id(struct walk *w, yaml_node_t *v, const char *what, char **ret) {
        char *s = NULL;
        if (!get_string(w, v, what, &s))
                return false;
        char norm[16];
        if (!policy_normalise_bus_id(s, norm, sizeof(norm))) {
                problem(w, v, "%s: \"%s\" is not a PCI address (like 0000:17:00.0)", what, s);
                free(s);
                return false;
        }
        free(s);
        char *copy = strdup(norm);
        if (!copy) {
                w->oom = true;
                return false;
        }
        free(*ret);
        *ret = copy;
        return true;
}

bool policy_normalise_bus_id(const char *in, char *out, size_t size) {
        /* People write "17:00.0" as often as "0000:17:00.0": the short form is domain 0.
         * NVML's normaliser does the rest (strict hex, ranges, sysfs form). */
        if (!in || strlen(in) > 16)
                return false;
        char full[24];
        const char *colon = strchr(in, ':');
        snprintf(full, sizeof(full), "%s%s", colon && strchr(colon + 1, ':') ? "" : "0000:", in);
        return size <= UINT32_MAX && nvml_bus_id_normalise(full, out, (unsigned)size) == 0;
}

/* ---- sections ----------------------------------------------------------------------- */

static void expect_pair(struct walk *w, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx) {
        struct policy *p = ctx;
        if (strcmp(key, "gpu_count") == 0) {
                get_unsigned(w, v, "expect.gpu_count", 0, 1024, &p->gpu_count);
        } else if (strcmp(key, "gpu_model") == 0) {
                get_string(w, v, "expect.gpu_model", &p->gpu_model);
        } else if (strcmp(key, "driver_branch") == 0) {
                get_unsigned(w, v, "expect.driver_branch", 1, 9999, &p->driver_branch);
        } else if (strcmp(key, "driver_version") == 0) {
                const char *s = scalar(v);
                int cmp;
                if (get_string(w, v, "expect.driver_version", &p->driver_version) &&
                    version_compare(s, s, &cmp) < 0)
                        problem(w, v, "expect.driver_version: \"%s\" is not a driver version (like 570.133.20)", s);
        } else if (strcmp(key, "cuda_version") == 0) {
                const char *s = scalar(v);
                unsigned maj, min;
                int used = 0;
                if (get_string(w, v, "expect.cuda_version", &p->cuda_version) &&
                    !(sscanf(s, "%u.%u%n", &maj, &min, &used) == 2 && (size_t)used == strlen(s)))
                        problem(w, v, "expect.cuda_version: \"%s\" is not a CUDA version (like 12.8)", s);
        } else if (strcmp(key, "mig") == 0) {
                const char *s = scalar(v);
                bool b;
                if (!want(w, v, YAML_SCALAR_NODE, "expect.mig"))
                        return;
                if (strcmp(s, "managed") == 0)
                        p->mig = POLICY_MIG_MANAGED;
                else if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0 || strcmp(s, "on") == 0 ||
                         strcmp(s, "off") == 0 || strcmp(s, "yes") == 0 || strcmp(s, "no") == 0)
                        p->mig = parse_bool(s, &b) == 0 && b ? POLICY_MIG_ENABLED : POLICY_MIG_DISABLED;
                else
                        problem(w, v, "expect.mig: expected true, false or managed, not \"%s\"", s);
        } else {
                unknown_key(w, k, "expect", key, "gpu_count, gpu_model, driver_branch, driver_version, cuda_version, mig");
        }
}

static bool check_or_category_known(const char *name) {
        if (check_find(name))
                return true;
        for (size_t i = 0; i < check_registry_count; i++)
                if (strcmp(check_registry[i]->category, name) == 0)
                        return true;
        return false;
}

static void checks_pair(struct walk *w, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx) {
        struct policy *p = ctx;
        if (!check_or_category_known(key)) {
                problem(w, k, "checks: no check or category named \"%s\" (see `gpuvet check --list --level full`)", key);
                return;
        }
        if (!want(w, v, YAML_SCALAR_NODE, "checks"))
                return;
        const char *s = scalar(v);
        enum policy_severity sev;
        if (strcmp(s, "fail") == 0)
                sev = POLICY_SEVERITY_FAIL;
        else if (strcmp(s, "warn") == 0)
                sev = POLICY_SEVERITY_WARN;
        else if (strcmp(s, "off") == 0 || strcmp(s, "false") == 0)
                sev = POLICY_SEVERITY_OFF;
        else {
                problem(w, v, "checks.%s: expected fail, warn or off, not \"%s\"", key, s);
                return;
        }
        struct policy_override *o = realloc(p->overrides, (p->n_overrides + 1) * sizeof(*o));
        if (!o) {
                w->oom = true;
                return;
        }
        p->overrides = o;
        char *id = strdup(key);
        if (!id) {
                w->oom = true;
                return;
        }
        o[p->n_overrides++] = (struct policy_override){.check = id, .severity = sev, .line = line_of(k)};
}

static void thresholds_pair(struct walk *w, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx) {
        struct policy_thresholds *t = ctx;
        unsigned long long x;
        if (strcmp(key, "temperature_margin_c") == 0)
                get_unsigned(w, v, "thresholds.temperature_margin_c", 0, 50, &t->temp_margin_c);
        else if (strcmp(key, "power_cap_fraction") == 0)
                get_number(w, v, "thresholds.power_cap_fraction", 0.1, 1.0, &t->power_cap_fraction);
        else if (strcmp(key, "pcie_replays_per_minute") == 0)
                get_number(w, v, "thresholds.pcie_replays_per_minute", 0.0, 1e6, &t->pcie_replays_per_minute);
        else if (strcmp(key, "ecc_corrected_warn") == 0) {
                if (get_uint(w, v, "thresholds.ecc_corrected_warn", 1, UINT64_MAX / 2, &x))
                        t->ecc_corrected_warn = x;
        } else if (strcmp(key, "retired_pages_warn") == 0)
                /* DCGM fails at 63; a warning must come before that. */
                get_unsigned(w, v, "thresholds.retired_pages_warn", 1, 62, &t->retired_pages_warn);
        else if (strcmp(key, "burn_throughput_spread") == 0)
                get_number(w, v, "thresholds.burn_throughput_spread", 0.01, 0.9, &t->burn_throughput_spread);
        else if (strcmp(key, "burn_throughput_drop") == 0)
                get_number(w, v, "thresholds.burn_throughput_drop", 0.01, 0.9, &t->burn_throughput_drop);
        else if (strcmp(key, "burn_sm_clock_fraction") == 0)
                get_number(w, v, "thresholds.burn_sm_clock_fraction", 0.1, 1.0, &t->burn_sm_clock_fraction);
        else if (strcmp(key, "burn_power_fraction") == 0)
                get_number(w, v, "thresholds.burn_power_fraction", 0.1, 1.0, &t->burn_power_fraction);
        else if (strcmp(key, "network_min_rate_gbps") == 0)
                get_number(w, v, "thresholds.network_min_rate_gbps", 0.0, 100000.0, &t->network_min_rate_gbps);
        else if (strcmp(key, "host_memory_min_ratio") == 0)
                get_number(w, v, "thresholds.host_memory_min_ratio", 0.1, 8.0, &t->host_memory_min_ratio);
        else
                unknown_key(w, k, "thresholds", key,
                            "temperature_margin_c, power_cap_fraction, pcie_replays_per_minute, ecc_corrected_warn, "
                            "retired_pages_warn, burn_throughput_spread, burn_throughput_drop, "
                            "burn_sm_clock_fraction, burn_power_fraction, network_min_rate_gbps, host_memory_min_ratio");
}

struct exception_ctx {
        struct policy_exception *e;
        yaml_node_t *check_node;
};

static void exception_pair(struct walk *w, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx) {
        struct exception_ctx *x = ctx;
        struct policy_exception *e = x->e;
        if (strcmp(key, "check") == 0) {
                if (get_string(w, v, "exceptions: check", &e->check)) {
                        x->check_node = v;
                        if (!check_find(e->check)) {
                                problem(w, v, "exceptions: no check named \"%s\" (see `gpuvet check --list --level full`)",
                                        e->check);
                                free(e->check);
                                e->check = NULL;
                        }
                }
        } else if (strcmp(key, "subject") == 0) {
                const char *s = scalar(v);
                if (s && (strcmp(s, "host") == 0 || is_rdma_port_subject(s)))
                        get_string(w, v, "exceptions: subject", &e->subject);
                else
                        get_bus_id(w, v, "exceptions: subject", &e->subject);
        } else if (strcmp(key, "reason") == 0) {
                get_string(w, v, "exceptions: reason", &e->reason);
        } else if (strcmp(key, "width") == 0) {
                unsigned lanes;
                if (get_unsigned(w, v, "exceptions: width", 1, 32, &lanes)) {
                        if (lanes & (lanes - 1))
                                problem(w, v, "exceptions: width: x%u is not a PCIe link width (1, 2, 4, 8, 16 or 32)",
                                        lanes);
                        else
                                e->width = lanes;
                }
        } else if (strcmp(key, "gen") == 0) {
                get_unsigned(w, v, "exceptions: gen", 1, 6, &e->gen);
        } else {
                unknown_key(w, k, "an exception", key, "check, subject, reason, width, gen");
        }
}

static void load_exceptions(struct walk *w, yaml_node_t *seq, struct policy *p) {
        if (!want(w, seq, YAML_SEQUENCE_NODE, "exceptions"))
                return;
        size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
        if (n == 0)
                return;
        p->exceptions = calloc(n, sizeof(*p->exceptions));
        if (!p->exceptions) {
                w->oom = true;
                return;
        }
        for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
                yaml_node_t *item = node(w, *it);
                struct policy_exception *e = &p->exceptions[p->n_exceptions++];
                e->line = line_of(item);
                struct exception_ctx x = {.e = e};
                unsigned before = w->n_errors;
                each_pair(w, item, "an exception", exception_pair, &x);
                if (w->n_errors != before)
                        continue;
                if (!e->check || !e->subject || !e->reason || !*e->reason) {
                        problem(w, item, "an exception needs check, subject and reason (missing %s)",
                                !e->check ? "check" : !e->subject ? "subject" : "reason");
                        continue;
                }
                if (e->width && strcmp(e->check, "pcie.link_width") != 0)
                        problem(w, item, "exceptions: width applies to pcie.link_width only, not %s", e->check);
                if (e->gen && strcmp(e->check, "pcie.link_speed") != 0)
                        problem(w, item, "exceptions: gen applies to pcie.link_speed only, not %s", e->check);
                for (size_t j = 0; j + 1 < p->n_exceptions; j++)
                        /* An earlier entry that was refused may lack either. */
                        if (p->exceptions[j].check && p->exceptions[j].subject &&
                            strcmp(p->exceptions[j].check, e->check) == 0 &&
                            strcmp(p->exceptions[j].subject, e->subject) == 0)
                                problem(w, item, "exceptions: %s on %s is already allowed at line %u", e->check,
                                        e->subject, p->exceptions[j].line);
        }
}

/* ---- reference ---------------------------------------------------------------------- */

static void ref_gpu_pair(struct walk *w, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx) {
        struct policy_ref_gpu *g = ctx;
        if (strcmp(key, "bus_id") == 0)
                get_bus_id(w, v, "reference.gpus: bus_id", &g->bus_id);
        else if (strcmp(key, "device_id") == 0) {
                unsigned vendor, device;
                int used = 0;
                const char *s = scalar(v);
                if (get_string(w, v, "reference.gpus: device_id", &g->device_id) &&
                    !(sscanf(s, "%4x:%4x%n", &vendor, &device, &used) == 2 && used == 9 && s[4] == ':'))
                        problem(w, v, "reference.gpus: device_id: \"%s\" is not a PCI vendor:device pair (like 10de:2330)",
                                s);
        } else if (strcmp(key, "model") == 0)
                get_string(w, v, "reference.gpus: model", &g->model);
        else if (strcmp(key, "vbios") == 0)
                get_string(w, v, "reference.gpus: vbios", &g->vbios);
        else if (strcmp(key, "inforom") == 0)
                get_string(w, v, "reference.gpus: inforom", &g->inforom);
        else if (strcmp(key, "numa_node") == 0)
                get_numa_node(w, v, "reference.gpus: numa_node", &g->numa_node);
        else
                unknown_key(w, k, "a reference GPU", key, "bus_id, device_id, model, vbios, inforom, numa_node");
}

static void ref_nic_pair(struct walk *w, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx) {
        struct policy_ref_nic *n = ctx;
        if (strcmp(key, "bus_id") == 0)
                get_bus_id(w, v, "reference.nics: bus_id", &n->bus_id);
        else if (strcmp(key, "name") == 0)
                get_string(w, v, "reference.nics: name", &n->name);
        else if (strcmp(key, "numa_node") == 0)
                get_numa_node(w, v, "reference.nics: numa_node", &n->numa_node);
        else
                unknown_key(w, k, "a reference NIC", key, "bus_id, name, numa_node");
}

static size_t seq_len(const yaml_node_t *seq) {
        return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

/* A list of devices (reference.gpus, reference.nics): its entries allocated, zeroed, for
 * the list's length (bounded by what a node can hold); NULL when it is not a list, is too
 * long (named) or empty. */
static void *device_list(struct walk *w, yaml_node_t *seq, const char *what, size_t elem_size) {
        if (!want(w, seq, YAML_SEQUENCE_NODE, what))
                return NULL;
        size_t n = seq_len(seq);
        if (n > POLICY_MAX_DEVICES) {
                problem(w, seq, "%s: %zu entries is more than any node has (%u)", what, n, POLICY_MAX_DEVICES);
                return NULL;
        }
        void *list = n ? calloc(n, elem_size) : NULL;
        if (n && !list)
                w->oom = true;
        return list;
}

static void load_ref_gpus(struct walk *w, yaml_node_t *seq, struct policy_reference *r) {
        if (!(r->gpus = device_list(w, seq, "reference.gpus", sizeof(*r->gpus))))
                return;
        for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
                yaml_node_t *item = node(w, *it);
                struct policy_ref_gpu *g = &r->gpus[r->n_gpus++];
                g->numa_node = -1;
                g->line = line_of(item);
                unsigned before = w->n_errors;
                each_pair(w, item, "reference.gpus", ref_gpu_pair, g);
                if (w->n_errors == before && (!g->bus_id || !g->device_id || !g->model))
                        problem(w, item, "a reference GPU needs bus_id, device_id and model");
                for (size_t j = 0; g->bus_id && j + 1 < r->n_gpus; j++)
                        if (r->gpus[j].bus_id && strcmp(r->gpus[j].bus_id, g->bus_id) == 0)
                                problem(w, item, "reference.gpus: %s is listed twice (lines %u and %u)", g->bus_id,
                                        r->gpus[j].line, g->line);
        }
}

static void load_ref_nics(struct walk *w, yaml_node_t *seq, struct policy_reference *r) {
        if (!(r->nics = device_list(w, seq, "reference.nics", sizeof(*r->nics))))
                return;
        for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
                yaml_node_t *item = node(w, *it);
                struct policy_ref_nic *nic = &r->nics[r->n_nics++];
                nic->numa_node = -1;
                nic->line = line_of(item);
                unsigned before = w->n_errors;
                each_pair(w, item, "reference.nics", ref_nic_pair, nic);
                if (w->n_errors == before && !nic->bus_id)
                        problem(w, item, "a reference NIC needs bus_id");
                for (size_t j = 0; nic->bus_id && j + 1 < r->n_nics; j++)
                        if (r->nics[j].bus_id && strcmp(r->nics[j].bus_id, nic->bus_id) == 0)
                                problem(w, item, "reference.nics: %s is listed twice (lines %u and %u)", nic->bus_id,
                                        r->nics[j].line, nic->line);
        }
}

/* The matrix cell at (row, col) must equal (col, row): a connection has no direction.
 * size: bytes of a cell. */
static void require_symmetric(struct walk *w, yaml_node_t *seq, const char *what, size_t n, const void *cells,
                              size_t size) {
        const unsigned char *c = cells;
        for (size_t a = 0; a < n; a++)
                for (size_t b = a + 1; b < n; b++)
                        if (memcmp(c + (a * n + b) * size, c + (b * n + a) * size, size) != 0) {
                                problem(w, seq, "%s: row %zu column %zu differs from row %zu column %zu (a link has no "
                                                "direction)",
                                        what, a, b, b, a);
                                return;
                        }
}

/* A square matrix of n rows, each a list of n cells read by cell(). */
static bool load_matrix(struct walk *w, yaml_node_t *seq, const char *what, size_t n,
                        bool (*cell)(struct walk *, yaml_node_t *, const char *, size_t, void *), void *out) {
        if (!want(w, seq, YAML_SEQUENCE_NODE, what))
                return false;
        if (seq_len(seq) != n) {
                problem(w, seq, "%s: %zu rows for %zu devices", what, seq_len(seq), n);
                return false;
        }
        size_t row = 0;
        bool ok = true;
        for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++, row++) {
                yaml_node_t *r = node(w, *it);
                if (!want(w, r, YAML_SEQUENCE_NODE, what)) {
                        ok = false;
                        continue;
                }
                if (seq_len(r) != n) {
                        problem(w, r, "%s: row %zu has %zu cells for %zu devices", what, row, seq_len(r), n);
                        ok = false;
                        continue;
                }
                size_t col = 0;
                for (yaml_node_item_t *c = r->data.sequence.items.start; c < r->data.sequence.items.top; c++, col++)
                        ok &= cell(w, node(w, *c), what, row * n + col, out);
        }
        return ok;
}

static bool pcie_cell(struct walk *w, yaml_node_t *v, const char *what, size_t at, void *out) {
        const char *s = scalar(v);
        for (int k = 0; s && k < TOPO_PCIE_COUNT; k++)
                if (strcmp(s, topo_pcie_name((enum topo_pcie)k)) == 0) {
                        ((unsigned char *)out)[at] = (unsigned char)k;
                        return true;
                }
        problem(w, v, "%s: expected X, PIX, PXB, PHB, NODE or SYS, not \"%s\"", what, s ? s : kind_name(v));
        return false;
}

static bool nvlink_cell(struct walk *w, yaml_node_t *v, const char *what, size_t at, void *out) {
        const char *s = scalar(v);
        if (s && strcmp(s, "X") == 0) {
                ((unsigned *)out)[at] = 0;
                return true;
        }
        return get_unsigned(w, v, what, 0, 1024, &((unsigned *)out)[at]);
}

struct topo_ctx {
        struct policy_reference *r;
        yaml_node_t *pcie, *nvlink;
};

static void topology_pair(struct walk *w, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx) {
        struct topo_ctx *t = ctx;
        struct policy_reference *r = t->r;
        if (strcmp(key, "devices") == 0) {
                if (!want(w, v, YAML_SEQUENCE_NODE, "reference.topology.devices"))
                        return;
                size_t n = seq_len(v);
                if (n > POLICY_MAX_DEVICES) {
                        problem(w, v, "reference.topology.devices: %zu devices is more than any node has", n);
                        return;
                }
                if (n && !(r->topo_devices = calloc(n, sizeof(char *)))) {
                        w->oom = true;
                        return;
                }
                for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++)
                        if (!get_bus_id(w, node(w, *it), "reference.topology.devices", &r->topo_devices[r->n_topo++]))
                                break;
        } else if (strcmp(key, "pcie") == 0) {
                t->pcie = v;
        } else if (strcmp(key, "nvlink") == 0) {
                t->nvlink = v;
        } else {
                unknown_key(w, k, "reference.topology", key, "devices, pcie, nvlink");
        }
}

static void load_topology(struct walk *w, yaml_node_t *map, struct policy_reference *r) {
        struct topo_ctx t = {.r = r};
        unsigned before = w->n_errors;
        r->topology_line = line_of(map);
        each_pair(w, map, "reference.topology", topology_pair, &t);
        if (w->n_errors != before)
                return;
        if (!r->topo_devices || !t.pcie) {
                problem(w, map, "reference.topology needs devices and pcie");
                return;
        }
        if (!(r->pcie = calloc(r->n_topo * r->n_topo, 1))) {
                w->oom = true;
                return;
        }
        if (load_matrix(w, t.pcie, "reference.topology.pcie", r->n_topo, pcie_cell, r->pcie)) {
                require_symmetric(w, t.pcie, "reference.topology.pcie", r->n_topo, r->pcie, 1);
                /* X is a device to itself: on the diagonal and nowhere else. */
                bool bad = false;
                for (size_t i = 0; i < r->n_topo && !bad; i++)
                        for (size_t j = 0; j < r->n_topo && !bad; j++)
                                if ((r->pcie[i * r->n_topo + j] == TOPO_SELF) != (i == j)) {
                                        problem(w, t.pcie, "reference.topology.pcie: row %zu column %zu: X is a device to "
                                                           "itself, on the diagonal only",
                                                i, j);
                                        bad = true;
                                }
        }
        if (t.nvlink) {
                if (!(r->nvlink = calloc(r->n_gpus * r->n_gpus + 1, sizeof(unsigned)))) {
                        w->oom = true;
                        return;
                }
                if (load_matrix(w, t.nvlink, "reference.topology.nvlink (rows and columns in reference.gpus order)",
                                r->n_gpus, nvlink_cell, r->nvlink))
                        require_symmetric(w, t.nvlink, "reference.topology.nvlink", r->n_gpus, r->nvlink, sizeof(unsigned));
        }
}

struct ref_ctx {
        struct policy_reference *r;
        yaml_node_t *topology;
};

static void reference_pair(struct walk *w, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx) {
        struct ref_ctx *x = ctx;
        struct policy_reference *r = x->r;
        if (strcmp(key, "captured") == 0)
                get_string(w, v, "reference.captured", &r->captured);
        else if (strcmp(key, "host") == 0)
                get_string(w, v, "reference.host", &r->host);
        else if (strcmp(key, "driver_version") == 0)
                get_string(w, v, "reference.driver_version", &r->driver_version);
        else if (strcmp(key, "gpus") == 0)
                load_ref_gpus(w, v, r);
        else if (strcmp(key, "nics") == 0)
                load_ref_nics(w, v, r);
        else if (strcmp(key, "topology") == 0)
                x->topology = v; /* after gpus, whatever the order in the file */
        else
                unknown_key(w, k, "reference", key, "captured, host, driver_version, gpus, nics, topology");
}

static void load_reference(struct walk *w, yaml_node_t *map, struct policy_reference *r) {
        struct ref_ctx x = {.r = r};
        r->present = true;
        r->line = line_of(map);
        each_pair(w, map, "reference", reference_pair, &x);
        if (x.topology)
                load_topology(w, x.topology, r);
}

/* ---- the document ------------------------------------------------------------------- */

/* ---- tune ---------------------------------------------------------------------------- */

static void tune_setting_pair(struct walk *w, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx) {
        struct policy *p = ctx;
        const struct tune_setting *s = tune_setting_find(key);
        if (!s) {
                problem(w, k, "tune.settings: no setting named \"%s\" (see `gpuvet tune profiles` and docs/tune.md)",
                        key);
                return;
        }
        char what[96], *value = NULL;
        snprintf(what, sizeof(what), "tune.settings.%s", key);
        if (!get_string(w, v, what, &value))
                return;
        if (s->valid(value) < 0) {
                problem(w, v, "%s: expected %s, not \"%s\"", what, s->values, value);
                free(value);
                return;
        }
        struct policy_tune_setting *t = realloc(p->tune_settings, (p->n_tune_settings + 1) * sizeof(*t));
        char *copy = strdup(key);
        if (t)
                p->tune_settings = t;
        if (!t || !copy) {
                free(value);
                free(copy);
                w->oom = true;
                return;
        }
        t[p->n_tune_settings++] = (struct policy_tune_setting){.key = copy, .value = value, .line = line_of(k)};
}

static void tune_pair(struct walk *w, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx) {
        struct policy *p = ctx;
        if (strcmp(key, "profile") == 0) {
                /* Which profiles exist depends on the data directory tune runs with: tune
                 * names an unknown one then. */
                if (get_string(w, v, "tune.profile", &p->tune_profile))
                        p->tune_profile_line = line_of(k);
        } else if (strcmp(key, "settings") == 0) {
                each_pair(w, v, "tune.settings", tune_setting_pair, p);
        } else {
                unknown_key(w, k, "tune", key, "profile, settings");
        }
}

static void container_pair(struct walk *w, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx) {
        struct policy *p = ctx;
        /* Whether the runtime exists and the image is local is for container.gpu_access to
         * say on the node, not for the policy's reader. */
        if (strcmp(key, "runtime") == 0) {
                if (get_string(w, v, "container.runtime", &p->container_runtime) && !p->container_runtime[0])
                        problem(w, v, "container.runtime: empty (leave it out to use docker or podman from PATH)");
        } else if (strcmp(key, "image") == 0) {
                if (get_string(w, v, "container.image", &p->container_image) && !p->container_image[0])
                        problem(w, v, "container.image: empty (leave it out for the default CUDA base image)");
        } else {
                unknown_key(w, k, "container", key, "runtime, image");
        }
}

struct root_ctx {
        struct policy *p;
        bool have_version;
};

static void root_pair(struct walk *w, const char *key, yaml_node_t *k, yaml_node_t *v, void *ctx) {
        struct root_ctx *x = ctx;
        struct policy *p = x->p;
        if (strcmp(key, "policy") == 0) {
                if (get_unsigned(w, v, "policy (the format version)", 1, 1000, &p->version)) {
                        x->have_version = true;
                        if (p->version != POLICY_FORMAT_VERSION)
                                problem(w, v, "policy: format version %u is not one this gpuvet reads (%u)", p->version,
                                        POLICY_FORMAT_VERSION);
                }
        } else if (strcmp(key, "expect") == 0) {
                p->expect_line = line_of(k);
                each_pair(w, v, "expect", expect_pair, p);
        } else if (strcmp(key, "checks") == 0) {
                each_pair(w, v, "checks", checks_pair, p);
        } else if (strcmp(key, "thresholds") == 0) {
                each_pair(w, v, "thresholds", thresholds_pair, &p->thresholds);
        } else if (strcmp(key, "exceptions") == 0) {
                load_exceptions(w, v, p);
        } else if (strcmp(key, "reference") == 0) {
                load_reference(w, v, &p->reference);
        } else if (strcmp(key, "tune") == 0) {
                each_pair(w, v, "tune", tune_pair, p);
        } else if (strcmp(key, "container") == 0) {
                each_pair(w, v, "container", container_pair, p);
        } else {
                unknown_key(w, k, "the policy", key,
                            "policy, expect, checks, thresholds, exceptions, reference, tune, container");
        }
}

int policy_parse(const char *name, const char *text, size_t len, struct policy *ret, char **errors) {
        memset(ret, 0, sizeof(*ret));
        ret->thresholds = policy_thresholds_default;
        *errors = NULL;
        if (!(ret->path = strdup(name)))
                return -ENOMEM;

        struct walk w = {.name = name};
        char why[512];
        if (!(w.y = yaml_lib_load(why, sizeof(why)))) {
                yaml_node_t at = {0};
                problem(&w, &at, "%s", why);
                goto done;
        }
        unsigned long deep_line = 0;
        int deep = yaml_nesting_check(w.y, text, len, YAML_MAX_NESTING, &deep_line);
        if (deep == -ENOMEM) {
                policy_free(ret);
                return -ENOMEM;
        }
        if (deep == -E2BIG) {
                yaml_node_t at = {.start_mark.line = deep_line - 1};
                problem(&w, &at, "nested deeper than %u levels: a policy nests a few (not loaded)", YAML_MAX_NESTING);
                goto done;
        }
        yaml_parser_t parser;
        yaml_document_t doc;
        if (!w.y->yaml_parser_initialize(&parser)) {
                policy_free(ret);
                return -ENOMEM;
        }
        w.y->yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
        if (!w.y->yaml_parser_load(&parser, &doc)) {
                /* libyaml gives a zero-based line; "truncated" files end up here too. */
                yaml_node_t at = {.start_mark = parser.problem_mark};
                if (parser.error == YAML_MEMORY_ERROR)
                        w.oom = true;
                else
                        problem(&w, &at, "not valid YAML: %s%s%s", parser.problem ? parser.problem : "syntax error",
                                parser.context ? " " : "", parser.context ? parser.context : "");
                w.y->yaml_parser_delete(&parser);
                goto done;
        }
        w.doc = &doc;
        yaml_node_t *root = w.y->yaml_document_get_root_node(&doc);
        if (!root) {
                yaml_node_t at = {0};
                problem(&w, &at, "the file is empty: a policy starts with \"policy: %u\"", POLICY_FORMAT_VERSION);
        } else {
                struct root_ctx x = {.p = ret};
                each_pair(&w, root, "the policy", root_pair, &x);
                if (!x.have_version && root->type == YAML_MAPPING_NODE)
                        problem(&w, root, "the policy has no \"policy: %u\" line (the format version)",
                                POLICY_FORMAT_VERSION);
                if (ret->driver_branch && ret->driver_version) {
                        unsigned branch = (unsigned)strtoul(ret->driver_version, NULL, 10);
                        if (branch != ret->driver_branch)
                                problem(&w, root, "expect: driver_version %s is not of driver_branch %u",
                                        ret->driver_version, ret->driver_branch);
                }
        }
        /* yaml_parser_load consumed the first document; a second one would be silently
         * ignored, which is a mistake worth naming. */
        yaml_document_t next;
        if (root && w.y->yaml_parser_load(&parser, &next)) {
                yaml_node_t *second = w.y->yaml_document_get_root_node(&next);
                if (second)
                        problem(&w, second, "a second YAML document (after \"---\"): a policy is one document");
                w.y->yaml_document_delete(&next);
        }
        w.y->yaml_document_delete(&doc);
        w.y->yaml_parser_delete(&parser);
done:
        if (w.n_errors > POLICY_MAX_ERRORS) {
                yaml_node_t at = {0};
                unsigned more = w.n_errors - POLICY_MAX_ERRORS;
                w.n_errors = 0;
                problem(&w, &at, "and %u more problem%s", more, more == 1 ? "" : "s");
        }
        if (w.oom) {
                free(w.errors);
                policy_free(ret);
                return -ENOMEM;
        }
        if (w.errors) {
                *errors = w.errors;
                policy_free(ret);
                return -EINVAL;
        }
        return 0;
}

int policy_load(const char *path, struct policy *ret, char **errors) {
        memset(ret, 0, sizeof(*ret));
        *errors = NULL;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                int err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
                close(fd);
                return err;
        }
        if ((unsigned long long)st.st_size > POLICY_MAX_BYTES) {
                close(fd);
                return -EFBIG;
        }
        char *text = malloc((size_t)st.st_size + 1);
        if (!text) {
                close(fd);
                return -ENOMEM;
        }
        size_t len = 0;
        for (;;) {
                ssize_t n = read(fd, text + len, (size_t)st.st_size + 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int err = -errno;
                        free(text);
                        close(fd);
                        return err;
                }
                if (n == 0 || (len += (size_t)n) > (size_t)st.st_size)
                        break;
        }
        close(fd);
        if (len > (size_t)st.st_size) {
                free(text);
                return -EFBIG; /* grew while read */
        }
        int r = policy_parse(path, text, len, ret, errors);
        free(text);
        return r;
}

void policy_free(struct policy *p) {
        if (!p)
                return;
        free(p->path);
        free(p->gpu_model);
        free(p->driver_version);
        free(p->cuda_version);
        for (size_t i = 0; i < p->n_overrides; i++)
                free(p->overrides[i].check);
        free(p->overrides);
        for (size_t i = 0; i < p->n_exceptions; i++) {
                free(p->exceptions[i].check);
                free(p->exceptions[i].subject);
                free(p->exceptions[i].reason);
        }
        free(p->exceptions);
        struct policy_reference *r = &p->reference;
        free(r->captured);
        free(r->host);
        free(r->driver_version);
        for (size_t i = 0; i < r->n_gpus; i++) {
                free(r->gpus[i].bus_id);
                free(r->gpus[i].device_id);
                free(r->gpus[i].model);
                free(r->gpus[i].vbios);
                free(r->gpus[i].inforom);
        }
        free(r->gpus);
        for (size_t i = 0; i < r->n_nics; i++) {
                free(r->nics[i].bus_id);
                free(r->nics[i].name);
        }
        free(r->nics);
        for (size_t i = 0; i < r->n_topo; i++)
                free(r->topo_devices[i]);
        free(r->topo_devices);
        free(r->pcie);
        free(r->nvlink);
        free(p->tune_profile);
        for (size_t i = 0; i < p->n_tune_settings; i++) {
                free(p->tune_settings[i].key);
                free(p->tune_settings[i].value);
        }
        free(p->tune_settings);
        free(p->container_runtime);
        free(p->container_image);
        memset(p, 0, sizeof(*p));
}
