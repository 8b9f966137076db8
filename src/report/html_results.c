/* The results of every document, worst first: what an operator acts on, and what a vendor
 * is shown, comes before what passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html/html_escape.h"
#include "html/html_page.h"
#include "report/html_sections.h"

struct item {
        enum status status;
        char id[160];
        const char *subject, *summary, *observed, *expected, *remedy;
        json_t *evidence;
        const char *origin; /* the command whose document it is */
};

struct items {
        struct item *v;
        size_t n, cap;
        bool failed;
};

static struct item *item_new(struct items *it) {
        if (it->n == it->cap) {
                size_t cap = it->cap ? 2 * it->cap : 64;
                struct item *v = realloc(it->v, cap * sizeof(*v));
                if (!v) {
                        it->failed = true;
                        return NULL;
                }
                it->v = v;
                it->cap = cap;
        }
        struct item *p = &it->v[it->n++];
        memset(p, 0, sizeof(*p));
        return p;
}

/* The outcome fields both checks and measurements have (report_json_outcome). */
static void read_outcome(struct doc_reader *r, json_t *o, const char *where, struct item *p) {
        p->status = doc_status(r, o, where, "status");
        p->subject = doc_string(r, o, where, "subject", false);
        p->summary = doc_string(r, o, where, "summary", true);
        p->observed = doc_string(r, o, where, "observed", false);
        p->expected = doc_string(r, o, where, "expected", false);
        p->remedy = doc_string(r, o, where, "remedy", false);
}

static void collect(struct node_doc *d, struct items *it) {
        struct doc_reader *r = d->reader;
        const char *list = d->kind == NODE_DOC_CHECK ? "checks" : "measurements";
        json_t *arr = doc_array(r, d->doc, "", list, d->kind == NODE_DOC_CHECK);
        for (size_t i = 0; i < json_array_size(arr) && !r->failed; i++) {
                char where[64];
                snprintf(where, sizeof(where), "%s[%zu]", list, i);
                json_t *o = doc_array_object(r, arr, list, i);
                struct item *p = item_new(it);
                if (!o || !p)
                        return;
                if (d->kind == NODE_DOC_CHECK) {
                        const char *id = doc_string(r, o, where, "id", true);
                        snprintf(p->id, sizeof(p->id), "%s", id ? id : "");
                        p->evidence = doc_object(r, o, where, "evidence", false);
                } else {
                        const char *bench = doc_string(r, o, where, "bench", true);
                        const char *name = doc_string(r, o, where, "name", true);
                        snprintf(p->id, sizeof(p->id), "bench %s/%s", bench ? bench : "", name ? name : "");
                }
                read_outcome(r, o, where, p);
                if (r->failed) {
                        it->n--; /* its status may be none: never rendered */
                        return;
                }
                p->origin = d->command ? d->command : d->kind == NODE_DOC_CHECK ? "check" : "bench";
                const char *key;
                json_t *v;
                json_object_foreach(p->evidence, key, v) {
                        if (!json_is_string(v) && !json_is_number(v) && !json_is_boolean(v)) {
                                char at[200];
                                snprintf(at, sizeof(at), "%s.evidence.%.60s", where, key);
                                doc_fail(r, at, "expected a string");
                                return;
                        }
                }
        }
}

static void field_row(struct html_buf *b, const char *name, const char *cls, const char *value) {
        if (!value)
                return;
        html_buf_printf(b, "<dt>%s</dt>", name);
        html_element(b, "dd", cls, value);
        html_buf_puts(b, "\n");
}

static void evidence_rows(struct html_buf *b, json_t *evidence) {
        if (!json_object_size(evidence))
                return;
        html_buf_puts(b, "<dt>Evidence</dt><dd class=\"mono\">");
        const char *key;
        json_t *v;
        bool first = true;
        json_object_foreach(evidence, key, v) {
                if (!first)
                        html_buf_puts(b, "<br>");
                first = false;
                html_escape(b, key);
                html_buf_puts(b, ": ");
                if (json_is_string(v)) {
                        html_escape(b, json_string_value(v));
                } else {
                        char *s = json_dumps(v, JSON_ENCODE_ANY);
                        html_escape(b, s);
                        free(s);
                }
        }
        html_buf_puts(b, "</dd>\n");
}

static void result_block(struct html_buf *b, const struct item *p) {
        html_buf_printf(b, "<div class=\"result %s\" data-status=\"%s\" data-id=\"", html_status_class(p->status),
                        status_name(p->status));
        html_escape(b, p->id);
        html_buf_puts(b, "\">\n<div class=\"head\">");
        html_status_badge(b, p->status);
        html_element(b, "span", "id", p->id);
        if (p->subject)
                html_element(b, "span", "subject", p->subject);
        if (p->origin)
                html_element(b, "span", "subject", p->origin);
        html_buf_puts(b, "</div>\n<dl>\n");
        field_row(b, "Summary", NULL, p->summary);
        field_row(b, "Observed", NULL, p->observed);
        field_row(b, "Expected", NULL, p->expected);
        if (p->remedy) {
                html_buf_puts(b, "<dt>Remedy</dt><dd class=\"remedy\">");
                html_escape_code_spans(b, p->remedy);
                html_buf_puts(b, "</dd>\n");
        }
        evidence_rows(b, p->evidence);
        html_buf_puts(b, "</dl>\n</div>\n");
}

static size_t count(const struct items *it, enum status s) {
        size_t n = 0;
        for (size_t i = 0; i < it->n; i++)
                n += it->v[i].status == s;
        return n;
}

static void problems(struct html_buf *b, const struct items *it, enum status s, const char *heading) {
        size_t n = count(it, s);
        if (!n)
                return;
        html_buf_printf(b, "<h2 class=\"%s\" id=\"%s\">%s %s (%zu)</h2>\n", html_status_class(s), heading,
                        html_status_mark(s), heading, n);
        for (size_t i = 0; i < it->n; i++)
                if (it->v[i].status == s)
                        result_block(b, &it->v[i]);
}

static void folded(struct html_buf *b, const struct items *it, enum status s, const char *id, const char *what) {
        size_t n = count(it, s);
        if (!n)
                return;
        html_buf_printf(b, "<details id=\"%s\"><summary><span class=\"%s\">%s</span> %zu %s</summary>\n", id,
                        html_status_class(s), html_status_mark(s), n, what);
        static const char *const headers[] = {"Status", "Check", "Subject", "Summary"};
        html_table_begin(b, "results", headers, 4);
        for (size_t i = 0; i < it->n; i++) {
                const struct item *p = &it->v[i];
                if (p->status != s)
                        continue;
                html_buf_printf(b, "<tr data-status=\"%s\"><td>", status_name(s));
                html_status_badge(b, s);
                html_buf_puts(b, "</td>");
                html_element(b, "td", "mono", p->id);
                html_element(b, "td", "mono", p->subject ? p->subject : "");
                html_element(b, "td", NULL, p->summary);
                html_buf_puts(b, "</tr>\n");
        }
        html_table_end(b);
        html_buf_puts(b, "</details>\n");
}

void html_results_section(struct html_buf *b, struct node_doc *docs, size_t n) {
        struct items it = {0};
        for (size_t i = 0; i < n; i++)
                collect(&docs[i], &it);
        if (it.failed)
                b->failed = true;
        html_buf_puts(b, "<section id=\"results\">\n");
        problems(b, &it, STATUS_FAIL, "Failures");
        problems(b, &it, STATUS_WARN, "Warnings");
        problems(b, &it, STATUS_ERROR, "Errors");
        if (!count(&it, STATUS_FAIL) && !count(&it, STATUS_WARN) && !count(&it, STATUS_ERROR))
                html_buf_puts(b, "<h2 class=\"st-pass\" id=\"no-problems\">\xE2\x9C\x93 No failure, warning or error</h2>\n");
        html_buf_puts(b, "<h2 id=\"passed-heading\">Passed and skipped</h2>\n");
        folded(b, &it, STATUS_PASS, "passed", "passed");
        folded(b, &it, STATUS_SKIP, "skipped", "skipped (not applicable here; the summary says why)");
        html_buf_puts(b, "</section>\n");
        free(it.v);
}
