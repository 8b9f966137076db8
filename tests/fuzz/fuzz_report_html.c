/* libFuzzer target: gpuvet report --html's renderer (src/report/html_report.c) on arbitrary
 * JSON documents. The input is one document, or two split at a form feed (a page of two
 * documents, which must be of one node). Invariants, checked with abort(): a refused input
 * says why; an accepted one renders a page whose every '<' opens or closes one of the
 * elements the writer emits (no markup from the input: it is all escaped), with no control
 * character but tab and newline. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/html_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const tags[] = {
        "html", "head", "meta", "title", "style", "body", "header", "div", "h1", "h2", "h3", "dl", "dt", "dd",
        "ul",   "li",   "section", "span", "p", "table", "thead", "tbody", "tr", "th", "td", "details", "summary",
        "figure", "svg", "text", "line", "rect", "path", "circle", "g", "footer", "br", "small", "code",
};

static bool known_tag(const char *p, size_t len) {
        for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
                if (strlen(tags[i]) == len && memcmp(tags[i], p, len) == 0)
                        return true;
        return false;
}

static void check_page(const char *html, size_t len) {
        if (strncmp(html, "<!DOCTYPE html>\n", 16) != 0)
                abort();
        for (size_t i = 16; i < len; i++) {
                unsigned char c = (unsigned char)html[i];
                if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
                        abort();
                if (c != '<')
                        continue;
                size_t j = i + 1;
                if (j < len && html[j] == '/')
                        j++;
                size_t name = j;
                while (j < len && ((html[j] >= 'a' && html[j] <= 'z') || (html[j] >= '0' && html[j] <= '9')))
                        j++;
                if (!known_tag(html + name, j - name) || j >= len || !strchr(" >/", html[j]))
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const uint8_t *ff = memchr(data, '\f', size);
        size_t sizes[2] = {ff ? (size_t)(ff - data) : size, ff ? size - (size_t)(ff - data) - 1 : 0};
        const uint8_t *starts[2] = {data, ff ? ff + 1 : NULL};
        struct html_report_input in[2];
        size_t n = 0;
        for (size_t k = 0; k < (ff ? 2u : 1u); k++) {
                json_t *doc = json_loadb((const char *)starts[k], sizes[k], 0, NULL);
                if (!doc)
                        break;
                in[n++] = (struct html_report_input){.file = k ? "second.json" : "first.json", .doc = doc,
                                                     .written = 1764000000};
        }
        if (n == (ff ? 2u : 1u)) {
                char *html = NULL, err[512] = "";
                size_t len = 0;
                int r = html_report_render(in, n, NULL, &html, &len, err, sizeof(err));
                if (r == 0) {
                        if (!html || strlen(html) != len)
                                abort();
                        check_page(html, len);
                } else if (r == -EINVAL && (html || !err[0])) {
                        abort();
                }
                free(html);
        }
        for (size_t k = 0; k < n; k++)
                json_decref(in[k].doc);
        return 0;
}
