/* Where things go on a screen of rows x cols (docs/top.md, "Layout"): pure arithmetic, so
 * the small sizes are unit-tested rather than found in a terminal.
 *
 * From the top: the title line, the GPUs (three lines each when they fit, else one), the
 * process header and rows, the help line at the bottom. GPUs beyond the room left are
 * counted on one line ("+3 more GPUs"); at least TOP_MIN_PROC_ROWS process rows stay
 * visible when there is any room. */
#pragma once

#include <stdbool.h>

#define TOP_MIN_COLS 40
#define TOP_MIN_ROWS 8
#define TOP_MIN_PROC_ROWS 3
#define TOP_FULL_LINES 3 /* a GPU's lines in the full form */
/* A process row's columns before the JOB/POD or the command: GPU to TIME. */
#define TOP_PROC_PREFIX_WIDTH 66
/* The process rows' JOB/POD column, shown from TOP_WORKLOAD_MIN_COLS: the columns before
 * it, it, and 28 left for the command. */
#define TOP_WORKLOAD_WIDTH 24
#define TOP_WORKLOAD_MIN_COLS (TOP_PROC_PREFIX_WIDTH + TOP_WORKLOAD_WIDTH + 1 + 28)

/* The history chart (top_layout_chart): on terminals this wide, where the GPUs are drawn
 * in full and the process rows keep TOP_CHART_MIN_PROC_ROWS under it. */
#define TOP_CHART_MIN_COLS 140
#define TOP_CHART_PLOT_ROWS 8
#define TOP_CHART_LINES (1 + TOP_CHART_PLOT_ROWS) /* its title, then the plot */
#define TOP_CHART_MIN_PROC_ROWS 8

struct top_layout {
        bool too_small;            /* below TOP_MIN_COLS x TOP_MIN_ROWS: one line says so */
        bool full;                 /* GPUs in three lines each, else one */
        unsigned int gpu_lines;    /* lines per GPU */
        unsigned int gpus_shown;   /* the first gpus_shown GPUs (from the scroll offset) */
        bool more_line;            /* a "+N more GPUs" line follows them */
        unsigned int proc_top;     /* the process header's row */
        unsigned int proc_rows;    /* process rows under it */
        unsigned int help_row;     /* the last row */
        unsigned int cell_width;   /* one of the three cells of a full GPU line */
        unsigned int spark_width;  /* the sparkline inside a cell (0: none) */
        bool workload_column;      /* the process rows show JOB/POD */
        unsigned int chart_top;    /* the chart's first row, when chart_rows */
        unsigned int chart_rows;   /* 0: no chart */
};

void top_layout_compute(unsigned int rows, unsigned int cols, unsigned int n_gpus, struct top_layout *ret);

/* Take the history chart's rows from the top of the process rows, where the terminal has
 * room for it (TOP_CHART_*): a wide terminal shows the history as a chart rather than wider
 * bars. */
void top_layout_chart(struct top_layout *l, unsigned int cols);
