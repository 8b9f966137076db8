/* The report of `gpuvet topo` (docs/topo.md): the GPU x GPU (and NIC) matrix as
 * `nvidia-smi topo -m` prints it, or as JSON (schema gpuvet.topo/1). */
#pragma once

#include "sys/facts.h"
#include "sys/nvml_facts.h"
#include "sys/topo.h"

/* The matrix and its legends on standard output; on standard error, why NVLinks are not
 * shown or unknown. */
void topo_text(const struct facts *f, const struct topo *t, const struct nvml_use *use);
/* The JSON document (malloc'd), NULL when memory ran out. */
char *topo_json(const struct facts *f, const struct topo *t, const struct nvml_use *use);
