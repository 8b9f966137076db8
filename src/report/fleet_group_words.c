#include "report/fleet_group_words.h"

#include <math.h>

#include "core/strbuf.h"

void fleet_group_words(const struct fleet_outlier_group *g, const char *dash, char *buf, size_t size) {
        strbuf_printf(buf, size, "%zu figures ", g->n);
        if (round(g->least_pct) == round(g->most_pct))
                strbuf_appendf(buf, size, "%.0f%%", g->most_pct);
        else
                strbuf_appendf(buf, size, "%.0f%s%.0f%%", g->least_pct, dash, g->most_pct);
        strbuf_appendf(buf, size, " %s the median (", g->below ? "below" : "above");
        if (g->n_fail)
                strbuf_appendf(buf, size, "%zu fail%s", g->n_fail, g->n > g->n_fail ? ", " : "");
        if (g->n > g->n_fail)
                strbuf_appendf(buf, size, "%zu warn", g->n - g->n_fail);
        strbuf_appendf(buf, size, ")");
}
