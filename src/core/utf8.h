/* UTF-8 validation shared by the JSON and terminal writers. */
#pragma once

#include <stddef.h>

/* Length of the valid UTF-8 sequence at p (1-4; 1 for ASCII, NUL included), or 0 when the
 * bytes at p are not valid UTF-8 (a stray continuation byte, an overlong form, a UTF-16
 * surrogate, past U+10FFFF, or a sequence cut by the end of the string). */
size_t utf8_sequence(const unsigned char *p);
