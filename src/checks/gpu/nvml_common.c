/* The NVML judging the gpu.* checks share (nvml_common.h). */
#include "checks/gpu/nvml_common.h"

#include "core/strbuf.h"
#include "core/strparse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char nv_lost_remedy[] =
        "The GPU stopped answering on PCIe (Xid 79). Drain the node, look for Xid 79 and PCIe AER errors "
        "in `dmesg`, then power-cycle it (a warm reboot often does not bring the GPU back); if it happens "
        "again, reseat the GPU or have it replaced.";
const char nv_timeout_remedy[] =
        "An NVML call that never returns means a wedged GPU or driver: look for Xid errors in `dmesg | grep "
        "-E 'NVRM|Xid'`, then reset the GPU (`nvidia-smi -r -i <index>`, with no process using it) or "
        "reboot. gpuvet abandoned the call and exited once its report was written.";

/* ---- helpers ---------------------------------------------------------------------- */

/* The sysfs GPU (index into f->gpus) at NVML GPU g's address, or -1. */
long nv_sysfs_gpu_of(const struct facts *f, const struct nvml_gpu *g) {
        if (!nv_ok(g->pci_bus_id))
                return -1;
        for (size_t i = 0; i < f->gpus.n; i++)
                if (strcasecmp(gpu_pci(f, i)->addr, g->pci_bus_id.v) == 0)
                        return (long)i;
        return -1;
}

bool nv_sees(const struct facts *f, const char *addr) {
        return nvml_gpu_at(f, addr) != NULL;
}

/* The address of a GPU whose PCI address NVML cannot read (a GPU fallen off the bus answers
 * GPU_IS_LOST even there): when exactly one NVML GPU lacks its address and exactly one GPU
 * bound to nvidia on the PCI bus is missing from NVML, they are the same GPU. NULL when
 * that does not hold. */
const char *nv_inferred_addr(const struct facts *f) {
        unsigned int unknown = 0;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++)
                if (!nv_ok(f->nvml.gpus[i].pci_bus_id))
                        unknown++;
        if (unknown != 1)
                return NULL;
        const char *missing = NULL;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = gpu_pci(f, i);
                if (strcmp(d->driver, "nvidia") != 0 || nv_sees(f, d->addr))
                        continue;
                if (missing)
                        return NULL;
                missing = d->addr;
        }
        return missing;
}

/* The subject of a GPU's result: its PCI address as sysfs writes it (inferred when NVML
 * cannot read it, see nv_inferred_addr), else "nvml:<index>". */
const char *nv_subject(const struct facts *f, const struct nvml_gpu *g, char *buf, size_t size) {
        const char *addr = NULL;
        if (nv_ok(g->pci_bus_id) && g->pci_bus_id.v[0])
                addr = g->pci_bus_id.v;
        else if (f)
                addr = nv_inferred_addr(f);
        if (addr)
                snprintf(buf, size, "%s", addr);
        else
                snprintf(buf, size, "nvml:%u", g->index);
        return buf;
}

/* gpuvet's table entry for g: by its PCI id from NVML, else that of the sysfs device at
 * its address. NULL when unknown. */
const struct gpu_model *nv_model(const struct facts *f, const struct nvml_gpu *g) {
        const struct gpu_model *m = NULL;
        if (f->db && nv_ok(g->pci_device_id))
                m = gpudb_find_subsystem(f->db, g->pci_device_id.v & 0xffffu, g->pci_device_id.v >> 16,
                                         nv_ok(g->pci_subsystem_id) ? g->pci_subsystem_id.v >> 16 : 0);
        if (!m) {
                long i = nv_sysfs_gpu_of(f, g);
                const char *addr = i < 0 && !nv_ok(g->pci_bus_id) ? nv_inferred_addr(f) : NULL;
                for (size_t k = 0; addr && k < f->gpus.n && i < 0; k++)
                        if (strcmp(gpu_pci(f, k)->addr, addr) == 0)
                                i = (long)k;
                if (i >= 0)
                        m = f->gpus.gpus[i].model;
        }
        return m;
}

/* "NVIDIA H100 80GB HBM3" for summaries. Not its address: every result that describes a
 * GPU has that address as its subject, which the text report prints beside the summary
 * (ux-review: "0000:52:00.0 NVIDIA H100 80GB HBM3 0000:52:00.0 is at 91 C"). */
const char *nv_describe(const struct facts *f, const struct nvml_gpu *g, char *buf, size_t size) {
        (void)f;
        if (nv_ok(g->name) && g->name.v[0])
                snprintf(buf, size, "%s", g->name.v);
        else
                snprintf(buf, size, "the GPU");
        return buf;
}


/* A result about NVML GPU g, its subject set; desc (NV_DESC_MAX bytes) gets the GPU's
 * description for summaries. */
struct result *nv_result(const struct check_info *self, const struct facts *f, struct report *rep,
                         const struct nvml_gpu *g, char *desc) {
        char subject[NV_STR_MAX];
        struct result *r = result_new(rep, self, nv_subject(f, g, subject, sizeof(subject)));
        nv_describe(f, g, desc, NV_DESC_MAX);
        return r;
}

/* The function whose GPU_IS_LOST answer shows that g has fallen off the bus, or NULL. The
 * readings every collection makes, in the order it makes them. */
const char *nv_lost_by(const struct nvml_gpu *g) {
#define LOST(x)                                                              \
        if ((x).state == NV_ERROR && (x).rc == NV_RC_GPU_IS_LOST)       \
                return (x).fn ? (x).fn : "NVML"
        LOST(g->name);
        LOST(g->uuid);
        LOST(g->pci_bus_id);
        LOST(g->mem_total_bytes);
        LOST(g->temp_c);
        LOST(g->power_mw);
        LOST(g->persistence_mode);
        LOST(g->ecc_mode_current);
        LOST(g->ecc_volatile_uncorrected);
        LOST(g->remap_pending);
        LOST(g->clocks_event_reasons);
        LOST(g->mig_mode_current);
#undef LOST
        return NULL;
}

/* The deadline g's hung call ran past: the GPU's budget or the per-call deadline. Reported
 * instead of the measured time, which a loaded machine stretches by a few ms. */
unsigned int nv_deadline_of(const struct facts *f, const struct nvml_gpu *g) {
        const struct nvml_facts *n = &f->nvml;
        bool budget = false;
        for (unsigned int i = 0; i < n->n_timeouts; i++)
                if (n->timeouts[i].gpu == (int)g->index)
                        budget = n->timeouts[i].budget;
        unsigned int call = n->dl.call_ms ? n->dl.call_ms : NVML_DEADLINE_CALL_MS_DEFAULT;
        unsigned int gpu = n->dl.gpu_ms ? n->dl.gpu_ms : NVML_DEADLINE_GPU_MS_DEFAULT;
        return budget ? gpu : call;
}

/* Judge a reading that holds no value into r (status, summary, observed, remedy, the
 * "source" evidence). Returns true when it did, so the caller stops judging this GPU;
 * false for NV_OK. what names the fact in the summary ("ECC mode"). */
bool nv_reading_unusable(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *what,
                         unsigned char state, int rc, const char *fn) {
        if (state == NV_OK)
                return false;
        char desc[2 * NV_STR_MAX + 8];
        nv_describe(f, g, desc, sizeof(desc));
        const char *func = fn ? fn : "NVML";
        result_evidence(r, "source", "%s", func);
        switch (state) {
        case NV_TIMEOUT:
                result_observed(r, "unknown: %s did not return", func);
                result_evidence(r, "nvml_return", "timeout after %u ms", g->timeout_ms);
                result_status(r, STATUS_ERROR, "%s did not return within %u ms on %s: %s unknown", func,
                              nv_deadline_of(f, g), desc, what);
                /* One hung call stops every check of the GPU that reads after it. */
                result_cause(r, "%s did not return within %u ms", func, nv_deadline_of(f, g));
                /* One hung call stops every check of the GPU that reads after it. */
                result_cause(r, "%s did not return within %u ms", func, nv_deadline_of(f, g));
                result_remedy(r, "%s", nv_timeout_remedy);
                return true;
        case NV_NO_FUNCTION:
                result_observed(r, "unknown: libnvidia-ml has no %s", func);
                result_evidence(r, "nvml_return", "%s", nv_rc_name(NV_RC_FUNCTION_NOT_FOUND));
                result_status(r, STATUS_SKIP, "%s: not supported on this GPU/driver (libnvidia-ml lacks %s)", what,
                              func);
                return true;
        case NV_UNREAD:
                result_observed(r, "not read");
                result_status(r, STATUS_SKIP, "%s of %s was not read", what, desc);
                return true;
        default:
                break;
        }
        const char *name = nv_rc_name(rc);
        result_evidence(r, "nvml_return", "%s", name);
        result_observed(r, "unknown: %s returned %s", func, name);
        if (nv_rc_not_offered(rc)) {
                result_status(r, STATUS_SKIP, "%s: %s (%s)", what, nv_not_offered_phrase(state, rc), func);
                return true;
        }
        switch (rc) {
        case NV_RC_GPU_IS_LOST:
                /* One cause, one failure: gpu.nvml fails for a GPU nv_lost_by() finds and names
                 * it; the other checks of that GPU say why they could not judge. A lone
                 * GPU_IS_LOST that gpu.nvml does not see stays a failure here. */
                /* gpu.nvml names a lost GPU by its address, and fails for one whose address
                 * was lost too (it is then missing from NVML). */
                if (nv_lost_by(g) && (nv_ok(g->pci_bus_id) || (g->pci_bus_id.state == NV_ERROR &&
                                                              g->pci_bus_id.rc == NV_RC_GPU_IS_LOST))) {
                        result_status(r, STATUS_SKIP,
                                      "GPU lost: %s has fallen off the bus (%s returned %s; see gpu.nvml)", desc, func,
                                      name);
                        break;
                }
                result_status(r, STATUS_FAIL, "%s has fallen off the bus (%s returned %s)", desc, func, name);
                result_remedy(r, "%s", nv_lost_remedy);
                break;
        case NV_RC_NO_PERMISSION:
                result_status(r, STATUS_ERROR, "%s of %s: %s refused (%s)", what, desc, func, name);
                result_remedy(r, "Run gpuvet as root: NVML reads some facts only with CAP_SYS_ADMIN.");
                break;
        default:
                result_status(r, STATUS_ERROR, "%s of %s: %s failed with %s", what, desc, func, name);
                result_remedy(r, "Look for Xid errors in `dmesg | grep -E 'NVRM|Xid'` and compare with "
                                 "`nvidia-smi -q -i %u`; reset the GPU if NVML keeps failing.",
                              g->index);
                break;
        }
        return true;
}

/* A reading that is simply not there: the function or the feature is missing (an older
 * driver or GPU, a driver wanting another struct version), or it was not read. Checks
 * that can judge without it fall back; other failures are reported. Unlike
 * nv_not_supported() (below), INVALID_ARGUMENT is a failure here: only the NVLink walk past a
 * board's last link meets it as "no such thing". */
bool nv_reading_absent(unsigned char state, int rc) {
        return state == NV_UNREAD || state == NV_NO_FUNCTION ||
               (state == NV_ERROR && (nv_rc_not_offered(rc) || rc == NV_RC_ARGUMENT_VERSION_MISMATCH));
}

const char *nv_not_offered_phrase(unsigned char state, int rc) {
        if (state == NV_NO_FUNCTION)
                return "not supported on this GPU/driver (libnvidia-ml lacks the function)";
        switch (rc) {
        case NV_RC_DEPRECATED:
                return "deprecated: this driver no longer offers it";
        case NV_RC_FUNCTION_NOT_FOUND:
                return "not implemented by this driver's libnvidia-ml";
        default:
                return "not supported on this GPU/driver";
        }
}


/* Why the per-GPU NVML checks cannot judge anything, as one host result; false when
 * they can. */
bool nv_unavailable(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct nvml_facts *n = &f->nvml;
        const char *why = NULL;
        char buf[640];
        if (f->gpus.n == 0 && n->n_gpus == 0)
                why = check_no_gpu_reason(f);
        else if (f->gpus.n > 0 && check_count_host_gpus(f) == 0 && n->n_gpus == 0)
                why = "every GPU is bound to vfio-pci for passthrough: NVML on this host does not see them";
        else if (n->init_state == NVML_INIT_NOT_TRIED) {
                snprintf(buf, sizeof(buf), "NVML not asked: %s", f->nvml_note[0] ? f->nvml_note : "not tried");
                why = buf;
        } else if (n->init_state != NVML_INIT_OK) {
                snprintf(buf, sizeof(buf), "NVML unavailable (%s): gpu.nvml says why",
                         nvml_init_state_name(n->init_state));
                why = buf;
        } else if (n->n_gpus == 0) {
                why = "NVML sees no GPU: gpu.nvml says why";
        }
        if (!why)
                return false;
        struct result *r = result_new(rep, self, "host");
        result_status(r, STATUS_SKIP, "%s", why);
        return true;
}


int nv_cc_major(const struct facts *f, const struct nvml_gpu *g) {
        if (nv_ok(g->cc_major) && g->cc_major.v > 0)
                return g->cc_major.v;
        const struct gpu_model *m = nv_model(f, g);
        return m && m->cc_major > 0 ? m->cc_major : -1;
}

unsigned nv_driver_branch(const struct facts *f) {
        if (!nv_ok(f->nvml.driver_version))
                return 0;
        char *end;
        unsigned long branch = strtoul(f->nvml.driver_version.v, &end, 10);
        return end != f->nvml.driver_version.v && branch < 100000 ? (unsigned)branch : 0;
}

/* A reading the GPU or driver does not support: skip, saying so (why: "" or " (...)"). */
bool nv_skip_unsupported(struct result *r, unsigned char state, int rc, const char *fn, const char *what,
                         const char *desc, const char *why) {
        if (!nv_not_supported(state, rc))
                return false;
        result_evidence(r, "source", "%s", fn);
        if (state == NV_ERROR && (rc == NV_RC_DEPRECATED || rc == NV_RC_FUNCTION_NOT_FOUND)) {
                /* The GPU's own answer ("why") is about NOT_SUPPORTED: a driver that withdrew
                 * or never implemented the call says nothing about the GPU. */
                result_evidence(r, "nvml_return", "%s", nv_rc_name(rc));
                result_observed(r, "%s", nv_not_offered_phrase(state, rc));
                result_status(r, STATUS_SKIP, "%s of %s: %s (%s returned %s)", what, desc,
                              nv_not_offered_phrase(state, rc), fn, nv_rc_name(rc));
                return true;
        }
        result_observed(r, "not supported");
        result_status(r, STATUS_SKIP, "%s not supported on %s%s", what, desc, why);
        return true;
}


const struct nvml_gpu *nv_gpu_after(const struct facts *f, const struct nvml_gpu *g) {
        if (!f->nvml_after || g->index >= f->nvml_after->n_gpus)
                return NULL;
        const struct nvml_gpu *a = &f->nvml_after->gpus[g->index];
        if (!nv_ok(a->pci_bus_id) || !nv_ok(g->pci_bus_id) || strcmp(a->pci_bus_id.v, g->pci_bus_id.v) != 0)
                return NULL;
        return a;
}

/* How much a counter counter_grew between the reads; a counter that went down was reset (by
 * `nvidia-smi nvlink -r` or a GPU reset) and counts from zero. */
unsigned long long counter_grew(unsigned long long before, unsigned long long after) {
        return after >= before ? after - before : after;
}


bool nv_not_supported(unsigned char state, int rc) {
        return state == NV_NO_FUNCTION ||
               (state == NV_ERROR && (nv_rc_not_offered(rc) || rc == NV_RC_INVALID_ARGUMENT));
}

void nv_each_gpu(const struct check_info *self, const struct facts *f, struct report *rep, nv_judge_fn *judge) {
        if (nv_unavailable(self, f, rep))
                return;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *g = &f->nvml.gpus[i];
                char desc[NV_DESC_MAX];
                judge(nv_result(self, f, rep, g, desc), f, g, desc);
        }
}

enum nv_activity nv_gpu_activity(const struct nvml_gpu *g) {
        if (!g || !nv_ok(g->clocks_event_reasons))
                return NV_ACTIVITY_UNKNOWN;
        return g->clocks_event_reasons.v & NV_CLOCKS_EVENT_GPU_IDLE ? NV_ACTIVITY_IDLE : NV_ACTIVITY_BUSY;
}
