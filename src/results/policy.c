/* The site policy's defaults and lookups the checks use (results/policy.h). */
#include "results/policy.h"

#include <string.h>

const struct policy_thresholds policy_thresholds_default = {
        /* gpuvet's: early warning before the slowdown threshold NVML reports. */
        .temp_margin_c = 5,
        /* Any cap below the default limit warns unless the site says it caps on purpose. */
        .power_cap_fraction = 1.0,
        /* DCGM's DCGM_LIMIT_MAX_PCIREPLAY_RATE, "the maximum recommended by RM". */
        .pcie_replays_per_minute = 8.0,
        /* gpuvet's: NVIDIA publishes no limit; a few corrected errors are normal on HBM, a
         * steady stream is a cell going bad. */
        .ecc_corrected_warn = 100,
        /* DCGM's soft limit on retired pages (it fails at 63). */
        .retired_pages_warn = 15,
        /* gpuvet's, as gpu-burn-style screening does: GPUs of one model under the same load
         * agree within a few percent; 10% below the best is a GPU held back (clocks, power,
         * cooling), and so is a rate that falls 10% from the first quarter of the run to the
         * last (docs/burn.md). */
        .burn_throughput_spread = 0.10,
        .burn_throughput_drop = 0.10,
        /* gpuvet's: dense GEMM at the power limit runs an H100 SXM at ~75-90% of its maximum
         * SM clock (the normal software power cap); below 60% something else holds it. */
        .burn_sm_clock_fraction = 0.60,
        /* gpuvet's: a dense tensor GEMM takes a healthy data-centre GPU to its power limit
         * within seconds; one that stays under 85% has a power or clock problem. */
        .burn_power_fraction = 0.85,
        /* None by default: what a port should run at is the site's fabric (HDR, NDR, 100GbE);
         * network.port_rate judges against the HCA and the node's other ports without it. */
        .network_min_rate_gbps = 0,
        /* gpuvet's: NVIDIA states no ratio. The DGX it ships range from 0.87x (DGX B300: 2 TB
         * for 2.3 TB of HBM) to 3.2x (DGX H100); half the GPU memory is well below all. */
        .host_memory_min_ratio = 0.5,
};

const struct policy_exception *policy_exception_for(const struct policy *p, const char *check_id, const char *subject) {
        if (!p || !subject)
                return NULL;
        for (size_t i = 0; i < p->n_exceptions; i++) {
                const struct policy_exception *e = &p->exceptions[i];
                if (strcmp(e->check, check_id) == 0 && strcmp(e->subject, subject) == 0)
                        return e;
        }
        return NULL;
}
