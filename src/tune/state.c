#include "tune/tune.h"
#include "core/atomic_file.h"
#include "core/fsroot.h"
#include "core/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STATE_SCHEMA "gpuvet.tune-state/1"

int tune_state_path(struct fsroot *fs, const char *override, char *buf, size_t size) {
        if (override) {
                if (snprintf(buf, size, "%s", override) >= (int)size)
                        return -ENAMETOOLONG;
                return 0;
        }
        /* <root>/var/lib/gpuvet as a symlink stays inside the root, as the setting files do. */
        return fsroot_write_path(fs, "/var/lib/gpuvet/tune-state.json", buf, size);
}

void tune_boot_id(struct fsroot *fs, char *buf, size_t size) {
        if (fsroot_read_str(fs, "/proc/sys/kernel/random/boot_id", buf, size) < 0)
                buf[0] = '\0';
}

void tune_state_free(struct tune_state *st) {
        free(st->entries);
        memset(st, 0, sizeof(*st));
}

struct tune_entry *tune_state_add(struct tune_state *st) {
        if (array_grow((void **)&st->entries, st->n, &st->cap, sizeof(*st->entries), 32) < 0)
                return NULL;
        struct tune_entry *e = &st->entries[st->n++];
        memset(e, 0, sizeof(*e));
        return e;
}

struct tune_entry *tune_state_find(struct tune_state *st, const char *path) {
        for (size_t i = 0; i < st->n; i++)
                if (strcmp(st->entries[i].path, path) == 0)
                        return &st->entries[i];
        return NULL;
}

/* Copy a string member; -EINVAL when absent, not a string, or too long. */
static int take(const json_t *o, const char *key, char *buf, size_t size, bool optional) {
        const json_t *v = json_object_get(o, key);
        if (!v && optional) {
                buf[0] = '\0';
                return 0;
        }
        const char *s = json_string_value(v);
        if (!s || strlen(s) >= size)
                return -EINVAL;
        memcpy(buf, s, strlen(s) + 1);
        return 0;
}

static int state_from_json(json_t *root, const json_error_t *jerr, const char *path, struct tune_state *st,
                           char *err, size_t errlen);

int tune_state_load(const char *path, struct tune_state *st, char *err, size_t errlen) {
        memset(st, 0, sizeof(*st));
        /* Not through a symlink (a state from elsewhere), not a FIFO (blocks for ever). */
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0 && errno == ENOENT)
                return -ENOENT;
        struct stat sb;
        const char *why = NULL;
        if (fd < 0)
                why = errno == ELOOP ? NULL : strerror(errno);
        else if (fstat(fd, &sb) < 0)
                why = strerror(errno);
        else if (S_ISREG(sb.st_mode))
                why = "";
        if (!why || *why) {
                snprintf(err, errlen, "%s: %s", path, why ? why : "not a regular file (a symlink, FIFO or device)");
                if (fd >= 0)
                        close(fd);
                return -EINVAL;
        }
        json_error_t jerr;
        json_t *root = json_loadfd(fd, JSON_REJECT_DUPLICATES, &jerr);
        close(fd);
        return state_from_json(root, &jerr, path, st, err, errlen);
}

static bool one_of_words(const char *s, const char *const *words) {
        for (size_t i = 0; words[i]; i++)
                if (strcmp(s, words[i]) == 0)
                        return true;
        return false;
}

/* A file under the root, or a GPU attribute (settings.h). */
static bool target_path(const char *path) {
        return path[0] == '/' || strncmp(path, TUNE_GPU_PATH_PREFIX, strlen(TUNE_GPU_PATH_PREFIX)) == 0;
}

int tune_state_parse(const char *text, size_t len, const char *source, struct tune_state *st, char *err,
                     size_t errlen) {
        memset(st, 0, sizeof(*st));
        json_error_t jerr;
        return state_from_json(json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr), &jerr, source, st, err, errlen);
}

/* Takes root (NULL when jansson refused the text: jerr says why). */
static int state_from_json(json_t *root, const json_error_t *jerr, const char *path, struct tune_state *st,
                           char *err, size_t errlen) {
        if (!root) {
                snprintf(err, errlen, "%s:%d: %s", path, jerr->line, jerr->text);
                return -EINVAL;
        }
        int r = -EINVAL;
        const char *schema = json_string_value(json_object_get(root, "schema"));
        if (!schema || strcmp(schema, STATE_SCHEMA) != 0) {
                snprintf(err, errlen, "%s: not a %s file (schema %s)", path, STATE_SCHEMA, schema ? schema : "missing");
                goto out;
        }
        if (take(root, "profile", st->profile, sizeof(st->profile), true) < 0 ||
            take(root, "boot_id", st->boot_id, sizeof(st->boot_id), false) < 0 ||
            take(root, "status", st->status, sizeof(st->status), false) < 0 ||
            take(root, "started", st->started, sizeof(st->started), true) < 0) {
                snprintf(err, errlen, "%s: profile, boot_id, status or started is missing or not a short string", path);
                goto out;
        }
        if (!one_of_words(st->status, (const char *const[]){"applying", "applied", NULL})) {
                snprintf(err, errlen, "%s: status \"%.16s\" is neither applying nor applied", path, st->status);
                goto out;
        }
        json_t *entries = json_object_get(root, "entries");
        size_t i;
        json_t *e;
        if (!json_is_array(entries)) {
                snprintf(err, errlen, "%s: \"entries\" is not an array", path);
                goto out;
        }
        json_array_foreach(entries, i, e) {
                struct tune_entry *x = tune_state_add(st);
                if (!x) {
                        r = -ENOMEM;
                        goto out;
                }
                if (take(e, "setting", x->setting, sizeof(x->setting), false) < 0 ||
                    take(e, "path", x->path, sizeof(x->path), false) < 0 ||
                    take(e, "before", x->before, sizeof(x->before), false) < 0 ||
                    take(e, "after", x->after, sizeof(x->after), false) < 0 ||
                    take(e, "result", x->result, sizeof(x->result), false) < 0 ||
                    take(e, "detail", x->detail, sizeof(x->detail), true) < 0 || !target_path(x->path)) {
                        snprintf(err, errlen, "%s: entries[%zu] lacks setting, a path (absolute, or nvml:BUS/ATTRIBUTE), before, after or result",
                                 path, i);
                        goto out;
                }
                if (!tune_setting_find(x->setting)) {
                        snprintf(err, errlen, "%s: entries[%zu]: no setting \"%.64s\" (gpuvet tune profiles lists them)", path,
                                 i, x->setting);
                        goto out;
                }
                if (!one_of_words(x->result, (const char *const[]){"pending", "applied", "refused", "did not take", NULL})) {
                        snprintf(err, errlen, "%s: entries[%zu]: result \"%.32s\" is not pending, applied, refused or "
                                 "did not take", path, i, x->result);
                        goto out;
                }
        }
        r = 0;
out:
        json_decref(root);
        if (r < 0)
                tune_state_free(st);
        return r;
}

int tune_mkdirs_for(const char *path) {
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s", path);
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return 0;
        *slash = '\0';
        for (char *p = dir + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        *p = '/';
                }
        return mkdir(dir, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

int tune_state_save(const char *path, const struct tune_state *st) {
        json_t *root = json_object(), *entries = json_array();
        if (!root || !entries) {
                json_decref(root);
                json_decref(entries);
                return -ENOMEM;
        }
        json_object_set_new(root, "schema", json_string(STATE_SCHEMA));
        json_object_set_new(root, "profile", json_string(st->profile));
        json_object_set_new(root, "boot_id", json_string(st->boot_id));
        json_object_set_new(root, "status", json_string(st->status));
        json_object_set_new(root, "started", json_string(st->started));
        for (size_t i = 0; i < st->n; i++) {
                const struct tune_entry *e = &st->entries[i];
                json_t *o = json_object();
                json_object_set_new(o, "setting", json_string(e->setting));
                json_object_set_new(o, "path", json_string(e->path));
                json_object_set_new(o, "before", json_string(e->before));
                json_object_set_new(o, "after", json_string(e->after));
                json_object_set_new(o, "result", json_string(e->result));
                if (e->detail[0])
                        json_object_set_new(o, "detail", json_string(e->detail));
                json_array_append_new(entries, o);
        }
        json_object_set_new(root, "entries", entries);
        char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        if (!text)
                return -ENOMEM;
        int r = tune_mkdirs_for(path);
        if (r == 0) {
                size_t len = strlen(text);
                text[len] = '\n'; /* json_dumps leaves room: its buffer is len + 1 */
                r = atomic_write(path, text, len + 1);
        }
        free(text);
        return r;
}

int tune_lock(const char *state_path, unsigned wait_ms, long *holder) {
        char path[4096];
        *holder = 0;
        snprintf(path, sizeof(path), "%s.lock", state_path);
        int r = tune_mkdirs_for(path);
        if (r < 0)
                return r;
        /* Root opens it in a directory others may have made writable: never through a
         * symlink (it would truncate the file it names), never anything but a plain file.
         * The look first says so in words (some kernels answer a symlink in a sticky
         * directory with EACCES); O_NOFOLLOW holds if it changes before the open. */
        struct stat st;
        if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
                return TUNE_LOCK_NOT_REGULAR;
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
        if (fd < 0)
                return errno == ELOOP ? TUNE_LOCK_NOT_REGULAR : -errno;
        int bad = fstat(fd, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? TUNE_LOCK_NOT_REGULAR : 0;
        if (bad < 0) {
                close(fd);
                return bad;
        }
        for (unsigned waited = 0;; waited += 50) {
                if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                        break;
                if (errno != EWOULDBLOCK || waited >= wait_ms) {
                        int e = errno;
                        char pid[32] = "";
                        if (pread(fd, pid, sizeof(pid) - 1, 0) > 0)
                                *holder = strtol(pid, NULL, 10);
                        close(fd);
                        return -e;
                }
                nanosleep(&(struct timespec){.tv_nsec = 50 * 1000000L}, NULL);
        }
        char pid[32];
        int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) < 0) {
                /* The pid is only for the other run's message; the lock holds without it. */
        }
        return fd;
}
