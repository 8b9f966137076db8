/* A process's workload from its cgroup and kubelet's log layout (workload.h). */
#include "sys/workload.h"

#include "core/array.h"
#include "core/fsroot.h"
#include "core/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool workload_found(const struct workload *w) {
        return w->slurm_job[0] || w->pod_uid[0] || w->container_id[0];
}

/* One path component: a pointer into the path and its length. */
struct comp {
        const char *s;
        size_t n;
};

static bool comp_is(struct comp c, const char *word) {
        return c.n == strlen(word) && memcmp(c.s, word, c.n) == 0;
}

static bool has_prefix(struct comp c, const char *p) {
        size_t k = strlen(p);
        return c.n >= k && memcmp(c.s, p, k) == 0;
}

static bool has_suffix(struct comp c, const char *p) {
        size_t k = strlen(p);
        return c.n >= k && memcmp(c.s + c.n - k, p, k) == 0;
}

static bool all_of(const char *s, size_t n, const char *set) {
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!s[i] || !strchr(set, s[i]))
                        return false;
        return true;
}

#define DIGITS "0123456789"
#define HEX "0123456789abcdef"
/* Crockford's base 32, as Slurm prints a SLUID (src/common/sluid.c). */
#define CB32 "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

static void copy(char *dst, size_t size, const char *s, size_t n) {
        if (n >= size)
                n = size - 1;
        memcpy(dst, s, n);
        dst[n] = '\0';
}

/* A pod uid as kubelet writes it into a cgroup name: a UUID with '-' (cgroupfs) or '_'
 * (systemd, which reserves '-'), or a static pod's 32 hex digits (a hash of its manifest).
 * Written canonical (with '-') into out (40 bytes). */
static bool pod_uid(const char *s, size_t n, char *out) {
        if (n == 32 && all_of(s, n, HEX)) {
                copy(out, 40, s, n);
                return true;
        }
        if (n != 36)
                return false;
        char uid[37];
        for (size_t i = 0; i < n; i++) {
                bool dash = i == 8 || i == 13 || i == 18 || i == 23;
                if (dash ? (s[i] != '-' && s[i] != '_') : !s[i] || !strchr(HEX, s[i]))
                        return false;
                uid[i] = dash ? '-' : s[i];
        }
        copy(out, 40, uid, n);
        return true;
}

static bool container_id(const char *s, size_t n) { return n == 64 && all_of(s, n, HEX); }

/* "<runtime>-<64 hex>.scope" (systemd) or "crio-<64 hex>" / "libpod-<64 hex>" (cgroupfs):
 * the container id and its runtime into w. */
static bool runtime_scope(struct comp c, struct workload *w) {
        static const char *const runtimes[] = {"cri-containerd", "crio", "docker", "libpod"};
        for (size_t k = 0; k < ARRAY_COUNT(runtimes); k++) {
                size_t r = strlen(runtimes[k]);
                if (c.n < r + 1 + 64 || memcmp(c.s, runtimes[k], r) != 0 || c.s[r] != '-')
                        continue;
                const char *id = c.s + r + 1;
                size_t rest = c.n - r - 1;
                bool scope = rest == 64 + 6 && memcmp(id + 64, ".scope", 6) == 0;
                if ((rest == 64 || scope) && container_id(id, 64)) {
                        copy(w->container_id, sizeof(w->container_id), id, 64);
                        copy(w->runtime, sizeof(w->runtime), runtimes[k], r);
                        return true;
                }
        }
        return false;
}

/* The pod component's uid into w: "pod<uid>" (cgroupfs). */
static bool cgroupfs_pod(struct comp c, struct workload *w) {
        return has_prefix(c, "pod") && pod_uid(c.s + 3, c.n - 3, w->pod_uid);
}

/* A QoS class as kubelet names its level. */
static bool qos_word(const char *s, size_t n) {
        return (n == 9 && memcmp(s, "burstable", 9) == 0) || (n == 10 && memcmp(s, "besteffort", 10) == 0);
}

/* A systemd pod slice "<root words->kubepods[-<qos>]-pod<uid>.slice" (kubelet's systemd
 * driver; the root words are its --cgroup-root, as kind's "kubelet"): the uid into w and
 * how many '-' words precede "pod<uid>" (systemd places the slice that many levels deep). */
static bool systemd_pod(struct comp c, struct workload *w, size_t *ret_words) {
        if (!has_suffix(c, ".slice") || c.n < 6 + 4 + 32)
                return false;
        const char *end = c.s + c.n - 6;
        const char *pod = NULL;
        for (const char *p = c.s; p + 4 <= end; p++)
                if (memcmp(p, "-pod", 4) == 0) {
                        pod = p;
                        break;
                }
        if (!pod || pod == c.s || pod[-1] == '-')
                return false; /* no word before "pod", or an empty one */
        /* The words before: anything, then "kubepods", then at most a QoS class. */
        size_t words = 0;
        const char *last = NULL, *before_last = NULL;
        size_t last_n = 0, before_last_n = 0;
        for (const char *s = c.s; s < pod;) {
                const char *dash = memchr(s, '-', (size_t)(pod - s));
                const char *e = dash ? dash : pod;
                if (e == s)
                        return false; /* an empty word: not a name systemd makes */
                before_last = last, before_last_n = last_n;
                last = s, last_n = (size_t)(e - s);
                words++;
                s = e + 1;
        }
        bool kube = last && last_n == 8 && memcmp(last, "kubepods", 8) == 0;
        bool kube_qos = last && qos_word(last, last_n) && before_last && before_last_n == 8 &&
                        memcmp(before_last, "kubepods", 8) == 0;
        if ((!kube && !kube_qos) || !pod_uid(pod + 4, (size_t)(end - pod - 4), w->pod_uid))
                return false;
        *ret_words = words;
        return true;
}

/* Whether component c is the systemd slice of the first k '-' words of the pod slice
 * name ("kubepods-burstable.slice" for k 2 of "kubepods-burstable-pod<uid>.slice"). */
static bool slice_prefix(struct comp c, struct comp pod_slice, size_t k) {
        size_t words = 0, i = 0;
        for (; i < pod_slice.n && words < k; i++)
                if (pod_slice.s[i] == '-' && ++words == k)
                        break;
        return words == k && c.n == i + 6 && memcmp(c.s, pod_slice.s, i) == 0 && memcmp(c.s + i, ".slice", 6) == 0;
}

/* The pod's container after its pod component: cgroupfs' bare id or CRI-O's crio-<id>,
 * systemd's <runtime>-<id>.scope. */
static void pod_container(const struct comp *c, size_t n, size_t i, struct workload *w) {
        if (i + 1 < n && !runtime_scope(c[i + 1], w) && container_id(c[i + 1].s, c[i + 1].n))
                copy(w->container_id, sizeof(w->container_id), c[i + 1].s, 64);
}

/* A kubelet pod where kubelet creates it: the whole layout from the root (components from
 * c[0] on), or, when the path starts above a cgroup namespace's root (hidden: the levels
 * are ".."), its lower part.
 *   systemd   <root>.slice/.../kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid>.slice
 *   cgroupfs  kubepods/<qos>/pod<uid> (guaranteed: kubepods/pod<uid>) */
static bool kubelet_pod(const struct comp *c, size_t n, bool hidden, struct workload *w) {
        for (size_t i = 0; i < n && i < 8; i++) {
                size_t words;
                if (systemd_pod(c[i], w, &words)) {
                        /* Level j (of words) is the slice of the first j+1 words. */
                        bool placed = hidden ? i <= words : i == words;
                        for (size_t j = 0; j < i && placed; j++)
                                placed = slice_prefix(c[j], c[i], words - i + j + 1);
                        if (placed) {
                                pod_container(c, n, i, w);
                                return true;
                        }
                        w->pod_uid[0] = '\0';
                        return false;
                }
                if (cgroupfs_pod(c[i], w)) {
                        /* kubepods[/qos]/pod<uid> from the root, or its end below a hidden top. */
                        bool placed;
                        if (i == 2)
                                placed = comp_is(c[0], "kubepods") && qos_word(c[1].s, c[1].n);
                        else if (i == 1)
                                placed = comp_is(c[0], "kubepods") || (hidden && qos_word(c[0].s, c[0].n));
                        else
                                placed = i == 0 && hidden;
                        if (placed) {
                                pod_container(c, n, i, w);
                                return true;
                        }
                        w->pod_uid[0] = '\0';
                        return false;
                }
        }
        return false;
}

/* Slurm's step directory "step_<id>": a number, "N+M" (a heterogeneous job's component),
 * or a name (batch, extern, interactive). */
static bool slurm_step(struct comp c, struct workload *w) {
        if (!has_prefix(c, "step_") || c.n - 5 >= sizeof(w->slurm_step) ||
            !all_of(c.s + 5, c.n - 5, DIGITS "+abcdefghijklmnopqrstuvwxyz"))
                return false;
        copy(w->slurm_step, sizeof(w->slurm_step), c.s + 5, c.n - 5);
        return true;
}

/* "job_<digits>" or a SLUID; the job id into w. */
static bool slurm_job(struct comp c, struct workload *w) {
        if (has_prefix(c, "job_") && c.n - 4 <= 10 && all_of(c.s + 4, c.n - 4, DIGITS)) {
                copy(w->slurm_job, sizeof(w->slurm_job), c.s + 4, c.n - 4);
                return true;
        }
        if (c.n == 14 && c.s[0] == 's' && all_of(c.s + 1, 13, CB32)) {
                copy(w->slurm_job, sizeof(w->slurm_job), c.s, c.n);
                return true;
        }
        return false;
}

/* The components of path, without empty ones, "." and "..": a cgroup namespace shows
 * the cgroups above its root as "..", which name nothing. At most max. */
static size_t split(const char *path, size_t len, struct comp *out, size_t max) {
        size_t n = 0;
        for (size_t i = 0; i < len && n < max;) {
                size_t j = i;
                while (j < len && path[j] != '/')
                        j++;
                struct comp c = {path + i, j - i};
                if (c.n && !comp_is(c, ".") && !comp_is(c, ".."))
                        out[n++] = c;
                i = j + 1;
        }
        return n;
}

#define MAX_COMPONENTS 64

/* Whether c is "<base>.slice" whose base is the previous slice's base and one '-' word
 * more (systemd places "a-b.slice" in "a.slice"); prev NULL: the first, of words words
 * (0: any number, when the levels above are hidden). */
static bool slice_level(struct comp c, const struct comp *prev, size_t words) {
        if (!has_suffix(c, ".slice") || c.n == 6)
                return false;
        size_t base = c.n - 6, dashes = 0;
        for (size_t i = 0; i < base; i++) {
                if (c.s[i] != '-')
                        continue;
                if (i == 0 || c.s[i - 1] == '-' || i + 1 == base)
                        return false; /* an empty word: not a name systemd makes */
                dashes++;
        }
        if (prev) {
                size_t pb = prev->n - 6;
                return base > pb + 1 && memcmp(c.s, prev->s, pb) == 0 && c.s[pb] == '-' &&
                       !memchr(c.s + pb + 1, '-', base - pb - 1);
        }
        return !words || dashes + 1 == words;
}

/* How many components from c[0] are systemd slices where their names put them (none for
 * user.slice: below it are users' sessions and delegated subtrees). */
static size_t slice_levels(const struct comp *c, size_t n, bool hidden) {
        if (n && comp_is(c[0], "user.slice"))
                return 0;
        size_t k = 0;
        while (k < n && slice_level(c[k], k ? &c[k - 1] : NULL, hidden ? 0 : 1))
                k++;
        return k;
}

/* A Slurm job where slurmd and slurmstepd create it: the hierarchy's root (c[0] on), or
 * below a hidden top (a cgroup namespace's "..") what is left of the layout.
 *   cgroup/v1  slurm[_<node>]/uid_<uid>/job_<id>[/step_<step>]
 *   cgroup/v2  <slice>/[<node>_]slurmstepd.scope/(job_<id>|SLUID)[/step_<step>]
 * The v2 slice is cgroup.conf's CgroupSlice (system.slice by default), a systemd slice
 * at the path its name gives, never user.slice. */
static bool slurm_job_at_root(const struct comp *c, size_t n, bool hidden, struct workload *w) {
        if (n >= 3 && (comp_is(c[0], "slurm") || has_prefix(c[0], "slurm_")) && has_prefix(c[1], "uid_") &&
            all_of(c[1].s + 4, c[1].n - 4, DIGITS) && has_prefix(c[2], "job_") && slurm_job(c[2], w)) {
                if (n > 3)
                        (void)slurm_step(c[3], w); /* the job's own cgroup: no step */
                return true;
        }
        size_t k = slice_levels(c, n, hidden);
        if ((k || hidden) && k + 1 < n && (comp_is(c[k], "slurmstepd.scope") || has_suffix(c[k], "_slurmstepd.scope")) &&
            slurm_job(c[k + 1], w)) {
                if (k + 2 < n)
                        (void)slurm_step(c[k + 2], w);
                return true;
        }
        return false;
}

/* Whether the path's first components are "..": it starts above the reader's cgroup
 * namespace root, whose ancestors (the kubelet's or systemd's levels) are not a user's to
 * name. */
static bool starts_hidden(const char *path, size_t len) {
        size_t i = 0;
        while (i < len && path[i] == '/')
                i++;
        return len - i >= 2 && path[i] == '.' && path[i + 1] == '.' && (len - i == 2 || path[i + 2] == '/');
}

bool workload_from_path(const char *path, size_t len, struct workload *ret) {
        memset(ret, 0, sizeof(*ret));
        if (memchr(path, '\0', len))
                return false;
        struct comp c[MAX_COMPONENTS];
        size_t n = split(path, len, c, MAX_COMPONENTS);
        bool hidden = starts_hidden(path, len);
        /* Jobs and pods only where their managers create them, never deeper: below
         * user.slice (a user's delegated subtree) or in a container's own cgroups anyone
         * may name a cgroup "job_4242" or "kubepods-pod<uid>.slice". */
        if (slurm_job_at_root(c, n, hidden, ret) || kubelet_pod(c, n, hidden, ret))
                return true;
        /* Plain containers: docker-<id>.scope, libpod-<id>(.scope), docker/<id>, at any
         * depth (rootless podman runs below user.slice). */
        for (size_t i = 0; i < n; i++) {
                if (runtime_scope(c[i], ret))
                        break;
                if (comp_is(c[i], "docker") && i + 1 < n && container_id(c[i + 1].s, c[i + 1].n)) {
                        copy(ret->container_id, sizeof(ret->container_id), c[i + 1].s, 64);
                        snprintf(ret->runtime, sizeof(ret->runtime), "docker");
                        break;
                }
        }
        return workload_found(ret);
}

bool workload_from_cgroup(const char *text, size_t len, struct workload *ret) {
        memset(ret, 0, sizeof(*ret));
        /* Two passes: the unified hierarchy's line, then the v1 hierarchies in order. */
        for (int pass = 0; pass < 2; pass++) {
                const char *end = text + len;
                for (const char *line = text; line < end;) {
                        const char *nl = memchr(line, '\n', (size_t)(end - line));
                        const char *eol = nl ? nl : end;
                        const char *start = line;
                        line = nl ? nl + 1 : end;
                        /* "hierarchy-id:controllers:path"; the path may hold ':' itself. */
                        const char *c1 = memchr(start, ':', (size_t)(eol - start));
                        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(eol - c1 - 1)) : NULL;
                        if (!c2)
                                continue;
                        bool unified = c1 - start == 1 && start[0] == '0' && c2 == c1 + 1;
                        if (unified != (pass == 0))
                                continue;
                        if (workload_from_path(c2 + 1, (size_t)(eol - c2 - 1), ret))
                                return true;
                }
        }
        memset(ret, 0, sizeof(*ret));
        return false;
}

/* A DNS-1123 label (namespaces, container names): [a-z0-9-], at most 63, alphanumeric at
 * both ends. */
static bool dns_label(const char *s, size_t n) {
        return n > 0 && n <= 63 && all_of(s, n, "abcdefghijklmnopqrstuvwxyz0123456789-") && s[0] != '-' &&
               s[n - 1] != '-';
}

/* A DNS-1123 subdomain (pod names): labels joined by '.', at most 253. */
static bool dns_subdomain(const char *s, size_t n) {
        if (n == 0 || n > 253)
                return false;
        for (size_t i = 0; i <= n;) {
                const char *dot = memchr(s + i, '.', n - i);
                size_t j = dot ? (size_t)(dot - s) : n;
                if (!dns_label(s + i, j - i))
                        return false;
                i = j + 1;
        }
        return true;
}

static bool dns_name(const char *s, size_t n, bool subdomain) {
        return subdomain ? dns_subdomain(s, n) : dns_label(s, n);
}

/* name split at its two '_' into three parts; false unless there are exactly two. */
static bool three_parts(const char *name, struct comp *ret) {
        const char *a = strchr(name, '_');
        const char *b = a ? strchr(a + 1, '_') : NULL;
        if (!b || strchr(b + 1, '_'))
                return false;
        ret[0] = (struct comp){name, (size_t)(a - name)};
        ret[1] = (struct comp){a + 1, (size_t)(b - a - 1)};
        ret[2] = (struct comp){b + 1, strlen(b + 1)};
        return true;
}

bool workload_split_pod_dir(const char *name, char *ret_namespace, char *ret_pod, char *ret_uid) {
        struct comp p[3];
        char uid[40];
        /* The uid as the API server wrote it: a UUID with '-' or a static pod's hash. */
        if (!three_parts(name, p) || !dns_name(p[0].s, p[0].n, false) || !dns_name(p[1].s, p[1].n, true) ||
            !pod_uid(p[2].s, p[2].n, uid))
                return false;
        copy(ret_namespace, sizeof(((struct workload *)0)->pod_namespace), p[0].s, p[0].n);
        copy(ret_pod, sizeof(((struct workload *)0)->pod), p[1].s, p[1].n);
        copy(ret_uid, sizeof(((struct workload *)0)->pod_uid), uid, strlen(uid));
        return true;
}

bool workload_split_container_log(const char *name, char *ret_pod, char *ret_namespace, char *ret_container,
                                  char *ret_container_id) {
        struct comp p[3];
        if (!three_parts(name, p) || !dns_name(p[0].s, p[0].n, true) || !dns_name(p[1].s, p[1].n, false))
                return false;
        /* "<container>-<64 hex>.log" */
        struct comp t = p[2];
        if (t.n < 1 + 1 + 64 + 4 || !has_suffix(t, ".log"))
                return false;
        const char *id = t.s + t.n - 4 - 64;
        if (!container_id(id, 64) || id[-1] != '-' || !dns_name(t.s, (size_t)(id - 1 - t.s), false))
                return false;
        copy(ret_pod, sizeof(((struct workload *)0)->pod), p[0].s, p[0].n);
        copy(ret_namespace, sizeof(((struct workload *)0)->pod_namespace), p[1].s, p[1].n);
        copy(ret_container, sizeof(((struct workload *)0)->container), t.s, (size_t)(id - 1 - t.s));
        copy(ret_container_id, sizeof(((struct workload *)0)->container_id), id, 64);
        return true;
}

int workload_read(struct fsroot *fs, unsigned int pid, struct workload *ret) {
        memset(ret, 0, sizeof(*ret));
        char path[64];
        snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
        char *text = NULL;
        size_t len = 0;
        int r = fsroot_read_alloc_max(fs, path, WORKLOAD_CGROUP_MAX, &text, &len);
        if (r < 0)
                return r;
        (void)workload_from_cgroup(text, len, ret);
        free(text);
        return 0;
}

void workload_kubernetes_names(struct fsroot *fs, struct workload *w) {
        if (!w->pod_uid[0])
                return;
        char **names = NULL;
        if (w->container_id[0] && fsroot_list(fs, "/var/log/containers", &names) == 0) {
                for (char **n = names; *n; n++) {
                        struct workload got;
                        if (workload_split_container_log(*n, got.pod, got.pod_namespace, got.container, got.container_id) &&
                            strcmp(got.container_id, w->container_id) == 0) {
                                memcpy(w->pod, got.pod, sizeof(w->pod));
                                memcpy(w->pod_namespace, got.pod_namespace, sizeof(w->pod_namespace));
                                memcpy(w->container, got.container, sizeof(w->container));
                                break;
                        }
                }
                strv_free(names);
                names = NULL;
                if (w->pod[0])
                        return;
        }
        if (fsroot_list(fs, "/var/log/pods", &names) < 0)
                return;
        for (char **n = names; *n; n++) {
                struct workload got;
                if (workload_split_pod_dir(*n, got.pod_namespace, got.pod, got.pod_uid) &&
                    strcmp(got.pod_uid, w->pod_uid) == 0) {
                        memcpy(w->pod, got.pod, sizeof(w->pod));
                        memcpy(w->pod_namespace, got.pod_namespace, sizeof(w->pod_namespace));
                        break;
                }
        }
        strv_free(names);
}

void workload_summary(const struct workload *w, char *out, size_t size) {
        if (size == 0)
                return;
        if (w->slurm_job[0])
                snprintf(out, size, "job %s", w->slurm_job);
        else if (w->pod[0] && w->pod_namespace[0])
                snprintf(out, size, "%s/%s", w->pod_namespace, w->pod);
        else if (w->pod_uid[0])
                snprintf(out, size, "pod %.8s", w->pod_uid);
        else if (w->container_id[0])
                snprintf(out, size, "%s %.12s", w->runtime[0] ? w->runtime : "container", w->container_id);
        else
                out[0] = '\0';
}
