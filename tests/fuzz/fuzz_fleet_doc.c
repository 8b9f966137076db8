/* libFuzzer target: the report reader of gpuvet fleet (src/fleet/fleet_doc.c), which reads
 * whatever files a fleet's directory holds. A refusal must say why in a terminated message;
 * an accepted document must hold terminated strings in every field it read, and the fleet
 * rules table (the same reader's neighbour, data/fleet_rules.json) must never crash on the
 * same bytes. */
#include "data/fleet_rules.h"
#include "fleet/fleet_doc.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void touch(const char *s) {
        if (s && strlen(s) > (1u << 26))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* A copy of exactly size bytes: a read past the end is caught. */
        char *buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        struct fleet_scratch scratch = {0};
        struct fleet_doc doc;
        char why[256];
        why[0] = '\0';
        int r = fleet_doc_parse(buf, size, &scratch, &doc, why, sizeof(why));
        if (r < 0) {
                if ((r != -EINVAL && r != -EPROTO && r != FLEET_DOC_AGGREGATE && r != -ENOMEM) || !why[0] ||
                    !memchr(why, '\0', sizeof(why)))
                        abort();
        } else {
                touch(doc.command);
                touch(doc.hostname);
                touch(doc.kernel_release);
                touch(doc.driver_version);
                touch(doc.cuda_version);
                for (size_t i = 0; i < doc.n_gpus; i++) {
                        touch(doc.gpus[i].model);
                        touch(doc.gpus[i].pci_bus_id);
                        touch(doc.gpus[i].vbios);
                }
                for (size_t i = 0; i < doc.n_checks; i++) {
                        touch(doc.checks[i].id);
                        touch(doc.checks[i].subject);
                        if (doc.checks[i].status == STATUS_PASS || doc.checks[i].status == STATUS_SKIP)
                                abort(); /* only problems are kept */
                }
                for (size_t i = 0; i < doc.n_metrics; i++) {
                        touch(doc.metrics[i].name);
                        touch(doc.metrics[i].unit);
                        touch(doc.metrics[i].subject);
                        if (!isfinite(doc.metrics[i].value))
                                abort();
                }
                fleet_doc_clear(&doc);
        }
        fleet_scratch_free(&scratch);
        struct fleet_rules rules;
        char err[512];
        if (fleet_rules_load_buffer(buf, size, "fuzz.json", &rules, err, sizeof(err)) == 0)
                fleet_rules_done(&rules);
        free(buf);
        return 0;
}
