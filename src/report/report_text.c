#include "report/report_text.h"
#include "burn/burn.h"
#include "checks/check.h"
#include "report/text_safe.h"
#include "report/text_wrap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ANSI_RESET "\033[0m"
#define ANSI_BOLD "\033[1m"
#define ANSI_DIM "\033[2m"

static const char *const status_glyph[_STATUS_COUNT] = {"✓", "⚠", "✗", "-", "!"};
static const char *const status_color[_STATUS_COUNT] = {"\033[32m", "\033[33m", "\033[31m", "\033[2m", "\033[35m"};

static enum text_color_mode color_mode;

void text_color_set(enum text_color_mode mode) { color_mode = mode; }
enum text_color_mode text_color_get(void) { return color_mode; }

bool text_want_color(FILE *out) {
        if (color_mode != TEXT_COLOR_AUTO)
                return color_mode == TEXT_COLOR_ALWAYS;
        const char *no_color = getenv("NO_COLOR");
        const char *term = getenv("TERM");
        if (no_color && *no_color)
                return false;
        if (term && strcmp(term, "dumb") == 0)
                return false;
        return isatty(fileno(out));
}

static const char *c(const struct text_options *opt, const char *code) { return opt->color ? code : ""; }

static bool is_problem(const struct result *r) {
        return r->status == STATUS_WARN || r->status == STATUS_FAIL || r->status == STATUS_ERROR;
}

/* One report being written: what is shown, and which errors share a cause. */
struct text_run {
        FILE *out;
        const struct report *rep;
        const struct text_options *opt;
        size_t *lead; /* per result: the first result of its cause's group (itself when alone); NULL: no groups */
        size_t *members; /* per result: how many results its group has */
        size_t id_width;
};

static bool same_cause(const struct result *a, const struct result *b) {
        return a->status == STATUS_ERROR && b->status == STATUS_ERROR && a->cause && b->cause &&
               strcmp(a->cause, b->cause) == 0 &&
               (a->remedy == b->remedy || (a->remedy && b->remedy && strcmp(a->remedy, b->remedy) == 0));
}

static bool grouped(const struct text_run *t, size_t i) { return t->lead && t->members[i] > 1; }

static bool hidden(const struct text_run *t, size_t i) {
        return t->opt->problems && !is_problem(&t->rep->results[i]);
}

/* A line at a time into memory, then out wrapped to the width (as is when not wrapping,
 * or when memory for the line is short). */
struct text_line {
        char *buf;
        size_t len;
        FILE *f;
};

static FILE *line_open(const struct text_run *t, struct text_line *l) {
        memset(l, 0, sizeof(*l));
        l->f = t->opt->width ? open_memstream(&l->buf, &l->len) : NULL;
        return l->f ? l->f : t->out;
}

static void line_close(const struct text_run *t, struct text_line *l, size_t indent) {
        if (!l->f) {
                fputc('\n', t->out);
                return;
        }
        /* A memory stream fails only when memory is short; what it kept is in l->buf either
         * way, and a line cut short is better than none: ignoring. */
        (void)fclose(l->f);
        text_wrap_line(t->out, l->buf ? l->buf : "", indent, t->opt->width);
        free(l->buf);
}

/* The column where observed, expected and remedies start. */
static size_t detail_indent(const struct text_run *t) { return 4 + t->id_width; }

static bool same_remedy(const struct text_run *t, size_t a, size_t b) {
        const struct result *ra = &t->rep->results[a], *rb = &t->rep->results[b];
        return ra->check == rb->check && is_problem(rb) && rb->remedy && !grouped(t, b) &&
               strcmp(ra->remedy, rb->remedy) == 0;
}

/* One remedy for many subjects is printed once, under the last of them, with the list: eight
 * GPUs with the same fault need one instruction, not eight. */
static void print_remedy(const struct text_run *t, size_t i) {
        const struct report *rep = t->rep;
        const struct result *r = &rep->results[i];
        for (size_t j = i + 1; j < rep->n_results; j++)
                if (same_remedy(t, i, j))
                        return; /* a later result of the group prints it */
        size_t n = 0;
        for (size_t j = 0; j <= i; j++)
                n += same_remedy(t, i, j);
        struct text_line l;
        FILE *out = line_open(t, &l);
        if (n <= 1) {
                fprintf(out, "   %*s remedy: ", (int)t->id_width, "");
        } else {
                fprintf(out, "   %*s remedy (the %zu above: ", (int)t->id_width, "", n);
                const char *sep = "";
                for (size_t j = 0; j <= i; j++)
                        if (same_remedy(t, i, j)) {
                                fputs(sep, out);
                                text_safe_write(out, rep->results[j].subject);
                                sep = ", ";
                        }
                fputs("): ", out);
        }
        text_safe_write(out, r->remedy);
        line_close(t, &l, detail_indent(t));
}

/* Where a result's summary starts, and where its continuation lines start: under the
 * summary while that leaves a useful width, else under the details. */
static size_t summary_indent(const struct text_run *t) {
        size_t at = 3 + t->id_width + 1 + 12 + 1;
        return t->opt->width && at + 32 > t->opt->width ? detail_indent(t) : at;
}

static void print_result(const struct text_run *t, size_t i) {
        const struct result *r = &t->rep->results[i];
        const struct text_options *opt = t->opt;
        const char *subject = strcmp(r->subject, "host") == 0 ? "" : r->subject;
        /* Results quote machine text (names, versions, log lines): made terminal-safe. */
        char sub[256], sum[4096], obs[4096], exp[4096];
        struct text_line l;
        FILE *out = line_open(t, &l);
        fprintf(out, " %s%s%s %-*s %-12s %s", c(opt, status_color[r->status]), status_glyph[r->status],
                c(opt, ANSI_RESET), (int)t->id_width, r->check->id, text_safe(subject, sub, sizeof(sub)),
                text_safe(r->summary, sum, sizeof(sum)));
        line_close(t, &l, summary_indent(t));
        bool problem = is_problem(r);
        if ((problem || opt->verbose) && (r->observed || r->expected)) {
                out = line_open(t, &l);
                fprintf(out, "   %*s %sobserved: %s; expected: %s%s", (int)t->id_width, "", c(opt, ANSI_DIM),
                        r->observed ? text_safe(r->observed, obs, sizeof(obs)) : "-",
                        r->expected ? text_safe(r->expected, exp, sizeof(exp)) : "-", c(opt, ANSI_RESET));
                line_close(t, &l, detail_indent(t));
        }
        if (problem && r->remedy)
                print_remedy(t, i);
}

/* Each distinct value of field (the check's id, the subject) among the results of i's
 * group, in report order: joined by ", " into out when out is given; returns how many. */
static size_t group_distinct(const struct text_run *t, size_t i, bool ids, FILE *out) {
        const struct report *rep = t->rep;
        size_t n = 0;
        for (size_t j = t->lead[i]; j < rep->n_results; j++) {
                if (t->lead[j] != t->lead[i])
                        continue;
                const char *v = ids ? rep->results[j].check->id : rep->results[j].subject;
                bool seen = false;
                for (size_t k = t->lead[i]; k < j && !seen; k++)
                        seen = t->lead[k] == t->lead[i] &&
                               strcmp(v, ids ? rep->results[k].check->id : rep->results[k].subject) == 0;
                if (seen)
                        continue;
                if (out) {
                        fputs(n ? ", " : "", out);
                        text_safe_write(out, v);
                }
                n++;
        }
        return n;
}

/* The label of a group in the id column: its one check, or how many. */
static const char *group_label(const struct text_run *t, size_t i, char *buf, size_t size) {
        size_t ids = group_distinct(t, i, true, NULL);
        if (ids == 1)
                return t->rep->results[i].check->id;
        snprintf(buf, size, "%zu checks", ids);
        return buf;
}

/* " ! 14 checks  0000:61:00.0 nvmlDeviceGetPowerUsage did not return within 2000 ms: no
 * verdict from gpu.recovery_action, ..." and the remedy: one hung call, one line. */
static void print_group(const struct text_run *t, size_t i) {
        const struct result *r = &t->rep->results[i];
        const struct text_options *opt = t->opt;
        size_t ids = group_distinct(t, i, true, NULL), subjects = group_distinct(t, i, false, NULL);
        char label[32], many[32], sub[256], cause[4096];
        const char *column = strcmp(r->subject, "host") == 0 ? "" : text_safe(r->subject, sub, sizeof(sub));
        if (subjects > 1) {
                snprintf(many, sizeof(many), "%zu GPUs", subjects);
                column = many;
        }
        struct text_line l;
        FILE *out = line_open(t, &l);
        fprintf(out, " %s%s%s %-*s %-12s %s", c(opt, status_color[r->status]), status_glyph[r->status],
                c(opt, ANSI_RESET), (int)t->id_width, group_label(t, i, label, sizeof(label)), column,
                text_safe(r->cause, cause, sizeof(cause)));
        if (subjects > 1) {
                fputs(" on ", out);
                group_distinct(t, i, false, out);
        }
        if (ids > 1) {
                fputs(": no verdict from ", out);
                group_distinct(t, i, true, out);
        }
        line_close(t, &l, summary_indent(t));
        if (r->remedy) {
                out = line_open(t, &l);
                fprintf(out, "   %*s remedy: ", (int)t->id_width, "");
                text_safe_write(out, r->remedy);
                line_close(t, &l, detail_indent(t));
        }
}

static void verdict_counts(FILE *out, const struct text_options *opt, enum status verdict,
                           const unsigned counts[_STATUS_COUNT], double duration_ms) {
        static const char *const word[_STATUS_COUNT] = {
                [STATUS_PASS] = "PASS", [STATUS_WARN] = "PASS with warnings", [STATUS_FAIL] = "FAIL",
                [STATUS_SKIP] = "SKIP (nothing was judged)", [STATUS_ERROR] = "ERROR"};
        fprintf(out, "%sVerdict: %s%s%s — %u pass, %u warn, %u fail, %u skip, %u error (%.0f ms)", c(opt, ANSI_BOLD),
                c(opt, status_color[verdict]), word[verdict], c(opt, ANSI_RESET), counts[STATUS_PASS], counts[STATUS_WARN],
                counts[STATUS_FAIL], counts[STATUS_SKIP], counts[STATUS_ERROR], duration_ms);
}

/* The verdict line names the checks that made it, so a log line, a CI step or the Ansible
 * play's summary tells what to look at without the report (slurm-health's drain reason
 * does the same). A check fails on many GPUs once: its id is named once, in report order;
 * a few, then a count, so the line stays one line. */
#define VERDICT_IDS_NAMED 5

static bool named_before(const struct report *rep, size_t i, enum status s) {
        for (size_t j = 0; j < i; j++)
                if (rep->results[j].status == s && rep->results[j].check == rep->results[i].check)
                        return true;
        return false;
}

/* " — fail: a, b and 2 more" (the first group) or "; error: c" (the next ones). */
static void name_not_passing(FILE *out, const struct report *rep, enum status s, bool *any) {
        static const char *const label[_STATUS_COUNT] = {[STATUS_WARN] = "warn", [STATUS_FAIL] = "fail",
                                                         [STATUS_ERROR] = "error"};
        size_t named = 0, more = 0;
        for (size_t i = 0; i < rep->n_results; i++) {
                if (rep->results[i].status != s || named_before(rep, i, s))
                        continue;
                if (named == VERDICT_IDS_NAMED) {
                        more++;
                        continue;
                }
                if (named)
                        fputs(", ", out);
                else
                        fprintf(out, "%s%s: ", *any ? "; " : " — ", label[s]);
                fputs(rep->results[i].check->id, out);
                named++;
                *any = true;
        }
        if (more)
                fprintf(out, " and %zu more", more);
}

/* t->lead and t->members: results of one cause share their first one's index. Left NULL
 * (no groups) when memory is short. */
static void find_groups(struct text_run *t) {
        size_t n = t->rep->n_results;
        size_t *lead = malloc((n ? n : 1) * 2 * sizeof(*lead));
        if (!lead)
                return;
        size_t *members = lead + (n ? n : 1);
        for (size_t i = 0; i < n; i++) {
                lead[i] = i;
                members[i] = 0;
                for (size_t j = 0; j < i; j++)
                        if (lead[j] == j && same_cause(&t->rep->results[j], &t->rep->results[i])) {
                                lead[i] = j;
                                break;
                        }
                members[lead[i]]++;
        }
        for (size_t i = 0; i < n; i++)
                members[i] = members[lead[i]];
        t->lead = lead;
        t->members = members;
}

/* --problems: "9 passed and 63 skipped not shown (--problems)", before the verdict. */
static void print_hidden(const struct text_run *t) {
        unsigned n[_STATUS_COUNT] = {0};
        for (size_t i = 0; i < t->rep->n_results; i++)
                if (hidden(t, i))
                        n[t->rep->results[i].status]++;
        if (!n[STATUS_PASS] && !n[STATUS_SKIP])
                return;
        struct text_line l;
        FILE *out = line_open(t, &l);
        if (n[STATUS_PASS])
                fprintf(out, " %u passed", n[STATUS_PASS]);
        if (n[STATUS_SKIP])
                fprintf(out, "%s %u skipped", n[STATUS_PASS] ? " and" : "", n[STATUS_SKIP]);
        fputs(" not shown (--problems)", out);
        line_close(t, &l, 1);
}

/* The header's GPUs: those on the PCI bus and, when a burn ran, the devices it loaded. The two
 * differ where the backend sees devices sysfs does not list, under --gpus, or with CPU devices
 * (--allow-cpu): "0 NVIDIA GPUs" over a burn of two would be wrong. */
static void gpus_phrase(const struct facts *f, char *buf, size_t size) {
        int n = snprintf(buf, size, "%zu NVIDIA GPU%s", f->gpus.n, f->gpus.n == 1 ? "" : "s");
        const struct burn_facts *b = f->burn;
        if (!b || !b->ran || !b->n_devs || n < 0 || (size_t)n >= size)
                return;
        size_t cpus = 0;
        for (size_t i = 0; i < b->n_devs; i++)
                cpus += b->devs[i].is_cpu;
        const char *api = strcmp(b->backend, "cuda") == 0     ? "CUDA"
                          : strcmp(b->backend, "opencl") == 0 ? "OpenCL"
                                                              : b->backend;
        char cpu_note[48] = "";
        if (cpus)
                snprintf(cpu_note, sizeof(cpu_note), " (%zu on the CPU)", cpus);
        snprintf(buf + n, size - (size_t)n, " on the PCI bus, %zu %s device%s burned%s", b->n_devs, api,
                 b->n_devs == 1 ? "" : "s", cpu_note);
}

void report_text_header(FILE *out, const struct facts *f, const struct run_info *run, const struct text_options *opt) {
        const struct text_run t = {.out = out, .opt = opt};
        char host[1024], policy[1024], gpus[160];
        gpus_phrase(f, gpus, sizeof(gpus));
        struct text_line l;
        FILE *line = line_open(&t, &l);
        fprintf(line, "%sgpuvet %s%s — %s, %s, level %s%s%s", c(opt, ANSI_BOLD), run->command, c(opt, ANSI_RESET),
                f->host.hostname[0] ? text_safe(f->host.hostname, host, sizeof(host)) : "(unknown host)", gpus,
                level_name(run->level), run->policy ? ", policy " : "", text_safe(run->policy, policy, sizeof(policy)));
        line_close(&t, &l, 2);
}

void report_text(FILE *out, const struct facts *f, const struct report *rep, const struct run_info *run,
                 const struct text_options *opt) {
        struct text_run t = {.out = out, .rep = rep, .opt = opt};
        find_groups(&t);
        char label[32];
        for (size_t i = 0; i < rep->n_results; i++) {
                if (hidden(&t, i) || (grouped(&t, i) && t.lead[i] != i))
                        continue;
                size_t n = strlen(grouped(&t, i) ? group_label(&t, i, label, sizeof(label)) : rep->results[i].check->id);
                if (n > t.id_width)
                        t.id_width = n;
        }
        if (!opt->header_shown) {
                report_text_header(out, f, run, opt);
        } else if (f->burn && f->burn->ran && f->burn->n_devs) {
                /* The header went out before the stress test: what it loaded, now known. */
                char gpus[160];
                gpus_phrase(f, gpus, sizeof(gpus));
                struct text_line l;
                FILE *line = line_open(&t, &l);
                fprintf(line, " devices: %s", gpus);
                line_close(&t, &l, 2);
        }

        for (size_t i = 0; i < rep->n_results; i++) {
                if (hidden(&t, i))
                        continue;
                if (!grouped(&t, i))
                        print_result(&t, i);
                else if (t.lead[i] == i)
                        print_group(&t, i);
        }
        if (opt->problems)
                print_hidden(&t);

        enum status verdict = report_verdict(rep);
        if (run->strict && verdict == STATUS_WARN)
                verdict = STATUS_FAIL;
        struct text_line l;
        FILE *line = line_open(&t, &l);
        verdict_counts(line, opt, verdict, rep->counts, run->duration_ms);
        bool any = false;
        name_not_passing(line, rep, STATUS_FAIL, &any);
        name_not_passing(line, rep, STATUS_ERROR, &any);
        if (run->strict)
                name_not_passing(line, rep, STATUS_WARN, &any);
        line_close(&t, &l, strlen("Verdict: "));
        free(t.lead);
}

void report_text_verdict(FILE *out, const struct text_options *opt, enum status verdict,
                         const unsigned counts[_STATUS_COUNT], double duration_ms) {
        verdict_counts(out, opt, verdict, counts, duration_ms);
        fputc('\n', out);
}

const char *report_text_glyph(enum status s, const struct text_options *opt, char *buf, size_t size) {
        snprintf(buf, size, "%s%s%s", c(opt, status_color[s]), status_glyph[s], c(opt, ANSI_RESET));
        return buf;
}
