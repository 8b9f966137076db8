/* Heat and clocks: gpu.temperature, gpu.memory_temperature, gpu.clock_events.
 * docs/checks/gpu.md documents each; the shared NVML judging is in nvml_common.c. */
#include "checks/check.h"
#include "checks/gpu/nvml_common.h"
#include "core/array.h"
#include "core/strbuf.h"
#include "core/strparse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- gpu.temperature ----------------------------------------------------------------- */

/* The T.Limit scale (Ada and later, R570+): the margin counts degrees down to the GPU's
 * T.Limit at 0; past it clocks may drop below base (GPU max operating, 0) and then the
 * hardware slows down (H100: -2) or shuts down (-8). The first of those the GPU reports
 * is the limit judged; 0 when it reports none. */
static int tlimit_first_limit(const struct nvml_gpu *g) {
        if (nv_ok(g->tlimit_gpu_max_c))
                return g->tlimit_gpu_max_c.v;
        if (nv_ok(g->tlimit_slowdown_c))
                return g->tlimit_slowdown_c.v;
        return 0;
}

static void tlimit_evidence(struct result *r, const struct nvml_gpu *g) {
        if (nv_ok(g->tlimit_gpu_max_c))
                result_evidence(r, "gpu_max_tlimit_c", "%d", g->tlimit_gpu_max_c.v);
        if (nv_ok(g->tlimit_slowdown_c))
                result_evidence(r, "slowdown_tlimit_c", "%d", g->tlimit_slowdown_c.v);
        if (nv_ok(g->tlimit_shutdown_c))
                result_evidence(r, "shutdown_tlimit_c", "%d", g->tlimit_shutdown_c.v);
}

static const char thermal_remedy_fmt[] =
        "Check the cooling: fans and their BMC policy, blocked airflow or a failed fan, inlet temperature, heatsink "
        "contact. `nvidia-smi -q -d TEMPERATURE,PERFORMANCE -i %u` shows the limits and active slowdowns.";

/* Ada and later: judged by the margin to T.Limit, as NVIDIA's own tools now report it. */
static void judge_margin(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        unsigned margin = check_thresholds(f)->temp_margin_c;
        int m = g->temp_margin_c.v, limit = tlimit_first_limit(g);
        result_expected(r, "more than %u C of margin to T.Limit (clocks drop at %d C)", margin, limit);
        if (nv_ok(g->temp_c))
                result_observed(r, "%u C, T.Limit margin %d C", g->temp_c.v, m);
        else
                result_observed(r, "T.Limit margin %d C", m);
        result_evidence(r, "source", "nvmlDeviceGetMarginTemperature, nvmlDeviceGetFieldValues (T.Limit fields)");
        result_evidence(r, "margin_c", "%d", m);
        tlimit_evidence(r, g);
        if (m <= limit) {
                result_status(r, STATUS_FAIL, "%s has %d C of margin to its T.Limit, at or past the %d C where clocks are "
                                              "cut", desc, m, limit);
                result_remedy(r, thermal_remedy_fmt, g->index);
        } else if (m <= limit + (int)margin) {
                result_status(r, STATUS_WARN, "%s has only %d C of margin to its T.Limit (clocks drop at %d C)", desc, m,
                              limit);
                result_remedy(r, "Check the cooling before the GPU starts slowing down: fans, airflow, inlet "
                                 "temperature.");
        } else {
                result_status(r, STATUS_PASS, "%d C of margin to T.Limit", m);
        }
}

static void judge_temperature(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        if (nv_ok(g->temp_margin_c)) {
                judge_margin(r, f, g, desc);
                return;
        }
        unsigned margin = check_thresholds(f)->temp_margin_c;
        if (nv_ok(g->temp_slowdown_c))
                result_expected(r, "below %u C (slowdown %u C, margin %u C)",
                                g->temp_slowdown_c.v > margin ? g->temp_slowdown_c.v - margin : 0,
                                g->temp_slowdown_c.v, margin);
        else
                result_expected(r, "at least %u C below the slowdown threshold", margin);
        /* A GPU or driver without the margin is judged by the absolute thresholds; a
         * margin call that failed otherwise is reported, not papered over. */
        if (!nv_reading_absent(g->temp_margin_c.state, g->temp_margin_c.rc) && UNUSABLE(r, f, g, "T.Limit margin", g->temp_margin_c))
                return;
        if (UNUSABLE(r, f, g, "GPU temperature", g->temp_c) ||
            UNUSABLE(r, f, g, "slowdown temperature", g->temp_slowdown_c))
                return;
        unsigned int t = g->temp_c.v, slow = g->temp_slowdown_c.v;
        result_observed(r, "%u C", t);
        result_evidence(r, "source", "nvmlDeviceGetTemperature, nvmlDeviceGetTemperatureThreshold");
        if (nv_ok(g->temp_shutdown_c))
                result_evidence(r, "shutdown_c", "%u", g->temp_shutdown_c.v);
        if (t >= slow) {
                result_status(r, STATUS_FAIL, "%s is at %u C, at or above its slowdown threshold %u C: clocks "
                                              "are being cut",
                              desc, t, slow);
                result_remedy(r, thermal_remedy_fmt, g->index);
                return;
        }
        if (t + margin >= slow) {
                result_status(r, STATUS_WARN, "%s is at %u C, within %u C of its slowdown threshold %u C", desc,
                              t, margin, slow);
                result_remedy(r, "Check the cooling before the GPU starts slowing down: fans, airflow, inlet "
                                 "temperature.");
                return;
        }
        result_status(r, STATUS_PASS, "%u C, %u C below the slowdown threshold", t, slow - t);
}

static void run_temperature(const struct check_info *self, const struct facts *f, struct report *rep) {
        nv_each_gpu(self, f, rep, judge_temperature);
}

CHECK_INFO_USES(gpu_temperature, "gpu", "gpu.temperature", LEVEL_QUICK, NEED_XID | NEED_NVML, NEED_BURN,
           "Each GPU runs below its slowdown temperature (or T.Limit) with margin",
           run_temperature);

/* ---- gpu.memory_temperature ----------------------------------------------------------- */

/* HBM is often the first limit on H100/H200/B200. Judged against the memory's own
 * maximum where NVML gives it in degrees; newer drivers give it only on the T.Limit scale
 * (field 195, "Memory Max Operating T.Limit Temp"), where the margin to the nearest
 * slowdown threshold, core or memory, is what can be compared with it. */
static void run_memory_temperature(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nv_unavailable(self, f, rep))
                return;
        unsigned margin = check_thresholds(f)->temp_margin_c;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                if (UNUSABLE(r, f, g, "memory temperature", g->temp_memory_c))
                        continue;
                unsigned int t = g->temp_memory_c.v;
                result_evidence(r, "source", "nvmlDeviceGetFieldValues (NVML_FI_DEV_MEMORY_TEMP)");
                if (nv_ok(g->temp_mem_max_c) && g->temp_mem_max_c.v > 0) {
                        unsigned int max = g->temp_mem_max_c.v;
                        result_observed(r, "%u C", t);
                        result_expected(r, "below %u C (memory max %u C, margin %u C)", max > margin ? max - margin : 0,
                                        max, margin);
                        result_evidence(r, "memory_max_c", "%u", max);
                        if (t >= max) {
                                result_status(r, STATUS_FAIL, "%s memory is at %u C, at or above its maximum %u C: the "
                                                              "driver slows the GPU down", desc, t, max);
                                result_remedy(r, thermal_remedy_fmt, g->index);
                        } else if (t + margin >= max) {
                                result_status(r, STATUS_WARN, "%s memory is at %u C, within %u C of its maximum %u C",
                                              desc, t, margin, max);
                                result_remedy(r, "Check the cooling before the memory limit slows the GPU down: fans, "
                                                 "airflow, inlet temperature.");
                        } else {
                                result_status(r, STATUS_PASS, "memory %u C, %u C below its maximum", t, max - t);
                        }
                        continue;
                }
                if (nv_ok(g->temp_margin_c) && nv_ok(g->tlimit_mem_max_c)) {
                        int m = g->temp_margin_c.v, limit = g->tlimit_mem_max_c.v;
                        result_observed(r, "%u C, T.Limit margin %d C", t, m);
                        result_expected(r, "more than %u C of margin to the memory limit (%d C on the T.Limit scale)",
                                        margin, limit);
                        result_evidence(r, "margin_c", "%d", m);
                        result_evidence(r, "memory_max_tlimit_c", "%d", limit);
                        if (m <= limit) {
                                result_status(r, STATUS_FAIL, "%s (memory at %u C) is at or past its memory T.Limit: "
                                                              "the driver slows the GPU down", desc, t);
                                result_remedy(r, thermal_remedy_fmt, g->index);
                        } else if (m <= limit + (int)margin) {
                                result_status(r, STATUS_WARN, "%s (memory at %u C) has only %d C of margin to its "
                                                              "nearest thermal limit", desc, t, m - limit);
                                result_remedy(r, "Check the cooling before the memory limit slows the GPU down: fans, "
                                                 "airflow, inlet temperature.");
                        } else {
                                result_status(r, STATUS_PASS, "memory %u C; %d C of margin to the nearest thermal limit",
                                              t, m - limit);
                        }
                        continue;
                }
                result_observed(r, "%u C", t);
                result_status(r, STATUS_SKIP, "memory at %u C, but NVML reports no memory temperature limit to judge it "
                                              "against", t);
        }
}

CHECK_INFO(gpu_memory_temperature, "gpu", "gpu.memory_temperature", LEVEL_QUICK, NEED_NVML,
           "GPU memory (HBM) runs below its temperature limit with margin",
           run_memory_temperature);

/* ---- gpu.clock_events ---------------------------------------------------------------- */

static const struct {
        unsigned long long bit;
        const char *name;
        enum status status; /* PASS: informational */
} clock_reasons[] = {
        {NV_CLOCKS_EVENT_HW_SLOWDOWN, "HW slowdown", STATUS_FAIL},
        {NV_CLOCKS_EVENT_HW_THERMAL_SLOWDOWN, "HW thermal slowdown", STATUS_FAIL},
        {NV_CLOCKS_EVENT_HW_POWER_BRAKE_SLOWDOWN, "HW power brake slowdown", STATUS_FAIL},
        {NV_CLOCKS_EVENT_SW_THERMAL_SLOWDOWN, "SW thermal slowdown", STATUS_WARN},
        {NV_CLOCKS_EVENT_GPU_IDLE, "GPU idle", STATUS_PASS},
        {NV_CLOCKS_EVENT_APPLICATIONS_CLOCKS_SETTING, "applications clocks setting", STATUS_PASS},
        {NV_CLOCKS_EVENT_SW_POWER_CAP, "SW power cap", STATUS_PASS},
        {NV_CLOCKS_EVENT_SYNC_BOOST, "sync boost", STATUS_PASS},
        {NV_CLOCKS_EVENT_DISPLAY_CLOCK_SETTING, "display clock setting", STATUS_PASS},
};

static void judge_clock_events(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        result_expected(r, "no hardware, thermal or power-brake slowdown");
        if (UNUSABLE(r, f, g, "clock event reasons", g->clocks_event_reasons))
                return;
        unsigned long long v = g->clocks_event_reasons.v;
        result_evidence(r, "source", "%s", g->clocks_event_reasons.fn);
        result_evidence(r, "reasons", "0x%llx", v);
        char active[256] = "", bad[256] = "";
        enum status worst = STATUS_PASS;
        for (size_t k = 0; k < ARRAY_COUNT(clock_reasons); k++) {
                if (!(v & clock_reasons[k].bit))
                        continue;
                strbuf_appendf(active, sizeof(active), "%s%s", active[0] ? ", " : "", clock_reasons[k].name);
                if (clock_reasons[k].status == STATUS_PASS)
                        continue;
                strbuf_appendf(bad, sizeof(bad), "%s%s", bad[0] ? ", " : "", clock_reasons[k].name);
                if (worst != STATUS_FAIL)
                        worst = clock_reasons[k].status;
        }
        result_observed(r, "%s", active[0] ? active : "none");
        if (worst == STATUS_FAIL) {
                result_status(r, STATUS_FAIL, "%s is slowed down by hardware: %s", desc, bad);
                result_remedy(r, "HW thermal: check cooling (fans, airflow, inlet temperature). HW power brake: "
                                 "the board or chassis signalled a power fault (PSU, power cable, BMC power "
                                 "capping). HW slowdown alone: external signal; check the BMC event log and "
                                 "`nvidia-smi -q -d PERFORMANCE -i %u`.",
                              g->index);
                return;
        }
        if (worst == STATUS_WARN) {
                result_status(r, STATUS_WARN, "%s is slowed down by the driver to stay within its thermal "
                                              "limit: %s",
                              desc, bad);
                result_remedy(r, "Improve cooling: the GPU is running hot enough for the driver to lower its "
                                 "clocks (gpu.temperature).");
                return;
        }
        result_status(r, STATUS_PASS, "no slowdown active%s%s%s", active[0] ? " (" : "", active,
                      active[0] ? ")" : "");
}

static void run_clock_events(const struct check_info *self, const struct facts *f, struct report *rep) {
        nv_each_gpu(self, f, rep, judge_clock_events);
}

CHECK_INFO_USES(gpu_clock_events, "gpu", "gpu.clock_events", LEVEL_QUICK, NEED_XID | NEED_NVML, NEED_BURN,
           "No hardware, thermal or power-brake clock slowdown active",
           run_clock_events);

/* The same GPU in the read after the probes (facts.nvml_after), or NULL. */
