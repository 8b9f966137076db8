/* Process identity from /proc (top_proc.h): status lines, cmdline, user names. */
#include "top/top_proc.h"

#include "core/utf8.h"

#include "core/fsroot.h"
#include "sys/workload.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of a "Key:\tvalue" line at line (up to end), or NULL when the line is another. */
static const char *field(const char *line, const char *end, const char *key) {
        size_t k = strlen(key);
        if ((size_t)(end - line) <= k || memcmp(line, key, k) != 0 || line[k] != ':')
                return NULL;
        return line + k + 1;
}

/* Whitespace-separated unsigned numbers from p to end, at most max; the count, or -1 when
 * a token is not a whole number that fits. */
static int numbers(const char *p, const char *end, unsigned int *out, unsigned int max) {
        unsigned int n = 0;
        while (p < end) {
                while (p < end && (*p == ' ' || *p == '\t'))
                        p++;
                if (p == end)
                        break;
                unsigned long long v = 0;
                const char *start = p;
                while (p < end && *p >= '0' && *p <= '9') {
                        v = v * 10 + (unsigned long long)(*p - '0');
                        if (v > 0xffffffffULL)
                                return -1;
                        p++;
                }
                if (p == start || (p < end && *p != ' ' && *p != '\t'))
                        return -1;
                if (n < max)
                        out[n] = (unsigned int)v;
                n++;
        }
        return n > max ? -1 : (int)n;
}

int top_status_parse(const char *text, size_t len, struct top_status *ret) {
        memset(ret, 0, sizeof(*ret));
        bool known = false;
        const char *end = text + len;
        for (const char *line = text; line < end;) {
                const char *nl = memchr(line, '\n', (size_t)(end - line));
                const char *eol = nl ? nl : end;
                const char *v;
                if ((v = field(line, eol, "Name"))) {
                        known = true;
                        while (v < eol && (*v == ' ' || *v == '\t'))
                                v++;
                        size_t n = (size_t)(eol - v);
                        if (n >= sizeof(ret->name))
                                n = sizeof(ret->name) - 1;
                        /* A process names itself (prctl PR_SET_NAME): no control bytes reach
                         * the terminal. */
                        for (size_t i = 0; i < n; i++) {
                                unsigned char c = (unsigned char)v[i];
                                ret->name[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
                        }
                        ret->name[n] = '\0';
                } else if (field(line, eol, "Pid")) {
                        known = true;
                } else if ((v = field(line, eol, "Uid"))) {
                        unsigned int ids[4];
                        if (numbers(v, eol, ids, 4) == 4) {
                                ret->uid = ids[0];
                                ret->have_uid = true;
                        }
                } else if ((v = field(line, eol, "NSpid"))) {
                        int n = numbers(v, eol, ret->nspid, TOP_NSPID_MAX);
                        ret->n_nspid = n > 0 ? (unsigned int)n : 0;
                }
                line = nl ? nl + 1 : end;
        }
        return known ? 0 : -EINVAL;
}

struct top_users {
        size_t n;
        struct {
                unsigned int uid;
                char name[32];
        } *v;
};

int top_users_load(struct fsroot *fs, struct top_users **ret) {
        struct top_users *u = calloc(1, sizeof(*u));
        if (!u)
                return -ENOMEM;
        char *text = NULL;
        size_t len = 0;
        if (fsroot_read_alloc(fs, "/etc/passwd", &text, &len) < 0 || len == 0) {
                free(text);
                *ret = u; /* numbers then */
                return 0;
        }
        /* fgetpwent: libc's own parser of the format, on the root's copy rather than NSS. */
        FILE *f = fmemopen(text, len, "r");
        if (!f) {
                free(text);
                *ret = u;
                return 0;
        }
        struct passwd *pw;
        size_t cap = 0;
        while ((pw = fgetpwent(f))) {
                if (u->n == cap) {
                        size_t ncap = cap ? cap * 2 : 32;
                        void *nv = realloc(u->v, ncap * sizeof(*u->v));
                        if (!nv) {
                                fclose(f);
                                free(text);
                                top_users_free(u);
                                return -ENOMEM;
                        }
                        u->v = nv;
                        cap = ncap;
                }
                u->v[u->n].uid = pw->pw_uid;
                snprintf(u->v[u->n].name, sizeof(u->v[u->n].name), "%s", pw->pw_name);
                u->n++;
        }
        fclose(f);
        free(text);
        *ret = u;
        return 0;
}

const char *top_users_name(const struct top_users *u, unsigned int uid) {
        for (size_t i = 0; u && i < u->n; i++)
                if (u->v[i].uid == uid)
                        return u->v[i].name;
        return NULL;
}

struct top_users *top_users_free(struct top_users *u) {
        if (u) {
                free(u->v);
                free(u);
        }
        return NULL;
}

bool top_proc_self_nested(struct fsroot *fs) {
        char *text = NULL;
        size_t len = 0;
        struct top_status st;
        bool nested = fsroot_read_alloc(fs, "/proc/self/status", &text, &len) == 0 &&
                      top_status_parse(text, len, &st) == 0 && st.n_nspid > 1;
        free(text);
        return nested;
}

/* cmdline's NUL-separated arguments joined by spaces, control bytes and bytes that are
 * not UTF-8 as '?', cut at a character, never inside one: any process sets its own
 * arguments, and a terminal shown a cut or invalid sequence can swallow what follows.
 * raw[len] is a NUL (the reader's terminator), so no sequence is read past the end. */
static void command_line(const char *raw, size_t len, char *out, size_t size) {
        size_t o = 0;
        while (len && raw[len - 1] == '\0')
                len--;
        for (size_t i = 0; i < len && o + 1 < size;) {
                const unsigned char *u = (const unsigned char *)raw + i;
                size_t n = u[0] ? utf8_sequence(u) : 1;
                bool c1 = n == 2 && u[0] == 0xC2 && u[1] < 0xA0; /* C1 controls, as terminals read them */
                if (n <= 1 || c1) {
                        out[o++] = u[0] == '\0' ? ' ' : (u[0] < 0x20 || u[0] >= 0x7f) ? '?' : (char)u[0];
                        i += c1 ? 2 : 1;
                        continue;
                }
                if (o + n >= size)
                        break;
                memcpy(out + o, u, n);
                o += n;
                i += n;
        }
        out[o] = '\0';
}

void top_proc_lookup(struct fsroot *fs, const struct top_users *users, bool nested, unsigned int pid,
                     struct top_proc_info *ret) {
        memset(ret, 0, sizeof(*ret));
        if (nested) {
                /* NVML's PID is the host's; a process of ours with that number is another one. */
                ret->where = TOP_PROC_OTHER_NS;
                return;
        }
        char path[64], *text = NULL;
        size_t len = 0;
        struct top_status st;
        snprintf(path, sizeof(path), "/proc/%u/status", pid);
        if (fsroot_read_alloc(fs, path, &text, &len) < 0 || top_status_parse(text, len, &st) < 0) {
                free(text);
                ret->where = TOP_PROC_GONE;
                return;
        }
        free(text);
        ret->where = TOP_PROC_FOUND;
        if (st.n_nspid > 1)
                ret->ns_pid = st.nspid[st.n_nspid - 1];
        const char *name = st.have_uid ? top_users_name(users, st.uid) : NULL;
        if (name)
                snprintf(ret->user, sizeof(ret->user), "%s", name);
        else if (st.have_uid)
                snprintf(ret->user, sizeof(ret->user), "%u", st.uid);
        else
                snprintf(ret->user, sizeof(ret->user), "?");
        snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
        text = NULL;
        if (fsroot_read_alloc(fs, path, &text, &len) == 0 && len > 0)
                command_line(text, len, ret->command, sizeof(ret->command));
        else /* a kernel thread or a zombie: no arguments */
                snprintf(ret->command, sizeof(ret->command), "[%s]", st.name);
        free(text);
        struct workload w;
        if (workload_read(fs, pid, &w) == 0) {
                workload_kubernetes_names(fs, &w);
                workload_summary(&w, ret->workload, sizeof(ret->workload));
        }
}
