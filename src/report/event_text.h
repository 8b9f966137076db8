/* NVML's events (Xid, ECC, a lost GPU) as the lines `gpuvet query -l` writes to standard
 * error: each with its meaning and action from gpuvet's Xid table (docs/query.md). */
#pragma once

#include <stdio.h>

#include "data/xiddb.h"
#include "sys/nvml_events.h"

/* One record, one line; db NULL: meanings unavailable. */
void event_text(FILE *out, const struct nvml_event *e, const struct xiddb *db);
