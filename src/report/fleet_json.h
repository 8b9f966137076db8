/* `gpuvet fleet --json`: the aggregate as `gpuvet.fleet/1` (docs/fleet.md). */
#pragma once

#include "fleet/fleet.h"

#define FLEET_SCHEMA "gpuvet.fleet/1"

/* The document, newly allocated (NULL: out of memory). */
char *fleet_json(const struct fleet *f);
