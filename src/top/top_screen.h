/* The curses screen of gpuvet top (docs/top.md): draws frames, reads keys, follows the
 * terminal's size. It redraws when a sample comes, a key is pressed, the size changes or
 * staleness is due, and otherwise sleeps in ppoll: no busy loop. */
#pragma once

#include <signal.h>

#include "top/top_feed.h"
#include "top/top_frame.h"

/* Run until q, or a stop signal sets *stop; the signals in open_mask are taken
 * only while waiting. Restores the terminal before returning. Returns an exit code:
 * EXIT_PASS, or EXIT_INTERNAL after saying why on standard error. */
int top_screen_run(struct top_feed *feed, struct top_model *m, struct top_view *v, const sigset_t *open_mask,
                   volatile sig_atomic_t *stop);

/* A key's effect on the view; false for q (quit). Pure, for the tests. */
bool top_view_key(struct top_view *v, const struct top_model *m, int key, unsigned int page);
