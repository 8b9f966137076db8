#include "fleet/fleet_judge.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool fleet_judge_figure(const struct fleet_rule *rule, enum fleet_direction direction, const struct fleet_stats *st,
                        double value, struct fleet_outlier *ret) {
        double median = st->median, scaled_mad = FLEET_MAD_SCALE * st->mad;
        ret->value = value;
        ret->median = median;
        ret->deviation_pct = median != 0 ? (value - median) / fabs(median) * 100.0 : 0;
        ret->mads = scaled_mad > 0 ? fabs(value - median) / scaled_mad : 0;
        ret->status = STATUS_PASS;
        ret->rule = FLEET_RULE_VARIANCE;
        if (rule->has_min && value < rule->min) {
                ret->rule = FLEET_RULE_VALUE_MIN;
                ret->status = STATUS_FAIL;
                return true;
        }
        if (rule->has_max && value > rule->max) {
                ret->rule = FLEET_RULE_VALUE_MAX;
                ret->status = STATUS_FAIL;
                return true;
        }
        if (direction == FLEET_DIRECTION_NONE || median == 0 || st->n < rule->min_samples)
                return false;
        double worse_pct = direction == FLEET_HIGHER_BETTER ? -ret->deviation_pct : ret->deviation_pct;
        /* With most figures equal the MAD is 0: any difference is then beyond it. */
        bool beyond_mads = rule->mads <= 0 || scaled_mad == 0 || ret->mads > rule->mads;
        if (!beyond_mads)
                return false;
        if (rule->fail_pct > 0 && worse_pct > rule->fail_pct)
                ret->status = STATUS_FAIL;
        else if (rule->warn_pct > 0 && worse_pct > rule->warn_pct)
                ret->status = STATUS_WARN;
        return ret->status != STATUS_PASS;
}

struct tally {
        const char *value;
        size_t count;
};

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int fleet_drift_compute(const char *attribute, const char *model, const struct fleet_drift_node *nodes, size_t n,
                        struct fleet_drift *ret) {
        memset(ret, 0, sizeof(*ret));
        ret->attribute = attribute;
        ret->model = model;
        const char **values = malloc((n ? n : 1) * sizeof(*values));
        if (!values)
                return -ENOMEM;
        size_t nv = 0;
        for (size_t i = 0; i < n; i++)
                if (nodes[i].value)
                        values[nv++] = nodes[i].value;
        ret->n_reporting = nv;
        if (nv == 0) {
                free(values);
                return 0;
        }
        /* Sorted, equal values are adjacent: the longest run is the majority, the first
         * such run the smaller string. */
        qsort(values, nv, sizeof(*values), cmp_str);
        const char *best = values[0];
        size_t best_n = 0;
        for (size_t i = 0; i < nv;) {
                size_t k = i;
                while (k < nv && strcmp(values[k], values[i]) == 0)
                        k++;
                if (k - i > best_n) {
                        best = values[i];
                        best_n = k - i;
                }
                i = k;
        }
        ret->majority = strdup(best);
        ret->n_majority = best_n;
        free(values);
        if (!ret->majority)
                return -ENOMEM;
        if (best_n < nv) {
                ret->odd = calloc(nv - best_n, sizeof(*ret->odd));
                if (!ret->odd) {
                        fleet_drift_clear(ret);
                        return -ENOMEM;
                }
        }
        for (size_t i = 0; i < n; i++) {
                if (!nodes[i].value || strcmp(nodes[i].value, ret->majority) == 0)
                        continue;
                struct fleet_drift_node *o = &ret->odd[ret->n_odd++];
                o->node = nodes[i].node;
                if (!(o->value = strdup(nodes[i].value))) {
                        fleet_drift_clear(ret);
                        return -ENOMEM;
                }
        }
        return 0;
}

void fleet_drift_clear(struct fleet_drift *d) {
        for (size_t i = 0; i < d->n_odd; i++)
                free(d->odd[i].value);
        free(d->odd);
        free(d->majority);
        memset(d, 0, sizeof(*d));
}

struct member {
        const struct fleet_outlier *o;
        size_t index;
};

static bool is_below(const struct fleet_outlier *o) {
        return o->deviation_pct < 0 || (o->deviation_pct == 0 && o->rule == FLEET_RULE_VALUE_MIN);
}

static int cmp_member(const void *a, const void *b) {
        const struct member *x = a, *y = b;
        int c = strcmp(x->o->node, y->o->node);
        if (c)
                return c;
        if (is_below(x->o) != is_below(y->o))
                return is_below(x->o) ? -1 : 1;
        return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_group(const void *a, const void *b) {
        const struct fleet_outlier_group *x = a, *y = b;
        if (x->status != y->status)
                return status_worse(x->status, y->status) == x->status ? -1 : 1;
        int c = strcmp(x->node, y->node);
        if (c)
                return c;
        return x->below == y->below ? 0 : x->below ? -1 : 1;
}

int fleet_group_outliers(const struct fleet_outlier *o, size_t n, struct fleet_outlier_group **ret, size_t *ret_n,
                         size_t **ret_members) {
        *ret = NULL;
        *ret_n = 0;
        *ret_members = NULL;
        if (n == 0)
                return 0;
        struct member *m = malloc(n * sizeof(*m));
        size_t *members = malloc(n * sizeof(*members));
        struct fleet_outlier_group *groups = calloc(n, sizeof(*groups));
        if (!m || !members || !groups) {
                free(m);
                free(members);
                free(groups);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                m[i] = (struct member){&o[i], i};
        qsort(m, n, sizeof(*m), cmp_member);
        size_t n_groups = 0;
        for (size_t i = 0; i < n;) {
                struct fleet_outlier_group *g = &groups[n_groups++];
                g->node = m[i].o->node;
                g->below = is_below(m[i].o);
                g->status = STATUS_PASS;
                g->members = &members[i];
                g->worst = m[i].index;
                g->least_pct = INFINITY;
                size_t k = i;
                for (; k < n && strcmp(m[k].o->node, g->node) == 0 && is_below(m[k].o) == g->below; k++) {
                        const struct fleet_outlier *x = m[k].o, *w = &o[g->worst];
                        members[k] = m[k].index;
                        g->status = status_worse(g->status, x->status);
                        g->n_fail += x->status == STATUS_FAIL;
                        double pct = fabs(x->deviation_pct);
                        g->least_pct = fmin(g->least_pct, pct);
                        g->most_pct = fmax(g->most_pct, pct);
                        bool worse_status = x->status != w->status && status_worse(x->status, w->status) == x->status;
                        if (worse_status || (x->status == w->status && pct > fabs(w->deviation_pct)))
                                g->worst = m[k].index;
                }
                g->n = k - i;
                i = k;
        }
        free(m);
        qsort(groups, n_groups, sizeof(*groups), cmp_group);
        *ret = groups;
        *ret_n = n_groups;
        *ret_members = members;
        return 0;
}
