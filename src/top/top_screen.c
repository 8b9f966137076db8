/* The curses screen (top_screen.h). */
#include "top/top_screen.h"

#include "core/exit.h"
#include "report/report_text.h"
#include "top/curses_lib.h"
#include "top/top_layout.h"

#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { PAIR_WARN = 1, PAIR_FAULT, PAIR_STALE };

/* Loaded by top_screen_run before the screen starts. */
static const struct curses_lib *tui;

static attr_t attr_of(enum top_attr a, bool color) {
        switch (a) {
        case TOP_ATTR_TITLE: return A_REVERSE;
        case TOP_ATTR_SELECTED: return A_REVERSE | A_BOLD;
        /* Without colour a warning is bold, a fault (like a lost GPU) bold and underlined. */
        case TOP_ATTR_WARN: return color ? COLOR_PAIR(PAIR_WARN) : A_BOLD;
        case TOP_ATTR_FAULT: return color ? COLOR_PAIR(PAIR_FAULT) | A_BOLD : A_BOLD | A_UNDERLINE;
        case TOP_ATTR_STALE: return color ? COLOR_PAIR(PAIR_STALE) | A_DIM : A_DIM;
        case TOP_ATTR_LOST: return color ? COLOR_PAIR(PAIR_FAULT) | A_BOLD : A_BOLD | A_UNDERLINE;
        case TOP_ATTR_NORMAL: break;
        }
        return A_NORMAL;
}

static void draw(const struct top_frame *f, bool color) {
        WINDOW *screen = *tui->stdscr;
        tui->werase(screen);
        for (unsigned int r = 0; r < f->rows; r++) {
                tui->wattrset(screen, (int)attr_of(f->attr[r], color));
                /* cols - 1: writing the bottom-right cell would scroll some terminals */
                tui->mvwaddnstr(screen, (int)r, 0, top_frame_line(f, r), (int)f->cols - 1);
        }
        tui->wattrset(screen, A_NORMAL);
        tui->wrefresh(screen);
}

static bool setup_colors(void) {
        const char *no = getenv("NO_COLOR");
        enum text_color_mode mode = text_color_get();
        if (mode == TEXT_COLOR_NEVER || (mode == TEXT_COLOR_AUTO && no && *no) || !tui->has_colors() ||
            tui->start_color() == ERR)
                return false;
        tui->use_default_colors();
        tui->init_pair(PAIR_WARN, COLOR_YELLOW, -1);
        tui->init_pair(PAIR_FAULT, COLOR_RED, -1);
        tui->init_pair(PAIR_STALE, COLOR_BLUE, -1);
        return true;
}

int top_screen_run(struct top_feed *feed, struct top_model *m, struct top_view *v, const sigset_t *open_mask,
                   volatile sig_atomic_t *stop) {
        char why[512];
        if (!(tui = curses_lib_load(why, sizeof(why)))) {
                fprintf(stderr, "gpuvet top: %s\n", why);
                return EXIT_INTERNAL;
        }
        /* ncursesw draws UTF-8 names and units as characters only under the user's locale. */
        setlocale(LC_CTYPE, "");
        if (!tui->initscr()) {
                fprintf(stderr, "gpuvet top: the terminal could not be set up (TERM=%s)\n",
                        getenv("TERM") ? getenv("TERM") : "");
                return EXIT_INTERNAL;
        }
        tui->cbreak();
        tui->noecho();
        tui->keypad(*tui->stdscr, TRUE);
        tui->nodelay(*tui->stdscr, TRUE);
        tui->set_escdelay(25);
        (void)tui->curs_set(0);
        bool color = setup_colors();

        struct top_frame frame = {0};
        int code = EXIT_PASS;
        bool dirty = true, running = true;
        while (running && !*stop) {
                int r = top_feed_poll(feed, m);
                if (r < 0) {
                        code = EXIT_INTERNAL;
                        break;
                }
                if (r > 0)
                        dirty = true;
                if (dirty) {
                        top_model_sort(m, v->sort);
                        if (top_frame_render(m, v, (unsigned int)*tui->LINES, (unsigned int)*tui->COLS, &frame) < 0) {
                                code = EXIT_INTERNAL;
                                break;
                        }
                        draw(&frame, color);
                        dirty = false;
                }
                /* Wake for a key, a sample, a signal (SIGWINCH: ncurses' handler then gives
                 * KEY_RESIZE), or the interval, to see whether readings went stale. */
                struct pollfd p[2] = {{.fd = STDIN_FILENO, .events = POLLIN},
                                      {.fd = sampler_fd(feed->smp), .events = POLLIN}};
                unsigned long long wait_ms = feed->interval_ms < 1000 ? feed->interval_ms : 1000;
                struct timespec t = {.tv_sec = (time_t)(wait_ms / 1000), .tv_nsec = (long)(wait_ms % 1000) * 1000000L};
                if (ppoll(p, 2, &t, open_mask) < 0 && errno != EINTR) {
                        code = EXIT_INTERNAL;
                        break;
                }
                if (p[1].revents & POLLIN)
                        dirty = true; /* top_feed_poll takes it (and drains the pipe) */
                if ((p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) && !(p[0].revents & POLLIN))
                        break; /* the terminal went away: polling it again would spin */
                struct top_layout l;
                top_layout_compute((unsigned int)*tui->LINES, (unsigned int)*tui->COLS, m->n_gpus, &l);
                if (!v->no_chart)
                        top_layout_chart(&l, (unsigned int)*tui->COLS);
                int ch;
                while ((ch = tui->wgetch(*tui->stdscr)) != ERR) {
                        if (!top_view_key(v, m, ch, l.proc_rows))
                                running = false;
                        dirty = true;
                }
        }
        top_frame_done(&frame);
        tui->endwin();
        if (code == EXIT_INTERNAL)
                fprintf(stderr, "gpuvet top: %s\n", errno == ENOMEM ? "out of memory" : strerror(errno));
        return code;
}
