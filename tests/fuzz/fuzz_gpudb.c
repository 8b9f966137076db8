/* libFuzzer target: load a GPU table (data/gpus.json format) from the input, then look
 * up every device id and architecture it names, as detect and the checks do. */
#include "data/gpudb.h"

#include <errno.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct gpudb *db = NULL;
        char err[512];
        err[0] = '\0';
        int r = gpudb_load_buffer((const char *)data, size, "fuzz input", &db, err, sizeof(err));
        if (r < 0) {
                /* A refusal must say why, in a terminated message. */
                if (r != -ENOMEM && (err[0] == '\0' || strnlen(err, sizeof(err)) == sizeof(err)))
                        abort();
                return 0;
        }
        for (size_t i = 0; i < db->n_models; i++) {
                const struct gpu_model *m = &db->models[i];
                if (!gpudb_arch(db, m->arch))
                        abort(); /* the loader promised every model's architecture exists */
                for (size_t k = 0; k < m->n_device_ids; k++)
                        if (!gpudb_find(db, 0x10de, m->device_ids[k]))
                                abort();
        }
        (void)gpudb_find(db, 0x8086, 0x2330);
        gpudb_free(db);
        return 0;
}
