#include "report/fleet_json.h"

#include <jansson.h>
#include <math.h>

#include "report/envelope.h"
#include "core/json_text.h"

/* Figures as computed; a non-finite one (none is expected) as null rather than invalid JSON. */
static json_t *num(double v) {
        return isfinite(v) ? json_real(v) : json_null();
}

static json_t *nodes_json(const struct fleet *f) {
        json_t *list = json_array();
        for (size_t i = 0; i < f->n_nodes; i++) {
                const struct fleet_node *n = &f->nodes[i];
                json_t *docs = json_array();
                for (size_t d = 0; d < n->n_docs; d++)
                        json_array_append_new(docs, json_pack("{s:o, s:s, s:o, s:s}", "path", json_text(n->docs[d]->path),
                                                              "schema", fleet_doc_kind_schema(n->docs[d]->kind),
                                                              "command", json_text(n->docs[d]->command), "verdict",
                                                              status_name(n->docs[d]->verdict)));
                json_array_append_new(list,
                                      json_pack("{s:o, s:s, s:s, s:o, s:o, s:o, s:o, s:o}", "name", json_text(n->name),
                                                "name_from", fleet_name_source_name(n->name_source), "verdict",
                                                status_name(n->verdict), "verdict_document",
                                                json_text(n->verdict_doc), "driver_version",
                                                json_text(n->driver_version), "cuda_version",
                                                json_text(n->cuda_version), "kernel_release",
                                                json_text(n->kernel_release), "documents", docs));
                json_t *node = json_array_get(list, json_array_size(list) - 1);
                json_object_set_new(node, "hostname", json_text(n->hostname));
        }
        return list;
}

static json_t *checks_json(const struct fleet *f) {
        json_t *list = json_array();
        for (size_t i = 0; i < f->n_checks; i++) {
                const struct fleet_check_count *c = &f->checks[i];
                json_t *sample = json_array();
                for (size_t k = 0; k < c->n_sample; k++)
                        json_array_append_new(sample, json_text(c->sample[k]));
                json_array_append_new(list, json_pack("{s:o, s:I, s:I, s:I, s:I, s:o}", "id", json_text(c->id), "nodes",
                                                      (json_int_t)c->nodes_total, "fail",
                                                      (json_int_t)c->nodes[STATUS_FAIL], "warn",
                                                      (json_int_t)c->nodes[STATUS_WARN], "error",
                                                      (json_int_t)c->nodes[STATUS_ERROR], "sample_nodes", sample));
        }
        return list;
}

static json_t *metrics_json(const struct fleet *f) {
        json_t *list = json_array();
        for (size_t i = 0; i < f->n_dists; i++) {
                const struct fleet_distribution *d = &f->dists[i];
                const struct fleet_stats *s = &d->stats;
                json_t *o = json_pack("{s:o, s:o, s:o, s:s, s:I}", "metric", json_text(d->metric), "unit",
                                      json_text(d->unit), "model", json_text(d->model), "direction",
                                      fleet_direction_name(d->direction), "n", (json_int_t)s->n);
                json_object_set_new(o, "min", num(s->min));
                json_object_set_new(o, "p10", num(s->p10));
                json_object_set_new(o, "median", num(s->median));
                json_object_set_new(o, "p90", num(s->p90));
                json_object_set_new(o, "max", num(s->max));
                json_object_set_new(o, "mean", num(s->mean));
                json_object_set_new(o, "stddev", num(s->stddev));
                json_object_set_new(o, "mad", num(s->mad));
                json_array_append_new(list, o);
        }
        return list;
}

static json_t *outliers_json(const struct fleet *f) {
        json_t *list = json_array();
        for (size_t i = 0; i < f->n_outliers; i++) {
                const struct fleet_outlier *o = &f->outliers[i];
                json_t *j = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "node", json_text(o->node), "document",
                                      json_text(o->doc), "metric", json_text(o->metric), "unit", json_text(o->unit),
                                      "model", json_text(o->model), "subject", json_text(o->subject));
                json_object_set_new(j, "value", num(o->value));
                json_object_set_new(j, "median", num(o->median));
                json_object_set_new(j, "deviation_pct", num(o->deviation_pct));
                json_object_set_new(j, "mads", num(o->mads));
                json_object_set_new(j, "rule", json_string(fleet_rule_kind_name(o->rule)));
                json_object_set_new(j, "rule_metric", json_text(o->rule_pattern));
                json_object_set_new(j, "status", json_string(status_name(o->status)));
                json_array_append_new(list, j);
        }
        return list;
}

/* A node's outliers on one side of the median as one finding; its figures are indices in
 * outliers[], which stays the list automation reads. */
static json_t *outlier_groups_json(const struct fleet *f) {
        json_t *list = json_array();
        for (size_t i = 0; i < f->n_outlier_groups; i++) {
                const struct fleet_outlier_group *g = &f->outlier_groups[i];
                json_t *members = json_array();
                for (size_t k = 0; k < g->n; k++)
                        json_array_append_new(members, json_integer((json_int_t)g->members[k]));
                json_t *j = json_pack("{s:o, s:s, s:s, s:I, s:I, s:I}", "node", json_text(g->node), "side",
                                      g->below ? "below" : "above", "status", status_name(g->status), "figures",
                                      (json_int_t)g->n, "fail", (json_int_t)g->n_fail, "warn",
                                      (json_int_t)(g->n - g->n_fail));
                json_object_set_new(j, "least_pct", num(g->least_pct));
                json_object_set_new(j, "most_pct", num(g->most_pct));
                json_object_set_new(j, "worst", json_integer((json_int_t)g->worst));
                json_object_set_new(j, "outliers", members);
                json_array_append_new(list, j);
        }
        return list;
}

static json_t *drift_json(const struct fleet *f) {
        json_t *list = json_array();
        for (size_t i = 0; i < f->n_drifts; i++) {
                const struct fleet_drift *d = &f->drifts[i];
                json_t *odd = json_array();
                for (size_t k = 0; k < d->n_odd; k++)
                        json_array_append_new(odd, json_pack("{s:o, s:o}", "node", json_text(d->odd[k].node), "value",
                                                             json_text(d->odd[k].value)));
                json_array_append_new(list, json_pack("{s:s, s:o, s:o, s:I, s:I, s:o}", "attribute", d->attribute,
                                                      "model", json_text(d->model), "majority",
                                                      json_text(d->majority), "majority_nodes",
                                                      (json_int_t)d->n_majority, "reporting_nodes",
                                                      (json_int_t)d->n_reporting, "odd", odd));
        }
        return list;
}

char *fleet_json(const struct fleet *f) {
        json_t *root = envelope_new(FLEET_SCHEMA, "fleet");
        if (!root)
                return NULL;
        json_object_set_new(root, "rules", json_text(f->rules_source));
        json_t *skipped = json_array();
        for (size_t i = 0; i < f->n_skipped; i++)
                json_array_append_new(skipped, json_pack("{s:o, s:o}", "path", json_text(f->skipped[i].path), "reason",
                                                         json_text(f->skipped[i].reason)));
        json_object_set_new(root, "inputs",
                            json_pack("{s:I, s:o}", "documents", (json_int_t)f->n_docs, "skipped", skipped));
        json_object_set_new(root, "nodes", nodes_json(f));
        json_object_set_new(root, "checks", checks_json(f));
        json_object_set_new(root, "metrics", metrics_json(f));
        json_object_set_new(root, "outliers", outliers_json(f));
        json_object_set_new(root, "outlier_groups", outlier_groups_json(f));
        json_object_set_new(root, "drift", drift_json(f));
        unsigned counts[_STATUS_COUNT];
        for (int s = 0; s < _STATUS_COUNT; s++)
                counts[s] = (unsigned)f->node_counts[s];
        json_t *summary = envelope_summary(counts, f->overall, f->duration_ms);
        json_object_set_new(summary, "nodes", json_integer((json_int_t)f->n_nodes));
        json_object_set_new(summary, "node_verdict", json_string(status_name(f->verdict)));
        json_object_set_new(summary, "outliers", json_integer((json_int_t)f->n_outliers));
        json_object_set_new(summary, "outlier_groups", json_integer((json_int_t)f->n_outlier_groups));
        json_object_set_new(summary, "drifting", json_integer((json_int_t)f->n_drifting));
        json_object_set_new(summary, "skipped_inputs", json_integer((json_int_t)f->n_skipped));
        json_object_set_new(root, "summary", summary);
        char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        json_decref(root);
        return s;
}
