/* How fast one thread turns node reports into what `gpuvet fleet` needs, per parser:
 * jansson's json_loadb (the tree the rest of gpuvet uses), jsmn's tokenizer alone, and
 * fleet_doc_parse (jsmn plus copying the fields out). The files are read into memory
 * first, so only parsing is timed. Built and run by perf/fleet_aggregate.sh:
 *
 *   cc -O2 -D_GNU_SOURCE -Isrc -Ibuild perf/fleet_parse_bench.c build/libgpuvet.a -ljansson -lm -lpthread -ldl
 *   ./a.out FILE...
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

#include "fleet/fleet_doc.h"

struct file {
        char *buf;
        size_t len;
};

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void report(const char *what, double seconds, size_t n, size_t bytes) {
        printf("%-34s %8.3f s  %8.1f MB/s  %7.3f ms/doc\n", what, seconds, (double)bytes / 1e6 / seconds,
               seconds * 1e3 / (double)n);
}

int main(int argc, char **argv) {
        size_t n = (size_t)argc - 1, bytes = 0;
        struct file *files = calloc(n ? n : 1, sizeof(*files));
        for (size_t i = 0; i < n; i++) {
                FILE *f = fopen(argv[i + 1], "rb");
                if (!f || fseek(f, 0, SEEK_END) < 0) {
                        perror(argv[i + 1]);
                        return 1;
                }
                long len = ftell(f);
                rewind(f);
                files[i].buf = malloc((size_t)len + 1);
                files[i].len = fread(files[i].buf, 1, (size_t)len, f);
                bytes += files[i].len;
                fclose(f);
        }
        printf("%zu documents, %.1f MB\n", n, (double)bytes / 1e6);

        double t = now_s();
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
                json_error_t e;
                json_t *j = json_loadb(files[i].buf, files[i].len, 0, &e);
                bad += j == NULL;
                json_decref(j);
        }
        report("jansson json_loadb + json_decref", now_s() - t, n, bytes);

        size_t cap = 1 << 16;
        jsmntok_t *tok = malloc(cap * sizeof(*tok));
        t = now_s();
        for (size_t i = 0; i < n; i++) {
                if (files[i].len / 2 + 8 > cap) {
                        cap = files[i].len / 2 + 8;
                        tok = realloc(tok, cap * sizeof(*tok));
                }
                jsmn_parser p;
                jsmn_init(&p);
                bad += jsmn_parse(&p, files[i].buf, files[i].len, tok, (unsigned)cap) <= 0;
        }
        report("jsmn_parse (tokens only)", now_s() - t, n, bytes);

        struct fleet_scratch scratch = {0};
        t = now_s();
        for (size_t i = 0; i < n; i++) {
                struct fleet_doc doc;
                char why[256];
                if (fleet_doc_parse(files[i].buf, files[i].len, &scratch, &doc, why, sizeof(why)) < 0)
                        bad++;
                else
                        fleet_doc_clear(&doc);
        }
        report("fleet_doc_parse (jsmn + fields)", now_s() - t, n, bytes);
        printf("%zu documents did not parse\n", bad);
        return bad != 0;
}
