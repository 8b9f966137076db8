/* The terminal report: one line per result, remedies under problems, a verdict line. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "core/result.h"
#include "report/report_json.h"

struct text_options {
        bool color;
        bool verbose; /* also show observed/expected of passing results */
        bool problems; /* only warnings, failures and errors (--problems), and a count of the rest */
        size_t width;  /* lines fit this many columns (text_wrap_width); 0: not wrapped */
        bool header_shown; /* report_text_header was printed before the slow work: not again */
};

/* --color WHEN of every command that colours its output, for the whole process. */
enum text_color_mode { TEXT_COLOR_AUTO, TEXT_COLOR_ALWAYS, TEXT_COLOR_NEVER };
void text_color_set(enum text_color_mode mode);
enum text_color_mode text_color_get(void);

/* Colour is on with --color always; off with --color never; else on a terminal unless
 * NO_COLOR is set (https://no-color.org, which lets a flag win) or TERM=dumb. */
bool text_want_color(FILE *out);

/* The first line: "gpuvet check — host, 8 NVIDIA GPUs, level standard[, policy FILE]". */
void report_text_header(FILE *out, const struct facts *f, const struct run_info *run, const struct text_options *opt);

/* Errors of one cause (result.cause: an NVML call that never returned on a GPU stops a
 * dozen checks) are one line naming the cause, the checks and the GPUs, with one remedy.
 * Starts with that header (unless opt->header_shown) and ends with the verdict line, which
 * names the checks that failed or erred (and, with
 * --strict, warned): "Verdict: FAIL — ... (12 ms) — fail: pcie.aer, gpu.xid; error: burn.run",
 * five of each, then "and N more". */
void report_text(FILE *out, const struct facts *f, const struct report *rep, const struct run_info *run,
                 const struct text_options *opt);

/* The last line of check's and bench's text: "Verdict: PASS — 6 pass, 0 warn, 0 fail, 0 skip,
 * 0 error (200 ms)". */
void report_text_verdict(FILE *out, const struct text_options *opt, enum status verdict,
                         const unsigned counts[_STATUS_COUNT], double duration_ms);

/* A status as check's text shows it (✓ ⚠ ✗ - !), coloured when opt says so; written to buf. */
const char *report_text_glyph(enum status s, const struct text_options *opt, char *buf, size_t size);
