/* The inputs of `gpuvet fleet`: operands expanded into files (directories walked for
 * *.json), then read and parsed on a pool of threads, each file once. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/deadline.h"
#include "core/grow.h"
#include "core/progress.h"
#include "core/read_fd.h"
#include "fleet/fleet.h"
#include "fleet/fleet_doc.h"

/* A report is ~80 KB (8 GPUs); a burn report with telemetry a few MB. */
#define FLEET_MAX_DOC_BYTES (64u << 20)
#define FLEET_MAX_THREADS 64
/* Directory trees deeper than this are not walked further (a bind-mount loop). */
#define FLEET_MAX_DEPTH 32

struct input_file {
        char *path;
        int result;       /* 0 read, FLEET_DOC_AGGREGATE, else negative errno */
        char *reason;     /* why it was skipped */
        bool named;       /* an operand itself, not a file found in a directory */
        struct fleet_doc doc;
};

struct file_list {
        struct input_file *v;
        size_t n, cap;
        struct fleet *f; /* for skipped directories */
        size_t cap_skipped;
        bool oom;
};

static int add_skipped(struct fleet *f, size_t *cap, const char *path, const char *reason) {
        if (array_grow((void **)&f->skipped, f->n_skipped, cap, sizeof(*f->skipped), 8) < 0)
                return -ENOMEM;
        char *pc = strdup(path), *rc = strdup(reason);
        if (!pc || !rc) {
                free(pc);
                free(rc);
                return -ENOMEM;
        }
        f->skipped[f->n_skipped++] = (struct fleet_skipped){pc, rc};
        return 0;
}

static void add_file(struct file_list *l, const char *path, bool named) {
        if (array_grow((void **)&l->v, l->n, &l->cap, sizeof(*l->v), 64) < 0) {
                l->oom = true;
                return;
        }
        char *pc = strdup(path);
        if (!pc) {
                l->oom = true;
                return;
        }
        l->v[l->n++] = (struct input_file){.path = pc, .named = named};
}

static bool ends_with_json(const char *name) {
        size_t n = strlen(name);
        return n > 5 && strcmp(name + n - 5, ".json") == 0;
}

static void skip_errno(struct file_list *l, const char *path, const char *what, int err) {
        char reason[256];
        snprintf(reason, sizeof(reason), "%s: %s", what, strerror(err));
        if (add_skipped(l->f, &l->cap_skipped, path, reason) < 0)
                l->oom = true;
}

/* Walk dir for *.json files (symbolic links to files are followed, to directories not, so
 * no loop); returns how many were found. */
static size_t walk(struct file_list *l, const char *dir, int depth) {
        DIR *d = opendir(dir);
        if (!d) {
                skip_errno(l, dir, "cannot open directory", errno);
                return 0;
        }
        size_t found = 0;
        struct dirent *e;
        while (!l->oom && (errno = 0, e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                char path[4096];
                if ((size_t)snprintf(path, sizeof(path), "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
                                     e->d_name) >= sizeof(path)) {
                        skip_errno(l, dir, "a path below it is too long", ENAMETOOLONG);
                        continue;
                }
                struct stat st;
                if (lstat(path, &st) < 0) {
                        skip_errno(l, path, "cannot stat", errno);
                        continue;
                }
                if (S_ISDIR(st.st_mode)) {
                        if (depth < FLEET_MAX_DEPTH)
                                found += walk(l, path, depth + 1);
                } else if (ends_with_json(e->d_name)) {
                        add_file(l, path, false);
                        found++;
                }
        }
        if (errno && !l->oom)
                skip_errno(l, dir, "reading the directory", errno);
        closedir(d);
        return found;
}

static void expand(struct file_list *l, const char *operand) {
        struct stat st;
        if (stat(operand, &st) < 0) {
                skip_errno(l, operand, "cannot open", errno);
                return;
        }
        if (!S_ISDIR(st.st_mode)) {
                add_file(l, operand, true);
                return;
        }
        size_t before = l->f->n_skipped;
        if (walk(l, operand, 0) == 0 && l->f->n_skipped == before && !l->oom &&
            add_skipped(l->f, &l->cap_skipped, operand, "directory holds no *.json file") < 0)
                l->oom = true;
}

/* The name of the directory path sits in, into buf; false when there is none. */
static bool parent_name(const char *path, char *buf, size_t size) {
        const char *slash = strrchr(path, '/');
        if (!slash || slash == path)
                return false;
        const char *start = slash;
        while (start > path && start[-1] != '/')
                start--;
        size_t len = (size_t)(slash - start);
        if (len == 0 || len >= size || (len == 1 && start[0] == '.') || (len == 2 && !strncmp(start, "..", 2)))
                return false;
        memcpy(buf, start, len);
        buf[len] = '\0';
        return true;
}

static int name_node(struct input_file *in) {
        struct fleet_doc *doc = &in->doc;
        char buf[256];
        if (doc->hostname) {
                doc->name_source = FLEET_NAME_HOSTNAME;
                doc->node = strdup(doc->hostname);
        } else if (parent_name(in->path, buf, sizeof(buf))) {
                doc->name_source = FLEET_NAME_DIRECTORY;
                doc->node = strdup(buf);
        } else {
                const char *base = strrchr(in->path, '/');
                base = base ? base + 1 : in->path;
                snprintf(buf, sizeof(buf), "%s", base);
                size_t n = strlen(buf);
                if (n > 5 && strcmp(buf + n - 5, ".json") == 0)
                        buf[n - 5] = '\0';
                doc->name_source = FLEET_NAME_FILE;
                doc->node = strdup(buf);
        }
        return doc->node ? 0 : -ENOMEM;
}

/* The node's page beside its report (deploy/ansible fetches gpuvet-check-LEVEL.html beside
 * the .json), by its absolute path so that the fleet's page can link to it from wherever
 * it is written. Only ENOMEM is an error: a missing page is the common case. */
static int find_page(struct input_file *in) {
        size_t len = strlen(in->path);
        if (len < 5 || strcmp(in->path + len - 5, ".json") != 0)
                return 0;
        char *html = malloc(len + 1);
        if (!html)
                return -ENOMEM;
        memcpy(html, in->path, len - 5);
        memcpy(html + len - 5, ".html", 6);
        struct stat st;
        int r = 0;
        if (stat(html, &st) == 0 && S_ISREG(st.st_mode)) {
                in->doc.page = realpath(html, NULL);
                if (!in->doc.page && errno == ENOMEM)
                        r = -ENOMEM;
        }
        free(html);
        return r;
}

static int read_one(struct input_file *in, struct fleet_scratch *scratch) {
        char why[512] = "";
        bool aggregate = false;
        int fd = open(in->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        struct stat st;
        if (fd < 0) {
                snprintf(why, sizeof(why), "cannot open: %s", strerror(errno));
        } else if (fstat(fd, &st) < 0) {
                snprintf(why, sizeof(why), "cannot stat: %s", strerror(errno));
        } else if (!S_ISREG(st.st_mode)) {
                /* A FIFO or a device could block or never end. */
                snprintf(why, sizeof(why), "not a regular file");
        } else {
                char *buf = NULL;
                size_t len = 0;
                int r = read_fd_alloc(fd, FLEET_MAX_DOC_BYTES, &buf, &len);
                if (r < 0)
                        snprintf(why, sizeof(why), "cannot read: %s", strerror(-r));
                else if (r == 1)
                        snprintf(why, sizeof(why), "larger than %u MiB: not a report", FLEET_MAX_DOC_BYTES >> 20);
                else if ((r = fleet_doc_parse(buf, len, scratch, &in->doc, why, sizeof(why))) == -ENOMEM)
                        in->result = -ENOMEM;
                else if (r == FLEET_DOC_AGGREGATE)
                        aggregate = true;
                else if (r == 0 && (in->doc.path = strdup(in->path)) && name_node(in) == 0 && find_page(in) == 0)
                        in->result = 0, why[0] = '\0';
                else if (r == 0)
                        in->result = -ENOMEM;
                free(buf);
        }
        if (fd >= 0)
                close(fd);
        if (why[0]) {
                in->result = aggregate ? FLEET_DOC_AGGREGATE : -EINVAL;
                in->reason = strdup(why);
                if (!in->reason)
                        in->result = -ENOMEM;
        }
        return in->result;
}

struct pool {
        struct input_file *files;
        size_t n;
        atomic_size_t next, done;
        struct progress progress; /* drawn by whichever worker holds the lock */
        pthread_mutex_t progress_lock;
};

static void *worker(void *arg) {
        struct pool *p = arg;
        struct fleet_scratch scratch = {0};
        for (size_t i; (i = atomic_fetch_add(&p->next, 1)) < p->n;) {
                (void)read_one(&p->files[i], &scratch);
                size_t done = atomic_fetch_add(&p->done, 1) + 1;
                if (p->progress.on && pthread_mutex_trylock(&p->progress_lock) == 0) {
                        if (progress_begin(&p->progress, monotonic_ms() / 1e3)) {
                                progress_line(&p->progress, "fleet: %zu of %zu reports read", done, p->n);
                                progress_end(&p->progress);
                        }
                        pthread_mutex_unlock(&p->progress_lock);
                }
        }
        fleet_scratch_free(&scratch);
        return NULL;
}

static int cmp_file(const void *a, const void *b) {
        return strcmp(((const struct input_file *)a)->path, ((const struct input_file *)b)->path);
}

static int cmp_skipped(const void *a, const void *b) {
        return strcmp(((const struct fleet_skipped *)a)->path, ((const struct fleet_skipped *)b)->path);
}

static unsigned pool_size(unsigned threads, size_t n_files) {
        if (threads == 0) {
                long cpus = sysconf(_SC_NPROCESSORS_ONLN);
                threads = cpus > 0 ? (unsigned)cpus : 1;
        }
        if (threads > FLEET_MAX_THREADS)
                threads = FLEET_MAX_THREADS;
        if (threads > n_files)
                threads = n_files ? (unsigned)n_files : 1;
        return threads;
}

static void run_pool(struct pool *p, unsigned threads) {
        pthread_t tids[FLEET_MAX_THREADS];
        unsigned started = 0;
        for (unsigned t = 1; t < threads; t++)
                if (pthread_create(&tids[started], NULL, worker, p) == 0)
                        started++;
        /* This thread works too, so a failed pthread_create only slows the run. */
        worker(p);
        for (unsigned t = 0; t < started; t++)
                pthread_join(tids[t], NULL);
}

/* The length of the directory part of path ("a/b/" of "a/b/c.json"), 0 when there is none. */
static size_t dir_len(const char *path) {
        const char *slash = strrchr(path, '/');
        return slash ? (size_t)(slash - path) + 1 : 0;
}

static int cmp_doc_dir(const void *a, const void *b) {
        const struct fleet_doc *x = *(const struct fleet_doc *const *)a, *y = *(const struct fleet_doc *const *)b;
        size_t xl = dir_len(x->path), yl = dir_len(y->path);
        int c = memcmp(x->path, y->path, xl < yl ? xl : yl);
        if (c == 0 && xl != yl)
                c = xl < yl ? -1 : 1;
        return c ? c : strcmp(x->path, y->path);
}

/* Is docs[0..n) one host's directory in the Ansible play's layout, RESULTS/<inventory
 * name>/gpuvet-*.json: every file named gpuvet-*.json, every hostname told the same? Then
 * the directory's name is the node's name the play's own lines use; it returns the one
 * hostname, or NULL. */
static const char *play_host_directory(struct fleet_doc *const *docs, size_t n) {
        const char *host = NULL;
        for (size_t i = 0; i < n; i++) {
                const char *base = docs[i]->path + dir_len(docs[i]->path);
                size_t len = strlen(base);
                if (strncmp(base, "gpuvet-", 7) != 0 || len < 12 || strcmp(base + len - 5, ".json") != 0)
                        return NULL;
                if (docs[i]->hostname && host && strcmp(docs[i]->hostname, host) != 0)
                        return NULL;
                if (docs[i]->hostname)
                        host = docs[i]->hostname;
        }
        return host;
}

/* Nodes named by their inventory name where the play's layout gives it (docs/fleet.md, Node
 * names): "node-bad" is what the play's verdict lines and the operator's inventory call the
 * machine whose report says "dgx-h100-07"; the hostname stays in the document and is shown
 * beside the name. */
static int name_by_play_directory(struct fleet *f) {
        if (f->n_docs == 0)
                return 0;
        struct fleet_doc **by_dir = malloc(f->n_docs * sizeof(*by_dir));
        if (!by_dir)
                return -ENOMEM;
        for (size_t i = 0; i < f->n_docs; i++)
                by_dir[i] = &f->docs[i];
        qsort(by_dir, f->n_docs, sizeof(*by_dir), cmp_doc_dir);
        int r = 0;
        for (size_t i = 0; i < f->n_docs && r == 0;) {
                size_t k = i + 1, len = dir_len(by_dir[i]->path);
                while (k < f->n_docs && dir_len(by_dir[k]->path) == len && memcmp(by_dir[k]->path, by_dir[i]->path, len) == 0)
                        k++;
                char dir[256];
                const char *host = play_host_directory(&by_dir[i], k - i);
                if (host && parent_name(by_dir[i]->path, dir, sizeof(dir)) && strcmp(dir, host) != 0)
                        for (size_t d = i; d < k && r == 0; d++) {
                                char *name = strdup(dir);
                                if (!name) {
                                        r = -ENOMEM;
                                        break;
                                }
                                free(by_dir[d]->node);
                                by_dir[d]->node = name;
                                by_dir[d]->name_source = FLEET_NAME_DIRECTORY;
                        }
                i = k;
        }
        free(by_dir);
        return r;
}

int fleet_read_inputs(struct fleet *f, char *const *paths, size_t n_paths, unsigned threads, bool progress) {
        struct file_list l = {.f = f, .cap_skipped = f->n_skipped}; /* f->skipped is full */
        for (size_t i = 0; i < n_paths && !l.oom; i++)
                expand(&l, paths[i]);
        int r = l.oom ? -ENOMEM : 0;
        if (r == 0 && l.n) {
                qsort(l.v, l.n, sizeof(*l.v), cmp_file);
                /* The same file named twice (an operand and a directory holding it) is read once. */
                size_t w = 0;
                for (size_t i = 0; i < l.n; i++) {
                        if (w && strcmp(l.v[w - 1].path, l.v[i].path) == 0) {
                                l.v[w - 1].named |= l.v[i].named;
                                free(l.v[i].path);
                                continue;
                        }
                        l.v[w++] = l.v[i];
                }
                l.n = w;
                struct pool p = {.files = l.v, .n = l.n, .progress_lock = PTHREAD_MUTEX_INITIALIZER};
                atomic_init(&p.next, 0);
                atomic_init(&p.done, 0);
                progress_init(&p.progress, progress);
                run_pool(&p, pool_size(threads, l.n));
                progress_clear(&p.progress);
                f->docs = calloc(l.n, sizeof(*f->docs));
                if (!f->docs)
                        r = -ENOMEM;
        }
        for (size_t i = 0; i < l.n; i++) {
                struct input_file *in = &l.v[i];
                if (r == 0 && in->result == -ENOMEM)
                        r = -ENOMEM;
                if (r == 0 && in->result == 0)
                        f->docs[f->n_docs++] = in->doc;
                else
                        fleet_doc_clear(&in->doc);
                /* An aggregate met in a directory is the play's own output beside the
                 * reports (deploy/ansible, gpu_validation): passed by without a word. */
                bool skip = in->result == -EINVAL || (in->result == FLEET_DOC_AGGREGATE && in->named);
                if (r == 0 && skip && add_skipped(f, &l.cap_skipped, in->path, in->reason) < 0)
                        r = -ENOMEM;
                free(in->reason);
                free(in->path);
        }
        free(l.v);
        if (r == 0)
                r = name_by_play_directory(f);
        if (f->n_skipped)
                qsort(f->skipped, f->n_skipped, sizeof(*f->skipped), cmp_skipped);
        return r;
}
