/* The GPU memory: gpu.row_remapper, gpu.ecc_mode, gpu.ecc_errors, gpu.memory_health.
 * docs/checks/gpu.md documents each; the shared NVML judging is in nvml_common.c. */
#include "checks/check.h"
#include "checks/gpu/nvml_common.h"
#include "core/array.h"
#include "core/strbuf.h"
#include "core/strparse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- gpu.row_remapper ---------------------------------------------------------------- */

static void judge_row_remapper(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        result_expected(r, "every memory bank has spare rows left for remapping");
        const struct nv_u32 *h = g->remap_hist;
        /* Row remapping came with Ampere (compute capability 8.0); on an Ampere or newer GPU
         * (an H100, a B200) that is not why the histogram is missing, so say no reason. */
        int cc = nv_cc_major(f, g);
        const char *why = cc >= 0 && cc < 8 ? " (GPUs before Ampere retire pages instead: gpu.memory_health judges them)"
                                            : "";
        if (nv_skip_unsupported(r, h[0].state, h[0].rc, "nvmlDeviceGetRowRemapperHistogram", "row-remapper histogram",
                             desc, why))
                return;
        if (UNUSABLE(r, f, g, "row remapper histogram", h[0]))
                return;
        result_evidence(r, "source", "nvmlDeviceGetRowRemapperHistogram");
        result_observed(r, "banks by spare rows left: max %u, high %u, partial %u, low %u, none %u", h[0].v,
                        h[1].v, h[2].v, h[3].v, h[4].v);
        if (h[4].v > 0) {
                result_status(r, STATUS_FAIL,
                              "%u memory bank%s of %s %s no spare row left: the next uncorrectable error "
                              "there cannot be remapped",
                              h[4].v, h[4].v == 1 ? "" : "s", desc, h[4].v == 1 ? "has" : "have");
                result_remedy(r, "Drain the node and open an RMA with NVIDIA or the system vendor now, "
                                 "before a remap fails (Xid 64) and the GPU must be taken out in a hurry.");
        } else if (h[3].v > 0) {
                result_status(r, STATUS_WARN, "%u memory bank%s of %s %s few spare rows left", h[3].v,
                              h[3].v == 1 ? "" : "s", desc, h[3].v == 1 ? "has" : "have");
                result_remedy(r, "Watch gpu.ecc_errors and gpu.memory_health; plan the board's replacement "
                                 "if remapped rows keep growing.");
        } else {
                result_status(r, STATUS_PASS, "every memory bank of %s has spare rows", desc);
        }
}

static void run_row_remapper(const struct check_info *self, const struct facts *f, struct report *rep) {
        nv_each_gpu(self, f, rep, judge_row_remapper);
}

CHECK_INFO(gpu_row_remapper, "gpu", "gpu.row_remapper", LEVEL_QUICK, NEED_XID | NEED_NVML,
           "Every memory bank has spare rows left for remapping (row-remapper histogram)",
           run_row_remapper);

/* ---- gpu.ecc_mode -------------------------------------------------------------------- */

static const char *on_off(unsigned int v) { return v == NV_ENABLED ? "enabled" : "disabled"; }

static void judge_ecc_mode(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        const struct gpu_model *m = nv_model(f, g);
        /* The board's factory setting where the driver gives it, else our table. */
        bool have_default = nv_ok(g->ecc_mode_default);
        bool datacenter = have_default ? g->ecc_mode_default.v == NV_ENABLED : m && m->datacenter;
        if (have_default)
                result_expected(r, datacenter ? "ECC enabled (the board ships with it on)"
                                              : "ECC as configured (the board ships with it off)");
        else
                result_expected(r, datacenter ? "ECC enabled (a datacenter GPU)"
                                              : "ECC as configured (optional on this GPU)");
        if (UNUSABLE(r, f, g, "ECC mode", g->ecc_mode_current))
                return;
        if (!nv_reading_absent(g->ecc_mode_default.state, g->ecc_mode_default.rc) &&
            UNUSABLE(r, f, g, "default ECC mode", g->ecc_mode_default))
                return;
        result_evidence(r, "source", "%s", have_default ? "nvmlDeviceGetEccMode, nvmlDeviceGetDefaultEccMode"
                                                        : "nvmlDeviceGetEccMode");
        if (have_default)
                result_evidence(r, "default_mode", "%s", on_off(g->ecc_mode_default.v));
        bool cur = g->ecc_mode_current.v == NV_ENABLED;
        bool have_pending = nv_ok(g->ecc_mode_pending);
        bool pend = have_pending ? g->ecc_mode_pending.v == NV_ENABLED : cur;
        if (have_pending && pend != cur)
                result_observed(r, "%s, %s pending", on_off(g->ecc_mode_current.v),
                                on_off(g->ecc_mode_pending.v));
        else
                result_observed(r, "%s", on_off(g->ecc_mode_current.v));
        if (pend != cur) {
                result_status(r, STATUS_WARN, "ECC is %s but %s is pending: reboot or reset the GPU to apply",
                              on_off(g->ecc_mode_current.v), on_off(g->ecc_mode_pending.v));
                result_remedy(r, "Reset the GPU with no process using it (`nvidia-smi -r -i %u`) or reboot.",
                              g->index);
                return;
        }
        if (cur) {
                result_status(r, STATUS_PASS, "ECC is enabled");
                return;
        }
        if (!datacenter) {
                if (have_default)
                        result_status(r, STATUS_PASS, "ECC is disabled, as %s ships", desc);
                else
                        result_status(r, STATUS_PASS, "ECC is disabled (%s: optional on this GPU)", desc);
                return;
        }
        result_status(r, STATUS_FAIL,
                      "ECC is disabled on %s: memory errors go undetected and corrupt results silently", desc);
        result_remedy(r, "Enable it with `nvidia-smi -i %u -e 1`, then reset the GPU (`nvidia-smi -r -i %u`) "
                         "or reboot.",
                      g->index, g->index);
}

static void run_ecc_mode(const struct check_info *self, const struct facts *f, struct report *rep) {
        nv_each_gpu(self, f, rep, judge_ecc_mode);
}

CHECK_INFO(gpu_ecc_mode, "gpu", "gpu.ecc_mode", LEVEL_QUICK, NEED_XID | NEED_NVML,
           "ECC is enabled on datacenter GPUs, with no change pending",
           run_ecc_mode);

/* ---- gpu.ecc_errors ------------------------------------------------------------------ */

/* ", DRAM 2, SRAM 1" from the per-location counts, "" when the driver gives neither. */
static void where_text(const struct nv_u64 *dram, const struct nv_u64 *sram, char *buf, size_t size) {
        buf[0] = '\0';
        if (nv_ok(*dram))
                strbuf_appendf(buf, size, ", DRAM %llu", dram->v);
        if (nv_ok(*sram))
                strbuf_appendf(buf, size, ", SRAM %llu", sram->v);
}

static void judge_ecc_errors(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        unsigned long long corrected_warn = check_thresholds(f)->ecc_corrected_warn;
        result_expected(r, "0 uncorrected and < %llu corrected volatile ECC errors", corrected_warn);
        if (nv_ok(g->ecc_mode_current) && g->ecc_mode_current.v != NV_ENABLED) {
                result_observed(r, "ECC disabled");
                result_evidence(r, "source", "nvmlDeviceGetEccMode");
                result_status(r, STATUS_SKIP, "ECC is disabled on %s: no error counters (gpu.ecc_mode)", desc);
                return;
        }
        if (UNUSABLE(r, f, g, "volatile uncorrected ECC errors", g->ecc_volatile_uncorrected) ||
            UNUSABLE(r, f, g, "volatile corrected ECC errors", g->ecc_volatile_corrected))
                return;
        unsigned long long unc = g->ecc_volatile_uncorrected.v, cor = g->ecc_volatile_corrected.v;
        result_evidence(r, "source", "nvmlDeviceGetTotalEccErrors");
        result_observed(r, "volatile: %llu uncorrected, %llu corrected", unc, cor);
        if (nv_ok(g->ecc_aggregate_uncorrected) && nv_ok(g->ecc_aggregate_corrected))
                result_evidence(r, "aggregate", "%llu uncorrected, %llu corrected (lifetime)",
                                g->ecc_aggregate_uncorrected.v, g->ecc_aggregate_corrected.v);
        /* The optional readings below: a GPU lost or a call hung while reading them is
         * reported like any other reading; only "not supported" is left out. */
        const struct nv_u64 *split[] = {&g->ecc_volatile_uncorrected_dram, &g->ecc_volatile_uncorrected_sram,
                                        &g->ecc_aggregate_uncorrected_dram, &g->ecc_aggregate_uncorrected_sram};
        bool unusable = false;
        for (size_t k = 0; k < ARRAY_COUNT(split) && !unusable; k++)
                if (!nv_ok(*split[k]) && split[k]->state != NV_UNREAD && !nv_not_supported(split[k]->state, split[k]->rc))
                        unusable = UNUSABLE(r, f, g, "ECC errors by location", *split[k]);
        if (!unusable && !nv_ok(g->sram_threshold_exceeded) && g->sram_threshold_exceeded.state != NV_UNREAD &&
            !nv_not_supported(g->sram_threshold_exceeded.state, g->sram_threshold_exceeded.rc) &&
            g->sram_threshold_exceeded.rc != NV_RC_NO_PERMISSION)
                unusable = UNUSABLE(r, f, g, "SRAM ECC error status", g->sram_threshold_exceeded);
        if (unusable)
                return;
        /* Where they happened, when the driver tells (Turing+): DRAM errors are
         * repaired by row remapping, SRAM ones (caches, register files) are not. */
        char vol_where[96] = "", agg_where[96] = "";
        where_text(&g->ecc_volatile_uncorrected_dram, &g->ecc_volatile_uncorrected_sram, vol_where,
                   sizeof(vol_where));
        where_text(&g->ecc_aggregate_uncorrected_dram, &g->ecc_aggregate_uncorrected_sram, agg_where,
                   sizeof(agg_where));
        if (vol_where[0])
                result_evidence(r, "volatile_uncorrected", "%s", vol_where + 2);
        if (agg_where[0])
                result_evidence(r, "aggregate_uncorrected", "%s", agg_where + 2);
        bool sram_over = nv_ok(g->sram_threshold_exceeded) && g->sram_threshold_exceeded.v;
        if (nv_ok(g->sram_threshold_exceeded))
                result_evidence(r, "sram_threshold_exceeded", "%s (nvmlDeviceGetSramEccErrorStatus)",
                                sram_over ? "yes" : "no");
        if (sram_over) {
                result_status(r, STATUS_FAIL, "SRAM uncorrectable errors on %s passed NVIDIA's field "
                                              "threshold (\"SRAM Threshold Exceeded\")",
                              desc);
                result_remedy(r, "Take the GPU out of service and have it replaced (RMA): SRAM errors are not "
                                 "repaired by row remapping, and the board has passed the count NVIDIA's field "
                                 "diagnostic allows (`nvidia-smi -q -d ECC -i %u`).",
                              g->index);
                return;
        }
        if (unc > 0) {
                bool sram = nv_ok(g->ecc_volatile_uncorrected_sram) && g->ecc_volatile_uncorrected_sram.v > 0;
                result_status(r, STATUS_FAIL, "%llu uncorrectable ECC error%s since the driver loaded on %s%s%s%s",
                              unc, unc == 1 ? "" : "s", desc, vol_where[0] ? " (" : "",
                              vol_where[0] ? vol_where + 2 : "", vol_where[0] ? ")" : "");
                if (sram)
                        result_remedy(r, "Drain the GPU and reset it (`nvidia-smi -r -i %u`, or reboot): an "
                                         "uncorrectable SRAM error (Xid 94/95) leaves the GPU unusable until "
                                         "reset and is not repaired by row remapping. If SRAM errors recur, or "
                                         "`nvidia-smi -q -d ECC` shows \"SRAM Threshold Exceeded: Yes\", have "
                                         "the GPU replaced.",
                                      g->index);
                else
                        result_remedy(r, "Drain the GPU; look for Xid 48/63/64/94/95 in `dmesg`; check "
                                         "gpu.memory_health for a pending row remap or page retirement and reset "
                                         "the GPU (`nvidia-smi -r -i %u`) to apply it. If uncorrectable errors "
                                         "recur, have the GPU replaced.",
                                      g->index);
                return;
        }
        /* Lifetime counts survive resets: uncorrectable errors there with a clean volatile
         * count mean the GPU failed before and was put back to work. */
        unsigned long long agg_unc = nv_ok(g->ecc_aggregate_uncorrected) ? g->ecc_aggregate_uncorrected.v : 0;
        if (agg_unc > 0) {
                result_status(r, STATUS_WARN,
                              "%llu uncorrectable ECC error%s in the lifetime of %s (%s%snone since the driver "
                              "loaded)",
                              agg_unc, agg_unc == 1 ? "" : "s", desc, agg_where[0] ? agg_where + 2 : "",
                              agg_where[0] ? "; " : "");
                result_remedy(r, "Check that the errors were serviced: gpu.memory_health shows the rows remapped "
                                 "or pages retired for them; `nvidia-smi -q -d ECC,ROW_REMAPPER -i %u` shows "
                                 "whether they are DRAM or SRAM. If uncorrectable errors keep accruing, have the "
                                 "GPU replaced.",
                              g->index);
                return;
        }
        if (cor >= corrected_warn) {
                result_status(r, STATUS_WARN, "%llu corrected ECC errors since the driver loaded on %s", cor, desc);
                result_remedy(r, "Watch the count (`nvidia-smi -q -d ECC -i %u`): a growing number of corrected "
                                 "errors often precedes uncorrectable ones and row remapping.",
                              g->index);
                return;
        }
        result_status(r, STATUS_PASS, "no uncorrectable ECC errors (%llu corrected)", cor);
}

static void run_ecc_errors(const struct check_info *self, const struct facts *f, struct report *rep) {
        nv_each_gpu(self, f, rep, judge_ecc_errors);
}

CHECK_INFO(gpu_ecc_errors, "gpu", "gpu.ecc_errors", LEVEL_QUICK, NEED_XID | NEED_NVML,
           "No uncorrectable ECC errors since the driver loaded",
           run_ecc_errors);

/* ---- gpu.memory_health ----------------------------------------------------------- */

static void judge_remap(struct result *r, const struct nvml_gpu *g, const char *desc) {
        result_evidence(r, "source", "nvmlDeviceGetRemappedRows");
        result_expected(r, "no remap failure, none pending");
        result_observed(r, "rows remapped: %u for uncorrectable, %u for correctable errors; pending %s; failure %s",
                        g->remap_uncorrected.v, g->remap_corrected.v, g->remap_pending.v ? "yes" : "no",
                        g->remap_failure.v ? "yes" : "no");
        if (g->remap_failure.v) {
                result_status(r, STATUS_FAIL,
                              "row remapping failed on %s: a bank ran out of spare rows and bad memory stays in use",
                              desc);
                result_remedy(r, "Take the GPU out of service and have it replaced (RMA); NVIDIA's row-remapping "
                                 "documentation treats a remapping failure as a replacement case.");
                return;
        }
        /* Pending, correctable or not: the faulty row stays in use until a reset, and DCGM
         * fails the GPU (DCGM_FR_ROW_REMAP_PENDING) until it has been reset. */
        if (g->remap_pending.v) {
                result_status(r, STATUS_FAIL, "a row remap is pending on %s: the GPU must be reset before it takes work",
                              desc);
                result_remedy(r, "Drain the GPU, then reset it with no process using it (`nvidia-smi -r -i %u`) or "
                                 "reboot; until then the faulty row stays in use.",
                              g->index);
                return;
        }
        unsigned int rows = g->remap_uncorrected.v + g->remap_corrected.v;
        result_status(r, STATUS_PASS, "no pending row remap and no remap failure (%u row%s remapped)", rows,
                      rows == 1 ? "" : "s");
}

static void judge_retired(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        unsigned warn_at = check_thresholds(f)->retired_pages_warn;
        result_evidence(r, "source", "nvmlDeviceGetRetiredPages, nvmlDeviceGetRetiredPagesPendingStatus");
        result_expected(r, "no retirement pending, fewer than %u of %u pages retired", warn_at, RETIRED_PAGES_MAX);
        result_evidence(r, "thresholds", "fail at %u retired pages (DCGM's limit), warn at %u", RETIRED_PAGES_FAIL,
                        warn_at);
        unsigned int total = g->retired_pages_sbe.v + g->retired_pages_dbe.v;
        bool pending = nv_ok(g->retired_pages_pending) && g->retired_pages_pending.v == NV_ENABLED;
        result_observed(r, "retired pages: %u double-bit, %u single-bit; pending %s", g->retired_pages_dbe.v,
                        g->retired_pages_sbe.v,
                        nv_ok(g->retired_pages_pending) ? (pending ? "yes" : "no") : "unknown");
        if (pending) {
                result_status(r, STATUS_FAIL, "a page retirement is pending on %s: the GPU must be reset before it takes "
                                              "work", desc);
                result_remedy(r, "Drain the GPU, then reset it with no process using it (`nvidia-smi -r -i %u`), reload "
                                 "the driver or reboot; until then the bad page stays in use.",
                              g->index);
                return;
        }
        if (total >= RETIRED_PAGES_FAIL) {
                result_status(r, STATUS_FAIL, "%u of at most %u pages retired on %s: the retirement table is full",
                              total, RETIRED_PAGES_MAX, desc);
                result_remedy(r, "Take the GPU out of service and have it replaced: new bad cells can no longer be "
                                 "retired (DCGM fails a GPU at %u retired pages).",
                              RETIRED_PAGES_FAIL);
                return;
        }
        if (total >= warn_at) {
                result_status(r, STATUS_WARN, "%u of at most %u pages retired on %s: the memory is wearing out", total,
                              RETIRED_PAGES_MAX, desc);
                result_remedy(r, "Plan to replace the GPU: once the retirement table is full, new bad cells can no "
                                 "longer be retired.");
                return;
        }
        result_status(r, STATUS_PASS, "no page retirement pending (%u page%s retired)", total, total == 1 ? "" : "s");
}

/* Blackwell repairs an HBM channel (when remapping a bank's rows no longer helps) or a TPC;
 * like a pending row remap, the repair is applied only by the next GPU reset, and until then
 * the faulty part stays in use. True when it set the result; a driver or GPU without
 * nvmlDeviceGetRepairStatus (NOT_SUPPORTED, DEPRECATED, FUNCTION_NOT_FOUND, no entry point)
 * leaves the verdict to the remapping below. */
static bool judge_repair(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        const struct nv_u32 *ch = &g->repair_channel_pending, *tpc = &g->repair_tpc_pending;
        if (nv_reading_absent(ch->state, ch->rc))
                return false;
        if (!nv_ok(*ch) || !nv_ok(*tpc)) {
                /* A lost GPU or a hung call is told once, by the remapping's own reading. */
                if (!nv_ok(g->remap_pending))
                        return false;
                result_expected(r, "no channel or TPC repair pending, no remap failure, none pending");
                return UNUSABLE(r, f, g, "memory repair status", nv_ok(*ch) ? *tpc : *ch);
        }
        result_evidence(r, "repair_status", "channel repair pending: %s; TPC repair pending: %s",
                        ch->v ? "yes" : "no", tpc->v ? "yes" : "no");
        if (!ch->v && !tpc->v)
                return false;
        const char *what = ch->v && tpc->v ? "an HBM channel and a TPC repair" : ch->v ? "an HBM channel repair"
                                                                                      : "a TPC repair";
        result_evidence(r, "source", "nvmlDeviceGetRepairStatus, nvmlDeviceGetRemappedRows");
        result_expected(r, "no channel or TPC repair pending, no remap failure, none pending");
        result_observed(r, "channel repair pending %s, TPC repair pending %s", ch->v ? "yes" : "no",
                        tpc->v ? "yes" : "no");
        result_status(r, STATUS_FAIL, "%s is pending on %s: the GPU must be reset to apply it", what, desc);
        result_remedy(r, "Drain the GPU, then reset it with no process using it (`nvidia-smi -r -i %u`) or reboot; "
                         "until then the faulty memory channel or TPC stays in use. If repairs recur, have the "
                         "GPU seen to.",
                      g->index);
        return true;
}

static void judge_memory_health(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        if (judge_repair(r, f, g, desc))
                return;
        /* Ampere and newer remap rows and answer NOT_SUPPORTED for page retirement;
         * older GPUs the other way round. */
        if (nv_ok(g->remap_pending)) {
                judge_remap(r, g, desc);
                return;
        }
        if (nv_ok(g->retired_pages_dbe) && nv_ok(g->retired_pages_sbe)) {
                judge_retired(r, f, g, desc);
                return;
        }
        /* Neither: report the more telling failure (a real error over not supported). */
        const struct nv_u32 *why = &g->remap_pending;
        bool remap_unsupported = g->remap_pending.state == NV_NO_FUNCTION ||
                                 (g->remap_pending.state == NV_ERROR && nv_rc_not_offered(g->remap_pending.rc));
        if (remap_unsupported) {
                why = nv_ok(g->retired_pages_dbe) ? &g->retired_pages_sbe : &g->retired_pages_dbe;
                if (why->state == NV_UNREAD)
                        why = &g->remap_pending;
        }
        result_expected(r, "no remap failure, no pending remap or page retirement");
        (void)UNUSABLE(r, f, g, "row remapping and page retirement", *why);
}

static void run_memory_health(const struct check_info *self, const struct facts *f, struct report *rep) {
        nv_each_gpu(self, f, rep, judge_memory_health);
}

CHECK_INFO(gpu_memory_health, "gpu", "gpu.memory_health", LEVEL_QUICK, NEED_XID | NEED_NVML,
           "No pending row remap or page retirement, no remap failure",
           run_memory_health);
