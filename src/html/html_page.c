#include "html/html_page.h"

#include "html/html_escape.h"

/* DejaVu Sans is named first so that a page renders alike wherever fonts-dejavu is
 * installed (the screenshot tests rely on it); any sans-serif does elsewhere. Colours are
 * GitHub Primer's, whose text colours keep 4.5:1 contrast on their backgrounds. Print:
 * A4 and Letter both fit 180 mm, tables wrap long words instead of running off the page,
 * and a row, a chart or a result never splits across pages. */
static const char stylesheet[] =
        ":root{color-scheme:light dark;--fg:#1f2328;--bg:#ffffff;--muted:#59636e;--line:#d1d9e0;--panel:#f6f8fa;"
        "--pass:#1a7f37;--warn:#9a6700;--fail:#cf222e;--error:#8250df;--skip:#59636e;--bar:#d1d9e0;"
        "--s0:#0969da;--s1:#cf222e;--s2:#1a7f37;--s3:#8250df;--s4:#9a6700;--s5:#bf3989;--s6:#1b7c83;--s7:#59636e}\n"
        "@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--line:#3d444d;"
        "--panel:#151b23;--pass:#3fb950;--warn:#d29922;--fail:#f85149;--error:#ab7df8;--skip:#9198a1;--bar:#3d444d;"
        "--s0:#4493f8;--s1:#f85149;--s2:#3fb950;--s3:#ab7df8;--s4:#d29922;--s5:#db61a2;--s6:#39c5cf;--s7:#9198a1}}\n"
        "*{box-sizing:border-box}\n"
        "body{margin:0 auto;max-width:1200px;padding:24px;background:var(--bg);color:var(--fg);"
        "font:14px/1.45 'DejaVu Sans',sans-serif}\n"
        "h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;padding-bottom:4px;"
        "border-bottom:1px solid var(--line)}h3{font-size:15px;margin:18px 0 6px}\n"
        "code,.mono{font-family:'DejaVu Sans Mono',monospace;font-size:12.5px}\n"
        ".muted{color:var(--muted)}\n"
        "header.page{display:grid;grid-template-columns:1fr auto;gap:8px 24px;align-items:start;"
        "padding:16px 20px;border:1px solid var(--line);border-radius:8px;background:var(--panel)}\n"
        "header.page dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0}\n"
        "header.page dt{color:var(--muted)}header.page dd{margin:0}\n"
        ".verdict{font-size:22px;font-weight:bold;padding:6px 16px;border-radius:6px;border:2px solid currentColor;"
        "text-transform:uppercase;text-align:center}.verdict small{display:block;font-size:12px;font-weight:normal;"
        "text-transform:none}\n"
        ".st-pass{color:var(--pass)}.st-warn{color:var(--warn)}.st-fail{color:var(--fail)}"
        ".st-error{color:var(--error)}.st-skip{color:var(--skip)}\n"
        ".badge{font-weight:bold;white-space:nowrap}\n"
        ".result{border:1px solid var(--line);border-left:6px solid currentColor;border-radius:6px;"
        "padding:8px 14px;margin:8px 0;break-inside:avoid}\n"
        ".result>*{color:var(--fg)}.result .head{display:flex;gap:12px;align-items:baseline;flex-wrap:wrap}\n"
        ".result .head .badge{color:inherit}.result .id{font-weight:bold}\n"
        ".result .subject{color:var(--muted)}\n"
        ".result dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:6px 0 0}\n"
        ".result dt{color:var(--muted)}.result dd{margin:0;overflow-wrap:anywhere}\n"
        ".result dd.remedy{font-weight:bold}\n"
        "table{border-collapse:collapse;width:100%;margin:6px 0 12px}\n"
        "th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top;"
        "overflow-wrap:break-word}\n"
        "th{background:var(--panel)}\n"
        "table.kv{table-layout:fixed}table.kv td{overflow-wrap:anywhere}"
        "table.kv th:first-child{width:22%}table.kv td:first-child{color:var(--muted)}\n"
        "table.gpus{font-size:13px}table.gpus td{white-space:nowrap}table.gpus td:nth-child(3){white-space:normal}\n"
        "header.page ul{margin:0;padding-left:18px}\n"
        "tr{break-inside:avoid}thead{display:table-header-group}\n"
        "details{margin:8px 0;border:1px solid var(--line);border-radius:6px;padding:6px 12px}\n"
        "details>summary{cursor:pointer;font-weight:bold}\n"
        "figure{margin:10px 0 18px;break-inside:avoid}\n"
        "nav.toc ol{columns:16em;column-gap:24px;margin:4px 0 12px;padding-left:28px}nav.toc li{break-inside:avoid}"
        "nav.toc a,a.node-page{color:var(--s0)}\n"
        "svg.chart{display:block;width:100%;height:auto;font-family:'DejaVu Sans',sans-serif}\n"
        "svg.chart text{fill:var(--fg);font-size:12px}svg.chart .title{font-size:14px;font-weight:bold}\n"
        "svg.chart .tick{fill:var(--muted);font-size:11px}svg.chart .grid{stroke:var(--line);stroke-width:1}\n"
        "svg.chart .axis{stroke:var(--muted);stroke-width:1}\n"
        "svg.chart .track{fill:none;stroke:var(--muted);stroke-width:1;stroke-dasharray:3 2}\n"
        "svg.chart .bar.st-pass{fill:var(--pass)}svg.chart .bar.st-warn{fill:var(--warn)}"
        "svg.chart .bar.st-fail{fill:var(--fail)}svg.chart .bar.st-error{fill:var(--error)}"
        "svg.chart .bar.st-skip{fill:var(--skip)}\n"
        "svg.chart text.st-pass{fill:var(--pass)}svg.chart text.st-warn{fill:var(--warn)}"
        "svg.chart text.st-fail{fill:var(--fail)}svg.chart text.st-error{fill:var(--error)}"
        "svg.chart text.st-skip{fill:var(--skip)}\n"
        "svg.chart .threshold{stroke:var(--fg);stroke-width:2}\n"
        "svg.chart .series{fill:none;stroke-width:2;stroke-linejoin:round}\n"
        "svg.chart .limit{stroke:var(--fg);stroke-width:1.5;stroke-dasharray:1 3;stroke-linecap:round}"
        "svg.chart text.limit-label{fill:var(--fg);font-size:11px;font-style:italic}\n"
        "svg.chart .box{fill:var(--panel);stroke:var(--fg);stroke-width:1}svg.chart .median{stroke:var(--fg);"
        "stroke-width:2}svg.chart .whisker{stroke:var(--fg);stroke-width:1}\n"
        "svg.chart .point{fill:var(--s0);fill-opacity:.6}svg.chart .outlier{fill:var(--fail);stroke:var(--bg)}\n"
        "svg.chart text.outlier-label{fill:var(--fail);font-weight:bold}\n"
        ".k0{stroke:var(--s0);fill:var(--s0)}.k1{stroke:var(--s1);fill:var(--s1)}.k2{stroke:var(--s2);fill:var(--s2)}"
        ".k3{stroke:var(--s3);fill:var(--s3)}.k4{stroke:var(--s4);fill:var(--s4)}.k5{stroke:var(--s5);fill:var(--s5)}"
        ".k6{stroke:var(--s6);fill:var(--s6)}.k7{stroke:var(--s7);fill:var(--s7)}\n"
        "svg.chart path.series{fill:none}\n"
        "footer{margin-top:32px;color:var(--muted);font-size:12px}\n"
        "@page{margin:12mm}\n"
        "@media print{body{max-width:none;padding:0;font-size:10.5pt}header.page{break-inside:avoid}"
        "h2{break-after:avoid}h3{break-after:avoid}details{break-inside:auto}}\n";

void html_page_begin(struct html_buf *b, const char *title) {
        html_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                         "<meta name=\"color-scheme\" content=\"light dark\">\n<title>");
        html_escape(b, title);
        html_buf_puts(b, "</title>\n<style>\n");
        html_buf_puts(b, stylesheet);
        html_buf_puts(b, "</style>\n</head>\n<body>\n");
}

void html_page_end(struct html_buf *b) { html_buf_puts(b, "</body>\n</html>\n"); }

void html_element(struct html_buf *b, const char *tag, const char *cls, const char *text) {
        html_buf_printf(b, "<%s", tag);
        if (cls)
                html_buf_printf(b, " class=\"%s\"", cls);
        html_buf_puts(b, ">");
        html_escape(b, text);
        html_buf_printf(b, "</%s>", tag);
}

const char *html_status_mark(enum status s) {
        switch (s) {
        case STATUS_PASS: return "\xE2\x9C\x93";  /* ✓ */
        case STATUS_WARN: return "\xE2\x9A\xA0";  /* ⚠ */
        case STATUS_FAIL: return "\xE2\x9C\x97";  /* ✗ */
        case STATUS_SKIP: return "-";
        case STATUS_ERROR: return "!";
        default: return "?";
        }
}

const char *html_status_class(enum status s) {
        switch (s) {
        case STATUS_PASS: return "st-pass";
        case STATUS_WARN: return "st-warn";
        case STATUS_FAIL: return "st-fail";
        case STATUS_SKIP: return "st-skip";
        case STATUS_ERROR: return "st-error";
        default: return "st-skip";
        }
}

void html_status_badge(struct html_buf *b, enum status s) {
        html_buf_printf(b, "<span class=\"badge %s\">%s %s</span>", html_status_class(s), html_status_mark(s),
                        s < _STATUS_COUNT ? status_name(s) : "unknown");
}

void html_table_begin(struct html_buf *b, const char *cls, const char *const *headers, size_t n) {
        if (cls)
                html_buf_printf(b, "<table class=\"%s\">\n<thead><tr>", cls);
        else
                html_buf_puts(b, "<table>\n<thead><tr>");
        for (size_t i = 0; i < n; i++)
                html_element(b, "th", NULL, headers[i]);
        html_buf_puts(b, "</tr></thead>\n<tbody>\n");
}

void html_table_row(struct html_buf *b, const char *const *cells, size_t n) {
        html_buf_puts(b, "<tr>");
        for (size_t i = 0; i < n; i++)
                html_element(b, "td", cells[i] ? NULL : "muted", cells[i] ? cells[i] : "\xE2\x80\x94");
        html_buf_puts(b, "</tr>\n");
}

void html_table_end(struct html_buf *b) { html_buf_puts(b, "</tbody>\n</table>\n"); }
