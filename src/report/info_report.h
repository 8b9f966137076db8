/* The report of `gpuvet info` (docs/info.md): the host, the driver and every GPU as text in
 * nvidia-smi -q's layout, or as JSON (schema gpuvet.info/1), from the facts and the
 * command's NVML reading. */
#pragma once

#include "sys/facts.h"
#include "sys/nvml_facts.h"

/* The text, on standard output. */
void info_text(const struct facts *f, const struct nvml_use *u);
/* The JSON document (malloc'd), NULL when memory ran out. */
char *info_json(const struct facts *f, const struct nvml_use *u);
