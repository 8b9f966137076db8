/* Secrets out of copied configuration files: see redact.h.
 *
 * TOML and JSON are not parsed into a tree (a tree would rewrite the file, and Debian has
 * no TOML parser for C): one scanner walks strings, comments and keys, and replaces the
 * value that follows `KEY =` (TOML) or `"KEY":` (JSON) when KEY names a secret. Dotted
 * TOML keys are judged by their last part (`registry.configs."r".auth.password`); an inline
 * table's keys are judged one by one (`auth = { password = "x" }`). */
#include "core/array.h"
#include "core/redact.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool redact_key_is_secret(const char *key, size_t len) {
        static const char *const parts[] = {"password", "passwd", "secret", "token", "credential", "apikey", "api_key",
                                            "api-key", "private_key", "privatekey", "access_key", "accesskey"};
        char low[128];
        if (len == 0 || len >= sizeof(low))
                return false;
        for (size_t i = 0; i < len; i++)
                low[i] = (char)tolower((unsigned char)key[i]);
        low[len] = '\0';
        for (size_t i = 0; i < ARRAY_COUNT(parts); i++)
                if (strstr(low, parts[i]))
                        return true;
        return strcmp(low, "auth") == 0 || (len > 5 && strcmp(low + len - 5, "_auth") == 0);
}

struct out {
        char *buf;
        size_t len, cap;
        bool oom;
};

static void put(struct out *o, const char *s, size_t n) {
        if (o->oom)
                return;
        if (o->len + n + 1 > o->cap) {
                size_t cap = (o->len + n + 1) * 2;
                char *b = realloc(o->buf, cap);
                if (!b) {
                        o->oom = true;
                        return;
                }
                o->buf = b;
                o->cap = cap;
        }
        memcpy(o->buf + o->len, s, n);
        o->len += n;
        o->buf[o->len] = '\0';
}

static void put_mark(struct out *o, unsigned *n) {
        put(o, "\"" REDACT_MARK "\"", strlen(REDACT_MARK) + 2);
        (*n)++;
}

/* The end (one past the closing quote) of the string opening at t[i], and its content. An
 * unterminated one ends at the line's end (or the text's, for a multi-line one). */
static size_t string_end(const char *t, size_t len, size_t i, bool toml, size_t *cstart, size_t *clen) {
        char q = t[i];
        bool triple = toml && i + 2 < len && t[i + 1] == q && t[i + 2] == q;
        size_t open = triple ? 3 : 1, j = i + open;
        *cstart = j;
        for (; j < len; j++) {
                /* An escape never carries a one-line string past its line: a file that
                 * ends a line in `"\` must not hide the next line's secret in a string. */
                if (t[j] == '\\' && q == '"' && (triple || (j + 1 < len && t[j + 1] != '\n'))) {
                        j++;
                        continue;
                }
                if (!triple && t[j] == '\n')
                        break;
                if (t[j] == q && (!triple || (j + 2 < len && t[j + 1] == q && t[j + 2] == q))) {
                        *clen = j - *cstart;
                        return j + open;
                }
        }
        *clen = (j < len ? j : len) - *cstart;
        return j < len ? j : len;
}

static bool bare_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '-'; }

static int redact_structured(const char *t, size_t len, bool toml, struct out *o, unsigned *n) {
        const char assign = toml ? '=' : ':';
        size_t key = 0, key_len = 0;
        bool have_key = false, pending = false;
        for (size_t i = 0; i < len;) {
                char c = t[i];
                if (toml && c == '#') {
                        size_t j = i;
                        while (j < len && t[j] != '\n')
                                j++;
                        put(o, t + i, j - i);
                        i = j;
                        continue;
                }
                if (c == '"' || (toml && c == '\'')) {
                        size_t cs, cl, e = string_end(t, len, i, toml, &cs, &cl);
                        if (pending)
                                put_mark(o, n);
                        else
                                put(o, t + i, e - i);
                        /* Even a value just replaced may turn out a key (`auth:` with its value
                         * missing, then `"password": ...` on the next line): the = or : after
                         * it decides, by its own text. */
                        have_key = true;
                        key = cs;
                        key_len = cl;
                        pending = false;
                        i = e;
                        continue;
                }
                if (bare_char(c) || (pending && c == '+')) {
                        size_t j = i + 1;
                        /* A bare value (a number, a date) after a secret's key: all of it. */
                        while (j < len && (bare_char(t[j]) || (pending && t[j] && strchr(".+:", t[j]))))
                                j++;
                        if (pending)
                                put_mark(o, n);
                        else
                                put(o, t + i, j - i);
                        have_key = true;
                        key = i;
                        key_len = j - i;
                        pending = false;
                        i = j;
                        continue;
                }
                put(o, &c, 1);
                i++;
                if (c == assign) {
                        pending = have_key && redact_key_is_secret(t + key, key_len);
                        have_key = false;
                } else if (c == ' ' || c == '\t' || c == '\r' || (toml && c == '.') || (!toml && c == '\n')) {
                        /* between a key and its = or :, or a dotted key's parts */
                } else {
                        have_key = pending = false;
                }
        }
        return o->oom ? -ENOMEM : 0;
}

/* NAME=VALUE lines (or NUL-separated entries), with an optional `export `. */
static int redact_env(const char *t, size_t len, char sep, struct out *o, unsigned *n) {
        for (size_t i = 0; i < len;) {
                const char *nl = memchr(t + i, sep, len - i);
                size_t end = nl ? (size_t)(nl - t) : len, p = i;
                while (p < end && (t[p] == ' ' || t[p] == '\t'))
                        p++;
                if (end - p > 7 && strncmp(t + p, "export ", 7) == 0)
                        for (p += 7; p < end && t[p] == ' ';)
                                p++;
                size_t name = p;
                while (p < end && (isalnum((unsigned char)t[p]) || t[p] == '_'))
                        p++;
                if (p < end && t[p] == '=' && p > name && redact_key_is_secret(t + name, p - name)) {
                        put(o, t + i, p + 1 - i);
                        put(o, REDACT_MARK, strlen(REDACT_MARK));
                        (*n)++;
                } else {
                        put(o, t + i, end - i);
                }
                if (nl)
                        put(o, &sep, 1);
                i = end + (nl ? 1 : 0);
        }
        return o->oom ? -ENOMEM : 0;
}

static bool ends_with(const char *s, const char *tail) {
        size_t n = strlen(s), m = strlen(tail);
        return n >= m && strcmp(s + n - m, tail) == 0;
}

int redact_file(const char *path, char **text, size_t *len, unsigned *n_redacted) {
        *n_redacted = 0;
        if (!*text)
                return 0;
        struct out o = {0};
        int r;
        if (ends_with(path, ".toml"))
                r = redact_structured(*text, *len, true, &o, n_redacted);
        else if (ends_with(path, ".json"))
                r = redact_structured(*text, *len, false, &o, n_redacted);
        else if (strcmp(path, "etc/environment") == 0 || strncmp(path, "etc/profile.d/", 14) == 0)
                r = redact_env(*text, *len, '\n', &o, n_redacted);
        else if (strncmp(path, "proc/", 5) == 0 && ends_with(path, "/environ"))
                r = redact_env(*text, *len, '\0', &o, n_redacted);
        else
                return 0;
        if (r < 0 || *n_redacted == 0) {
                free(o.buf);
                *n_redacted = 0;
                return r;
        }
        free(*text);
        *text = o.buf;
        *len = o.len;
        return 0;
}
