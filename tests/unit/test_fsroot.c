/* fsroot: reads rooted at a directory, symlinks kept inside it, limits, recording. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fsroot.h"
#include "core/strv.h"
#include "tree.h"

static char *root;

static int setup(void **state) {
        (void)state;
        root = tree_new("fsroot");
        tree_put(root, "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/vendor", "0x10de\n");
        tree_put(root, "sys/bus/pci/drivers/nvidia/.keep", "");
        tree_put(root, "sys/bus/pci/devices/.keep", "");
        tree_link(root, "sys/bus/pci/devices/0000:01:00.0", "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0");
        tree_link(root, "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/driver", "../../../../bus/pci/drivers/nvidia");
        /* An absolute link must resolve inside the root, never to the live /etc. */
        tree_put(root, "etc/os-release", "PRETTY_NAME=\"Fixture OS\"\n");
        tree_link(root, "etc/os-release-abs", "/etc/os-release");
        /* An escape attempt through "..": clamped at the root. */
        tree_link(root, "escape", "../../../../../../etc/os-release");
        return 0;
}

static int teardown(void **state) {
        (void)state;
        tree_remove(root);
        root = NULL;
        return 0;
}

static void test_read_through_symlinks(void **state) {
        (void)state;
        struct fsroot *fs;
        char buf[64];
        assert_int_equal(fsroot_open(root, &fs), 0);
        assert_false(fsroot_is_live(fs));
        assert_int_equal(fsroot_read_str(fs, "/sys/bus/pci/devices/0000:01:00.0/vendor", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "0x10de");
        assert_int_equal(fsroot_readlink_base(fs, "/sys/bus/pci/devices/0000:01:00.0/driver", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "nvidia");
        char real[256];
        assert_int_equal(fsroot_realpath(fs, "/sys/bus/pci/devices/0000:01:00.0", real, sizeof(real)), 0);
        assert_string_equal(real, "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0");
        assert_int_equal(fsroot_read_str(fs, "/etc/os-release-abs", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "PRETTY_NAME=\"Fixture OS\"");
        assert_int_equal(fsroot_read_str(fs, "/escape", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "PRETTY_NAME=\"Fixture OS\"");
        fsroot_free(fs);
}

static void test_errors(void **state) {
        (void)state;
        struct fsroot *fs;
        char buf[4];
        assert_int_equal(fsroot_open("/nonexistent/gpuvet", &fs), -ENOENT);
        assert_int_equal(fsroot_open(root, &fs), 0);
        assert_int_equal(fsroot_read_str(fs, "/no/such/file", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(fsroot_read_str(fs, "/etc/os-release", buf, sizeof(buf)), -EFBIG);
        assert_int_equal(fsroot_read_str(fs, "/sys", buf, sizeof(buf)), -EISDIR);
        char **names;
        assert_int_equal(fsroot_list(fs, "/etc/os-release", &names), -ENOTDIR);
        assert_int_equal(fsroot_list(fs, "/sys/bus/pci/devices", &names), 0);
        assert_int_equal(strv_length(names), 2);
        assert_string_equal(names[0], ".keep");
        assert_string_equal(names[1], "0000:01:00.0");
        strv_free(names);
        fsroot_free(fs);
}

static void test_fifo_is_refused_not_blocking(void **state) {
        (void)state;
        char path[4096];
        snprintf(path, sizeof(path), "%s/fifo", root);
        assert_int_equal(mkfifo(path, 0644), 0);
        struct fsroot *fs;
        char buf[16];
        assert_int_equal(fsroot_open(root, &fs), 0);
        assert_int_equal(fsroot_read_str(fs, "/fifo", buf, sizeof(buf)), -EINVAL);
        fsroot_free(fs);
}

static void test_recording_keeps_links_and_targets(void **state) {
        (void)state;
        struct fsroot *fs;
        char buf[64];
        assert_int_equal(fsroot_open(root, &fs), 0);
        fsroot_record(fs, true);
        assert_int_equal(fsroot_read_str(fs, "/sys/bus/pci/devices/0000:01:00.0/vendor", buf, sizeof(buf)), 0);
        assert_int_equal(fsroot_access(fs, "/etc/os-release"), 0);
        assert_true(fsroot_is_dir(fs, "/sys/bus"));
        assert_int_equal(fsroot_read_str(fs, "/etc/os-release", buf, sizeof(buf)), 0);
        const struct fsroot_path *paths;
        size_t n;
        assert_int_equal(fsroot_recorded(fs, &paths, &n), 0);
        assert_int_equal(n, 4);
        assert_string_equal(paths[0].path, "etc/os-release");
        assert_true(paths[0].content); /* tested and read: the content wins */
        assert_string_equal(paths[1].path, "sys/bus");
        assert_false(paths[1].content);
        assert_string_equal(paths[2].path, "sys/bus/pci/devices/0000:01:00.0");
        assert_true(paths[2].content);
        assert_string_equal(paths[3].path, "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/vendor");
        fsroot_free(fs);
}

static atomic_bool renaming_stop;

static void *rename_in_a_loop(void *arg) {
        const char *dir = arg;
        char from[4096], to[4096];
        snprintf(from, sizeof(from), "%s/renamed.tmp", dir);
        snprintf(to, sizeof(to), "%s/renamed", dir);
        while (!atomic_load(&renaming_stop)) {
                int fd = open(from, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                if (fd >= 0)
                        close(fd);
                (void)rename(from, to);
        }
        return NULL;
}

/* A rename anywhere on the system makes openat2(RESOLVE_IN_ROOT) fail a ".." step with
 * EAGAIN (about 1 in 100 opens here); gpuvet runs beside tools that rename all the time
 * (its own atomic writes, package managers), so no read may fail for it. */
static void test_reads_survive_concurrent_renames(void **state) {
        (void)state;
        struct fsroot *fs;
        char buf[64];
        assert_int_equal(fsroot_open(root, &fs), 0);
        atomic_store(&renaming_stop, false);
        pthread_t renamer;
        assert_int_equal(pthread_create(&renamer, NULL, rename_in_a_loop, root), 0);
        int failures = 0, first_error = 0;
        for (int i = 0; i < 30000; i++) {
                int r = fsroot_read_str(fs, "/sys/bus/pci/devices/0000:01:00.0/vendor", buf, sizeof(buf));
                if (r < 0 && failures++ == 0)
                        first_error = r;
        }
        atomic_store(&renaming_stop, true);
        pthread_join(renamer, NULL);
        fsroot_free(fs);
        if (failures)
                fail_msg("%d of 30000 reads failed, the first with %s", failures, strerror(-first_error));
}

/* Outside recording, stat, access, readlink and realpath let the kernel resolve (openat2);
 * while recording they walk component by component. Both must answer alike, escapes and
 * absolute links included. */
static void test_kernel_resolution_matches_the_walk(void **state) {
        (void)state;
        static const char *const paths[] = {
                "/sys/bus/pci/devices/0000:01:00.0",
                "/sys/bus/pci/devices/0000:01:00.0/vendor",
                "/sys/bus/pci/devices/0000:01:00.0/driver",
                "/sys/bus/pci/devices/0000:01:00.0/../0000:01:00.0/vendor",
                "/etc/os-release-abs",
                "/escape",
                "/",
                "/sys/../../..",
                "/no/such/file",
                "/sys/bus/pci/devices/0000:01:00.0/nothing",
        };
        struct fsroot *fs;
        assert_int_equal(fsroot_open(root, &fs), 0);
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                char real[2][512], link[2][512];
                int r_real[2], r_link[2], r_access[2];
                bool is_dir[2];
                struct stat st[2];
                int r_stat[2];
                for (int walk = 0; walk < 2; walk++) {
                        fsroot_record(fs, walk);
                        real[walk][0] = link[walk][0] = '\0';
                        r_real[walk] = fsroot_realpath(fs, paths[i], real[walk], sizeof(real[walk]));
                        r_link[walk] = fsroot_readlink(fs, paths[i], link[walk], sizeof(link[walk]));
                        r_access[walk] = fsroot_access(fs, paths[i]);
                        is_dir[walk] = fsroot_is_dir(fs, paths[i]);
                        r_stat[walk] = fsroot_stat(fs, paths[i], &st[walk]);
                }
                fsroot_record(fs, false);
                print_message("%s: realpath %d %s, readlink %d %s\n", paths[i], r_real[0], real[0], r_link[0], link[0]);
                assert_int_equal(r_real[0], r_real[1]);
                assert_string_equal(real[0], real[1]);
                assert_int_equal(r_link[0], r_link[1]);
                assert_string_equal(link[0], link[1]);
                assert_int_equal(r_access[0], r_access[1]);
                assert_int_equal(is_dir[0], is_dir[1]);
                assert_int_equal(r_stat[0], r_stat[1]);
                if (r_stat[0] == 0)
                        assert_true(st[0].st_ino == st[1].st_ino && st[0].st_mode == st[1].st_mode);
        }
        fsroot_free(fs);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_read_through_symlinks),
                cmocka_unit_test(test_errors),
                cmocka_unit_test(test_kernel_resolution_matches_the_walk),
                cmocka_unit_test(test_fifo_is_refused_not_blocking),
                cmocka_unit_test(test_recording_keeps_links_and_targets),
                cmocka_unit_test(test_reads_survive_concurrent_renames),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
