/* The screen's layout (top_layout.h). */
#include "top/top_layout.h"

#include <string.h>

/* A cell is "LABEL" (4) + ' ' + bar + ' ' + sparkline, and the cells are two apart. */
#define CELL_GAP 2
#define LABEL_WIDTH 5
#define MIN_BAR 12

void top_layout_compute(unsigned int rows, unsigned int cols, unsigned int n_gpus, struct top_layout *ret) {
        memset(ret, 0, sizeof(*ret));
        if (rows < TOP_MIN_ROWS || cols < TOP_MIN_COLS) {
                ret->too_small = true;
                return;
        }
        ret->help_row = rows - 1;
        /* title, process header, help */
        unsigned int fixed = 3;
        unsigned int room = rows - fixed; /* >= 5 */
        unsigned int for_gpus = room > TOP_MIN_PROC_ROWS ? room - TOP_MIN_PROC_ROWS : 0;
        if (n_gpus * TOP_FULL_LINES <= for_gpus) {
                ret->full = true;
                ret->gpu_lines = TOP_FULL_LINES;
                ret->gpus_shown = n_gpus;
        } else {
                ret->gpu_lines = 1;
                if (n_gpus <= for_gpus) {
                        ret->gpus_shown = n_gpus;
                } else {
                        ret->more_line = true;
                        ret->gpus_shown = for_gpus > 1 ? for_gpus - 1 : 0;
                }
        }
        unsigned int gpu_rows = ret->gpus_shown * ret->gpu_lines + (ret->more_line ? 1 : 0);
        ret->proc_top = 1 + gpu_rows;
        ret->proc_rows = rows - fixed - gpu_rows;
        ret->workload_column = cols >= TOP_WORKLOAD_MIN_COLS;
        unsigned int usable = cols - 1; /* the last column is left blank: no wrap at the edge */
        ret->cell_width = (usable - 2 * CELL_GAP) / 3;
        unsigned int after_label = ret->cell_width > LABEL_WIDTH ? ret->cell_width - LABEL_WIDTH : 0;
        /* The bar takes what the sparkline leaves, and the sparkline at most half. */
        if (after_label >= MIN_BAR + 1 + 4) {
                unsigned int spark = (after_label - 1) / 2;
                if (after_label - 1 - spark < MIN_BAR)
                        spark = after_label - 1 - MIN_BAR;
                ret->spark_width = spark;
        }
}

void top_layout_chart(struct top_layout *l, unsigned int cols) {
        if (l->too_small || !l->full || cols < TOP_CHART_MIN_COLS ||
            l->proc_rows < TOP_CHART_LINES + TOP_CHART_MIN_PROC_ROWS)
                return;
        l->chart_top = l->proc_top;
        l->chart_rows = TOP_CHART_LINES;
        l->proc_top += TOP_CHART_LINES;
        l->proc_rows -= TOP_CHART_LINES;
}
