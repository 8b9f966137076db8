#include "report/html_report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "html/html_escape.h"
#include "html/html_page.h"
#include "report/html_sections.h"
#include "version.h"

static const struct {
        const char *schema;
        enum node_doc_kind kind;
} known_schemas[] = {
        {"gpuvet.report/1", NODE_DOC_CHECK},      {"gpuvet.bench/2", NODE_DOC_BENCH},
        {"gpuvet.bench-nccl/1", NODE_DOC_BENCH},  {"gpuvet.bench-rdma/1", NODE_DOC_BENCH},
        {"gpuvet.bench-train/1", NODE_DOC_BENCH},
};
#define N_SCHEMAS (ARRAY_COUNT(known_schemas))

/* The envelope of one document (docs/report-schema.md): who wrote it, for which node, its
 * verdict. */
static void read_envelope(struct node_doc *d) {
        struct doc_reader *r = d->reader;
        if (!json_is_object(d->doc)) {
                doc_fail(r, NULL, "not a JSON object: not a document gpuvet wrote");
                return;
        }
        d->schema = doc_string(r, d->doc, "", "schema", false);
        if (!d->schema) {
                if (!r->failed)
                        doc_fail(r, NULL, "no \"schema\" field: not a document gpuvet wrote");
                return;
        }
        size_t i = 0;
        while (i < N_SCHEMAS && strcmp(d->schema, known_schemas[i].schema))
                i++;
        if (i == N_SCHEMAS) {
                doc_fail(r, "schema", "\"%.60s\" is not one this gpuvet renders (gpuvet.report/1, gpuvet.bench/2, "
                                      "gpuvet.bench-nccl/1, gpuvet.bench-rdma/1, gpuvet.bench-train/1)%s",
                         d->schema,
                         strncmp(d->schema, "gpuvet.", 7) == 0 ? ": a newer gpuvet's? render it with that one" : "");
                return;
        }
        d->kind = known_schemas[i].kind;
        d->command = doc_string(r, d->doc, "", "command", true);
        d->version = doc_string(r, doc_object(r, d->doc, "", "tool", true), "tool", "version", true);
        json_t *host = doc_object(r, d->doc, "", "host", d->kind == NODE_DOC_CHECK);
        d->hostname = doc_string(r, host, "host", "hostname", false);
        json_t *summary = doc_object(r, d->doc, "", "summary", true);
        d->verdict = doc_status(r, summary, "summary", "verdict");
        for (int s = 0; s < _STATUS_COUNT; s++)
                d->counts[s] = doc_number(r, summary, "summary", status_name((enum status)s), false);
}

void html_lazy_section_entry(struct html_buf *b, struct html_lazy_section *s) {
        if (!s->open)
                html_buf_printf(b, "<section id=\"%s\">\n<h2>%s</h2>\n", s->id, s->heading);
        s->open = true;
}

void html_lazy_section_end(struct html_buf *b, const struct html_lazy_section *s) {
        if (s->open)
                html_buf_puts(b, "</section>\n");
}

static void format_time(time_t t, char *buf, size_t size) {
        struct tm tm;
        if (t == 0 || !gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm))
                snprintf(buf, size, "unknown");
}

static const char *what_of(const struct node_doc *d) {
        if (d->kind == NODE_DOC_CHECK)
                return d->command ? d->command : "check";
        return d->schema && strstr(d->schema, "nccl") ? "bench nccl"
               : d->schema && strstr(d->schema, "rdma") ? "bench rdma"
               : d->schema && strstr(d->schema, "train") ? "bench train"
                                                         : "bench";
}

static void header(struct html_buf *b, struct node_doc *docs, size_t n, const char *node, enum status verdict) {
        html_buf_puts(b, "<header class=\"page\">\n<div><h1>");
        html_escapef(b, "gpuvet report: %s", node);
        html_buf_puts(b, "</h1>\n<dl>\n<dt>Node</dt><dd>");
        html_escape(b, node);
        html_buf_puts(b, "</dd>\n<dt>Documents</dt><dd><ul>\n");
        for (size_t i = 0; i < n; i++) {
                char when[64];
                format_time(docs[i].written, when, sizeof(when));
                html_buf_puts(b, "<li>");
                html_escapef(b, "%s: %s, written %s, verdict %s", what_of(&docs[i]), doc_file_name(docs[i].reader), when,
                             status_name(docs[i].verdict));
                html_buf_puts(b, "</li>\n");
        }
        html_buf_puts(b, "</ul></dd>\n<dt>gpuvet</dt><dd>");
        for (size_t i = 0; i < n; i++) {
                size_t k = 0;
                while (k < i && strcmp(docs[k].version ? docs[k].version : "", docs[i].version ? docs[i].version : ""))
                        k++;
                if (k == i)
                        html_escapef(b, "%s%s", i ? ", " : "", docs[i].version ? docs[i].version : "unknown");
        }
        html_buf_puts(b, "</dd>\n</dl></div>\n");
        double total[_STATUS_COUNT] = {0};
        for (size_t i = 0; i < n; i++)
                for (int s = 0; s < _STATUS_COUNT; s++)
                        total[s] += isfinite(docs[i].counts[s]) ? docs[i].counts[s] : 0;
        html_buf_printf(b, "<div class=\"verdict %s\" id=\"verdict\">%s %s<small>%.0f fail, %.0f warn, %.0f error, "
                           "%.0f pass, %.0f skip</small></div>\n</header>\n",
                        html_status_class(verdict), html_status_mark(verdict), status_name(verdict),
                        total[STATUS_FAIL], total[STATUS_WARN], total[STATUS_ERROR], total[STATUS_PASS],
                        total[STATUS_SKIP]);
}

/* Every document must be of one node: a page mixing two would put one node's failures under
 * the other's name. A document without a hostname (bench nccl's) joins any. */
static const char *one_node(struct node_doc *docs, size_t n, char *err, size_t errsize) {
        const char *node = NULL;
        size_t first = 0;
        for (size_t i = 0; i < n; i++) {
                if (!docs[i].hostname)
                        continue;
                if (!node) {
                        node = docs[i].hostname;
                        first = i;
                } else if (strcmp(node, docs[i].hostname) != 0) {
                        snprintf(err, errsize,
                                 "%s: of node \"%.64s\", but %s is of \"%.64s\": a page shows one node's documents",
                                 docs[i].reader->file, docs[i].hostname, docs[first].reader->file, node);
                        return NULL;
                }
        }
        return node ? node : "unknown node";
}

int html_report_render(const struct html_report_input *in, size_t n, const struct baselines *limits,
                       char **ret_html, size_t *ret_len, char *err, size_t errsize) {
        *ret_html = NULL;
        *ret_len = 0;
        struct doc_reader *readers = calloc(n ? n : 1, sizeof(*readers));
        struct node_doc *docs = calloc(n ? n : 1, sizeof(*docs));
        if (!readers || !docs) {
                free(readers);
                free(docs);
                return -ENOMEM;
        }
        int r = 0;
        enum status verdict = STATUS_SKIP;
        for (size_t i = 0; i < n && r == 0; i++) {
                readers[i].file = in[i].file;
                docs[i] = (struct node_doc){.reader = &readers[i], .doc = in[i].doc, .written = in[i].written};
                read_envelope(&docs[i]);
                if (readers[i].failed) {
                        snprintf(err, errsize, "%s", readers[i].err);
                        r = -EINVAL;
                } else {
                        verdict = status_worse(verdict, docs[i].verdict);
                }
        }
        const char *node = r == 0 ? one_node(docs, n, err, errsize) : NULL;
        if (r == 0 && !node)
                r = -EINVAL;
        if (r == 0) {
                struct html_buf b = {0};
                char title[200];
                snprintf(title, sizeof(title), "gpuvet report: %s", node);
                html_page_begin(&b, title);
                header(&b, docs, n, node, verdict);
                html_results_section(&b, docs, n);
                html_inventory_section(&b, docs, n);
                html_bench_section(&b, docs, n, limits);
                html_burn_section(&b, docs, n);
                html_buf_puts(&b, "<footer>Written by gpuvet ");
                html_escape(&b, GPUVET_VERSION);
                html_buf_puts(&b, " (gpuvet report --html). Statuses: \xE2\x9C\x93 pass, \xE2\x9A\xA0 warn, "
                                  "\xE2\x9C\x97 fail, ! error, - skip.</footer>\n");
                html_page_end(&b);
                for (size_t i = 0; i < n && r == 0; i++)
                        if (readers[i].failed) {
                                snprintf(err, errsize, "%s", readers[i].err);
                                r = -EINVAL;
                        }
                if (r == 0) {
                        *ret_html = html_buf_take(&b, ret_len);
                        if (!*ret_html)
                                r = -ENOMEM;
                } else {
                        html_buf_free(&b);
                }
        }
        free(readers);
        free(docs);
        return r;
}
