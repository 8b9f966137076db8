/* What one small sysfs read costs on this machine, the way gpuvet reads a capture: an
 * openat2(RESOLVE_IN_ROOT) of the whole path, one read, a close; against opening the same
 * files relative to a directory descriptor of the device. docs/perf.md quotes it.
 *
 *     cc -O2 -o /tmp/bench_sysfs_read perf/bench_sysfs_read.c
 *     /tmp/bench_sysfs_read tests/fixtures/out/dgx-h100 [DEVICE]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 2000

static const char *const attrs[] = {"numa_node", "local_cpulist", "current_link_speed", "max_link_speed",
                                    "current_link_width", "max_link_width", "aer_dev_correctable",
                                    "aer_dev_nonfatal", "aer_dev_fatal", "resource"};
#define N_ATTRS (sizeof(attrs) / sizeof(attrs[0]))

static double now_us(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int read_one(int fd) {
        char buf[4096];
        if (fd < 0)
                return -1;
        ssize_t n = read(fd, buf, sizeof(buf));
        close(fd);
        return n < 0 ? -1 : 0;
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s ROOT [DEVICE]\n", argv[0]);
                return 2;
        }
        const char *dev = argc > 2 ? argv[2] : "0000:1b:00.0";
        int root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root < 0) {
                perror(argv[1]);
                return 1;
        }
        struct open_how file = {.flags = O_RDONLY | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
        struct open_how dir = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
        char path[256];
        int bad = 0;
        double t0 = now_us();
        for (int i = 0; i < ROUNDS; i++)
                for (size_t k = 0; k < N_ATTRS; k++) {
                        snprintf(path, sizeof(path), "sys/bus/pci/devices/%s/%s", dev, attrs[k]);
                        bad |= read_one((int)syscall(SYS_openat2, root, path, &file, sizeof(file)));
                }
        double t1 = now_us();
        snprintf(path, sizeof(path), "sys/bus/pci/devices/%s", dev);
        for (int i = 0; i < ROUNDS; i++) {
                int d = (int)syscall(SYS_openat2, root, path, &dir, sizeof(dir));
                for (size_t k = 0; k < N_ATTRS; k++)
                        bad |= read_one(d < 0 ? -1 : openat(d, attrs[k], O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
                if (d >= 0)
                        close(d);
        }
        double t2 = now_us();
        if (bad) {
                fprintf(stderr, "some reads failed: is %s a capture with %s?\n", argv[1], dev);
                return 1;
        }
        printf("whole path: %.2f us per file; relative to the device's directory: %.2f us per file\n",
               (t1 - t0) / (ROUNDS * N_ATTRS), (t2 - t1) / (ROUNDS * N_ATTRS));
        return 0;
}
