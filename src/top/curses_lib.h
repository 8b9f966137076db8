/* ncurses, loaded when top's screen starts rather than linked: every other command (and
 * `top --once`) would pay for it at start-up (docs/perf.md "Issue 41: start-up"). <curses.h>
 * gives the types and constants; the functions and variables come from the library through
 * core/dynlib.h. Part of libgpuvet_tui, built with ncurses' compile flags. */
#pragma once

#include <stddef.h>

#include <curses.h>

/* Each a function ncurses exports, called with the window explicitly: <curses.h>'s erase,
 * attrset, mvaddnstr, refresh and getch are macros over the w* calls with stdscr. */
#define CURSES_FUNCTIONS(X)                                                                                 \
        X(initscr) X(endwin) X(cbreak) X(noecho) X(keypad) X(nodelay) X(set_escdelay) X(curs_set) X(has_colors) \
        X(start_color) X(use_default_colors) X(init_pair) X(werase) X(wattrset) X(mvwaddnstr) X(wrefresh)      \
        X(wgetch)
/* Its variables (libtinfo's, reached through ncurses): pointers to them here. */
#define CURSES_VARIABLES(X) X(stdscr) X(LINES) X(COLS)

/* wattrset and mvwaddnstr are macros too, which poke WINDOW's fields or expand to other
 * calls: the table's members of those names must not be expanded. */
#undef wattrset
#undef mvwaddnstr

struct curses_lib {
#define CURSES_MEMBER(f) __typeof__(&f) f;
        CURSES_FUNCTIONS(CURSES_MEMBER)
        CURSES_VARIABLES(CURSES_MEMBER)
#undef CURSES_MEMBER
};

/* Load libncursesw.so.6 (or libncurses.so.6) once; main thread only. Returns the table, or
 * NULL with err naming the library, why, and the package that installs it. */
const struct curses_lib *curses_lib_load(char *err, size_t errsize);
