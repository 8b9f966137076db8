/* Running `dcgmi diag` (sys/dcgm.h). */
#include "sys/dcgm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/array.h"
#include "core/run_command.h"

#define MAX_JSON (64u << 20) /* r4 on 72 GPUs prints well under this */

unsigned int dcgm_default_timeout_s(int level) {
        switch (level) {
        case 1: return 300;
        case 2: return 900;
        case 3: return 3600;
        default: return 4 * 3600;
        }
}

/* The exit statuses DCGM's dcgmi/Diag.cpp and dcgm_structs.h give (value mod 256). */
const char *dcgm_exit_meaning(int status) {
        static const struct {
                int status;
                const char *meaning;
        } codes[] = {
                {0, "every test passed or was skipped"},
                {226, "a test failed (DCGM_ST_NVVS_ERROR)"},
                {205, "a failure that needs the GPU isolated (DCGM_ST_NVVS_ISOLATE_ERROR)"},
                {242, "no test results (DCGM_ST_NO_DATA)"},
                {203, "the diagnostic was killed (DCGM_ST_NVVS_KILLED)"},
                {204, "the nvvs binary was not found (DCGM_ST_NVVS_BINARY_NOT_FOUND)"},
                {198, "no test is available for these GPUs (DCGM_ST_NVVS_NO_AVAILABLE_TEST)"},
                {217, "a diagnostic is already running (DCGM_ST_DIAG_ALREADY_RUNNING)"},
                {222, "the GPUs are in use (DCGM_ST_IN_USE)"},
                {235, "no connection to the DCGM host engine (DCGM_ST_CONNECTION_NOT_VALID)"},
                {245, "DCGM timed out (DCGM_ST_TIMEOUT)"},
                {250, "not supported (DCGM_ST_NOT_SUPPORTED)"},
                {255, "bad parameter (DCGM_ST_BADPARAM)"},
        };
        for (size_t i = 0; i < ARRAY_COUNT(codes); i++)
                if (codes[i].status == status)
                        return codes[i].meaning;
        return NULL;
}

/* dcgmi from $GPUVET_DCGMI, else the first in PATH. */
static bool find_dcgmi(char *buf, size_t size) {
        const char *env = secure_getenv(DCGMI_ENV);
        if (env && *env) {
                snprintf(buf, size, "%s", env);
                return true;
        }
        const char *path = getenv("PATH");
        if (!path || !*path)
                path = "/usr/local/bin:/usr/bin:/bin";
        while (*path) {
                size_t len = strcspn(path, ":");
                if (len > 0 && (size_t)snprintf(buf, size, "%.*s/dcgmi", (int)len, path) < size && access(buf, X_OK) == 0)
                        return true;
                path += len + (path[len] == ':');
        }
        buf[0] = '\0';
        return false;
}

void dcgm_run(int level, unsigned int timeout_s, struct dcgm_facts *out) {
        memset(out, 0, sizeof(*out));
        out->level = level;
        out->timeout_s = timeout_s ? timeout_s : dcgm_default_timeout_s(level);
        out->exit_status = -1;
        if (!find_dcgmi(out->dcgmi, sizeof(out->dcgmi))) {
                out->state = DCGM_NOT_INSTALLED;
                return;
        }
        char lvl[8];
        snprintf(lvl, sizeof(lvl), "%d", level);
        char *argv[] = {out->dcgmi, "diag", "-r", lvl, "-j", NULL};
        struct command_result cr;
        int r = run_command(argv, out->timeout_s * 1000u, MAX_JSON, &cr);
        if (r < 0) {
                out->state = r == -ENOENT && secure_getenv(DCGMI_ENV) == NULL ? DCGM_NOT_INSTALLED : DCGM_START_ERROR;
                snprintf(out->note, sizeof(out->note), "%s: %s", out->dcgmi, strerror(-r));
                return;
        }
        out->elapsed_s = (double)cr.elapsed_ms / 1e3;
        out->exit_status = cr.exit_status;
        out->signal = cr.signal;
        snprintf(out->stderr_tail, sizeof(out->stderr_tail), "%s", cr.err_tail);
        if (cr.timed_out) {
                out->state = DCGM_TIMEOUT;
                command_result_done(&cr);
                return;
        }
        out->state = DCGM_RAN;
        if (cr.out_truncated)
                snprintf(out->note, sizeof(out->note), "its output passed %u MiB and was cut", MAX_JSON >> 20);
        else if (cr.out_len > 0 &&
                 dcgm_diag_parse(cr.out, cr.out_len, &out->diag, out->note, sizeof(out->note)) == 0)
                out->have_json = true;
        else if (cr.out_len == 0)
                snprintf(out->note, sizeof(out->note), "it printed nothing on standard output");
        command_result_done(&cr);
}

void dcgm_facts_done(struct dcgm_facts *x) {
        dcgm_diag_done(&x->diag);
}
