/* Process identity from /proc (sys/proc.h): status lines, cmdline, user names. */
#include "sys/proc.h"

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

/* One unsigned decimal at *p (leading blanks skipped), up to end; false when none, or
 * more than fits. */
static bool decimal(const char **p, const char *end, unsigned long long *ret) {
        const char *q = *p;
        while (q < end && *q == ' ')
                q++;
        const char *start = q;
        unsigned long long v = 0;
        while (q < end && *q >= '0' && *q <= '9') {
                unsigned int d = (unsigned int)(*q - '0');
                if (v > (~0ULL - d) / 10)
                        return false;
                v = v * 10 + d;
                q++;
        }
        if (q == start)
                return false;
        *p = q;
        *ret = v;
        return true;
}

int proc_status_parse(const char *text, size_t len, struct proc_status *ret) {
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
                        int n = numbers(v, eol, ret->nspid, PROC_NSPID_MAX);
                        ret->n_nspid = n > 0 ? (unsigned int)n : 0;
                } else if ((v = field(line, eol, "VmRSS"))) {
                        /* "   12345 kB": the kernel's unit is always kB (KiB) */
                        const char *unit = eol;
                        while (unit > v && unit[-1] != ' ' && unit[-1] != '\t')
                                unit--;
                        while (v < eol && *v == '\t')
                                v++;
                        unsigned long long kib;
                        if ((size_t)(eol - unit) == 2 && memcmp(unit, "kB", 2) == 0 && decimal(&v, eol, &kib) &&
                            v < unit && (*v == ' ' || *v == '\t')) {
                                ret->rss_kib = kib;
                                ret->have_rss = true;
                        }
                }
                line = nl ? nl + 1 : end;
        }
        return known ? 0 : -EINVAL;
}

int proc_stat_parse(const char *text, size_t len, struct proc_stat *ret) {
        memset(ret, 0, sizeof(*ret));
        const char *end = text + len, *close = NULL;
        for (const char *c = text; c < end; c++)
                if (*c == ')')
                        close = c;
        if (!close || close + 1 >= end || close[1] != ' ')
                return -EINVAL;
        /* From field 3 (the state) on, single spaces between fields; 4, 14, 15 and 22 wanted. */
        const char *p = close + 2;
        for (int field_no = 3; field_no <= 22; field_no++) {
                if (p >= end)
                        return -EINVAL;
                unsigned long long v = 0;
                const char *q = p;
                if (field_no == 4 && *p != ' ' && decimal(&q, end, &v) && v <= 0xffffffffULL &&
                    (q == end || *q == ' ')) {
                        /* only the tree needs it: a parent that is no number costs the row its
                         * place under a launcher, never its CPU time */
                        ret->ppid = (unsigned int)v;
                        p = q;
                } else if (field_no == 14 || field_no == 15 || field_no == 22) {
                        if (!decimal(&p, end, &v) || (p < end && *p != ' ' && *p != '\n'))
                                return -EINVAL;
                        if (field_no == 14)
                                ret->utime = v;
                        else if (field_no == 15)
                                ret->stime = v;
                        else
                                ret->start_ticks = v;
                } else {
                        while (p < end && *p != ' ' && *p != '\n')
                                p++;
                }
                if (field_no < 22) {
                        if (p >= end || *p != ' ')
                                return -EINVAL;
                        p++;
                }
        }
        return 0;
}

int proc_uptime_parse(const char *text, size_t len, double *ret) {
        char buf[64];
        size_t n = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;
        memcpy(buf, text, n);
        buf[n] = '\0';
        /* "12345.67 98765.43": whole seconds and hundredths, read without the locale */
        const char *p = buf;
        unsigned long long whole, frac = 0;
        if (!decimal(&p, buf + n, &whole))
                return -EINVAL;
        double scale = 1;
        if (*p == '.') {
                p++;
                while (*p >= '0' && *p <= '9' && scale < 1e9) {
                        frac = frac * 10 + (unsigned long long)(*p - '0');
                        scale *= 10;
                        p++;
                }
        }
        if (*p && *p != ' ' && *p != '\n')
                return -EINVAL;
        *ret = (double)whole + (double)frac / scale;
        return 0;
}

double proc_cpu_percent(unsigned long long before_ticks, unsigned long long now_ticks, unsigned long long elapsed_ns,
                       long ticks_per_s) {
        if (elapsed_ns == 0 || ticks_per_s <= 0 || now_ticks < before_ticks)
                return -1;
        double cpu_s = (double)(now_ticks - before_ticks) / (double)ticks_per_s;
        return 100.0 * cpu_s / ((double)elapsed_ns / 1e9);
}

struct proc_users {
        size_t n;
        struct {
                unsigned int uid;
                char name[32];
        } *v;
};

int proc_users_load(struct fsroot *fs, struct proc_users **ret) {
        struct proc_users *u = calloc(1, sizeof(*u));
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
                                proc_users_free(u);
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

const char *proc_users_name(const struct proc_users *u, unsigned int uid) {
        for (size_t i = 0; u && i < u->n; i++)
                if (u->v[i].uid == uid)
                        return u->v[i].name;
        return NULL;
}

struct proc_users *proc_users_free(struct proc_users *u) {
        if (u) {
                free(u->v);
                free(u);
        }
        return NULL;
}

bool proc_self_nested(struct fsroot *fs) {
        char *text = NULL;
        size_t len = 0;
        struct proc_status st;
        bool nested = fsroot_read_alloc(fs, "/proc/self/status", &text, &len) == 0 &&
                      proc_status_parse(text, len, &st) == 0 && st.n_nspid > 1;
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

double proc_uptime(struct fsroot *fs) {
        char *text = NULL;
        size_t len = 0;
        double up;
        bool ok = fsroot_read_alloc(fs, "/proc/uptime", &text, &len) == 0 && proc_uptime_parse(text, len, &up) == 0;
        free(text);
        return ok ? up : -1;
}

/* stat's CPU time and start, and the time since it started. */
static void host_figures(struct fsroot *fs, unsigned int pid, double uptime_s, long ticks_per_s,
                         struct proc_info *ret) {
        char path[64], *text = NULL;
        size_t len = 0;
        snprintf(path, sizeof(path), "/proc/%u/stat", pid);
        ret->have_stat = fsroot_read_alloc(fs, path, &text, &len) == 0 && proc_stat_parse(text, len, &ret->stat) == 0;
        free(text);
        if (ret->have_stat && uptime_s >= 0 && ticks_per_s > 0) {
                double started = (double)ret->stat.start_ticks / (double)ticks_per_s;
                /* uptime and starttime are rounded apart: a process just started is 0 s old */
                ret->elapsed_s = uptime_s > started ? uptime_s - started : 0;
        }
}

static void lookup(struct fsroot *fs, const struct proc_users *users, bool nested, unsigned int pid, double uptime_s,
                   long ticks_per_s, bool workload, struct proc_info *ret) {
        memset(ret, 0, sizeof(*ret));
        ret->elapsed_s = -1;
        if (nested) {
                /* NVML's PID is the host's; a process of ours with that number is another one. */
                ret->where = PROC_OTHER_NS;
                return;
        }
        char path[64], *text = NULL;
        size_t len = 0;
        struct proc_status st;
        snprintf(path, sizeof(path), "/proc/%u/status", pid);
        if (fsroot_read_alloc(fs, path, &text, &len) < 0 || proc_status_parse(text, len, &st) < 0) {
                free(text);
                ret->where = PROC_GONE;
                return;
        }
        free(text);
        ret->where = PROC_FOUND;
        ret->have_rss = st.have_rss;
        ret->rss_kib = st.rss_kib;
        host_figures(fs, pid, uptime_s, ticks_per_s, ret);
        if (st.n_nspid > 1)
                ret->ns_pid = st.nspid[st.n_nspid - 1];
        const char *name = st.have_uid ? proc_users_name(users, st.uid) : NULL;
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
        if (workload && workload_read(fs, pid, &w) == 0) {
                workload_kubernetes_names(fs, &w);
                workload_summary(&w, ret->workload, sizeof(ret->workload));
        }
}

void proc_lookup(struct fsroot *fs, const struct proc_users *users, bool nested, unsigned int pid,
                     double uptime_s, long ticks_per_s, struct proc_info *ret) {
        lookup(fs, users, nested, pid, uptime_s, ticks_per_s, true, ret);
}

void proc_lookup_host(struct fsroot *fs, const struct proc_users *users, bool nested, unsigned int pid,
                          double uptime_s, long ticks_per_s, struct proc_info *ret) {
        lookup(fs, users, nested, pid, uptime_s, ticks_per_s, false, ret);
}
