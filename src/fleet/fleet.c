/* Aggregating the documents of a fleet: nodes and their verdicts, the checks that failed
 * where, each benchmark figure's distribution per GPU model with its outliers, and
 * configuration drift. */
#include "fleet/fleet.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "data/fleet_rules.h"
#include "fleet/fleet_doc.h"
#include "fleet/fleet_intern.h"
#include "fleet/fleet_judge.h"
#include "fleet/fleet_stats.h"

#define NO_GPU_MODEL "(no GPU)"

const char *fleet_name_source_name(enum fleet_name_source s) {
        return s == FLEET_NAME_HOSTNAME ? "hostname" : s == FLEET_NAME_DIRECTORY ? "directory" : "file";
}

const char *fleet_rule_kind_name(enum fleet_rule_kind k) {
        return k == FLEET_RULE_VALUE_MIN ? "min" : k == FLEET_RULE_VALUE_MAX ? "max" : "variance";
}

const char *fleet_direction_name(enum fleet_direction d) {
        return d == FLEET_HIGHER_BETTER ? "higher" : d == FLEET_LOWER_BETTER ? "lower" : "none";
}

/* ---- nodes ---- */

static int cmp_doc_ptr(const void *a, const void *b) {
        const struct fleet_doc *x = *(const struct fleet_doc *const *)a, *y = *(const struct fleet_doc *const *)b;
        int c = strcmp(x->node, y->node);
        return c ? c : strcmp(x->path, y->path);
}

static int build_nodes(struct fleet *f) {
        const struct fleet_doc **order = malloc((f->n_docs ? f->n_docs : 1) * sizeof(*order));
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < f->n_docs; i++)
                order[i] = &f->docs[i];
        qsort(order, f->n_docs, sizeof(*order), cmp_doc_ptr);
        size_t n_nodes = 0;
        for (size_t i = 0; i < f->n_docs; i++)
                n_nodes += i == 0 || strcmp(order[i]->node, order[i - 1]->node) != 0;
        f->nodes = calloc(n_nodes ? n_nodes : 1, sizeof(*f->nodes));
        if (!f->nodes) {
                free(order);
                return -ENOMEM;
        }
        f->verdict = STATUS_SKIP;
        for (size_t i = 0; i < f->n_docs;) {
                size_t k = i;
                while (k < f->n_docs && strcmp(order[k]->node, order[i]->node) == 0)
                        k++;
                struct fleet_node *n = &f->nodes[f->n_nodes++];
                /* The node's slice of order, which this node owns from here on. */
                n->docs = malloc((k - i) * sizeof(*n->docs));
                n->name = strdup(order[i]->node);
                if (!n->docs || !n->name) {
                        free(order);
                        return -ENOMEM;
                }
                memcpy(n->docs, &order[i], (k - i) * sizeof(*n->docs));
                n->n_docs = k - i;
                n->name_source = order[i]->name_source;
                n->verdict = order[i]->verdict;
                n->verdict_doc = order[i]->path;
                for (size_t j = i; j < k; j++) {
                        const struct fleet_doc *d = order[j];
                        if (status_worse(n->verdict, d->verdict) != n->verdict) {
                                n->verdict = d->verdict;
                                n->verdict_doc = d->path;
                        }
                        if (!n->hostname && d->hostname && strcmp(d->hostname, n->name) != 0)
                                n->hostname = d->hostname;
                        if (!n->driver_version)
                                n->driver_version = d->driver_version;
                        if (!n->kernel_release)
                                n->kernel_release = d->kernel_release;
                        if (!n->cuda_version)
                                n->cuda_version = d->cuda_version;
                }
                f->node_counts[n->verdict]++;
                f->verdict = status_worse(f->verdict, n->verdict);
                i = k;
        }
        free(order);
        return 0;
}

/* ---- checks ---- */

struct check_mark {
        const char *id;
        size_t node;
        enum status status;
};

static int cmp_mark(const void *a, const void *b) {
        const struct check_mark *x = a, *y = b;
        int c = strcmp(x->id, y->id);
        if (c)
                return c;
        if (x->node != y->node)
                return x->node < y->node ? -1 : 1;
        return (int)x->status - (int)y->status;
}

static int cmp_check_count(const void *a, const void *b) {
        const struct fleet_check_count *x = a, *y = b;
        if (x->nodes_total != y->nodes_total)
                return x->nodes_total > y->nodes_total ? -1 : 1;
        return strcmp(x->id, y->id);
}

static int build_checks(struct fleet *f) {
        size_t n_marks = 0;
        for (size_t i = 0; i < f->n_docs; i++)
                n_marks += f->docs[i].n_checks;
        struct check_mark *marks = malloc((n_marks ? n_marks : 1) * sizeof(*marks));
        if (!marks)
                return -ENOMEM;
        size_t m = 0;
        for (size_t n = 0; n < f->n_nodes; n++)
                for (size_t d = 0; d < f->nodes[n].n_docs; d++) {
                        const struct fleet_doc *doc = f->nodes[n].docs[d];
                        for (size_t c = 0; c < doc->n_checks; c++)
                                marks[m++] = (struct check_mark){doc->checks[c].id, n, doc->checks[c].status};
                }
        qsort(marks, m, sizeof(*marks), cmp_mark);
        size_t n_ids = 0;
        for (size_t i = 0; i < m; i++)
                n_ids += i == 0 || strcmp(marks[i].id, marks[i - 1].id) != 0;
        f->checks = calloc(n_ids ? n_ids : 1, sizeof(*f->checks));
        if (!f->checks) {
                free(marks);
                return -ENOMEM;
        }
        for (size_t i = 0; i < m;) {
                struct fleet_check_count *cc = &f->checks[f->n_checks++];
                cc->id = marks[i].id;
                size_t k = i;
                for (; k < m && strcmp(marks[k].id, cc->id) == 0; k++) {
                        bool same_node = k > i && marks[k - 1].node == marks[k].node;
                        if (!(same_node && marks[k - 1].status == marks[k].status))
                                cc->nodes[marks[k].status]++;
                        if (!same_node) {
                                cc->nodes_total++;
                                if (cc->n_sample < FLEET_SAMPLE_NODES)
                                        cc->sample[cc->n_sample++] = f->nodes[marks[k].node].name;
                        }
                }
                i = k;
        }
        free(marks);
        qsort(f->checks, f->n_checks, sizeof(*f->checks), cmp_check_count);
        return 0;
}

/* ---- benchmark figures ---- */

struct sample {
        long metric, unit, model; /* interned */
        size_t node;
        const struct fleet_doc *doc;
        const struct fleet_metric *m;
        const char *model_name;
};

static int cmp_sample(const void *a, const void *b) {
        const struct sample *x = a, *y = b;
        if (x->metric != y->metric)
                return x->metric < y->metric ? -1 : 1;
        if (x->unit != y->unit)
                return x->unit < y->unit ? -1 : 1;
        if (x->model != y->model)
                return x->model < y->model ? -1 : 1;
        if (x->node != y->node)
                return x->node < y->node ? -1 : 1;
        int c = strcmp(x->m->subject, y->m->subject);
        return c ? c : strcmp(x->doc->path, y->doc->path);
}

/* The GPU model a figure is about: its subject's GPU (bench names it "gpu0 (0000:1b:00.0)"),
 * else the node's first GPU's (host figures, GPU pairs). */
static const char *figure_model(const struct fleet_doc *doc, const struct fleet_metric *m) {
        for (size_t g = 0; g < doc->n_gpus; g++)
                if (doc->gpus[g].pci_bus_id && doc->gpus[g].pci_bus_id[0] && strstr(m->subject, doc->gpus[g].pci_bus_id))
                        return doc->gpus[g].model;
        return doc->n_gpus ? doc->gpus[0].model : NO_GPU_MODEL;
}

static enum fleet_direction direction_of(const struct fleet_rules *rules, const struct fleet_rule *rule,
                                         const struct sample *s) {
        if (rule->has_direction)
                return rule->direction;
        if (s->m->higher_is_better >= 0)
                return s->m->higher_is_better ? FLEET_HIGHER_BETTER : FLEET_LOWER_BETTER;
        enum fleet_direction d = fleet_rules_unit_direction(rules, s->m->unit);
        if (d == FLEET_DIRECTION_NONE && rules->defaults.has_direction)
                d = rules->defaults.direction;
        return d;
}

/* A copy of pattern that lives as long as f (the rules table may be freed first). */
static const char *keep_pattern(struct fleet *f, const char *pattern) {
        for (size_t i = 0; i < f->n_patterns; i++)
                if (strcmp(f->patterns[i], pattern) == 0)
                        return f->patterns[i];
        char **p = realloc(f->patterns, (f->n_patterns + 1) * sizeof(*p));
        if (!p)
                return NULL;
        f->patterns = p;
        if (!(p[f->n_patterns] = strdup(pattern)))
                return NULL;
        return p[f->n_patterns++];
}

/* One group of samples (one metric, unit and model): its distribution and outliers. */
static int judge_group(struct fleet *f, const struct fleet_rules *rules, const struct sample *s, size_t n,
                       double *values, size_t *cap_outliers) {
        for (size_t i = 0; i < n; i++)
                values[i] = s[i].m->value;
        struct fleet_distribution *dist = &f->dists[f->n_dists];
        dist->metric = s[0].m->name;
        dist->unit = s[0].m->unit;
        dist->model = s[0].model_name;
        if (fleet_stats_compute(values, n, &dist->stats) < 0)
                return -ENOMEM;
        if (f->keep_values) {
                dist->values = malloc(n * sizeof(*dist->values));
                dist->value_nodes = malloc(n * sizeof(*dist->value_nodes));
                dist->value_subjects = malloc(n * sizeof(*dist->value_subjects));
                if (!dist->values || !dist->value_nodes || !dist->value_subjects) {
                        free(dist->values);
                        free(dist->value_nodes);
                        free(dist->value_subjects);
                        dist->values = NULL;
                        dist->value_nodes = NULL;
                        dist->value_subjects = NULL;
                        return -ENOMEM;
                }
                /* from the samples: fleet_stats_compute sorted values[] */
                for (size_t i = 0; i < n; i++) {
                        dist->values[i] = s[i].m->value;
                        dist->value_nodes[i] = f->nodes[s[i].node].name;
                        dist->value_subjects[i] = s[i].m->subject;
                }
        }
        struct fleet_rule rule;
        const char *pattern;
        fleet_rules_resolve(rules, dist->metric, dist->model, &rule, &pattern);
        dist->direction = direction_of(rules, &rule, &s[0]);
        f->n_dists++;
        const char *kept = NULL;
        for (size_t i = 0; i < n; i++) {
                struct fleet_outlier o = {0};
                if (!fleet_judge_figure(&rule, dist->direction, &dist->stats, s[i].m->value, &o))
                        continue;
                if (array_grow((void **)&f->outliers, f->n_outliers, cap_outliers, sizeof(*f->outliers), 16) < 0)
                        return -ENOMEM;
                o.node = f->nodes[s[i].node].name;
                o.doc = s[i].doc->path;
                o.metric = dist->metric;
                o.unit = dist->unit;
                o.model = dist->model;
                o.subject = s[i].m->subject;
                if (!kept && !(kept = keep_pattern(f, pattern)))
                        return -ENOMEM;
                o.rule_pattern = kept;
                f->outliers[f->n_outliers++] = o;
        }
        return 0;
}

static int cmp_dist(const void *a, const void *b) {
        const struct fleet_distribution *x = a, *y = b;
        int c = strcmp(x->metric, y->metric);
        if (!c)
                c = strcmp(x->model, y->model);
        return c ? c : strcmp(x->unit, y->unit);
}

static int cmp_outlier(const void *a, const void *b) {
        const struct fleet_outlier *x = a, *y = b;
        int c = strcmp(x->metric, y->metric);
        if (!c)
                c = strcmp(x->model, y->model);
        if (!c)
                c = strcmp(x->node, y->node);
        return c ? c : strcmp(x->subject, y->subject);
}

static int collect_samples(struct fleet *f, struct sample **ret, size_t *ret_n) {
        size_t n = 0;
        for (size_t i = 0; i < f->n_docs; i++)
                n += f->docs[i].n_metrics;
        struct sample *s = malloc((n ? n : 1) * sizeof(*s));
        struct fleet_intern names = {0}, units = {0}, models = {0};
        if (!s)
                return -ENOMEM;
        size_t k = 0;
        int r = 0;
        for (size_t node = 0; node < f->n_nodes && r == 0; node++)
                for (size_t d = 0; d < f->nodes[node].n_docs && r == 0; d++) {
                        const struct fleet_doc *doc = f->nodes[node].docs[d];
                        for (size_t i = 0; i < doc->n_metrics; i++) {
                                const struct fleet_metric *m = &doc->metrics[i];
                                const char *model = figure_model(doc, m);
                                struct sample *x = &s[k];
                                *x = (struct sample){fleet_intern_id(&names, m->name), fleet_intern_id(&units, m->unit),
                                                     fleet_intern_id(&models, model), node, doc, m, model};
                                if (x->metric < 0 || x->unit < 0 || x->model < 0) {
                                        r = -ENOMEM;
                                        break;
                                }
                                k++;
                        }
                }
        fleet_intern_free(&names);
        fleet_intern_free(&units);
        fleet_intern_free(&models);
        if (r < 0) {
                free(s);
                return r;
        }
        qsort(s, k, sizeof(*s), cmp_sample);
        *ret = s;
        *ret_n = k;
        return 0;
}

static int build_figures(struct fleet *f, const struct fleet_rules *rules) {
        struct sample *s;
        size_t n;
        int r = collect_samples(f, &s, &n);
        if (r < 0)
                return r;
        size_t n_groups = 0;
        for (size_t i = 0; i < n; i++)
                n_groups += i == 0 || s[i].metric != s[i - 1].metric || s[i].unit != s[i - 1].unit ||
                            s[i].model != s[i - 1].model;
        f->dists = calloc(n_groups ? n_groups : 1, sizeof(*f->dists));
        double *values = malloc((n ? n : 1) * sizeof(*values));
        size_t cap_outliers = 0;
        r = f->dists && values ? 0 : -ENOMEM;
        for (size_t i = 0; i < n && r == 0;) {
                size_t k = i;
                while (k < n && s[k].metric == s[i].metric && s[k].unit == s[i].unit && s[k].model == s[i].model)
                        k++;
                r = judge_group(f, rules, &s[i], k - i, values, &cap_outliers);
                i = k;
        }
        free(values);
        free(s);
        if (r == 0) {
                qsort(f->dists, f->n_dists, sizeof(*f->dists), cmp_dist);
                if (f->n_outliers) /* grown on the first outlier: NULL without one */
                        qsort(f->outliers, f->n_outliers, sizeof(*f->outliers), cmp_outlier);
                r = fleet_group_outliers(f->outliers, f->n_outliers, &f->outlier_groups, &f->n_outlier_groups,
                                         &f->outlier_group_members);
        }
        return r;
}

/* ---- drift ---- */

static int add_drift(struct fleet *f, size_t *cap, const char *attribute, const char *model,
                     const struct fleet_drift_node *values) {
        if (array_grow((void **)&f->drifts, f->n_drifts, cap, sizeof(*f->drifts), 16) < 0)
                return -ENOMEM;
        struct fleet_drift *d = &f->drifts[f->n_drifts];
        if (fleet_drift_compute(attribute, model, values, f->n_nodes, d) < 0)
                return -ENOMEM;
        if (d->n_reporting)
                f->n_drifts++;
        else
                fleet_drift_clear(d);
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The node's VBIOS for model: its GPUs' distinct versions, sorted, joined by ",";
 * NULL when none of them reports one. */
static char *node_vbios(const struct fleet_node *node, const char *model, int *err) {
        const char *seen[64];
        size_t n = 0;
        for (size_t d = 0; d < node->n_docs; d++)
                for (size_t g = 0; g < node->docs[d]->n_gpus; g++) {
                        const struct fleet_gpu *gpu = &node->docs[d]->gpus[g];
                        if (!gpu->vbios || strcmp(gpu->model, model) != 0)
                                continue;
                        bool dup = false;
                        for (size_t k = 0; k < n && !dup; k++)
                                dup = strcmp(seen[k], gpu->vbios) == 0;
                        if (!dup && n < 64)
                                seen[n++] = gpu->vbios;
                }
        if (n == 0)
                return NULL;
        qsort(seen, n, sizeof(*seen), cmp_str);
        size_t len = 1;
        for (size_t k = 0; k < n; k++)
                len += strlen(seen[k]) + 1;
        char *v = malloc(len);
        if (!v) {
                *err = -ENOMEM;
                return NULL;
        }
        v[0] = '\0';
        for (size_t k = 0; k < n; k++) {
                if (k)
                        strcat(v, ",");
                strcat(v, seen[k]);
        }
        return v;
}

static int vbios_drift(struct fleet *f, size_t *cap, struct fleet_drift_node *values) {
        struct fleet_intern models = {0};
        int r = 0;
        for (size_t i = 0; i < f->n_docs && r == 0; i++)
                for (size_t g = 0; g < f->docs[i].n_gpus && r == 0; g++)
                        if (f->docs[i].gpus[g].vbios && fleet_intern_id(&models, f->docs[i].gpus[g].model) < 0)
                                r = -ENOMEM;
        if (models.n)
                qsort(models.keys, models.n, sizeof(*models.keys), cmp_str);
        for (size_t m = 0; m < models.n && r == 0; m++) {
                for (size_t n = 0; n < f->n_nodes; n++)
                        values[n] = (struct fleet_drift_node){f->nodes[n].name,
                                                              node_vbios(&f->nodes[n], models.keys[m], &r)};
                if (r == 0)
                        r = add_drift(f, cap, "vbios", models.keys[m], values);
                for (size_t n = 0; n < f->n_nodes; n++)
                        free(values[n].value);
        }
        fleet_intern_free(&models);
        return r;
}

static int build_drift(struct fleet *f) {
        struct fleet_drift_node *values = calloc(f->n_nodes ? f->n_nodes : 1, sizeof(*values));
        if (!values)
                return -ENOMEM;
        size_t cap = 0;
        int r = 0;
        static const char *const attrs[] = {"driver_version", "cuda_version", "kernel_release"};
        for (size_t a = 0; a < 3 && r == 0; a++) {
                for (size_t n = 0; n < f->n_nodes; n++) {
                        const struct fleet_node *node = &f->nodes[n];
                        const char *v = a == 0 ? node->driver_version : a == 1 ? node->cuda_version
                                                                                : node->kernel_release;
                        /* fleet_drift_compute copies; nothing here is freed. */
                        values[n] = (struct fleet_drift_node){node->name, (char *)v};
                }
                r = add_drift(f, &cap, attrs[a], NULL, values);
        }
        if (r == 0)
                r = vbios_drift(f, &cap, values);
        free(values);
        return r;
}

int fleet_aggregate(struct fleet *f, const struct fleet_rules *rules) {
        int r = build_nodes(f);
        if (r == 0)
                r = build_checks(f);
        if (r == 0)
                r = build_figures(f, rules);
        if (r == 0)
                r = build_drift(f);
        if (r == 0) {
                f->overall = f->verdict;
                for (size_t i = 0; i < f->n_outliers; i++)
                        f->overall = status_worse(f->overall, f->outliers[i].status);
                for (size_t i = 0; i < f->n_drifts; i++)
                        f->n_drifting += f->drifts[i].n_odd > 0;
                if (f->n_drifting)
                        f->overall = status_worse(f->overall, STATUS_WARN);
                free(f->rules_source);
                f->rules_source = strdup(rules->source);
                if (!f->rules_source)
                        r = -ENOMEM;
        }
        return r;
}

void fleet_free(struct fleet *f) {
        for (size_t i = 0; i < f->n_docs; i++)
                fleet_doc_clear(&f->docs[i]);
        free(f->docs);
        for (size_t i = 0; i < f->n_skipped; i++) {
                free(f->skipped[i].path);
                free(f->skipped[i].reason);
        }
        free(f->skipped);
        for (size_t i = 0; i < f->n_nodes; i++) {
                free(f->nodes[i].name);
                free(f->nodes[i].docs);
        }
        free(f->nodes);
        free(f->checks);
        for (size_t i = 0; i < f->n_dists; i++) {
                free(f->dists[i].values);
                free(f->dists[i].value_nodes);
                free(f->dists[i].value_subjects);
        }
        free(f->dists);
        free(f->outliers);
        free(f->outlier_groups);
        free(f->outlier_group_members);
        for (size_t i = 0; i < f->n_drifts; i++)
                fleet_drift_clear(&f->drifts[i]);
        free(f->drifts);
        free(f->rules_source);
        for (size_t i = 0; i < f->n_patterns; i++)
                free(f->patterns[i]);
        free(f->patterns);
        memset(f, 0, sizeof(*f));
}
