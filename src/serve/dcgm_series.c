/* Registry metric -> dcgm-exporter series (dcgm_series.h). */
#include "core/array.h"
#include "serve/dcgm_series.h"

#include <math.h>
#include <string.h>

bool dcgm_series_exported(const struct metric *m) {
        if (!m->dcgm || m->system)
                return false;
        switch (m->smi.format) {
        case SMI_DRIVER_VERSION:
        case SMI_COUNT:
        case SMI_INDEX:
        case SMI_STR:
        case SMI_BUS_ID:
        case SMI_PCI_DOMAIN:
        case SMI_PCI_BUS:
        case SMI_PCI_DEVICE:
        case SMI_HEX32:         /* PCI ids: identity, not a level */
        case SMI_COMPUTE_MODE:
        case SMI_COMPUTE_CAP:
        case SMI_FABRIC_STATE:
                return false;
        default:
                return true;
        }
}

struct unit_map {
        const char *registry;
        const char *dcgm;
        double scale;
        bool whole; /* DCGM counts whole units: round away what the two scalings leave */
};

static const struct unit_map units[] = {
        {"hertz", "MHz", 1e-6, false},
        {"bytes", "MiB", 1.0 / (1024.0 * 1024.0), false},
        /* DCGM's violation counters (DCGM_FI_DEV_*_VIOLATION) count whole nanoseconds, as NVML
         * does (dcgm_fields.h: "Power Violation time in ns", DCGM >= 4.1; dcgm-exporter's
         * counters file says "(in ns)"); round away what the two scalings leave. */
        {"seconds", "ns", 1e9, true},
        {"watts", "W", 1.0, false},
        {"celsius", "C", 1.0, false},
        {"percent", "%", 1.0, false},
        {"ratio", NULL, 1.0, false},           /* DCGM's profiling fields are ratios too */
        {"bytes_per_second", "B/s", 1.0, false},
        /* DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION: NVML's whole millijoules, which mJ * 0.001 *
         * 1000 misses by an ulp for about one value in eight. */
        {"joules", "mJ", 1e3, true},
};

static const struct unit_map *unit_of(const struct metric *m) {
        if (!m->unit)
                return NULL;
        for (size_t i = 0; i < ARRAY_COUNT(units); i++)
                if (strcmp(m->unit, units[i].registry) == 0)
                        return &units[i];
        return NULL;
}

double dcgm_series_scale(const struct metric *m) {
        const struct unit_map *u = unit_of(m);
        return u ? u->scale : 1.0;
}

double dcgm_series_value(const struct metric *m, double registry_value) {
        const struct unit_map *u = unit_of(m);
        double v = registry_value * (u ? u->scale : 1.0);
        return u && u->whole ? nearbyint(v) : v;
}

const char *dcgm_series_unit(const struct metric *m) {
        const struct unit_map *u = unit_of(m);
        return u ? u->dcgm : NULL;
}

const char *dcgm_series_type(const struct metric *m) {
        return m->type == METRIC_COUNTER ? "counter" : "gauge";
}
