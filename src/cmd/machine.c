#include "cmd/machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/fsroot.h"
#include "data/gpudb.h"
#include "sys/facts.h"

int machine_open(const char *cmd, const struct common_options *common, struct machine *m) {
        memset(m, 0, sizeof(*m));
        m->cmd = cmd;
        return open_inputs(common, &m->fs, &m->db);
}

int machine_gather(struct machine *m, unsigned timeout_s) {
        m->facts = calloc(1, sizeof(*m->facts));
        if (!m->facts) {
                fprintf(stderr, "gpuvet %s: out of memory\n", m->cmd);
                return EXIT_INTERNAL;
        }
        watchdog_arm(timeout_s, "gathering facts");
        int r = facts_gather(m->fs, m->db, m->facts);
        watchdog_arm(0, "");
        if (r < 0) {
                fprintf(stderr, "gpuvet %s: gathering facts: %s\n", m->cmd, strerror(-r));
                return EXIT_INTERNAL;
        }
        return 0;
}

int machine_nvml(struct machine *m, const struct nvml_options *nopt) {
        /* NVML keeps its own deadlines (per call, per GPU, for init): it returns on time even
         * when a call never does, so no watchdog here. */
        return nvml_use_start(&m->nvml, nopt, m->fs, m->facts);
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
