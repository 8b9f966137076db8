#include "core/utf8.h"

size_t utf8_sequence(const unsigned char *p) {
        if (p[0] < 0x80)
                return 1;
        size_t n = (p[0] & 0xe0) == 0xc0 ? 2 : (p[0] & 0xf0) == 0xe0 ? 3 : (p[0] & 0xf8) == 0xf0 ? 4 : 0;
        if (n == 0 || (n == 2 && p[0] < 0xc2) || (n == 4 && p[0] > 0xf4))
                return 0;
        for (size_t i = 1; i < n; i++)
                if ((p[i] & 0xc0) != 0x80) /* a NUL stops here too */
                        return 0;
        /* Overlong 3/4-byte forms and UTF-16 surrogates. */
        if (n == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0)))
                return 0;
        if (n == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90)))
                return 0;
        return n;
}
