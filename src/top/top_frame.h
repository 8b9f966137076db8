/* One frame of gpuvet top as text lines with an attribute each (docs/top.md): the curses
 * screen draws these, --once prints them, the tests read them back from tmux. Pure: the
 * same model, view and size give the same frame. */
#pragma once

#include <stdbool.h>

#include "top/top_model.h"
#include "top/top_signal.h"

enum top_attr {
        TOP_ATTR_NORMAL,
        TOP_ATTR_TITLE,    /* the title and the process header */
        TOP_ATTR_SELECTED, /* the selected process */
        TOP_ATTR_WARN,     /* TOP_CLASS_WARN: slowed by the driver for heat */
        TOP_ATTR_FAULT,    /* TOP_CLASS_FAULT: uncorrected ECC errors, the hardware holding it down */
        TOP_ATTR_STALE,
        TOP_ATTR_LOST,
};

/* What the person chose: the sort key, the tree, the selected process, the help. */
struct top_view {
        enum top_sort sort;
        bool tree;                 /* processes under their host ancestors (top_model_tree) */
        bool help;
        bool no_chart;             /* --once: one sample makes no history */
        bool have_selected;        /* a process is selected: by GPU and PID, so it stays */
        unsigned int sel_gpu, sel_pid;
        unsigned int proc_scroll;  /* the first process row shown */
        unsigned int gpu_scroll;   /* the first GPU shown when not all fit */
        unsigned long long interval_ms;
        const struct top_signal_env *signals; /* where K, T, I may send; NULL: nowhere */
        struct top_pending_signal confirm;    /* K, T or I waiting for y */
        char status[160];                     /* what the last action came to: the bottom line until a key */
};

struct top_frame {
        unsigned int rows, cols;
        char *text;            /* rows lines of cols + 1 bytes, each NUL-terminated, blank-padded */
        enum top_attr *attr;   /* per line */
};

/* Render m at rows x cols into ret (freed first with top_frame_done when it holds one).
 * Moves the selection onto a row that exists and scrolls it into view. Returns 0 or -ENOMEM. */
int top_frame_render(const struct top_model *m, struct top_view *v, unsigned int rows, unsigned int cols,
                     struct top_frame *ret);

/* Line r of f. */
static inline const char *top_frame_line(const struct top_frame *f, unsigned int r) {
        return f->text + (unsigned long)r * (f->cols + 1);
}

/* The rows --once needs to show every GPU in full and every process (in the tree view,
 * every ancestor too). */
unsigned int top_frame_rows_for_all(const struct top_model *m, const struct top_view *v);

/* The selected process's row, or NULL. */
const struct top_proc_row *top_view_selected(const struct top_view *v, const struct top_model *m);

/* Move the selection by delta rows (up is negative), within the process rows as shown;
 * the tree's host rows are passed over. */
void top_view_move(struct top_view *v, const struct top_model *m, int delta);

void top_frame_done(struct top_frame *f);
