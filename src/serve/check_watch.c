/* --check-report watcher (check_watch.h). */
#include "serve/check_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct check_watch {
        char *path;
        FILE *log;
        struct stat seen; /* of the last read; st_ino 0: none */
        bool seen_any;
        int failed_errno; /* why the last poll found no file to read (0: it found one) */
        pthread_mutex_t lock;
        /* under lock */
        struct check_view *view;
        unsigned long long generation;
};

struct check_view *check_view_new(enum check_report_state state) {
        struct check_view *v = calloc(1, sizeof(*v));
        if (v) {
                v->state = state;
                atomic_init(&v->refs, 1);
        }
        return v;
}

void check_view_put(struct check_view *v) {
        if (v && atomic_fetch_sub(&v->refs, 1) == 1) {
                check_status_done(&v->set);
                free(v);
        }
}

static bool same_file(const struct stat *a, const struct stat *b) {
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
               a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The file's bytes into a malloc'd buffer; -errno, or -EFBIG past the limit. */
static int slurp(int fd, const struct stat *st, char **ret, size_t *ret_len) {
        if ((unsigned long long)st->st_size > CHECK_STATUS_MAX_BYTES)
                return -EFBIG;
        size_t cap = (size_t)st->st_size + 1, len = 0;
        char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                if (len == cap) {
                        free(buf);
                        return -EFBIG; /* it grew while read: the next poll reads it whole */
                }
                ssize_t n = read(fd, buf + len, cap - len);
                if (n < 0) {
                        int e = errno;
                        free(buf);
                        return -e;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        *ret = buf;
        *ret_len = len;
        return 0;
}

void check_watch_publish(struct check_watch *w, struct check_view *v) {
        pthread_mutex_lock(&w->lock);
        struct check_view *old = w->view;
        w->view = v;
        w->generation++;
        pthread_mutex_unlock(&w->lock);
        check_view_put(old);
}

static void say(struct check_watch *w, const char *what) {
        if (w->log)
                fprintf(w->log, "gpuvet serve: --check-report %s: %s\n", w->path, what);
}

void check_watch_poll(struct check_watch *w) {
        if (!w->path)
                return; /* fed by its owner */
        int fd = open(w->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                int e = fd < 0 ? errno : EINVAL;
                if (fd >= 0)
                        close(fd);
                enum check_report_state s = e == ENOENT ? CHECK_REPORT_ABSENT : CHECK_REPORT_UNREADABLE;
                pthread_mutex_lock(&w->lock);
                /* A new reason is said too: a loop that becomes a FIFO is another fault to fix. */
                bool changed = !w->view || w->view->state != s || w->failed_errno != e;
                pthread_mutex_unlock(&w->lock);
                if (changed) {
                        struct check_view *v = check_view_new(s);
                        if (v) {
                                char why[160];
                                if (e == ENOENT)
                                        snprintf(why, sizeof(why), "not there (yet): no check statuses until it is");
                                else if (e == EINVAL)
                                        snprintf(why, sizeof(why), "not a regular file: no check statuses");
                                else if (e == ELOOP)
                                        snprintf(why, sizeof(why), "a symbolic link loop (%s): no check statuses",
                                                 strerror(e));
                                else
                                        snprintf(why, sizeof(why), "%s: no check statuses", strerror(e));
                                say(w, why);
                                check_watch_publish(w, v);
                                w->seen_any = false;
                                w->failed_errno = e;
                        }
                }
                return;
        }
        w->failed_errno = 0;
        if (w->seen_any && same_file(&st, &w->seen)) {
                close(fd);
                return;
        }
        char *buf = NULL;
        size_t len = 0;
        int r = slurp(fd, &st, &buf, &len);
        close(fd);
        struct check_view *v = check_view_new(CHECK_REPORT_UNREADABLE);
        if (!v) {
                free(buf);
                return; /* out of memory: the next poll tries again */
        }
        v->mtime_s = (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
        char err[256] = "";
        if (r < 0)
                snprintf(err, sizeof(err), "%s", r == -EFBIG ? "larger than 16 MiB" : strerror(-r));
        else if (check_status_parse(buf, len, &v->set, err, sizeof(err)) == 0)
                v->state = CHECK_REPORT_OK;
        free(buf);
        if (v->state == CHECK_REPORT_OK) {
                char line[64];
                snprintf(line, sizeof(line), "read, %zu check ids", v->set.n);
                say(w, line);
        } else {
                say(w, err);
        }
        w->seen = st;
        w->seen_any = true;
        check_watch_publish(w, v);
}

int check_watch_new(const char *path, FILE *log, struct check_watch **ret) {
        struct check_watch *w = calloc(1, sizeof(*w));
        if (!w || !(w->path = strdup(path))) {
                free(w);
                return -ENOMEM;
        }
        w->log = log;
        pthread_mutex_init(&w->lock, NULL);
        check_watch_poll(w);
        *ret = w;
        return 0;
}

int check_watch_new_fed(struct check_watch **ret) {
        struct check_watch *w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        pthread_mutex_init(&w->lock, NULL);
        *ret = w;
        return 0;
}

unsigned long long check_watch_generation(struct check_watch *w) {
        pthread_mutex_lock(&w->lock);
        unsigned long long g = w->generation;
        pthread_mutex_unlock(&w->lock);
        return g;
}

struct check_view *check_watch_get(struct check_watch *w) {
        pthread_mutex_lock(&w->lock);
        struct check_view *v = w->view;
        if (v)
                atomic_fetch_add(&v->refs, 1);
        pthread_mutex_unlock(&w->lock);
        return v;
}

void check_watch_free(struct check_watch *w) {
        if (!w)
                return;
        check_view_put(w->view);
        pthread_mutex_destroy(&w->lock);
        free(w->path);
        free(w);
}
