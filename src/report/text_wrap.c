#include "report/text_wrap.h"
#include "core/array.h"
#include "core/utf8.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

size_t text_wrap_width(FILE *out) {
        size_t width = 0;
        struct winsize ws;
        int fd = fileno(out);
        if (fd >= 0 && isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
                width = ws.ws_col;
        } else {
                const char *columns = getenv("COLUMNS");
                char *end;
                unsigned long v = columns && *columns ? strtoul(columns, &end, 10) : 0;
                if (v > 0 && v <= 100000 && *end == '\0')
                        width = v;
        }
        return width && width < TEXT_WRAP_MIN_WIDTH ? TEXT_WRAP_MIN_WIDTH : width;
}

static uint32_t code_point(const unsigned char *p, size_t n) {
        static const unsigned char lead_mask[5] = {0, 0x7f, 0x1f, 0x0f, 0x07};
        uint32_t cp = p[0] & lead_mask[n];
        for (size_t i = 1; i < n; i++)
                cp = (cp << 6) | (p[i] & 0x3f);
        return cp;
}

/* wcwidth() would depend on the locale, and check runs under LANG=C in cron and Slurm as
 * often as in a UTF-8 shell; the report's own text is UTF-8 either way. */
static size_t code_point_width(uint32_t cp) {
        static const uint32_t zero[][2] = {
                {0x0300, 0x036f}, {0x200b, 0x200f}, {0x20d0, 0x20ff}, {0xfe00, 0xfe0f},
        };
        static const uint32_t wide[][2] = {
                {0x1100, 0x115f},   {0x2e80, 0x303e},   {0x3041, 0x33ff}, {0x3400, 0x4dbf},
                {0x4e00, 0x9fff},   {0xa000, 0xa4cf},   {0xac00, 0xd7a3}, {0xf900, 0xfaff},
                {0xfe30, 0xfe4f},   {0xff00, 0xff60},   {0xffe0, 0xffe6}, {0x1f300, 0x1f64f},
                {0x1f900, 0x1f9ff}, {0x20000, 0x3fffd},
        };
        for (size_t i = 0; i < ARRAY_COUNT(zero); i++)
                if (cp >= zero[i][0] && cp <= zero[i][1])
                        return 0;
        for (size_t i = 0; i < ARRAY_COUNT(wide); i++)
                if (cp >= wide[i][0] && cp <= wide[i][1])
                        return 2;
        return 1;
}

/* The next unit at p that is never split: a character, or an escape sequence. */
struct unit {
        size_t bytes, cols;
};

static struct unit next_unit(const char *s) {
        const unsigned char *p = (const unsigned char *)s;
        if (p[0] == 0x1b && p[1] == '[') {
                size_t n = 2;
                while (p[n] && !(p[n] >= 0x40 && p[n] <= 0x7e))
                        n++;
                return (struct unit){p[n] ? n + 1 : n, 0};
        }
        size_t n = utf8_sequence(p);
        if (n == 0) /* not UTF-8: the terminal shows one replacement character */
                return (struct unit){1, 1};
        return (struct unit){n, n == 1 ? 1 : code_point_width(code_point(p, n))};
}

static size_t span_width(const char *s, size_t bytes) {
        size_t cols = 0;
        for (size_t i = 0; i < bytes && s[i];) {
                struct unit u = next_unit(s + i);
                cols += u.cols;
                i += u.bytes;
        }
        return cols;
}

size_t text_display_width(const char *s) { return span_width(s, strlen(s)); }

static void new_line(FILE *out, size_t indent, size_t *col) {
        fputc('\n', out);
        fprintf(out, "%*s", (int)indent, "");
        *col = indent;
}

/* Room a word too wide for any line should have before it starts on the current one. */
#define BREAK_MIN_ROOM 10

/* A word wider than a line, from column *col: pieces that fill each line, each cut after
 * its last '/' when that leaves a third of the line or more filled, else where the line
 * ends. */
static void break_word(FILE *out, const char *w, size_t bytes, size_t indent, size_t width, size_t *col) {
        while (bytes) {
                size_t room = width > *col ? width - *col : 0;
                size_t used = 0, cols = 0, after_slash = 0;
                while (used < bytes) {
                        struct unit u = next_unit(w + used);
                        if (cols + u.cols > room)
                                break;
                        cols += u.cols;
                        used += u.bytes;
                        if (w[used - 1] == '/' && u.bytes == 1)
                                after_slash = used;
                }
                if (used == bytes) {
                        fwrite(w, 1, bytes, out);
                        *col += cols;
                        return;
                }
                if (after_slash && span_width(w, after_slash) * 3 >= room)
                        used = after_slash;
                if (used == 0 && *col <= indent) /* not one character fits a whole line */
                        used = next_unit(w).bytes;
                fwrite(w, 1, used, out);
                w += used;
                bytes -= used;
                new_line(out, indent, col);
        }
}

void text_wrap_line(FILE *out, const char *line, size_t indent, size_t width) {
        if (width == 0) {
                fputs(line, out);
                fputc('\n', out);
                return;
        }
        if (width < TEXT_WRAP_MIN_WIDTH)
                width = TEXT_WRAP_MIN_WIDTH;
        /* A deep indentation on a narrow terminal: continuations keep half the line. */
        if (indent > width / 2)
                indent = width / 2;
        size_t col = 0;
        for (const char *p = line; *p;) {
                const char *space = p;
                while (*p == ' ')
                        p++;
                size_t spaces = (size_t)(p - space);
                if (!*p)
                        break; /* trailing spaces would only push a terminal's cursor */
                const char *word = p;
                while (*p && *p != ' ')
                        p++;
                size_t bytes = (size_t)(p - word), cols = span_width(word, bytes);
                if (col + spaces + cols <= width) {
                        fprintf(out, "%*s", (int)spaces, "");
                        fwrite(word, 1, bytes, out);
                        col += spaces + cols;
                } else if (col > indent && indent + cols <= width) {
                        new_line(out, indent, &col);
                        fwrite(word, 1, bytes, out);
                        col += cols;
                } else {
                        if (col > indent && col + spaces + BREAK_MIN_ROOM > width) {
                                new_line(out, indent, &col);
                        } else {
                                fprintf(out, "%*s", (int)spaces, "");
                                col += spaces;
                        }
                        break_word(out, word, bytes, indent, width, &col);
                }
        }
        fputc('\n', out);
}

void text_wrap_block(FILE *out, const char *text, size_t width) {
        if (width == 0) {
                fputs(text, out);
                return;
        }
        char *copy = strdup(text);
        if (!copy) { /* unwrapped beats nothing */
                fputs(text, out);
                return;
        }
        for (char *line = copy, *next; *line; line = next) {
                char *nl = strchr(line, '\n');
                next = nl ? nl + 1 : line + strlen(line);
                if (nl)
                        *nl = '\0';
                text_wrap_line(out, line, strspn(line, " ") + 2, width);
        }
        free(copy);
}
