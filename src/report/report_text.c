#include "report/report_text.h"
#include "checks/check.h"
#include "report/text_safe.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ANSI_RESET "\033[0m"
#define ANSI_BOLD "\033[1m"
#define ANSI_DIM "\033[2m"

static const char *const status_glyph[_STATUS_COUNT] = {"✓", "⚠", "✗", "-", "!"};
static const char *const status_color[_STATUS_COUNT] = {"\033[32m", "\033[33m", "\033[31m", "\033[2m", "\033[35m"};

bool text_want_color(FILE *out) {
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

static bool same_remedy(const struct result *a, const struct result *b) {
        return a->check == b->check && is_problem(b) && b->remedy && strcmp(a->remedy, b->remedy) == 0;
}

/* One remedy for many subjects is printed once, under the last of them, with the list: eight
 * GPUs with the same fault need one instruction, not eight. */
static void print_remedy(FILE *out, const struct report *rep, size_t i, size_t id_width) {
        const struct result *r = &rep->results[i];
        for (size_t j = i + 1; j < rep->n_results; j++)
                if (same_remedy(r, &rep->results[j]))
                        return; /* a later result of the group prints it */
        size_t n = 0;
        for (size_t j = 0; j <= i; j++)
                n += same_remedy(r, &rep->results[j]);
        if (n <= 1) {
                fprintf(out, "   %*s remedy: ", (int)id_width, "");
                text_safe_write(out, r->remedy);
                fputc('\n', out);
                return;
        }
        fprintf(out, "   %*s remedy (the %zu above: ", (int)id_width, "", n);
        const char *sep = "";
        for (size_t j = 0; j <= i; j++)
                if (same_remedy(r, &rep->results[j])) {
                        fputs(sep, out);
                        text_safe_write(out, rep->results[j].subject);
                        sep = ", ";
                }
        fputs("): ", out);
        text_safe_write(out, r->remedy);
        fputc('\n', out);
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

void report_text_header(FILE *out, const struct facts *f, const struct run_info *run, const struct text_options *opt) {
        char host[1024], policy[1024];
        fprintf(out, "%sgpuvet %s%s — %s, %zu NVIDIA GPU%s, level %s%s%s\n", c(opt, ANSI_BOLD), run->command,
                c(opt, ANSI_RESET),
                f->host.hostname[0] ? text_safe(f->host.hostname, host, sizeof(host)) : "(unknown host)", f->gpus.n,
                f->gpus.n == 1 ? "" : "s", level_name(run->level), run->policy ? ", policy " : "",
                text_safe(run->policy, policy, sizeof(policy)));
}

void report_text(FILE *out, const struct facts *f, const struct report *rep, const struct run_info *run,
                 const struct text_options *opt) {
        size_t id_width = 0;
        for (size_t i = 0; i < rep->n_results; i++) {
                size_t n = strlen(rep->results[i].check->id);
                if (n > id_width)
                        id_width = n;
        }
        if (!opt->header_shown)
                report_text_header(out, f, run, opt);

        for (size_t i = 0; i < rep->n_results; i++) {
                const struct result *r = &rep->results[i];
                const char *subject = strcmp(r->subject, "host") == 0 ? "" : r->subject;
                /* Results quote machine text (names, versions, log lines): made terminal-safe. */
                char sub[256], sum[4096], obs[4096], exp[4096];
                fprintf(out, " %s%s%s %-*s %-12s %s\n", c(opt, status_color[r->status]), status_glyph[r->status],
                        c(opt, ANSI_RESET), (int)id_width, r->check->id, text_safe(subject, sub, sizeof(sub)),
                        text_safe(r->summary, sum, sizeof(sum)));
                bool problem = is_problem(r);
                if ((problem || opt->verbose) && (r->observed || r->expected))
                        fprintf(out, "   %*s %sobserved: %s; expected: %s%s\n", (int)id_width, "", c(opt, ANSI_DIM),
                                r->observed ? text_safe(r->observed, obs, sizeof(obs)) : "-",
                                r->expected ? text_safe(r->expected, exp, sizeof(exp)) : "-", c(opt, ANSI_RESET));
                if (problem && r->remedy)
                        print_remedy(out, rep, i, id_width);
        }

        enum status verdict = report_verdict(rep);
        if (run->strict && verdict == STATUS_WARN)
                verdict = STATUS_FAIL;
        verdict_counts(out, opt, verdict, rep->counts, run->duration_ms);
        bool any = false;
        name_not_passing(out, rep, STATUS_FAIL, &any);
        name_not_passing(out, rep, STATUS_ERROR, &any);
        if (run->strict)
                name_not_passing(out, rep, STATUS_WARN, &any);
        fputc('\n', out);
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
