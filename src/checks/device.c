/* device: what the GPUs do when used, judged from the device probes (bench/probes.h) that
 * check runs at --level standard: allocation and a verified kernel on every GPU, pinned
 * H2D/D2H against the PCIe link and the model's baseline, device memory bandwidth, peer
 * copies between every pair; and pcie.link_under_load, the link speed read while H2D
 * copies run. Pure functions of facts.probes (docs/checks/device.md). */
#include "results/probes.h"
#include "checks/check.h"
#include "core/strbuf.h"
#include "core/strparse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

static const char *const probe_label[_PROBE_COUNT] = {"functional", "transfer", "memory", "p2p"};

/* Report why the measurements of probe id are missing, on the host; true when it did. */
static bool probe_unavailable(const struct check_info *self, const struct facts *f, enum probe_id id,
                              struct report *rep) {
        const struct probe_facts *p = f->probes;
        if (!p) {
                struct result *r = result_new(rep, self, "host");
                result_status(r, STATUS_SKIP, "the device probes did not run");
                return true;
        }
        const struct probe_run *pr = &p->runs[id];
        if (p->skip_reason[0] || !pr->ran) {
                struct result *r = result_new(rep, self, "host");
                result_status(r, STATUS_SKIP, "%s", p->skip_reason[0] ? p->skip_reason : pr->not_run);
                return true;
        }
        if (pr->note[0]) {
                /* The probe's child hung or died: the deadline or the checksum caught it. */
                struct result *r = result_new(rep, self, "host");
                result_status(r, STATUS_ERROR, "the %s probe failed: %s", probe_label[id], pr->note);
                result_evidence(r, "probe", "probe-%s", probe_label[id]);
                result_evidence(r, "deadline_s", "%u", pr->timeout_s);
                result_evidence(r, "duration_ms", "%.0f", pr->duration_ms);
                for (size_t i = pr->first; i < pr->first + pr->count && i < p->rep.n; i++)
                        if (p->rep.m[i].status == STATUS_ERROR)
                                result_evidence(r, "probe_error", "%s", p->rep.m[i].summary);
                result_remedy(r,
                              "A device call that never returns points at a wedged GPU or driver: check `dmesg` for "
                              "Xid errors (gpu.xid), then reset the GPU (`nvidia-smi -r`) or reboot.");
                return true;
        }
        return false;
}

/* Skip on the host when no device was probed; true when it did. */
static bool skip_without_probed(const struct check_info *self, const struct facts *f, struct report *rep) {
        char why[320];
        if (!probes_no_gpu(f->probes, why, sizeof(why)))
                return false;
        struct result *r = result_new(rep, self, "host");
        result_status(r, STATUS_SKIP, "%s", why);
        return true;
}

static bool reserved_for_vm(const struct facts *f, size_t i) { return strcmp(gpu_pci(f, i)->driver, "vfio-pci") == 0; }

/* One result for a GPU without this measurement. */
static void not_probed(const struct check_info *self, const struct facts *f, size_t i, struct report *rep) {
        struct result *r = result_new(rep, self, gpu_subject(f, i));
        if (reserved_for_vm(f, i))
                result_status(r, STATUS_SKIP, "%s is bound to vfio-pci (reserved for a VM): not probed", gpu_subject(f, i));
        else
                result_status(r, STATUS_SKIP, "%s was not probed (see device.functional)", gpu_subject(f, i));
}

/* Which probe measured it, how long the probe took, and on which backend. */
static void probe_evidence(struct result *r, const struct facts *f, enum probe_id id) {
        const struct probe_run *pr = &f->probes->runs[id];
        result_evidence(r, "probe", "probe-%s on %s: %.0f ms (deadline %u s)", probe_label[id],
                        pr->backend[0] ? pr->backend : "no backend", pr->duration_ms, pr->timeout_s);
}

static void samples_evidence(struct result *r, const struct measurement *m) {
        char buf[512] = "";
        for (size_t k = 0; k < m->n_samples; k++)
                strbuf_appendf(buf, sizeof(buf), "%s%.4g", k ? " " : "", m->samples[k]);
        if (m->n_samples)
                result_evidence(r, "samples", "%s (%s)", buf, m->unit);
}

static void params_evidence(struct result *r, const struct measurement *m) {
        for (size_t k = 0; k < m->n_params; k++)
                result_evidence(r, m->params[k].key, "%s", m->params[k].value);
}

/* ---- device.functional ---- */

static void run_functional(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (probe_unavailable(self, f, PROBE_FUNCTIONAL, rep))
                return;
        const struct probe_facts *p = f->probes;
        char why[320];
        if (probes_no_gpu(p, why, sizeof(why))) {
                struct result *r = result_new(rep, self, "host");
                size_t host_gpus = check_count_host_gpus(f);
                if (host_gpus == 0) {
                        result_status(r, STATUS_SKIP, "%s", why);
                        return;
                }
                /* The node has GPUs for the driver, yet none could be opened. */
                result_status(r, STATUS_ERROR, "cannot probe the node's %zu GPU(s): %s", host_gpus, why);
                result_remedy(r,
                              "Check that the NVIDIA driver is loaded and its libcuda.so.1 installed "
                              "(gpu.driver_binding, gpu.nvml), or choose the backend with --backend opencl.");
                return;
        }
        for (size_t i = 0; i < f->gpus.n; i++) {
                const char *bus = gpu_subject(f, i);
                if (reserved_for_vm(f, i)) {
                        not_probed(self, f, i, rep);
                        continue;
                }
                struct result *r = result_new(rep, self, bus);
                const struct measurement *m = probe_find(p, "functional", "functional", bus, NULL);
                result_expected(r, "allocation, a fill_u32 kernel and its result verified word for word");
                if (!m) {
                        const struct measurement *o = probe_find(p, "functional", "open", bus, NULL);
                        if (o) {
                                result_status(r, STATUS_FAIL, "cannot open %s: %s", bus, o->summary);
                        } else {
                                result_status(r, STATUS_FAIL, "%s is on the PCI bus but the %s backend does not show it", bus,
                                              p->runs[PROBE_FUNCTIONAL].backend[0] ? p->runs[PROBE_FUNCTIONAL].backend
                                                                                   : p->backend);
                        }
                        result_remedy(r,
                                      "Check `nvidia-smi` and `dmesg` for this GPU (Xid 79: fallen off the bus); "
                                      "CUDA_VISIBLE_DEVICES must not hide it. Reset or reseat the GPU.");
                        continue;
                }
                params_evidence(r, m);
                probe_evidence(r, f, PROBE_FUNCTIONAL);
                const char *size = probe_param(m, "size_bytes");
                double mib = strtod(size, NULL) / MIB;
                switch (m->status) {
                case STATUS_PASS:
                case STATUS_WARN:
                        result_status(r, STATUS_PASS, "allocated %.0f MiB, ran the fill_u32 kernel and verified its result",
                                      mib);
                        result_observed(r, "%.0f MiB filled at %.4g GB/s, verified", mib, m->stats.median);
                        break;
                case STATUS_SKIP:
                        result_status(r, STATUS_SKIP, "%s", m->summary);
                        break;
                default:
                        /* A kernel that computes wrong or a driver call that fails: the GPU is not
                         * usable either way. */
                        result_status(r, STATUS_FAIL, "%s: %s", m->verify_error[0] ? "wrong kernel result" : "device error",
                                      m->verify_error[0] ? m->verify_error : m->summary);
                        result_observed(r, "%s", m->verify_error[0] ? m->verify_error : m->summary);
                        result_remedy(r,
                                      "Run `gpuvet bench memory --gpus N` on this GPU alone and check `dmesg` for Xid "
                                      "errors; a GPU that computes wrong results must be drained and replaced (RMA).");
                        break;
                }
        }
}

CHECK_INFO(device_functional, "device", "device.functional", LEVEL_STANDARD, NEED_PROBE_FUNCTIONAL,
           "Every GPU allocates memory and runs a kernel whose result verifies",
           run_functional);

/* ---- bandwidth: device.h2d, device.d2h, device.memory_bandwidth ---- */

static void judge_bandwidth(const struct check_info *self, const struct facts *f, struct report *rep, enum probe_id id,
                            const char *bench, const char *name, const char *what, const char *remedy) {
        if (probe_unavailable(self, f, id, rep) || skip_without_probed(self, f, rep))
                return;
        const struct probe_facts *p = f->probes;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const char *bus = gpu_subject(f, i);
                const struct measurement *m = NULL;
                if (!reserved_for_vm(f, i))
                        /* without the measurement, why it is missing: the benchmark's setup
                         * (allocation) or opening the device */
                        if (!(m = probe_find(p, bench, name, bus, NULL)) && !(m = probe_find(p, bench, "setup", bus, NULL)))
                                m = probe_find(p, bench, "open", bus, NULL);
                if (!m) {
                        not_probed(self, f, i, rep);
                        continue;
                }
                struct result *r = result_new(rep, self, bus);
                params_evidence(r, m);
                probe_evidence(r, f, id);
                if (m->status == STATUS_SKIP || m->status == STATUS_ERROR) {
                        result_status(r, m->status, "%s", m->summary);
                        continue;
                }
                if (m->peak > 0)
                        result_evidence(r, "peak", "%.4g %s: %s", m->peak, m->unit, m->peak_source);
                if (m->baseline > 0)
                        result_evidence(r, "baseline", "%.4g %s: %s", m->baseline, m->unit, m->baseline_source);
                samples_evidence(r, m);
                if (m->verify_error[0]) {
                        result_status(r, STATUS_FAIL, "%s: result verification failed: %s", what, m->verify_error);
                        result_observed(r, "%s", m->verify_error);
                        result_expected(r, "the copied data intact");
                        result_remedy(r, "Data corrupted in flight or in memory: check `dmesg` for Xid and AER errors "
                                         "(pcie.aer, gpu.xid); drain the node and run `gpuvet bench` on this GPU.");
                        continue;
                }
                char ratios[160] = "";
                if (m->baseline > 0)
                        strbuf_appendf(ratios, sizeof(ratios), "%.0f%% of the %.4g %s baseline", m->ratio_baseline * 100,
                                       m->baseline, m->unit);
                if (m->peak > 0)
                        strbuf_appendf(ratios, sizeof(ratios), "%s%.0f%% of the %.4g %s peak", ratios[0] ? ", " : "",
                                       m->ratio_peak * 100, m->peak, m->unit);
                result_observed(r, "%.4g %s (median of %zu, cv %.1f%%)%s%s", m->stats.median, m->unit, m->stats.n,
                                m->stats.cv * 100, ratios[0] ? ": " : "", ratios);
                if (m->baseline > 0)
                        result_expected(r, "near the %.4g %s achieved by a healthy part (%s)", m->baseline, m->unit,
                                        m->baseline_source);
                else if (m->peak > 0)
                        result_expected(r, "near the %.4g %s peak (%s)", m->peak, m->unit, m->peak_source);
                else
                        result_expected(r, "no reference for this GPU: the figure is reported");
                /* m->status holds the documented thresholds of data/baselines.json (baseline
                 * preferred, else the peak) and the sibling comparison. */
                result_status(r, m->status, "%s %s", what, m->summary);
                if (m->status != STATUS_PASS)
                        result_remedy(r, "%s", remedy);
        }
}

/* H2D and D2H go over the same link, and a slow one has the same causes either way. */
static const char transfer_remedy[] =
        "Check the link (pcie.link_width, pcie.link_under_load), NUMA placement (the GPU's node: gpuvet topo) and the "
        "IOMMU mode (iommu=pt); compare with `gpuvet bench transfer`.";

static void run_h2d(const struct check_info *self, const struct facts *f, struct report *rep) {
        judge_bandwidth(self, f, rep, PROBE_TRANSFER, "transfer", "h2d_pinned", "H2D (pinned)", transfer_remedy);
}

CHECK_INFO(device_h2d, "device", "device.h2d", LEVEL_STANDARD, NEED_PROBE_FUNCTIONAL | NEED_PROBE_TRANSFER,
           "Pinned host-to-device bandwidth per GPU against its baseline and PCIe link",
           run_h2d);

static void run_d2h(const struct check_info *self, const struct facts *f, struct report *rep) {
        judge_bandwidth(self, f, rep, PROBE_TRANSFER, "transfer", "d2h_pinned", "D2H (pinned)", transfer_remedy);
}

CHECK_INFO(device_d2h, "device", "device.d2h", LEVEL_STANDARD, NEED_PROBE_FUNCTIONAL | NEED_PROBE_TRANSFER,
           "Pinned device-to-host bandwidth per GPU against its baseline and PCIe link",
           run_d2h);

static void run_memory_bandwidth(const struct check_info *self, const struct facts *f, struct report *rep) {
        judge_bandwidth(self, f, rep, PROBE_MEMORY, "memory", "triad", "triad",
                        "Check clocks and throttling (gpu.clock_events, gpu.temperature, gpu.power_limit) and "
                        "memory health (gpu.memory_health, gpu.ecc_errors); confirm with `gpuvet bench memory`.");
}

CHECK_INFO(device_memory_bandwidth, "device", "device.memory_bandwidth", LEVEL_STANDARD, NEED_PROBE_FUNCTIONAL | NEED_PROBE_MEMORY,
           "Device memory bandwidth (triad) per GPU against its baseline and spec",
           run_memory_bandwidth);

/* ---- device.p2p ---- */

static bool nvlink_model(const struct facts *f, size_t i) {
        const struct gpu_model *m = f->gpus.gpus[i].model;
        return m && m->nvlink_links > 0 && m->form && strcmp(m->form, "sxm") == 0;
}

/* error and fail outrank warn, warn outranks pass */
static void run_p2p(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (probe_unavailable(self, f, PROBE_P2P, rep) || skip_without_probed(self, f, rep))
                return;
        const struct probe_facts *p = f->probes;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const char *bus = gpu_subject(f, i);
                if (reserved_for_vm(f, i)) {
                        not_probed(self, f, i, rep);
                        continue;
                }
                const struct measurement *setup = probe_find(p, "p2p", "open", bus, NULL);
                size_t peers = 0, good = 0, no_access = 0;
                double lo = 0, hi = 0;
                enum status worst = STATUS_PASS;
                char bad[768] = "";
                const struct measurement *m = NULL;
                while ((m = probe_find(p, "p2p", "write_uni", bus, m))) {
                        peers++;
                        const char *peer = probe_param(m, "to");
                        if (m->status == STATUS_SKIP) {
                                no_access++;
                                strbuf_appendf(bad, sizeof(bad), "%sno peer access to %s", bad[0] ? "; " : "", peer);
                                continue;
                        }
                        if (m->status == STATUS_PASS && m->verified) {
                                good++;
                                lo = good == 1 || m->stats.median < lo ? m->stats.median : lo;
                                hi = good == 1 || m->stats.median > hi ? m->stats.median : hi;
                                continue;
                        }
                        worst = status_worse(worst, m->verify_error[0] ? STATUS_FAIL : m->status);
                        strbuf_appendf(bad, sizeof(bad), "%sto %s: %s", bad[0] ? "; " : "", peer,
                                       m->verify_error[0] ? m->verify_error : m->summary);
                        if (m->status == STATUS_WARN && m->stats.n) {
                                good++;
                                lo = good == 1 || m->stats.median < lo ? m->stats.median : lo;
                                hi = good == 1 || m->stats.median > hi ? m->stats.median : hi;
                        }
                }
                struct result *r = result_new(rep, self, bus);
                result_expected(r, "a verified peer copy to every other GPU%s", nvlink_model(f, i) ? " over NVLink" : "");
                probe_evidence(r, f, PROBE_P2P);
                if (setup) {
                        result_status(r, STATUS_ERROR, "%s", setup->summary);
                        continue;
                }
                if (!peers) {
                        result_status(r, STATUS_SKIP, "%s was not probed (see device.functional)", bus);
                        continue;
                }
                /* No peer access is normal on some PCIe nodes, a fault on an NVLink board. */
                if (no_access && nvlink_model(f, i))
                        worst = status_worse(worst, STATUS_FAIL);
                char range[96] = "";
                if (good)
                        snprintf(range, sizeof(range), lo == hi ? "%.4g GB/s" : "%.4g-%.4g GB/s", lo, hi);
                result_observed(r, "%zu of %zu peers verified%s%s%s%s", good, peers, range[0] ? ", " : "", range,
                                bad[0] ? "; " : "", bad);
                if (worst == STATUS_PASS && no_access == peers)
                        result_status(r, STATUS_SKIP, "no peer access from %s to any GPU (PCIe peer-to-peer off)", bus);
                else if (worst == STATUS_PASS)
                        result_status(r, STATUS_PASS, "peer copies to %zu GPU(s) verified, %s%s", good, range,
                                      no_access ? " (some peers without peer access)" : "");
                else {
                        result_status(r, worst, "peer copies from %s: %s", bus, bad);
                        result_remedy(r,
                                      "Check NVLink and NVSwitch state (gpu.nvlink, gpu.fabric_manager) and ACS on "
                                      "PCIe switches (pcie.acs); `gpuvet bench p2p` gives the full matrix.");
                }
        }
}

CHECK_INFO(device_p2p, "device", "device.p2p", LEVEL_STANDARD, NEED_PROBE_FUNCTIONAL | NEED_PROBE_P2P,
           "Peer copies between every pair of GPUs arrive intact; bandwidth reported",
           run_p2p);

/* ---- pcie.link_under_load ---- */

static void run_link_under_load(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (probe_unavailable(self, f, PROBE_TRANSFER, rep) ||
            skip_without_probed(self, f, rep))
                return;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const char *bus = gpu_subject(f, i);
                const struct measurement *m =
                        reserved_for_vm(f, i) ? NULL : probe_find(f->probes, "pcie", "link_under_load", bus, NULL);
                if (!m) {
                        not_probed(self, f, i, rep);
                        continue;
                }
                struct result *r = result_new(rep, self, bus);
                result_evidence(r, "source", "/sys/bus/pci/devices/%s/current_link_{speed,width}, read during H2D copies",
                                bus);
                params_evidence(r, m);
                probe_evidence(r, f, PROBE_TRANSFER);
                if (m->status == STATUS_SKIP || m->status == STATUS_ERROR || !m->stats.n) {
                        result_status(r, m->status == STATUS_SKIP ? STATUS_SKIP : STATUS_ERROR, "%s",
                                      m->summary[0] ? m->summary : "no reading of the link under load");
                        continue;
                }
                const struct pci_dev *d = gpu_pci(f, i);
                unsigned best_mts, best_width;
                if (!pci_link_best(&f->pci, d, &best_mts, &best_width)) {
                        result_status(r, STATUS_SKIP, "sysfs shows no maximum link speed for %s", bus);
                        continue;
                }
                unsigned got_mts = (unsigned)lround(m->stats.max * 1000);
                unsigned got_width = (unsigned)strtoul(probe_param(m, "min_width_under_load"), NULL, 10);
                char got[32], best[32], idle[32];
                pcie_link_text(got_mts, got_width, got, sizeof(got));
                pcie_link_text(best_mts, best_width, best, sizeof(best));
                pcie_link_text(d->cur_speed_mts, d->cur_width, idle, sizeof(idle));
                samples_evidence(r, m);
                result_evidence(r, "idle", "%s (facts: current_link_* before the probes)", idle);
                result_observed(r, "%s under load (highest of %zu readings)", got, m->stats.n);
                result_expected(r, "Gen%u, the best of the GPU's max_link_speed and its upstream port's",
                                pcie_gen_from_mts(best_mts));
                if (got_mts >= best_mts) {
                        result_status(r, STATUS_PASS, "link reaches %s under load%s", got,
                                      d->cur_speed_mts < best_mts ? " (lower at idle: power saving)" : "");
                        continue;
                }
                result_status(r, STATUS_FAIL, "link stays at %s under load, below its maximum Gen%u: it trained down", got,
                              pcie_gen_from_mts(best_mts));
                result_remedy(r,
                              "Reseat the GPU at %s and check its riser/cable and slot; check the BIOS PCIe speed "
                              "setting for the slot. Confirm with `lspci -vv -s %s` (LnkSta) while `gpuvet bench "
                              "transfer` runs.",
                              bus, bus);
        }
}

CHECK_INFO(pcie_link_under_load, "pcie", "pcie.link_under_load", LEVEL_STANDARD, NEED_PROBE_FUNCTIONAL | NEED_PROBE_TRANSFER | NEED_PCI_TREE,
           "Each GPU's PCIe link reaches its maximum speed under load",
           run_link_under_load);
