/* The sections of the node page (report/html_report.c puts them in order). Each reads its
 * documents through a doc_reader, so a malformed one is reported, never rendered half. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

#include "core/result.h"
#include "html/html_buf.h"
#include "report/html_doc_reader.h"

struct baselines;

enum node_doc_kind {
        NODE_DOC_CHECK, /* gpuvet.report/1: checks[], maybe burn */
        NODE_DOC_BENCH, /* gpuvet.bench/2, bench-nccl/1, bench-rdma/1, bench-train/1: measurements[] */
};

struct node_doc {
        struct doc_reader *reader; /* the document's own: messages name its file */
        json_t *doc;
        enum node_doc_kind kind;
        const char *schema, *command, *version, *hostname;
        enum status verdict;
        double counts[_STATUS_COUNT]; /* the summary's, NaN where it has none */
        time_t written;
};

/* A section shown only when it has an entry, so that a page without one has no empty
 * section: html_lazy_section_entry before each entry opens it (id, heading) at the first,
 * html_lazy_section_end closes it when it was opened. */
struct html_lazy_section {
        const char *id, *heading;
        bool open;
};
void html_lazy_section_entry(struct html_buf *b, struct html_lazy_section *s);
void html_lazy_section_end(struct html_buf *b, const struct html_lazy_section *s);

/* Failures (each with its remedy), then warnings, then errors, every document's check
 * results and bench measurements together; then the passing and the skipped folded in
 * <details>. */
void html_results_section(struct html_buf *b, struct node_doc *docs, size_t n);
/* The host and its GPUs from the first document that has them. */
void html_inventory_section(struct html_buf *b, struct node_doc *docs, size_t n);
/* Each bench document's measurements: bars against baseline or peak per benchmark and unit,
 * the figures without a reference in a table. Nothing without a bench document. */
void html_bench_section(struct html_buf *b, struct node_doc *docs, size_t n, const struct baselines *limits);
/* Each burn's run, devices and telemetry charts. Nothing without a burn. */
void html_burn_section(struct html_buf *b, struct node_doc *docs, size_t n);
