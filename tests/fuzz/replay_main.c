/* Replays corpus files through a libFuzzer entry point without libFuzzer, so plain
 * `meson test` (gcc, no sanitizer runtime needed) runs every saved input; a crash or
 * abort fails the test and the last "replaying" line names the input.
 *
 * Usage: replay_<target> PATH...   (files, or directories whose files are all replayed) */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
        FILE *f = fopen(path, "rb");
        if (!f) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                return -1;
        }
        size_t cap = 4096, len = 0;
        uint8_t *buf = malloc(cap);
        for (;;) {
                if (!buf) {
                        fclose(f);
                        fprintf(stderr, "%s: out of memory\n", path);
                        return -1;
                }
                len += fread(buf + len, 1, cap - len, f);
                if (len < cap)
                        break;
                cap *= 2;
                uint8_t *grown = realloc(buf, cap);
                if (!grown)
                        free(buf);
                buf = grown;
        }
        int bad = ferror(f);
        fclose(f);
        if (bad) {
                fprintf(stderr, "%s: read error\n", path);
                free(buf);
                return -1;
        }
        fprintf(stderr, "replaying %s (%zu bytes)\n", path, len);
        /* An exact-size copy, so ASan builds catch a read one past the input. */
        uint8_t *exact = malloc(len ? len : 1);
        if (!exact) {
                free(buf);
                return -1;
        }
        memcpy(exact, buf, len);
        free(buf);
        LLVMFuzzerTestOneInput(exact, len);
        free(exact);
        return 0;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int replay_dir(const char *dir, size_t *n) {
        DIR *d = opendir(dir);
        if (!d) {
                fprintf(stderr, "%s: %s\n", dir, strerror(errno));
                return -1;
        }
        char **names = NULL;
        size_t count = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                char **grown = realloc(names, (count + 1) * sizeof(char *));
                if (!grown)
                        break;
                names = grown;
                names[count] = malloc(strlen(dir) + strlen(de->d_name) + 2);
                if (!names[count])
                        break;
                sprintf(names[count++], "%s/%s", dir, de->d_name);
        }
        closedir(d);
        qsort(names, count, sizeof(char *), cmp_names);
        int r = 0;
        for (size_t i = 0; i < count; i++) {
                struct stat st;
                if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
                        if (replay_file(names[i]) < 0)
                                r = -1;
                        else
                                (*n)++;
                }
                free(names[i]);
        }
        free(names);
        return r;
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
                return 2;
        }
        size_t n = 0;
        int r = 0;
        for (int i = 1; i < argc; i++) {
                struct stat st;
                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        r = -1;
                } else if (S_ISDIR(st.st_mode)) {
                        r |= replay_dir(argv[i], &n);
                } else if (replay_file(argv[i]) == 0) {
                        n++;
                } else {
                        r = -1;
                }
        }
        printf("%zu inputs replayed\n", n);
        if (n == 0) {
                fprintf(stderr, "no inputs found: an empty corpus tests nothing\n");
                return 1;
        }
        return r < 0 ? 1 : 0;
}
