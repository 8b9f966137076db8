#include "core/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

void progress_init(struct progress *p, bool on) {
        *p = (struct progress){.on = on, .last_s = -1e9};
        if (!on)
                return;
        p->tty = isatty(STDERR_FILENO) == 1;
        struct winsize ws;
        if (p->tty && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0)
                p->columns = ws.ws_col;
}

bool progress_begin(struct progress *p, double now_s) {
        if (!p || !p->on || now_s - p->last_s < (p->tty ? PROGRESS_TTY_S : PROGRESS_PLAIN_S))
                return false;
        p->last_s = now_s;
        p->lines_this = 0;
        if (p->tty && p->lines_drawn)
                fprintf(stderr, "\033[%zuA", p->lines_drawn);
        return true;
}

void progress_now(struct progress *p) {
        if (p)
                p->last_s = -1e9;
}

void progress_line(struct progress *p, const char *fmt, ...) {
        char line[512];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
        if (p->tty && p->columns > 1) {
                /* Cut at the last column but one (UTF-8 continuation bytes take none): a line
                 * that wraps is two rows, and the cursor would go back up too few. */
                size_t cols = 0, i = 0;
                for (; i < len; i++)
                        if (((unsigned char)line[i] & 0xc0) != 0x80 && ++cols >= p->columns)
                                break;
                len = i;
        }
        fprintf(stderr, p->tty ? "\r%.*s\033[K\n" : "%.*s\n", (int)len, line);
        p->lines_this++;
}

void progress_end(struct progress *p) {
        if (p->tty && p->lines_this < p->lines_drawn)
                fputs("\033[J", stderr); /* the last frame had more lines */
        p->lines_drawn = p->lines_this;
        fflush(stderr);
}

void progress_clear(struct progress *p) {
        if (!p || !p->on || !p->tty || !p->lines_drawn)
                return;
        fprintf(stderr, "\033[%zuA\r\033[J", p->lines_drawn);
        fflush(stderr);
        p->lines_drawn = 0;
}

void progress_duration(char *buf, size_t size, double seconds) {
        unsigned long s = seconds > 0 ? (unsigned long)(seconds + 0.5) : 0;
        if (s < 60)
                snprintf(buf, size, "%lus", s);
        else if (s < 3600)
                snprintf(buf, size, "%lum%02lus", s / 60, s % 60);
        else
                snprintf(buf, size, "%luh%02lum", s / 3600, s % 3600 / 60);
}
