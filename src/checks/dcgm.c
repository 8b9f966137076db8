/* dcgm.diag: DCGM's own diagnostic (`dcgmi diag -r LEVEL -j`), run on request with
 * `check --with-dcgm LEVEL` and folded into the report: one result for the run, then one
 * per test and GPU as DCGM judged it. */
#include "checks/check.h"
#include "core/strbuf.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define DCGM_REMEDY_RUN_AGAIN "Read DCGM's own account: `dcgmi diag -r %d` (text) and the nv-hostengine log (/var/log/nv-hostengine.log)."

/* DCGM numbers GPUs as NVML does: its GPU id is the NVML index. */
static void entity_subject(const struct facts *f, const struct dcgm_result *d, char *buf, size_t size) {
        if (d->entity_id < 0) {
                snprintf(buf, size, "host");
                return;
        }
        if (strcmp(d->entity, "GPU") == 0)
                for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                        const struct nvml_gpu *g = &f->nvml.gpus[i];
                        if (g->index == (unsigned int)d->entity_id && nv_ok(g->pci_bus_id) && g->pci_bus_id.v[0]) {
                                snprintf(buf, size, "%s", g->pci_bus_id.v);
                                return;
                        }
                }
        snprintf(buf, size, "dcgm:%s%d", strcmp(d->entity, "CPU") == 0 ? "cpu" : "gpu", d->entity_id);
}

static void judge_result(const struct check_info *self, const struct facts *f, const struct dcgm_facts *x,
                         const struct dcgm_result *d, struct report *rep) {
        char subject[NV_STR_MAX + 16];
        entity_subject(f, d, subject, sizeof(subject));
        struct result *r = result_new(rep, self, subject);
        result_evidence(r, "dcgm_test", "%s%s%s", d->category[0] ? d->category : "", d->category[0] ? " / " : "", d->test);
        if (d->entity_id >= 0)
                result_evidence(r, "dcgm_entity", "%s %d", d->entity, d->entity_id);
        if (d->error_ids[0])
                result_evidence(r, "dcgm_error_id", "%s", d->error_ids);
        if (d->info[0])
                result_evidence(r, "dcgm_info", "%s", d->info);
        result_observed(r, "%s%s%s", d->status == DCGM_OTHER && d->status_text[0] ? d->status_text
                                                                                   : dcgm_status_name(d->status),
                        d->message[0] ? ": " : "", d->message);
        result_expected(r, "Pass");
        switch (d->status) {
        case DCGM_PASS:
                result_status(r, STATUS_PASS, "DCGM %s: pass", d->test);
                break;
        case DCGM_SKIP:
                result_status(r, STATUS_SKIP, "DCGM %s: skipped%s%s", d->test, d->message[0] || d->info[0] ? ": " : "",
                              d->message[0] ? d->message : d->info);
                break;
        case DCGM_FAIL:
                result_status(r, STATUS_FAIL, "DCGM %s: %s", d->test,
                              d->message[0] ? d->message : "failed (DCGM gave no message)");
                result_remedy(r, DCGM_REMEDY_RUN_AGAIN " DCGM's message above names the fault; error ids are listed in "
                                 "DCGM's documentation (dcgm_errors.h).", x->level);
                break;
        case DCGM_OTHER:
                result_status(r, STATUS_ERROR, "DCGM %s: status \"%s\" is not one dcgmi prints", d->test, d->status_text);
                break;
        }
}

static void run_dcgm_diag(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct dcgm_facts *x = &f->dcgm;
        if (x->state == DCGM_NOT_REQUESTED) {
                struct result *r = result_new(rep, self, "host");
                result_status(r, STATUS_SKIP, "not asked: `gpuvet check --with-dcgm LEVEL` runs DCGM's diagnostic");
                return;
        }
        struct result *r = check_host_result_with_gpus(self, f, rep);
        if (!r)
                return;
        result_evidence(r, "command", "%s diag -r %d -j", x->dcgmi[0] ? x->dcgmi : "dcgmi", x->level);
        switch (x->state) {
        case DCGM_NOT_REQUESTED:
                return;
        case DCGM_NOT_RUN:
                result_status(r, STATUS_SKIP, "%s", x->note[0] ? x->note : "DCGM's diagnostic was not run");
                return;
        case DCGM_NOT_INSTALLED:
                result_status(r, STATUS_SKIP, "dcgmi is not installed (not in PATH): DCGM's diagnostic not run");
                return;
        case DCGM_START_ERROR:
                result_status(r, STATUS_ERROR, "dcgmi could not be started: %s", x->note);
                return;
        case DCGM_TIMEOUT:
                result_observed(r, "still running after %u s", x->timeout_s);
                result_status(r, STATUS_ERROR, "dcgmi diag -r %d did not finish within %u s; it was killed", x->level,
                              x->timeout_s);
                result_remedy(r, "Give the level more time (--dcgm-timeout), or look for a stuck GPU: Xid errors "
                                 "(`journalctl -k | grep -i xid`) and `dcgmi diag -r 1`.");
                return;
        case DCGM_RAN:
                break;
        }
        result_evidence(r, "exit_status", "%d", x->exit_status);
        result_evidence(r, "seconds", "%.1f", x->elapsed_s);
        if (x->stderr_tail[0])
                result_evidence(r, "stderr", "%s", x->stderr_tail);
        const char *meaning = x->exit_status >= 0 ? dcgm_exit_meaning(x->exit_status) : NULL;
        if (!x->have_json) {
                result_observed(r, "exit %d%s%s; %s", x->exit_status, meaning ? ": " : "", meaning ? meaning : "", x->note);
                result_status(r, STATUS_ERROR, "dcgmi diag -r %d gave no result: exit status %d%s%s%s; %s", x->level,
                              x->exit_status, meaning ? " (" : "", meaning ? meaning : "", meaning ? ")" : "", x->note);
                result_remedy(r, "%s", x->exit_status == 235 ? "Start the DCGM host engine: `systemctl enable --now "
                                                               "nvidia-dcgm` (or run nv-hostengine)."
                                                             : "Run `dcgmi diag -r 1` by hand and read its message.");
                return;
        }
        const struct dcgm_diag *d = &x->diag;
        if (d->version[0])
                result_evidence(r, "dcgm_version", "%s", d->version);
        if (d->driver_version[0])
                result_evidence(r, "driver_version", "%s", d->driver_version);
        /* Read past, as DCGM's own readers do; shown, since it may be a warning of DCGM's. */
        if (d->preamble[0])
                result_evidence(r, "text_before_json", "%s", d->preamble);
        if (d->runtime_error[0]) {
                result_observed(r, "%s", d->runtime_error);
                result_status(r, STATUS_ERROR, "DCGM's diagnostic could not run: %s", d->runtime_error);
                result_remedy(r, "Check the DCGM host engine (`systemctl status nvidia-dcgm`) and that no other "
                                 "diagnostic or job holds the GPUs.");
                return;
        }
        size_t n_fail = 0, n_skip = 0, n_pass = 0;
        for (size_t i = 0; i < d->n; i++) {
                enum dcgm_status st = d->results[i].status;
                n_pass += st == DCGM_PASS;
                n_skip += st == DCGM_SKIP;
                n_fail += st == DCGM_FAIL || st == DCGM_OTHER;
        }
        bool dcgm_failed = x->exit_status == 226 || x->exit_status == 205;
        result_observed(r, "%zu results: %zu pass, %zu fail, %zu skip; exit %d", d->n, n_pass, n_fail, n_skip,
                        x->exit_status);
        result_expected(r, "every DCGM test passes or is skipped");
        if (d->n == 0) {
                result_status(r, STATUS_ERROR, "dcgmi diag -r %d ran but reported no test", x->level);
                result_remedy(r, DCGM_REMEDY_RUN_AGAIN, x->level);
        } else if (n_fail > 0 || x->exit_status != 0) {
                /* The per-test results below say what failed; this line says the run did. */
                result_status(r, n_fail || dcgm_failed ? STATUS_FAIL : STATUS_ERROR,
                              "DCGM diagnostic level %d: %zu of %zu results failed (exit %d%s%s)", x->level, n_fail, d->n,
                              x->exit_status, meaning ? ": " : "", meaning ? meaning : "");
                result_remedy(r, x->exit_status == 205 ? "DCGM asks for the GPU to be isolated: drain the node and "
                                                         "have the GPU replaced or reset; the failing results name it."
                                                       : "See the failing DCGM results below.");
        } else {
                result_status(r, STATUS_PASS, "DCGM diagnostic level %d: %zu results, none failed", x->level, d->n);
        }
        for (size_t i = 0; i < d->n; i++)
                judge_result(self, f, x, &d->results[i], rep);
}

CHECK_INFO(dcgm_diag, "dcgm", "dcgm.diag", LEVEL_QUICK, NEED_NVML | NEED_DCGM,
           "DCGM's own diagnostic passes (`--with-dcgm LEVEL` runs dcgmi diag)",
           run_dcgm_diag);
