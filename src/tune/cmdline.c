/* Editing kernel command-line parameters in boot loader files (cmdline.h). */
#include "tune/cmdline.h"
#include "core/atomic_file.h"
#include "core/fsroot.h"
#include "core/run_command.h"
#include "core/strv.h"
#include "tune/tune.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char dropin_prefix[] = "GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX";
static const char dropin_header[] = "# Written by `gpuvet tune` (kernel command-line settings); `gpuvet tune revert` "
                                    "removes it. update-grub reads it.\n";

enum cmdline_file_kind tune_cmdline_kind(const char *file) {
        if (strcmp(file, TUNE_GRUB_DROPIN) == 0)
                return CMDLINE_GRUB_DROPIN;
        if (strcmp(file, "/etc/default/grub") == 0)
                return CMDLINE_GRUB_DEFAULT;
        if (strcmp(file, "/etc/kernel/cmdline") == 0)
                return CMDLINE_KERNEL;
        return CMDLINE_BLS_ENTRY;
}

/* ---- the parameter list inside a file ---- */

static bool starts_line(const char *text, const char *p) {
        return p == text || p[-1] == '\n';
}

static int find_section(const char *text, size_t len, enum cmdline_file_kind kind, size_t *start, size_t *end);

/* [*start, *end) of the parameter list of text, or -ENOENT / -ENOTSUP; -EINVAL when it holds a
 * NUL byte (no command line does: the file is damaged, and editing it would hide that). */
static int section(const char *text, size_t len, enum cmdline_file_kind kind, size_t *start, size_t *end) {
        int r = find_section(text, len, kind, start, end);
        if (r == 0 && memchr(text + *start, '\0', *end - *start))
                return -EINVAL;
        return r;
}

static int find_section(const char *text, size_t len, enum cmdline_file_kind kind, size_t *start, size_t *end) {
        const char *t = text, *stop = text + len;
        switch (kind) {
        case CMDLINE_KERNEL: {
                const char *nl = memchr(t, '\n', len);
                *start = 0;
                *end = nl ? (size_t)(nl - t) : len;
                return 0;
        }
        case CMDLINE_BLS_ENTRY:
                for (const char *p = t; p < stop;) {
                        const char *nl = memchr(p, '\n', (size_t)(stop - p)), *e = nl ? nl : stop;
                        if (e - p >= 8 && strncmp(p, "options", 7) == 0 && (p[7] == ' ' || p[7] == '\t')) {
                                const char *s = p + 8;
                                while (s < e && (*s == ' ' || *s == '\t'))
                                        s++;
                                /* RHEL 8 keeps the list itself in grubenv ("options $kernelopts");
                                 * RHEL 9's "$tuned_params" only adds to it. */
                                for (const char *v = s; v && v < e; v = memchr(v + 1, '$', (size_t)(e - v - 1)))
                                        if (*v == '$' && (size_t)(e - v) >= 11 && strncmp(v, "$kernelopts", 11) == 0)
                                                return -ENOTSUP;
                                *start = (size_t)(s - t);
                                *end = (size_t)(e - t);
                                return 0;
                        }
                        p = nl ? nl + 1 : stop;
                }
                return -ENOENT;
        case CMDLINE_GRUB_DROPIN:
        case CMDLINE_GRUB_DEFAULT: {
                const char *key = kind == CMDLINE_GRUB_DROPIN ? dropin_prefix : "GRUB_CMDLINE_LINUX=";
                size_t klen = strlen(key);
                for (const char *p = t; p + klen <= stop; p++) {
                        if (!starts_line(t, p) || strncmp(p, key, klen) != 0)
                                continue;
                        const char *s = p + klen, *nl = memchr(s, '\n', (size_t)(stop - s)), *e = nl ? nl : stop;
                        char quote = kind == CMDLINE_GRUB_DROPIN ? '"' : (s < e && (*s == '"' || *s == '\'')) ? *s++ : 0;
                        /* An unquoted value is one shell word: a second parameter would make the
                         * line a command. */
                        if (!quote)
                                return -EILSEQ;
                        const char *q = memchr(s, quote, (size_t)(e - s));
                        if (!q)
                                return -ENOENT;
                        *start = (size_t)(s - t);
                        *end = (size_t)(q - t);
                        return 0;
                }
                return -ENOENT;
        }
        }
        return -ENOENT;
}

/* The next space-separated token of s[*pos, len): [*a, *b), false at the end. */
static bool next_token(const char *s, size_t len, size_t *pos, size_t *a, size_t *b) {
        size_t i = *pos;
        while (i < len && (s[i] == ' ' || s[i] == '\t'))
                i++;
        if (i >= len)
                return false;
        *a = i;
        while (i < len && s[i] != ' ' && s[i] != '\t')
                i++;
        *b = *pos = i;
        return true;
}

static bool token_has_key(const char *tok, size_t toklen, const char *key) {
        size_t klen = strlen(key);
        return toklen >= klen && strncmp(tok, key, klen) == 0 && (toklen == klen || tok[klen] == '=');
}

static int get_from(const char *s, size_t len, const char *const *keys, char *buf, size_t size) {
        size_t used = 0;
        buf[0] = '\0';
        for (size_t k = 0; keys[k]; k++) {
                size_t pos = 0, a, b;
                while (next_token(s, len, &pos, &a, &b)) {
                        if (!token_has_key(s + a, b - a, keys[k]))
                                continue;
                        if (used + (used ? 1 : 0) + (b - a) + 1 > size)
                                return -ENAMETOOLONG;
                        if (used)
                                buf[used++] = ' ';
                        memcpy(buf + used, s + a, b - a);
                        buf[used += b - a] = '\0';
                        break;
                }
        }
        if (!used)
                snprintf(buf, size, "none");
        return 0;
}

int tune_cmdline_get(const char *text, size_t len, enum cmdline_file_kind kind, const char *const *keys, char *buf,
                     size_t size) {
        size_t start, end;
        if (!text)
                return kind == CMDLINE_GRUB_DROPIN ? get_from("", 0, keys, buf, size) : -ENOENT;
        int r = section(text, len, kind, &start, &end);
        if (r == -ENOENT && kind == CMDLINE_GRUB_DROPIN)
                return get_from("", 0, keys, buf, size);
        return r < 0 ? r : get_from(text + start, end - start, keys, buf, size);
}

/* ---- editing ---- */

struct buf {
        char *s;
        size_t len, cap;
};

static int buf_splice(struct buf *b, size_t at, size_t remove, const char *insert, size_t ilen) {
        if (b->len - remove + ilen + 1 > b->cap) {
                size_t cap = (b->len - remove + ilen + 1) * 2;
                char *s = realloc(b->s, cap);
                if (!s)
                        return -ENOMEM;
                b->s = s;
                b->cap = cap;
        }
        memmove(b->s + at + ilen, b->s + at + remove, b->len - at - remove);
        memcpy(b->s + at, insert, ilen);
        b->len = b->len - remove + ilen;
        b->s[b->len] = '\0';
        return 0;
}

/* Remove the token [a, b) with the space before it (else the one after it). */
static int remove_token(struct buf *p, size_t a, size_t b) {
        if (a > 0 && (p->s[a - 1] == ' ' || p->s[a - 1] == '\t'))
                a--;
        else if (b < p->len && (p->s[b] == ' ' || p->s[b] == '\t'))
                b++;
        return buf_splice(p, a, b - a, "", 0);
}

/* The token of wanted for key, or NULL. */
static const char *wanted_for(const char *wanted, const char *key, size_t *toklen) {
        size_t pos = 0, a, b, len = strlen(wanted);
        while (next_token(wanted, len, &pos, &a, &b))
                if (token_has_key(wanted + a, b - a, key)) {
                        *toklen = b - a;
                        return wanted + a;
                }
        return NULL;
}

static int edit_params(struct buf *p, const char *const *keys, const char *wanted) {
        for (size_t k = 0; keys[k]; k++) {
                size_t toklen = 0;
                const char *want = wanted_for(wanted, keys[k], &toklen);
                bool placed = false;
                size_t pos = 0, a, b;
                while (next_token(p->s, p->len, &pos, &a, &b)) {
                        if (!token_has_key(p->s + a, b - a, keys[k]))
                                continue;
                        int r;
                        if (want && !placed) {
                                r = buf_splice(p, a, b - a, want, toklen);
                                pos = a + toklen;
                                placed = true;
                        } else {
                                r = remove_token(p, a, b);
                                pos = a > 0 ? a - 1 : 0;
                        }
                        if (r < 0)
                                return r;
                }
                if (want && !placed) {
                        int r = buf_splice(p, p->len, 0, " ", 1);
                        if (r < 0 || (r = buf_splice(p, p->len, 0, want, toklen)) < 0)
                                return r;
                }
        }
        return 0;
}

int tune_cmdline_set(const char *text, size_t len, enum cmdline_file_kind kind, const char *const *keys,
                     const char *wanted, char **out, size_t *out_len) {
        *out = NULL;
        *out_len = 0;
        if (strcmp(wanted, "none") == 0)
                wanted = "";
        size_t pos = 0, a, b, wlen = strlen(wanted);
        while (next_token(wanted, wlen, &pos, &a, &b)) {
                bool known = false;
                for (size_t k = 0; keys[k] && !known; k++)
                        known = token_has_key(wanted + a, b - a, keys[k]);
                if (!known)
                        return -EINVAL;
        }
        size_t start = 0, end = 0;
        int r = text ? section(text, len, kind, &start, &end) : -ENOENT;
        bool fresh = r == -ENOENT && kind == CMDLINE_GRUB_DROPIN;
        if (r < 0 && !fresh)
                return r;
        struct buf p = {0};
        if ((r = buf_splice(&p, 0, 0, fresh ? "" : text + start, fresh ? 0 : end - start)) < 0 ||
            (r = edit_params(&p, keys, wanted)) < 0) {
                free(p.s);
                return r;
        }
        if (kind == CMDLINE_GRUB_DROPIN && strspn(p.s, " \t") == p.len) {
                free(p.s); /* nothing of ours left: the drop-in goes */
                return 0;
        }
        struct buf o = {0};
        if (fresh) {
                if ((r = buf_splice(&o, 0, 0, dropin_header, strlen(dropin_header))) == 0 &&
                    (r = buf_splice(&o, o.len, 0, dropin_prefix, strlen(dropin_prefix))) == 0 &&
                    (r = buf_splice(&o, o.len, 0, p.s, p.len)) == 0)
                        r = buf_splice(&o, o.len, 0, "\"\n", 2);
        } else if ((r = buf_splice(&o, 0, 0, text, start)) == 0 && (r = buf_splice(&o, o.len, 0, p.s, p.len)) == 0) {
                r = buf_splice(&o, o.len, 0, text + end, len - end);
        }
        free(p.s);
        if (r < 0) {
                free(o.s);
                return r;
        }
        *out = o.s;
        *out_len = o.len;
        return 0;
}

/* ---- through the root ---- */

bool tune_cmdline_in_effect(struct fsroot *fs, const char *const *keys, const char *value) {
        char line[4096], now[TUNE_VALUE_MAX];
        if (fsroot_read_str(fs, "/proc/cmdline", line, sizeof(line)) < 0)
                return false;
        return tune_cmdline_get(line, strlen(line), CMDLINE_KERNEL, keys, now, sizeof(now)) == 0 &&
               strcmp(now, value) == 0;
}

int tune_cmdline_read(struct fsroot *fs, const char *file, const char *const *keys, char *buf, size_t size) {
        char *text = NULL;
        size_t len = 0;
        int r = fsroot_read_alloc(fs, file, &text, &len);
        enum cmdline_file_kind kind = tune_cmdline_kind(file);
        if (r == -ENOENT && kind == CMDLINE_GRUB_DROPIN)
                return tune_cmdline_get(NULL, 0, kind, keys, buf, size);
        if (r == 0)
                r = tune_cmdline_get(text, len, kind, keys, buf, size);
        free(text);
        return r;
}

int tune_cmdline_write(struct fsroot *fs, const char *file, const char *const *keys, const char *value) {
        char *text = NULL, *out = NULL;
        size_t len = 0, out_len = 0;
        enum cmdline_file_kind kind = tune_cmdline_kind(file);
        int r = fsroot_read_alloc(fs, file, &text, &len);
        if (r < 0 && !(r == -ENOENT && kind == CMDLINE_GRUB_DROPIN))
                return r;
        r = tune_cmdline_set(r == 0 ? text : NULL, len, kind, keys, value, &out, &out_len);
        free(text);
        if (r < 0)
                return r;
        /* Its directory resolved inside the root: a grub.d linked elsewhere is not written
         * outside it. */
        char path[4096];
        if ((r = fsroot_write_path(fs, file, path, sizeof(path))) < 0) {
                free(out);
                return r;
        }
        if (!out)
                return unlink(path) == 0 || errno == ENOENT ? 0 : -errno;
        r = tune_mkdirs_for(path);
        if (r == 0)
                r = atomic_write(path, out, out_len);
        free(out);
        return r;
}

static bool has_conf_entries(struct fsroot *fs, char ***entries) {
        *entries = NULL;
        char **names;
        if (fsroot_list(fs, "/boot/loader/entries", &names) < 0)
                return false;
        size_t keep = 0;
        for (size_t i = 0; names[i]; i++) {
                size_t n = strlen(names[i]);
                if (n > 5 && strcmp(names[i] + n - 5, ".conf") == 0)
                        names[keep++] = names[i];
                else
                        free(names[i]);
        }
        names[keep] = NULL;
        if (!keep) {
                strv_free(names);
                return false;
        }
        *entries = names;
        return true;
}

static int add(char ***v, size_t *n, const char *s) {
        char **w = realloc(*v, (*n + 2) * sizeof(*w));
        if (!w)
                return -ENOMEM;
        *v = w;
        if (!(w[*n] = strdup(s)))
                return -ENOMEM;
        w[++*n] = NULL;
        return 0;
}

char **tune_cmdline_files(struct fsroot *fs, char *why, size_t whylen) {
        char **files = NULL, **entries = NULL;
        size_t n = 0;
        bool debian = fsroot_access(fs, "/etc/debian_version") == 0;
        if (fsroot_is_dir(fs, "/etc/default/grub.d") || (debian && fsroot_access(fs, "/etc/default/grub") == 0)) {
                if (add(&files, &n, TUNE_GRUB_DROPIN) < 0)
                        goto oom;
                return files;
        }
        if (has_conf_entries(fs, &entries)) {
                for (size_t i = 0; entries[i]; i++) {
                        char path[512];
                        snprintf(path, sizeof(path), "/boot/loader/entries/%s", entries[i]);
                        if (add(&files, &n, path) < 0)
                                goto oom;
                }
                strv_free(entries);
                entries = NULL;
                /* The templates new kernels' entries are made from. */
                if ((fsroot_access(fs, "/etc/kernel/cmdline") == 0 && add(&files, &n, "/etc/kernel/cmdline") < 0) ||
                    (fsroot_access(fs, "/etc/default/grub") == 0 && add(&files, &n, "/etc/default/grub") < 0))
                        goto oom;
                return files;
        }
        if (fsroot_access(fs, "/etc/kernelstub/configuration") == 0) {
                snprintf(why, whylen, "kernelstub (Pop!_OS) keeps the command line: add the parameters with "
                                      "`kernelstub --add-options \"...\"`");
                return NULL;
        }
        if (fsroot_access(fs, "/etc/default/grub") == 0) {
                if (add(&files, &n, "/etc/default/grub") < 0)
                        goto oom;
                return files;
        }
        snprintf(why, whylen, "no boot loader configuration gpuvet edits here (/etc/default/grub, "
                              "/boot/loader/entries/*.conf)");
        return NULL;
oom:
        strv_free(files);
        strv_free(entries);
        snprintf(why, whylen, "out of memory");
        return NULL;
}

int tune_cmdline_regenerate(struct fsroot *fs, char *msg, size_t msglen) {
        if (!fsroot_is_live(fs)) {
                snprintf(msg, msglen, "run update-grub (Debian, Ubuntu) or grub2-mkconfig in that system to rebuild "
                                      "grub.cfg, then reboot it");
                return 1;
        }
        char *update[] = {"update-grub", NULL};
        char *mkconfig2[] = {"grub2-mkconfig", "-o", "/boot/grub2/grub.cfg", NULL};
        char *mkconfig[] = {"grub-mkconfig", "-o", "/boot/grub/grub.cfg", NULL};
        char **tries[] = {update, access("/boot/grub2", F_OK) == 0 ? mkconfig2 : mkconfig};
        for (size_t i = 0; i < 2; i++) {
                struct command_result res;
                int r = run_command(tries[i], 120000, 1 << 16, &res);
                if (r == -ENOENT)
                        continue;
                if (r < 0) {
                        snprintf(msg, msglen, "%s: %s", tries[i][0], strerror(-r));
                        return r;
                }
                bool ok = !res.timed_out && res.exit_status == 0;
                if (!ok)
                        snprintf(msg, msglen, "%s %s: %.300s", tries[i][0],
                                 res.timed_out ? "did not finish within 120 s" : "failed", res.err_tail);
                else
                        snprintf(msg, msglen, "%s rebuilt grub.cfg", tries[i][0]);
                command_result_done(&res);
                return ok ? 0 : -EIO;
        }
        snprintf(msg, msglen, "neither update-grub nor grub-mkconfig found: rebuild grub.cfg by hand");
        return -ENOENT;
}
