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
