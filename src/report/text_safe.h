/* Machine strings on a terminal. A hostname, an os-release name or an NVML string read
 * from a capture can hold any bytes, among them escape sequences that would recolour the
 * terminal, retitle it, move the cursor or hide a line. Text output passes such strings
 * through here: C0 and C1 control characters, DEL and bytes that are not valid UTF-8 are
 * written as \xNN, everything else as is. */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* s (NULL: "") made safe into buf, cut to fit at a character boundary; returns buf, or
 * s itself when it needs nothing. */
const char *text_safe(const char *s, char *buf, size_t size);

/* s made safe, written to out. */
void text_safe_write(FILE *out, const char *s);
