/* The GPU's links as NVML sees them: gpu.pcie_nvml and gpu.nvlink.
 * docs/checks/gpu.md documents each; the shared NVML judging is in nvml_common.c. */
#include "checks/check.h"
#include "checks/gpu/nvml_common.h"
#include "core/strbuf.h"
#include "core/strparse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- gpu.pcie_nvml --------------------------------------------------------------- */

static void judge_pcie_nvml(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        double replay_max = check_thresholds(f)->pcie_replays_per_minute;
        if (nv_ok(g->pcie_max_gen) && nv_ok(g->pcie_max_width))
                result_expected(r, "Gen%u x%u, at most %g replays a minute", g->pcie_max_gen.v,
                                g->pcie_max_width.v, replay_max);
        else
                result_expected(r, "the maximum link generation and width, at most %g replays a minute",
                                replay_max);
        if (UNUSABLE(r, f, g, "PCIe link width", g->pcie_width) ||
            UNUSABLE(r, f, g, "maximum PCIe link width", g->pcie_max_width) ||
            UNUSABLE(r, f, g, "PCIe link generation", g->pcie_gen) ||
            UNUSABLE(r, f, g, "maximum PCIe link generation", g->pcie_max_gen))
                return;
        /* The replay counter only adds to the link's judgement: when the GPU does not
         * support it the link is still judged ("replays unknown"), but a lost GPU, a
         * hung call or another error must not pass as a healthy link. */
        bool replay_unsupported = g->pcie_replay.state == NV_NO_FUNCTION ||
                                  (g->pcie_replay.state == NV_ERROR && nv_rc_not_offered(g->pcie_replay.rc));
        if (!replay_unsupported && g->pcie_replay.state != NV_UNREAD &&
            UNUSABLE(r, f, g, "PCIe replay counter", g->pcie_replay))
                return;
        result_evidence(r, "source", "nvmlDeviceGetCurrPcieLinkWidth, nvmlDeviceGetCurrPcieLinkGeneration, "
                                     "nvmlDeviceGetMaxPcieLink{Width,Generation}, nvmlDeviceGetPcieReplayCounter");
        bool have_replay = nv_ok(g->pcie_replay);
        unsigned int replay = have_replay ? g->pcie_replay.v : 0;
        if (have_replay) {
                result_observed(r, "Gen%u x%u, %u replay%s", g->pcie_gen.v, g->pcie_width.v, replay,
                                replay == 1 ? "" : "s");
        } else {
                result_observed(r, "Gen%u x%u, replays unknown", g->pcie_gen.v, g->pcie_width.v);
                result_evidence(r, "replay_counter", "%s",
                                g->pcie_replay.state == NV_TIMEOUT
                                        ? "timeout"
                                        : nv_rc_name(g->pcie_replay.rc));
        }
        if (g->pcie_width.v < g->pcie_max_width.v && f->virt.is_vm) {
                /* As pcie.link_width: a guest gets the width its platform wires (several
                 * cloud instance types give x8): the guest cannot reseat anything. */
                result_evidence(r, "guest", "%s guest: the host's slot and riser are not visible",
                                f->virt.hypervisor[0] ? f->virt.hypervisor : "virtual machine");
                result_status(r, STATUS_WARN, "NVML reports the link of %s at x%u of x%u in this VM: the platform "
                                              "wires it so (pcie.link_width gives the bandwidth it leaves)",
                              desc, g->pcie_width.v, g->pcie_max_width.v);
                result_remedy(r, "Nothing inside the VM changes the width. If the instance type should give x%u, ask "
                                 "its provider; if x%u is what the site bought, allow it in the site policy.",
                              g->pcie_max_width.v, g->pcie_width.v);
                return;
        }
        if (g->pcie_width.v < g->pcie_max_width.v) {
                result_status(r, STATUS_FAIL, "NVML reports the link of %s at x%u of x%u", desc, g->pcie_width.v,
                              g->pcie_max_width.v);
                result_remedy(r, "Reseat the GPU and inspect its riser/cable and slot; check the BIOS slot "
                                 "bifurcation setting (pcie.link_width shows the same from sysfs).");
                return;
        }
        if (g->pcie_gen.v < g->pcie_max_gen.v && nv_gpu_activity(g) != NV_ACTIVITY_BUSY) {
                /* An idle GPU trains its link down to save power (nvidia-smi --help-query-gpu:
                 * the current generation "may be reduced when the GPU is not in use"): no
                 * finding until it stays low under load (pcie.link_under_load, standard level). */
                result_evidence(r, "activity", "%s", nv_gpu_activity(g) == NV_ACTIVITY_IDLE
                                                             ? "idle (clock event reason GPU idle)"
                                                             : "unknown (clock event reasons not read)");
                result_status(r, STATUS_PASS, "link of %s at Gen%u below its maximum Gen%u while the GPU is %s: "
                                              "normal power saving; the standard level judges it under load",
                              desc, g->pcie_gen.v, g->pcie_max_gen.v,
                              nv_gpu_activity(g) == NV_ACTIVITY_IDLE ? "idle" : "maybe idle");
                return;
        }
        if (g->pcie_gen.v < g->pcie_max_gen.v) {
                result_evidence(r, "activity", "busy (no GPU-idle clock event reason)");
                result_status(r, STATUS_WARN, "link of %s at Gen%u below its maximum Gen%u while the GPU is busy%s: "
                                              "the standard level confirms it under load",
                              desc, g->pcie_gen.v, g->pcie_max_gen.v,
                              replay ? ", and the link has replayed packets" : "");
                result_remedy(r, "Run `gpuvet check --level standard` to measure the link under load; if it "
                                 "stays below Gen%u there, reseat the GPU and check BIOS PCIe speed settings.",
                              g->pcie_max_gen.v);
                return;
        }
        /* DCGM judges replays as a rate: more than 8 a minute is what RM recommends
         * against (DCGM_LIMIT_MAX_PCIREPLAY_RATE). The counter runs since the driver
         * loaded, a little after boot, so the rate over the uptime is a lower bound. */
        /* The standard level read the counter again after the probes pushed traffic
         * over the link: what it did under load is the verdict, not its history. */
        const struct nvml_gpu *a = nv_gpu_after(f, g);
        if (have_replay && a && nv_ok(a->pcie_replay) && f->nvml_window_s > 0) {
                unsigned long long d = counter_grew(replay, a->pcie_replay.v);
                double w = f->nvml_window_s, rate = d / (w / 60.0);
                result_evidence(r, "window", "%llu replay%s in %.1f s around the device probes (%u since boot)",
                                d, d == 1 ? "" : "s", w, a->pcie_replay.v);
                if (rate > replay_max) {
                        result_status(r, STATUS_WARN, "the PCIe link of %s replayed %llu packet%s while the probes "
                                                      "ran (%.0f s): %.3g a minute, over %g",
                                      desc, d, d == 1 ? "" : "s", w, rate, replay_max);
                        result_remedy(r, "Reseat the GPU and check its riser/cable; compare with the AER counters "
                                         "(pcie.aer). Replays under load cost bandwidth and point at the slot or "
                                         "cable.");
                        return;
                }
                result_status(r, STATUS_PASS, "link at its maximum Gen%u x%u, %llu replay%s under load (%u since "
                                              "boot)",
                              g->pcie_max_gen.v, g->pcie_max_width.v, d, d == 1 ? "" : "s", a->pcie_replay.v);
                return;
        }
        double minutes = f->host.uptime_s / 60.0;
        if (replay > 0 && minutes > 0) {
                double rate = replay / minutes;
                result_evidence(r, "replay_rate", "%.3g per minute over %.0f minutes of uptime (limit %g)", rate,
                                minutes, replay_max);
                if (rate <= replay_max) {
                        bool dcgm = replay_max == policy_thresholds_default.pcie_replays_per_minute;
                        result_status(r, STATUS_PASS, "link at its maximum Gen%u x%u, %u replay%s since boot "
                                                      "(%.2g a minute, under %s %g)",
                                      g->pcie_max_gen.v, g->pcie_max_width.v, replay, replay == 1 ? "" : "s",
                                      rate, dcgm ? "DCGM's" : "the site's", replay_max);
                        return;
                }
        }
        if (replay > 0 && minutes <= 0) {
                /* A count since the driver loaded, at an unknown time: no rate to judge. */
                result_status(r, STATUS_PASS, "link at its maximum Gen%u x%u, %u replay%s since the driver loaded "
                                              "(uptime unknown: not judged as a rate; the standard level counts "
                                              "them under load)",
                              g->pcie_max_gen.v, g->pcie_max_width.v, replay, replay == 1 ? "" : "s");
                return;
        }
        if (replay > 0) {
                result_status(r, STATUS_WARN, "the PCIe link of %s replayed %u packet%s, more than %g a minute "
                                              "since boot: signal errors on the link",
                              desc, replay, replay == 1 ? "" : "s", replay_max);
                result_remedy(r, "Reseat the GPU and check its riser/cable; compare with the AER counters "
                                 "(pcie.aer). A count that keeps growing points at the slot or cable.");
                return;
        }
        result_status(r, STATUS_PASS, "link at its maximum Gen%u x%u%s", g->pcie_max_gen.v,
                      g->pcie_max_width.v, have_replay ? ", no replays" : "");
}

static void run_pcie_nvml(const struct check_info *self, const struct facts *f, struct report *rep) {
        nv_each_gpu(self, f, rep, judge_pcie_nvml);
}

CHECK_INFO_USES(gpu_pcie_nvml, "gpu", "gpu.pcie_nvml", LEVEL_QUICK, NEED_XID | NEED_NVML, NEED_NVML_AFTER,
           "The PCIe link NVML reports is at its maximum, without replays",
           run_pcie_nvml);

/* ---- gpu.nvlink ---------------------------------------------------------------------- */

/* NVLink error counters as DCGM's health watch judges them, over a window: any replay or
 * recovery error in it fails (DCGM_FR_NVLINK_ERROR_CRITICAL, DCGM_LIMIT_MAX_NVLINK_ERROR
 * = 1); CRC errors fail at 100 a second (DCGM_LIMIT_MAX_NVLINK_CRC_ERROR: "RM has informed
 * us that CRC errors only matter at rates of 100+ per second") and warn below. */
#define NVLINK_CRC_RATE_FAIL 100.0
/* The quick level has only the counts since the driver loaded: CRC errors by the same
 * per-second rate over the uptime, replays and recoveries warn from one an hour on average
 * (gpuvet's: DCGM has no since-boot limit; a handful in months of uptime is benign). */
#define NVLINK_REPLAY_PER_HOUR_WARN 1.0

/* Judge the error counters of g's active links: returns true when it set a warning or a
 * failure. totals: the counts since the driver loaded, summed over the active links. */
static bool judge_nvlink_errors(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc,
                                const unsigned long long totals[NVML_NVL_COUNTER_COUNT], unsigned n_err_links) {
        unsigned long long crc = totals[NVML_NVL_CRC_FLIT] + totals[NVML_NVL_CRC_DATA];
        unsigned long long replays = totals[NVML_NVL_REPLAY] + totals[NVML_NVL_RECOVERY];
        const struct nvml_gpu *a = nv_gpu_after(f, g);
        if (a && f->nvml_window_s > 0) {
                unsigned long long d[NVML_NVL_COUNTER_COUNT] = {0};
                for (unsigned int l = 0; l < g->nvlink_count && l < NV_NVLINK_MAX && l < a->nvlink_count; l++)
                        for (int c = 0; c < NVML_NVL_COUNTER_COUNT; c++)
                                if (g->nvlink[l].state.v == NV_ENABLED && nv_ok(g->nvlink[l].errors[c]) &&
                                    nv_ok(a->nvlink[l].errors[c]))
                                        d[c] += counter_grew(g->nvlink[l].errors[c].v, a->nvlink[l].errors[c].v);
                unsigned long long d_crc = d[NVML_NVL_CRC_FLIT] + d[NVML_NVL_CRC_DATA];
                unsigned long long d_replay = d[NVML_NVL_REPLAY], d_recovery = d[NVML_NVL_RECOVERY];
                double w = f->nvml_window_s, crc_rate = d_crc / w;
                result_evidence(r, "window", "%.1f s around the device probes: %llu replay, %llu recovery, %llu CRC "
                                             "(since boot: %llu replay and recovery, %llu CRC)",
                                w, d_replay, d_recovery, d_crc, replays, crc);
                if (d_replay || d_recovery || crc_rate >= NVLINK_CRC_RATE_FAIL) {
                        result_status(r, STATUS_FAIL, "NVLink errors on %s while the probes ran (%.0f s): %llu replay, "
                                                      "%llu recovery, %llu CRC (%.3g a second)",
                                      desc, w, d_replay, d_recovery, d_crc, crc_rate);
                        result_remedy(r, "A link that replays or retrains under load is failing: drain the node, check "
                                         "`nvidia-smi nvlink -e -i %u` and `dmesg` (Xid 74), reset the GPU; if errors "
                                         "return, have the baseboard or GPU seen to.",
                                      g->index);
                        return true;
                }
                if (d_crc) {
                        result_status(r, STATUS_WARN, "%llu NVLink CRC error%s on %s while the probes ran (%.3g a "
                                                      "second, under DCGM's %.0f)",
                                      d_crc, d_crc == 1 ? "" : "s", desc, crc_rate, NVLINK_CRC_RATE_FAIL);
                        result_remedy(r, "Watch whether they keep coming (`nvidia-smi nvlink -e -i %u`); a steady "
                                         "stream points at a link that needs the board seen to.",
                                      g->index);
                        return true;
                }
                return false; /* counts from before the run are history: the links were clean under load */
        }
        if (!n_err_links)
                return false;
        double hours = f->host.uptime_s / 3600.0;
        if (hours > 0) {
                double crc_rate = crc / (hours * 3600.0), replay_rate = replays / hours;
                result_evidence(r, "rates", "since boot (%.1f h): %.3g CRC a second (fail at %.0f), %.3g replay and "
                                            "recovery an hour (warn at %.0f)",
                                hours, crc_rate, NVLINK_CRC_RATE_FAIL, replay_rate, NVLINK_REPLAY_PER_HOUR_WARN);
                if (crc_rate >= NVLINK_CRC_RATE_FAIL) {
                        result_status(r, STATUS_FAIL, "NVLink CRC errors on %s at %.3g a second since boot, over "
                                                      "DCGM's %.0f",
                                      desc, crc_rate, NVLINK_CRC_RATE_FAIL);
                        result_remedy(r, "Drain the node and have the link seen to; `nvidia-smi nvlink -e -i %u` shows "
                                         "which.",
                                      g->index);
                        return true;
                }
                if (replay_rate < NVLINK_REPLAY_PER_HOUR_WARN)
                        return false; /* a few since boot: history, named in evidence */
        }
        result_status(r, STATUS_WARN, "%u NVLink%s of %s logged errors since boot: %llu replay, %llu recovery, %llu CRC",
                      n_err_links, n_err_links == 1 ? "" : "s", desc, totals[NVML_NVL_REPLAY],
                      totals[NVML_NVL_RECOVERY], crc);
        result_remedy(r, "Run `gpuvet check --level standard`: it counts the errors while the links carry traffic. "
                         "`nvidia-smi nvlink -e -i %u` shows them per link; `nvidia-smi nvlink -r 0 -i %u` resets them.",
                      g->index, g->index);
        return true;
}

/* NVLink5 (Blackwell and later) as DCGM 4.6's health watch judges it (MonitorNVLink5Fields,
 * DcgmHealthWatch.cpp): a bit error rate past its limit fails whenever it is read, and any
 * growth of an error counter over the window fails (DCGM_LIMIT_MAX_NVLINK_ERROR = 1,
 * DCGM_FR_NVLINK_ERROR_CRITICAL). The effective BER fails above 1e-12 (mantissa 15 with
 * exponent 255 is NVML's zero, and so is any mantissa 0); the symbol BER, summed over the
 * links as read here, fails unless it is 0 or no worse than 15e-238
 * (DCGM_SYMBOL_BER_FLOOR_EXP_AGGREGATED): symbol errors are those the link's FEC did not
 * correct. Evidence keys are their own (nvlink5_*): the legacy judging's stay apart. */
#define NVL5_EFFECTIVE_BER_FAIL_EXP 12u
#define NVL5_BER_ZERO_MANTISSA 15u
#define NVL5_BER_ZERO_EXP 255u
#define NVL5_SYMBOL_BER_FLOOR_EXP 238u
#define NVL5_SYMBOL_BER_FLOOR_MANTISSA 15u

static const char *const nvl5_names[NVML_NVL5_COUNT] = {
        [NVML_NVL5_SYMBOL_ERRORS] = "symbol errors",
        [NVML_NVL5_EFFECTIVE_ERRORS] = "effective errors",
        [NVML_NVL5_RECOVERY_EVENTS] = "recovery events",
        [NVML_NVL5_RECOVERY_SUCCESSFUL] = "successful recovery events",
        [NVML_NVL5_RECOVERY_FAILED] = "failed recovery events",
        [NVML_NVL5_MALFORMED_PACKETS] = "malformed packets",
        [NVML_NVL5_BUFFER_OVERRUN] = "packets dropped (buffer overrun)",
        [NVML_NVL5_RCV_ERRORS] = "rx errors",
        [NVML_NVL5_RCV_REMOTE_ERRORS] = "rx remote errors",
        [NVML_NVL5_RCV_GENERAL_ERRORS] = "rx general errors",
        [NVML_NVL5_LOCAL_LINK_INTEGRITY] = "local link integrity errors",
        [NVML_NVL5_SYMBOL_BER] = "symbol BER",
        [NVML_NVL5_EFFECTIVE_BER] = "effective BER",
};

/* The successful and failed recoveries are parts of the recoveries: named, never added. */
static bool nvl5_counted(int k) {
        return k < NVML_NVL5_FIRST_BER && k != NVML_NVL5_RECOVERY_SUCCESSFUL && k != NVML_NVL5_RECOVERY_FAILED;
}

static bool nvlink5_effective_ber_over(unsigned long long packed) {
        unsigned int m = nvml_nvlink5_ber_mantissa(packed), e = nvml_nvlink5_ber_exponent(packed);
        /* A mantissa of 0 is a rate of 0 whatever the exponent (DCGM passes it for the symbol
         * BER; a raw 0 here must not fail a link that has no errors at all). */
        if (m == 0 || (m == NVL5_BER_ZERO_MANTISSA && e == NVL5_BER_ZERO_EXP))
                return false;
        /* 1e-12 written with exponent 13 is 10e-13. */
        return e < NVL5_EFFECTIVE_BER_FAIL_EXP || (e == NVL5_EFFECTIVE_BER_FAIL_EXP && m > 1) ||
               (e == NVL5_EFFECTIVE_BER_FAIL_EXP + 1 && m > 10);
}

static bool nvlink5_symbol_ber_over(unsigned long long packed) {
        unsigned int m = nvml_nvlink5_ber_mantissa(packed), e = nvml_nvlink5_ber_exponent(packed);
        if (m == 0)
                return false;
        return e < NVL5_SYMBOL_BER_FLOOR_EXP || (e == NVL5_SYMBOL_BER_FLOOR_EXP && m > NVL5_SYMBOL_BER_FLOOR_MANTISSA);
}

static void nvl5_ber_text(unsigned long long packed, char *buf, size_t size) {
        unsigned int m = nvml_nvlink5_ber_mantissa(packed), e = nvml_nvlink5_ber_exponent(packed);
        if (m == 0 || (m == NVL5_BER_ZERO_MANTISSA && e == NVL5_BER_ZERO_EXP))
                snprintf(buf, size, "0");
        else
                snprintf(buf, size, "%ue-%u", m, e);
}

/* Any NVLink5 counter read. */
static bool nvl5_read(const struct nvml_gpu *g) {
        for (int k = 0; k < NVML_NVL5_COUNT; k++)
                if (nv_ok(g->nvlink5[k]))
                        return true;
        return false;
}

/* The counters as "3 symbol errors, 1 recovery events" (each non-zero one of d), "" when none. */
static void nvl5_list(const unsigned long long d[NVML_NVL5_COUNT], char *buf, size_t size) {
        buf[0] = '\0';
        for (int k = 0; k < NVML_NVL5_FIRST_BER; k++)
                if (d[k])
                        strbuf_appendf(buf, size, "%s%llu %s", buf[0] ? ", " : "", d[k], nvl5_names[k]);
}

/* The FEC history in evidence when it has a count: how many codewords needed N symbols
 * corrected. Neither DCGM nor NVIDIA publishes a limit on it, so it is not judged. */
static void nvl5_fec_evidence(struct result *r, const struct nvml_gpu *g) {
        char bins[16 * 21 + 1] = "";
        bool any = false;
        for (int b = 0; b < NVML_NVL5_COUNT - NVML_NVL5_FEC_HISTORY_0; b++) {
                const struct nv_u64 *e = &g->nvlink5[NVML_NVL5_FEC_HISTORY_0 + b];
                if (!nv_ok(*e))
                        return; /* only a whole histogram tells anything */
                any |= e->v != 0;
                strbuf_appendf(bins, sizeof(bins), "%s%llu", b ? " " : "", e->v);
        }
        if (any)
                result_evidence(r, "nvlink5_fec_history", "codewords by symbols FEC corrected, bins 0-15: %s", bins);
}

static void nvl5_remedy(struct result *r, const struct nvml_gpu *g) {
        result_remedy(r, "A link that takes errors or retrains under load is failing: drain the node, look for NVLink "
                         "Xids (144-150 on Blackwell) in `dmesg`, reset the GPU (`nvidia-smi -r -i %u`); if the "
                         "errors return, have the tray, baseboard or cable cartridge seen to.",
                      g->index);
}

/* Judge g's NVLink5 counters; true when it set a warning or a failure. */
static bool judge_nvlink5_errors(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        if (!nvl5_read(g))
                return false;
        unsigned long long since[NVML_NVL5_COUNT] = {0}, total = 0;
        for (int k = 0; k < NVML_NVL5_FIRST_BER; k++) {
                since[k] = nv_ok(g->nvlink5[k]) ? g->nvlink5[k].v : 0;
                total += nvl5_counted(k) ? since[k] : 0;
        }
        char list[512];
        nvl5_list(since, list, sizeof(list));
        result_evidence(r, "nvlink5", "since the driver loaded, over all links: %s", list[0] ? list : "no errors");
        nvl5_fec_evidence(r, g);
        /* A BER is the rate of the moment: the latest read is judged. */
        const struct nvml_gpu *a = nv_gpu_after(f, g);
        const struct nvml_gpu *latest = a && nv_ok(a->nvlink5[NVML_NVL5_SYMBOL_BER]) ? a : g;
        const struct nv_u64 *sym = &latest->nvlink5[NVML_NVL5_SYMBOL_BER];
        latest = a && nv_ok(a->nvlink5[NVML_NVL5_EFFECTIVE_BER]) ? a : g;
        const struct nv_u64 *eff = &latest->nvlink5[NVML_NVL5_EFFECTIVE_BER];
        char sym_text[32] = "unknown", eff_text[32] = "unknown";
        if (nv_ok(*sym))
                nvl5_ber_text(sym->v, sym_text, sizeof(sym_text));
        if (nv_ok(*eff))
                nvl5_ber_text(eff->v, eff_text, sizeof(eff_text));
        result_evidence(r, "nvlink5_ber",
                        "symbol BER %s (fail above 15e-238, DCGM's floor for the sum over the links), effective BER %s "
                        "(fail above 1e-12)",
                        sym_text, eff_text);
        if (nv_ok(*sym) && nvlink5_symbol_ber_over(sym->v)) {
                result_status(r, STATUS_FAIL, "the NVLink symbol BER of %s is %s: errors the links' FEC did not "
                                              "correct",
                              desc, sym_text);
                nvl5_remedy(r, g);
                return true;
        }
        if (nv_ok(*eff) && nvlink5_effective_ber_over(eff->v)) {
                result_status(r, STATUS_FAIL, "the NVLink effective BER of %s is %s, over DCGM's 1e-12", desc, eff_text);
                nvl5_remedy(r, g);
                return true;
        }
        if (a && f->nvml_window_s > 0) {
                unsigned long long d[NVML_NVL5_COUNT] = {0};
                bool grew = false;
                for (int k = 0; k < NVML_NVL5_FIRST_BER; k++) {
                        if (nv_ok(g->nvlink5[k]) && nv_ok(a->nvlink5[k]))
                                d[k] = counter_grew(g->nvlink5[k].v, a->nvlink5[k].v);
                        grew |= d[k] > 0;
                }
                nvl5_list(d, list, sizeof(list));
                double w = f->nvml_window_s;
                result_evidence(r, "nvlink5_window", "%.1f s around the device probes: %s", w,
                                list[0] ? list : "no NVLink5 errors");
                if (!grew)
                        return false; /* counts from before the run are history: the links were clean under load */
                result_status(r, STATUS_FAIL, "NVLink errors on %s while the probes ran (%.0f s): %s", desc, w, list);
                nvl5_remedy(r, g);
                return true;
        }
        if (!total)
                return false;
        double hours = f->host.uptime_s / 3600.0;
        if (hours > 0) {
                double rate = total / hours;
                result_evidence(r, "nvlink5_rates", "since boot (%.1f h): %.3g NVLink5 errors an hour (warn at %.0f)",
                                hours, rate, NVLINK_REPLAY_PER_HOUR_WARN);
                if (rate < NVLINK_REPLAY_PER_HOUR_WARN)
                        return false; /* a few since boot: history, named in evidence */
        }
        result_status(r, STATUS_WARN, "the NVLinks of %s logged errors since the driver loaded: %s", desc, list);
        result_remedy(r, "Run `gpuvet check --level standard`: it counts the errors while the links carry traffic, "
                         "and any error there fails (DCGM's rule).");
        return true;
}

/* NVLink bridges join PCIe cards in pairs: every active link of a bridged card ends at the
 * same peer GPU, and the peer sees as many links coming back. Returns true when it set a
 * warning; else names the peer in peer (when NVML told the far ends). */
static bool bridge_pair_problem(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc,
                                unsigned active, char *peer, size_t size) {
        const char *first = NULL;
        unsigned to_first = 0, known = 0;
        for (unsigned int l = 0; l < g->nvlink_count && l < NV_NVLINK_MAX; l++) {
                const struct nvml_nvlink *k = &g->nvlink[l];
                if (k->state.v != NV_ENABLED || !nv_ok(k->remote_bus_id))
                        continue;
                known++;
                if (!first)
                        first = k->remote_bus_id.v;
                to_first += strcasecmp(k->remote_bus_id.v, first) == 0;
        }
        if (!first)
                return false; /* the far ends are unknown: nothing to pair */
        if (to_first != known) {
                result_status(r, STATUS_WARN, "the bridged NVLinks of %s end at more than one GPU: a bridge joins one "
                                              "pair of cards",
                              desc);
                result_remedy(r, "Check the bridges with the node powered off: each must join the same two cards "
                                 "(`nvidia-smi nvlink -R -i %u` shows where each link ends).",
                              g->index);
                return true;
        }
        const struct nvml_gpu *p = NULL;
        for (unsigned int i = 0; i < f->nvml.n_gpus && !p; i++)
                if (nv_ok(f->nvml.gpus[i].pci_bus_id) && strcasecmp(f->nvml.gpus[i].pci_bus_id.v, first) == 0)
                        p = &f->nvml.gpus[i];
        snprintf(peer, size, "%s", first);
        if (!p)
                return false; /* a peer NVML does not list (another partition, a VM's neighbour) */
        unsigned back = 0;
        for (unsigned int l = 0; l < p->nvlink_count && l < NV_NVLINK_MAX; l++)
                back += p->nvlink[l].state.v == NV_ENABLED && nv_ok(p->nvlink[l].remote_bus_id) &&
                        nv_ok(g->pci_bus_id) && strcasecmp(p->nvlink[l].remote_bus_id.v, g->pci_bus_id.v) == 0;
        if (back != active) {
                result_status(r, STATUS_WARN, "the NVLink bridge pair with %s is lopsided: %u active link%s from this "
                                              "card, %u from its peer",
                              first, active, active == 1 ? "" : "s", back);
                result_remedy(r, "Reseat the bridges between the two cards with the node powered off; `nvidia-smi "
                                 "nvlink -s` on both shows which links are down.");
                return true;
        }
        return false;
}

static void run_nvlink(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (nv_unavailable(self, f, rep))
                return;
        static const char *const counter_names[NVML_NVL_COUNTER_COUNT] = {
                [NVML_NVL_REPLAY] = "replay",     [NVML_NVL_RECOVERY] = "recovery", [NVML_NVL_CRC_FLIT] = "CRC flit",
                [NVML_NVL_CRC_DATA] = "CRC data", [NVML_NVL_ECC_DATA] = "ECC data",
        };
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                struct result *r = nv_result(self, f, rep, g, desc);
                const struct gpu_model *m = nv_model(f, g);
                /* SXM boards carry their NVLinks on the baseboard; PCIe and NVL cards only
                 * through optional bridges, so no links there is not a fault. */
                bool bridged = m && (m->nvlink_bridge || (m->form && (strcmp(m->form, "pcie") == 0 ||
                                                                      strcmp(m->form, "nvl") == 0)));
                bool must_have = m && m->nvlink_links > 0 && !bridged;
                if (must_have)
                        result_expected(r, "%u NVLinks active, no errors", m->nvlink_links);
                else if (bridged && m->nvlink_links)
                        result_expected(r, "no NVLink bridge, or %u bridged links active, no errors", m->nvlink_links);
                else
                        result_expected(r, "every NVLink active, no errors");
                bool nvl5 = nvl5_read(g);
                result_evidence(r, "source", "nvmlDeviceGetNvLinkState, nvmlDeviceGetNvLinkErrorCounter%s",
                                nvl5 ? ", nvmlDeviceGetFieldValues (NVML_FI_DEV_NVLINK_COUNT_*, all links)" : "");
                bool end_bad = g->nvlink_end.state != NV_UNREAD && !nv_not_supported(g->nvlink_end.state, g->nvlink_end.rc);
                if (end_bad) {
                        (void)UNUSABLE(r, f, g, "NVLink state", g->nvlink_end);
                        continue;
                }
                /* NVLink is not available while MIG is on (NVIDIA MIG user guide). */
                if (nv_ok(g->mig_mode_current) && g->mig_mode_current.v == NV_ENABLED) {
                        result_observed(r, "%u NVLinks reported, MIG enabled", g->nvlink_count);
                        result_status(r, STATUS_SKIP, "MIG is enabled on %s: NVLink is not used in MIG mode", desc);
                        continue;
                }
                /* A link whose state NVML could not read (GPU lost, an error) says more
                 * than "down". */
                bool unreadable = false;
                for (unsigned int l = 0; l < g->nvlink_count && l < NV_NVLINK_MAX && !unreadable; l++)
                        if (g->nvlink[l].state.state != NV_OK)
                                unreadable = UNUSABLE(r, f, g, "NVLink state", g->nvlink[l].state);
                if (unreadable)
                        continue;
                if (g->nvlink_count == 0) {
                        result_observed(r, "no NVLink");
                        /* A hypervisor passes an SXM GPU's NVLinks through only with its whole
                         * NVLink domain (all GPUs of the baseboard, or a Fabric Manager
                         * partition); a guest given one GPU has none, and NVML answers
                         * NOT_SUPPORTED for every link (seen on an H100 SXM guest, driver 580). */
                        if (must_have && f->virt.is_vm && f->gpus.n == 1) {
                                result_status(r, STATUS_SKIP,
                                              "NVLink is not exposed to this VM: %s is its only GPU, so its %u links "
                                              "have no peer here (the host keeps them)",
                                              desc, m->nvlink_links);
                                continue;
                        }
                        if (must_have) {
                                result_status(r, STATUS_FAIL, "NVML reports no NVLink on %s, which has %u", desc,
                                              m->nvlink_links);
                                result_remedy(r, "Check `nvidia-smi nvlink -s -i %u` and the NVRM messages in `dmesg`; "
                                                 "NVLinks missing on an SXM board need a reset or the board seen to.",
                                              g->index);
                        } else {
                                result_status(r, STATUS_SKIP, "no NVLink on this board");
                        }
                        continue;
                }
                /* An error counter of an active link that NVML could not read: a lost GPU,
                 * a hung call or another error says more than "no errors". ECC data errors
                 * are not judged (below); a counter the board does not support is left out
                 * and evidence says so. */
                const struct nv_u64 *bad_counter = NULL;
                bool counter_unsupported = false;
                for (unsigned int l = 0; l < g->nvlink_count && l < NV_NVLINK_MAX && !bad_counter; l++) {
                        const struct nvml_nvlink *k = &g->nvlink[l];
                        if (k->state.v != NV_ENABLED)
                                continue;
                        for (int c = 0; c < NVML_NVL_COUNTER_COUNT && !bad_counter; c++) {
                                const struct nv_u64 *e = &k->errors[c];
                                if (c == NVML_NVL_ECC_DATA || nv_ok(*e) || e->state == NV_UNREAD)
                                        continue;
                                if (nv_not_supported(e->state, e->rc))
                                        counter_unsupported = true;
                                else
                                        bad_counter = e;
                        }
                }
                if (bad_counter && UNUSABLE(r, f, g, "NVLink error counters", *bad_counter))
                        continue;
                /* Blackwell's links answer NOT_SUPPORTED for those counters and count in the
                 * NVLink5 fields instead: one of those that failed leaves the links unjudged. */
                const struct nv_u64 *bad5 = NULL;
                for (int k = 0; k < NVML_NVL5_FEC_HISTORY_0 && counter_unsupported && !bad5; k++) {
                        const struct nv_u64 *e = &g->nvlink5[k];
                        if (!nv_ok(*e) && e->state != NV_UNREAD && !nv_not_supported(e->state, e->rc))
                                bad5 = e;
                }
                if (bad5 && UNUSABLE(r, f, g, "NVLink5 error counters", *bad5))
                        continue;
                /* Where each active link ends (bridge pairs, the topology): a lost GPU or a hung
                 * call there is reported too, never read as "no peer". */
                const struct nv_str *bad_peer = NULL;
                for (unsigned int l = 0; l < g->nvlink_count && l < NV_NVLINK_MAX && !bad_peer; l++) {
                        const struct nv_str *e = &g->nvlink[l].remote_bus_id;
                        if (g->nvlink[l].state.v == NV_ENABLED && !nv_ok(*e) && e->state != NV_UNREAD &&
                            !nv_not_supported(e->state, e->rc))
                                bad_peer = e;
                }
                if (bad_peer && UNUSABLE(r, f, g, "NVLink remote PCI info", *bad_peer))
                        continue;
                if (counter_unsupported)
                        result_evidence(r, "counters", nvl5 ? "not supported on this GPU/driver "
                                                              "(nvmlDeviceGetNvLinkErrorCounter): the NVLink5 "
                                                              "counters are judged instead"
                                                            : "some not supported on this GPU/driver "
                                                              "(nvmlDeviceGetNvLinkErrorCounter): not judged");
                char down[256] = "", errors[512] = "", bridge_peer[32] = "";
                unsigned int n_down = 0, n_err_links = 0;
                /* NVML numbers link slots, not wires: an H100 PCIe answers for 18 slots of
                 * which its bridges wire 12, an H800 for more than its 8. Only the SKU's link
                 * count is judged; the rest of the slots are expected down. */
                unsigned int wired = m && m->nvlink_links ? m->nvlink_links : g->nvlink_count;
                unsigned long long totals[NVML_NVL_COUNTER_COUNT] = {0};
                for (unsigned int l = 0; l < g->nvlink_count && l < NV_NVLINK_MAX; l++) {
                        const struct nvml_nvlink *k = &g->nvlink[l];
                        if (k->state.v != NV_ENABLED) {
                                strbuf_appendf(down, sizeof(down), "%s%u", n_down ? ", " : "", l);
                                n_down++;
                                continue;
                        }
                        char one[160] = "";
                        for (int c = 0; c < NVML_NVL_COUNTER_COUNT; c++) {
                                /* ECC data errors are corrected by the link itself. */
                                if (c == NVML_NVL_ECC_DATA || !nv_ok(k->errors[c]) || k->errors[c].v == 0)
                                        continue;
                                totals[c] += k->errors[c].v;
                                strbuf_appendf(one, sizeof(one), "%s%s %llu", one[0] ? ", " : "", counter_names[c],
                                               k->errors[c].v);
                        }
                        if (one[0]) {
                                strbuf_appendf(errors, sizeof(errors), "%slink %u: %s", n_err_links ? "; " : "", l, one);
                                n_err_links++;
                        }
                }
                unsigned int active = g->nvlink_count - n_down;
                result_observed(r, "%u of %u links active%s%s", active, g->nvlink_count, n_down ? ", down: " : "", down);
                if (errors[0])
                        result_evidence(r, "errors", "%s", errors);
                if (bridged) {
                        if (active == 0) {
                                result_status(r, STATUS_PASS, "no NVLink bridge on %s (a PCIe card: links are optional)",
                                              desc);
                                continue;
                        }
                        if (active < wired) {
                                result_status(r, STATUS_WARN,
                                              "%u of the %u bridged NVLinks of %s are active: a bridge is missing or "
                                              "not seated",
                                              active, wired, desc);
                                result_remedy(r, "Every bridge between a pair of cards must be fitted (`nvidia-smi "
                                                 "nvlink -s -i %u` shows each link); reseat the bridges with the "
                                                 "node powered off.",
                                              g->index);
                                continue;
                        }
                        if (bridge_pair_problem(r, f, g, desc, active, bridge_peer, sizeof(bridge_peer)))
                                continue;
                }
                if (active >= wired)
                        n_down = 0; /* the remaining slots are not wired on this SKU */
                if (n_down) {
                        result_status(r, STATUS_FAIL, "NVLink%s %s of %s %s down", n_down == 1 ? "" : "s", down, desc,
                                      n_down == 1 ? "is" : "are");
                        result_remedy(r, "Check `nvidia-smi nvlink -s -i %u` and `dmesg` for NVLink errors (Xid 74); "
                                         "reset the GPU or reboot, and on NVSwitch systems make sure the Fabric "
                                         "Manager runs (gpu.fabric_manager). A link that stays down needs the "
                                         "baseboard or GPU seen to.",
                                      g->index);
                        continue;
                }
                if (must_have && active < m->nvlink_links) {
                        result_status(r, STATUS_FAIL, "NVML reports %u NVLinks on %s, which has %u", g->nvlink_count,
                                      desc, m->nvlink_links);
                        result_remedy(r, "Check `nvidia-smi nvlink -s -i %u`; reset the GPU or reboot.", g->index);
                        continue;
                }
                /* Where the NVLink5 counters stand in for the legacy ones, those judge alone. */
                bool legacy = !(counter_unsupported && nvl5);
                if ((legacy && judge_nvlink_errors(r, f, g, desc, totals, n_err_links)) ||
                    judge_nvlink5_errors(r, f, g, desc))
                        continue;
                result_status(r, STATUS_PASS, "all %u NVLinks active%s%s, %s", active, bridge_peer[0] ? ", bridged to " : "",
                              bridge_peer, counter_unsupported && !nvl5 ? "error counters not supported" : "no errors");
        }
}

CHECK_INFO_USES(gpu_nvlink, "gpu", "gpu.nvlink", LEVEL_QUICK, NEED_VIRT | NEED_NVML, NEED_NVML_AFTER,
           "Every NVLink is up and error-free (boards with NVLink)",
           run_nvlink);
