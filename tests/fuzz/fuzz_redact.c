/* libFuzzer target: redact_file() (src/core/redact.c), the scanner that takes secrets out
 * of the configuration files `gpuvet snapshot` copies into an archive meant for others:
 * containerd's TOML, docker's JSON, environment files. The files are whatever an operator
 * wrote, so the scanner meets every shape. The first byte picks the format (TOML, JSON,
 * NAME=VALUE lines, NUL-separated environ) and whether a secret is planted after the input.
 *
 * Invariants: a text with nothing redacted is left as it was; the result is terminated and
 * no longer than it says; redacting the result again changes nothing (the mark is already
 * there); and a secret planted on a line of its own after any input, as the format writes
 * it, never survives, whatever the lines before it hold (unless they open a multi-line
 * string, which may legitimately swallow it). */
#include "core/redact.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PLANTED "s3cr3t-planted-value"

static const char *const paths[] = {"etc/containerd/config.toml", "etc/docker/daemon.json", "etc/environment",
                                    "proc/1/environ"};
/* Each format's secret line; a struct, since the environ one holds a NUL. */
#define PLANT(text) {text, sizeof(text) - 1}
static const struct {
        const char *text;
        size_t len;
} planted[] = {
        PLANT("\npassword = \"" PLANTED "\"\n"),
        PLANT("\n\"password\": \"" PLANTED "\"\n"),
        PLANT("\nDB_PASSWORD=" PLANTED "\n"),
        PLANT("\0DB_PASSWORD=" PLANTED),
};

static size_t count(const char *hay, size_t n, const char *needle) {
        size_t k = 0, m = strlen(needle);
        for (const char *p = hay; n >= m && (p = memmem(p, n - (size_t)(p - hay), needle, m)) != NULL; p += m)
                k++;
        return k;
}

/* Whether a text may open a string that runs past its end: a TOML multi-line string. */
static bool opens_multiline(const char *t, size_t n) {
        return memmem(t, n, "\"\"\"", 3) != NULL || memmem(t, n, "'''", 3) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        unsigned format = data[0] % 4;
        bool plant = (data[0] / 4) % 2;
        const char *path = paths[format];
        size_t in_len = size - 1;
        size_t len = in_len + (plant ? planted[format].len : 0);
        char *text = malloc(len + 1);
        if (!text)
                return 0;
        memcpy(text, data + 1, in_len);
        if (plant)
                memcpy(text + in_len, planted[format].text, planted[format].len);
        text[len] = '\0';
        char *orig = malloc(len + 1);
        if (!orig) {
                free(text);
                return 0;
        }
        memcpy(orig, text, len + 1);

        unsigned n = 0;
        size_t out_len = len;
        if (redact_file(path, &text, &out_len, &n) < 0)
                goto done;
        if (n == 0 && (out_len != len || memcmp(text, orig, len + 1) != 0))
                abort(); /* nothing redacted, yet the text changed */
        if (text[out_len] != '\0')
                abort();
        if (plant && !opens_multiline(orig, in_len) &&
            count(text, out_len, PLANTED) > count(orig, in_len, PLANTED))
                abort(); /* the planted secret survived */

        /* Once more: the result holds only marks where secrets were. */
        char *again = malloc(out_len + 1);
        if (!again)
                goto done;
        memcpy(again, text, out_len + 1);
        size_t again_len = out_len;
        unsigned n2 = 0;
        if (redact_file(path, &again, &again_len, &n2) == 0 &&
            (again_len != out_len || memcmp(again, text, out_len) != 0))
                abort();
        free(again);
done:
        free(text);
        free(orig);
        return 0;
}
