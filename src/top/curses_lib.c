/* ncurses at run time (curses_lib.h). */
#include "top/curses_lib.h"

#include "core/array.h"
#include "core/dynlib.h"

const struct curses_lib *curses_lib_load(char *err, size_t errsize) {
        /* The wide build first, as distributions ship it; the narrow one exports the same
         * functions gpuvet calls. */
        static const char *const sonames[] = {"libncursesw.so.6", "libncurses.so.6"};
        static const struct dynlib_fn fns[] = {
#define CURSES_ENTRY(f) {#f, NULL, true, offsetof(struct curses_lib, f)},
                CURSES_FUNCTIONS(CURSES_ENTRY)
                CURSES_VARIABLES(CURSES_ENTRY)
#undef CURSES_ENTRY
        };
        static struct dynlib lib;
        static struct curses_lib curses;
        if (dynlib_load_once(sonames, ARRAY_COUNT(sonames), fns, ARRAY_COUNT(fns), &curses, &lib,
                             "top's screen needs ncurses (Debian/Ubuntu: apt install libncursesw6; RHEL/Fedora: "
                             "dnf install ncurses-libs), or use --once",
                             err, errsize) < 0)
                return NULL;
        return &curses;
}
