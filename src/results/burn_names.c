/* burn's names for its modes and ends (results/burn.h), apart from the run so that the
 * checks, the writers and the option parser that print or read them link no engine. */
#include "results/burn.h"

#include "core/array.h"

#include <stdbool.h>
#include <string.h>

static const char *const mode_names[_BURN_MODE_COUNT] = {"gemm", "power", "pulse", "memtest"};

const char *burn_mode_name(enum burn_mode m) { return m < _BURN_MODE_COUNT ? mode_names[m] : "?"; }

unsigned burn_modes_parse(const char *s) {
        unsigned set = 0;
        const char *p = s;
        while (p && *p) {
                size_t n = strcspn(p, ",");
                bool known = false;
                if (n == 3 && strncmp(p, "all", 3) == 0) {
                        set |= BURN_MODES_ALL;
                        known = true;
                }
                for (int m = 0; m < _BURN_MODE_COUNT && !known; m++)
                        if (strlen(mode_names[m]) == n && strncmp(p, mode_names[m], n) == 0) {
                                set |= BURN_MODE_BIT(m);
                                known = true;
                        }
                if (!known)
                        return 0;
                p += n;
                if (*p == ',' && *++p == '\0')
                        return 0; /* "gemm," */
        }
        return set;
}

const char *burn_end_name(enum burn_end e) {
        static const char *const names[] = {"not run", "done", "stopped", "error", "hung", "crashed"};
        return (unsigned)e < ARRAY_COUNT(names) ? names[e] : "?";
}
