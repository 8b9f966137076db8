/* atomic_write() against what may already be at an output path (reliability review N5): a
 * FIFO, a device, a symlink into a device or to a file elsewhere. None may block the
 * writer or be written through. Each case runs under alarm(): a writer that opens a
 * reader-less FIFO would otherwise hang the test rather than fail it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/atomic_file.h"

static char dir[PATH_MAX / 2];

static int setup(void **state) {
        (void)state;
        snprintf(dir, sizeof(dir), "%s/gpuvet-atomic-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
        (void)state;
        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static void at(char *buf, const char *name) { snprintf(buf, PATH_MAX, "%s/%s", dir, name); }

static char *slurp(const char *path) {
        static char buf[256];
        FILE *f = fopen(path, "r");
        if (!f)
                return NULL;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        return buf;
}

static void test_fifo_refused(void **state) {
        (void)state;
        char path[PATH_MAX];
        at(path, "fifo.json");
        assert_int_equal(mkfifo(path, 0644), 0);
        alarm(20);
        assert_int_equal(atomic_write_target_ok(path), ATOMIC_WRITE_NOT_REGULAR);
        assert_int_equal(atomic_write(path, "{}\n", 3), ATOMIC_WRITE_NOT_REGULAR);
        assert_int_equal(atomic_create(path, 0644), ATOMIC_WRITE_NOT_REGULAR);
        alarm(0);
        struct stat st;
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISFIFO(st.st_mode)); /* left as it was */
        assert_non_null(strstr(atomic_write_strerror(ATOMIC_WRITE_NOT_REGULAR), "not a regular file"));
}

static void test_device_and_socket_refused(void **state) {
        (void)state;
        char link[PATH_MAX], sock[PATH_MAX];
        at(link, "full.json");
        assert_int_equal(symlink("/dev/full", link), 0);
        alarm(20);
        assert_int_equal(atomic_write(link, "{}\n", 3), ATOMIC_WRITE_NOT_REGULAR);
        assert_int_equal(atomic_write("/dev/full", "{}\n", 3), ATOMIC_WRITE_NOT_REGULAR);
        alarm(0);
        char target[64] = "";
        assert_int_equal(readlink(link, target, sizeof(target) - 1), (ssize_t)strlen("/dev/full"));

        at(sock, "s.sock");
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        assert_true(fd >= 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        if (strlen(sock) < sizeof(a.sun_path)) {
                memcpy(a.sun_path, sock, strlen(sock) + 1);
                assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
                assert_int_equal(atomic_write(sock, "x", 1), ATOMIC_WRITE_NOT_REGULAR);
        }
        close(fd);
}

/* A symlink to a file elsewhere is replaced by the new file; the file it named is left alone. */
static void test_symlink_replaced_not_followed(void **state) {
        (void)state;
        char victim[PATH_MAX], link[PATH_MAX], dangling[PATH_MAX];
        at(victim, "victim");
        at(link, "report.json");
        at(dangling, "dangling.json");
        FILE *f = fopen(victim, "w");
        assert_non_null(f);
        fputs("keep\n", f);
        fclose(f);
        assert_int_equal(symlink(victim, link), 0);
        assert_int_equal(atomic_write(link, "new\n", 4), 0);
        assert_string_equal(slurp(victim), "keep\n");
        struct stat st;
        assert_int_equal(lstat(link, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_string_equal(slurp(link), "new\n");

        assert_int_equal(symlink("/nonexistent/gpuvet-target", dangling), 0);
        assert_int_equal(atomic_write(dangling, "x\n", 2), 0);
        assert_int_equal(lstat(dangling, &st), 0);
        assert_true(S_ISREG(st.st_mode));
}

static void test_directory_and_modes(void **state) {
        (void)state;
        assert_int_equal(atomic_write(dir, "x", 1), -EISDIR);
        char path[PATH_MAX];
        at(path, "secret.tar");
        mode_t old = umask(022);
        assert_int_equal(atomic_write_mode(path, "s", 1, 0600), 0);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_int_equal(atomic_write(path, "r", 1), 0);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0644);
        umask(old);
}

/* query -f -l: a file put in place at once, then written as rows come. */
static void test_create_stream(void **state) {
        (void)state;
        char path[PATH_MAX], victim[PATH_MAX];
        at(path, "rows.csv");
        at(victim, "elsewhere");
        FILE *f = fopen(victim, "w");
        assert_non_null(f);
        fputs("keep\n", f);
        fclose(f);
        assert_int_equal(symlink(victim, path), 0);
        int fd = atomic_create(path, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "a,b\n", 4), 4);
        close(fd);
        assert_string_equal(slurp(path), "a,b\n");
        assert_string_equal(slurp(victim), "keep\n");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_fifo_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_device_and_socket_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlink_replaced_not_followed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_directory_and_modes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_create_stream, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
