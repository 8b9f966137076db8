#include "cmd/machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/fsroot.h"
#include "data/gpudb.h"
#include "sys/facts.h"

int machine_open(const char *cmd, const struct common_options *common, struct machine *m) {
        memset(m, 0, sizeof(*m));
        m->cmd = cmd;
        return open_inputs(cmd, common, &m->fs, &m->db);
}

#ifdef GPUVET_TEST_HOOKS
/* GPUVET_TEST_FACTS_HOLD=FILE (gpuvet-test-hooks only): the facts are not done until FILE
 * exists (at most 60 s), as on a node whose sysfs reads are slow, so that a test can see
 * what the command does meanwhile (tests/golden/test_check_overlap.py: NVML is read, the
 * CUDA probe waits). */
static void test_hold_facts(void) {
        const char *file = getenv("GPUVET_TEST_FACTS_HOLD");
        for (int i = 0; file && *file && i < 30000 && access(file, F_OK) != 0; i++)
                nanosleep(&(struct timespec){0, 2 * 1000 * 1000}, NULL);
}
#endif

int machine_gather(struct machine *m, unsigned timeout_s) { return machine_gather_some(m, timeout_s, INPUTS_ALL); }

int machine_gather_some(struct machine *m, unsigned timeout_s, unsigned needs) {
        m->facts = calloc(1, sizeof(*m->facts));
        if (!m->facts) {
                fprintf(stderr, "gpuvet %s: out of memory\n", m->cmd);
                return EXIT_INTERNAL;
        }
        watchdog_arm(timeout_s, "gathering facts");
        int r = facts_gather_some(m->fs, m->db, needs, m->facts);
#ifdef GPUVET_TEST_HOOKS
        test_hold_facts();
#endif
        watchdog_arm(0, "");
        if (r < 0) {
                fprintf(stderr, "gpuvet %s: gathering facts: %s\n", m->cmd, strerror(-r));
                return EXIT_INTERNAL;
        }
        return 0;
}

/* NVML into facts->nvml (nvml_use_start: what was not read is recorded, not returned).
 * Returns 0, or EXIT_INTERNAL when memory ran out. */
static int machine_nvml(struct machine *m, const struct nvml_options *nopt) {
        /* NVML keeps its own deadlines (per call, per GPU, for init): it returns on time even
         * when a call never does, so no watchdog here. */
        return nvml_use_start(&m->nvml, nopt, m->fs, m->facts);
}

int machine_nvml_begin(struct machine *m, const struct nvml_options *nopt) {
        return nvml_use_begin(&m->nvml, nopt, m->fs);
}

int machine_nvml_join(struct machine *m) {
        return nvml_use_join(&m->nvml, m->facts);
}

int machine_read(const char *cmd, const struct common_options *common, const struct nvml_options *nopt,
                 struct machine *m) {
        int code = machine_open(cmd, common, m);
        if (code == 0)
                code = machine_gather(m, common->timeout_s);
        if (code == 0)
                code = machine_nvml(m, nopt);
        return code ? machine_done(m, code) : 0;
}

int machine_done(struct machine *m, int code) {
        code = nvml_use_end(&m->nvml, code);
        if (m->facts)
                facts_done(m->facts);
        free(m->facts);
        gpudb_free(m->db);
        fsroot_free(m->fs);
        memset(m, 0, sizeof(*m));
        return code;
}
