#include "cmd/cmd.h"
#include "core/atomic_file.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "data/gpudb.h"
#include "version.h"

#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* The installed data directory, when this process is the installed gpuvet and the
 * directory holds the tables; NULL otherwise (a build tree's binary keeps its built-in
 * copy, whatever a package put under /usr/share). */
const char *installed_data_dir(void) {
        static int known = -1;
        if (known < 0) {
                char self[PATH_MAX], installed[PATH_MAX];
                /* The one-syscall test first: where nothing is installed, start-up pays no more. */
                known = access(GPUVET_INSTALLED_DATADIR "/gpus.json", R_OK) == 0 && realpath("/proc/self/exe", self) &&
                        realpath(GPUVET_INSTALLED_BINDIR "/gpuvet", installed) && strcmp(self, installed) == 0;
        }
        return known ? GPUVET_INSTALLED_DATADIR : NULL;
}

void common_options_init(struct common_options *o) {
        const char *env_root = secure_getenv("GPUVET_FSROOT");
        const char *env_data = secure_getenv("GPUVET_DATA_DIR");
        o->root = env_root && *env_root ? env_root : "/";
        o->data_dir = env_data && *env_data ? env_data : installed_data_dir();
        o->timeout_s = COMMON_TIMEOUT_S_DEFAULT;
}

int table_load_failed(const char *file, int r, const char *err) {
        if (r == -ENOMEM) {
                fprintf(stderr, "gpuvet: out of memory loading %s\n", file);
                return EXIT_INTERNAL;
        }
        fprintf(stderr, "gpuvet: %s\n", err);
        return EXIT_USAGE;
}

int open_inputs(const char *cmd, const struct common_options *o, struct fsroot **ret_fs, struct gpudb **ret_db) {
        int r = fsroot_open(o->root, ret_fs);
        if (r < 0) {
                fprintf(stderr, "gpuvet %s: --root %s: %s\n", cmd, o->root, strerror(-r));
                return EXIT_USAGE;
        }
        char err[512];
        r = gpudb_load(o->data_dir, ret_db, err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "gpuvet %s: %s\n", cmd, err);
                *ret_fs = fsroot_free(*ret_fs);
                return EXIT_USAGE;
        }
        return 0;
}

static char watchdog_message[256];

static void watchdog_fire(int sig) {
        (void)sig;
        /* Only async-signal-safe calls here. */
        ssize_t n = write(STDERR_FILENO, watchdog_message, strlen(watchdog_message));
        (void)n;
        _exit(EXIT_INTERNAL);
}

void watchdog_arm(unsigned seconds, const char *what) {
        snprintf(watchdog_message, sizeof(watchdog_message),
                 "gpuvet: %s did not finish within %u s (a read is blocked, likely on a wedged device); giving up\n",
                 what, seconds);
        struct sigaction sa = {.sa_handler = watchdog_fire};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, NULL);
        alarm(seconds);
}

int write_json_output(const char *cmd, const char *path, char *json) {
        int code = EXIT_PASS;
        if (!json) {
                fprintf(stderr, "gpuvet %s: out of memory building the JSON report\n", cmd);
                return EXIT_INTERNAL;
        }
        size_t len = strlen(json);
        json[len] = '\n'; /* json_dumps leaves no newline; its NUL slot takes one */
        if (strcmp(path, "-") == 0) {
                errno = 0;
                if (fwrite(json, 1, len + 1, stdout) != len + 1 || fflush(stdout) != 0) {
                        stdout_failed(errno);
                        code = EXIT_INTERNAL;
                }
        } else {
                int r = atomic_write(path, json, len + 1);
                if (r < 0) {
                        fprintf(stderr, "gpuvet %s: writing %s: %s\n", cmd, path, atomic_write_strerror(r));
                        code = EXIT_INTERNAL;
                }
        }
        free(json);
        return code;
}

int output_path_usable(const char *cmd, const char *opt, const char *path) {
        if (strcmp(path, "-") == 0)
                return 0;
        if (!*path) {
                fprintf(stderr, "gpuvet %s: %s: empty path\n", cmd, opt);
                return EXIT_USAGE;
        }
        struct stat st;
        int target = atomic_write_target_ok(path);
        if (target == -EISDIR) {
                fprintf(stderr, "gpuvet %s: %s %s: is a directory\n", cmd, opt, path);
                return EXIT_USAGE;
        }
        if (target == ATOMIC_WRITE_NOT_REGULAR) {
                fprintf(stderr, "gpuvet %s: %s %s: %s\n", cmd, opt, path, atomic_write_strerror(target));
                return EXIT_USAGE;
        }
        char dir[4096];
        if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir)) {
                fprintf(stderr, "gpuvet %s: %s %s: %s\n", cmd, opt, path, strerror(ENAMETOOLONG));
                return EXIT_USAGE;
        }
        char *slash = strrchr(dir, '/');
        if (!slash)
                snprintf(dir, sizeof(dir), ".");
        else if (slash == dir)
                dir[1] = '\0';
        else
                *slash = '\0';
        if (stat(dir, &st) < 0) {
                fprintf(stderr, "gpuvet %s: %s %s: directory %s: %s\n", cmd, opt, path, dir, strerror(errno));
                return EXIT_USAGE;
        }
        if (!S_ISDIR(st.st_mode)) {
                fprintf(stderr, "gpuvet %s: %s %s: %s is not a directory\n", cmd, opt, path, dir);
                return EXIT_USAGE;
        }
        if (access(dir, W_OK) < 0) {
                fprintf(stderr, "gpuvet %s: %s %s: directory %s: %s\n", cmd, opt, path, dir, strerror(errno));
                return EXIT_USAGE;
        }
        return 0;
}

static bool stdout_error_reported;

void stdout_failed(int err) {
        if (stdout_error_reported)
                return;
        stdout_error_reported = true;
        fprintf(stderr, "gpuvet: writing standard output: %s\n", err ? strerror(err) : "write error");
}

int stdout_finish(int code) {
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout))
                stdout_failed(errno);
        if (!stdout_error_reported)
                return code;
        return code > EXIT_INTERNAL ? code : EXIT_INTERNAL;
}
