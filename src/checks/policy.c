/* policy: the node against its site policy (policy/policy.h, docs/checks/policy.md).
 *
 * policy.expect judges the expect section (GPU count and model, driver, CUDA);
 * policy.reference compares the node with the golden node the policy pins (a GPU missing
 * or added, a VBIOS or InfoROM that changed, a NUMA placement, a NIC, the PCIe/NVLink
 * matrix). Both skip when no policy was given. */
#include "checks/check.h"
#include "core/strbuf.h"
#include "core/strparse.h"
#include "results/golden.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Differences named in a summary before "and N more"; all of them go to observed. */
#define SUMMARY_DIFFS 3

static bool skip_without_policy(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (f->policy)
                return false;
        struct result *r = result_new(rep, self, "host");
        result_status(r, STATUS_SKIP, "no site policy (--policy FILE, or /etc/gpuvet/policy.yaml)");
        return true;
}

/* A list of differences, joined for observed and cut short for the summary. */
struct diffs {
        char all[4096];
        char head[1024];
        char summary[1200]; /* head, and how many more: diff_summary */
        unsigned n;
};

static void diff_add(struct diffs *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void diff_add(struct diffs *d, const char *fmt, ...) {
        char one[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(one, sizeof(one), fmt, ap);
        va_end(ap);
        size_t len = strlen(d->all);
        snprintf(d->all + len, sizeof(d->all) - len, "%s%s", d->n ? "; " : "", one);
        if (d->n < SUMMARY_DIFFS) {
                len = strlen(d->head);
                snprintf(d->head + len, sizeof(d->head) - len, "%s%s", d->n ? "; " : "", one);
        }
        d->n++;
}

static const char *diff_summary(struct diffs *d) {
        if (d->n > SUMMARY_DIFFS)
                snprintf(d->summary, sizeof(d->summary), "%s; and %u more", d->head, d->n - SUMMARY_DIFFS);
        else
                snprintf(d->summary, sizeof(d->summary), "%s", d->head);
        return d->summary;
}

/* ---- policy.expect ------------------------------------------------------------------ */

static bool nvml_read(const struct facts *f) { return f->nvml.init_state == NVML_INIT_OK; }

static const char *driver_version_of(const struct facts *f) {
        if (nvml_read(f) && nv_ok(f->nvml.driver_version))
                return f->nvml.driver_version.v;
        return f->nvidia.have_version ? f->nvidia.driver_version : NULL;
}

static void run_expect(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (skip_without_policy(self, f, rep))
                return;
        const struct policy *p = f->policy;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "policy", "%s:%u", p->path, p->expect_line);
        char expected[1024] = "", observed[1024] = "";
        struct diffs d = {0};

        if (p->gpu_count) {
                strbuf_appendf(expected, sizeof(expected), "%s%u GPUs", expected[0] ? ", " : "", p->gpu_count);
                strbuf_appendf(observed, sizeof(observed), "%s%zu GPUs", observed[0] ? ", " : "", f->gpus.n);
                if (f->gpus.n != p->gpu_count)
                        diff_add(&d, "%zu NVIDIA GPU%s on the PCI bus, the site expects %u", f->gpus.n,
                                 f->gpus.n == 1 ? "" : "s", p->gpu_count);
        }
        if (p->gpu_model) {
                strbuf_appendf(expected, sizeof(expected), "%smodel \"%s\"", expected[0] ? ", " : "", p->gpu_model);
                unsigned wrong = 0;
                char first[NV_STR_MAX + 32] = "";
                for (size_t i = 0; i < f->gpus.n; i++) {
                        char name[NV_STR_MAX];
                        const struct nvml_gpu *n = nvml_gpu_at(f, gpu_pci(f, i)->addr);
                        if (n && nv_ok(n->name))
                                snprintf(name, sizeof(name), "%s", n->name.v);
                        else
                                gpu_describe(f, i, name, sizeof(name));
                        if (!strcasestr(name, p->gpu_model) && wrong++ == 0)
                                snprintf(first, sizeof(first), "%s is %s", gpu_subject(f, i), name);
                }
                if (wrong)
                        diff_add(&d, "%u GPU%s not \"%s\" (%s)", wrong, wrong == 1 ? " is" : "s are", p->gpu_model, first);
        }
        const char *drv = driver_version_of(f);
        if (p->driver_branch || p->driver_version) {
                if (p->driver_version)
                        strbuf_appendf(expected, sizeof(expected), "%sdriver %s", expected[0] ? ", " : "", p->driver_version);
                else
                        strbuf_appendf(expected, sizeof(expected), "%sdriver branch %u", expected[0] ? ", " : "",
                                       p->driver_branch);
                strbuf_appendf(observed, sizeof(observed), "%sdriver %s", observed[0] ? ", " : "", drv ? drv : "unknown");
                int cmp = 0;
                if (!drv)
                        diff_add(&d, "the driver version is unknown (no nvidia module loaded, gpu.driver_version)");
                else if (p->driver_version && (version_compare(drv, p->driver_version, &cmp) < 0 || cmp != 0))
                        diff_add(&d, "driver %s, the site expects %s", drv, p->driver_version);
                else if (p->driver_branch && strtoul(drv, NULL, 10) != p->driver_branch)
                        diff_add(&d, "driver %s is not of the %u branch the site expects", drv, p->driver_branch);
        }
        if (p->cuda_version) {
                strbuf_appendf(expected, sizeof(expected), "%sCUDA >= %s", expected[0] ? ", " : "", p->cuda_version);
                const char *cuda = nvml_read(f) ? f->nvml.cuda_driver_version_str : "";
                strbuf_appendf(observed, sizeof(observed), "%sCUDA %s", observed[0] ? ", " : "", cuda[0] ? cuda : "unknown");
                int cmp = 0;
                if (!cuda[0])
                        diff_add(&d, "the CUDA version the driver supports is unknown (NVML not read: gpu.nvml)");
                else if (version_compare(cuda, p->cuda_version, &cmp) == 0 && cmp < 0)
                        diff_add(&d, "the driver supports CUDA %s, the site expects at least %s", cuda, p->cuda_version);
        }
        if (!expected[0]) {
                result_status(r, STATUS_SKIP, "the site policy expects no GPU count, model, driver or CUDA version");
                return;
        }
        result_expected(r, "%s", expected);
        result_observed(r, "%s", observed);
        if (d.n) {
                result_status(r, STATUS_FAIL, "not as the site expects: %s", diff_summary(&d));
                result_remedy(r, "Bring the node to the site's baseline (driver and CUDA: the install playbook; a GPU "
                                 "missing: gpu.inventory and gpu.nvml say which), or correct the policy (%s:%u) if the "
                                 "baseline changed.",
                              p->path, p->expect_line);
                return;
        }
        result_status(r, STATUS_PASS, "as the site expects: %s", observed);
}

CHECK_INFO(policy_expect, "policy", "policy.expect", LEVEL_QUICK, NEED_NVIDIA | NEED_NVML,
           "The node is what the site policy expects: GPU count and model, driver, CUDA",
           run_expect);

/* ---- policy.reference --------------------------------------------------------------- */

static long golden_gpu_index(const struct golden *g, const char *bus_id) {
        for (size_t i = 0; i < g->n_gpus; i++)
                if (strcmp(g->gpus[i].bus_id, bus_id) == 0)
                        return (long)i;
        return -1;
}

static long topo_index(const struct facts *f, const struct golden *g, const char *bus_id) {
        for (size_t i = 0; i < g->topo.n; i++)
                if (strcmp(f->pci.devs[g->topo.devs[i].pci_index].addr, bus_id) == 0)
                        return (long)i;
        return -1;
}

/* How many other reference GPUs of the same device share the reference's VBIOS: "as its
 * 7 siblings" makes a lone outlier plain. */
static unsigned vbios_siblings(const struct policy_reference *ref, const struct policy_ref_gpu *x) {
        unsigned n = 0;
        for (size_t i = 0; i < ref->n_gpus; i++) {
                const struct policy_ref_gpu *o = &ref->gpus[i];
                n += o != x && o->vbios && strcmp(o->device_id, x->device_id) == 0 && strcmp(o->vbios, x->vbios) == 0;
        }
        return n;
}

static void judge_reference_gpu(const struct check_info *self, const struct facts *f, const struct golden *g,
                                const struct policy_ref_gpu *x, struct report *rep) {
        const struct policy *p = f->policy;
        const struct policy_reference *ref = &p->reference;
        struct result *r = result_new(rep, self, x->bus_id);
        result_evidence(r, "policy", "%s:%u", p->path, x->line);
        result_expected(r, "%s (%s)%s%s%s%s, NUMA node %d", x->model, x->device_id, x->vbios ? ", VBIOS " : "",
                        x->vbios ? x->vbios : "", x->inforom ? ", InfoROM " : "", x->inforom ? x->inforom : "", x->numa_node);
        long i = golden_gpu_index(g, x->bus_id);
        if (i < 0) {
                result_observed(r, "not on the PCI bus");
                result_status(r, STATUS_FAIL, "the reference's %s is missing from the PCI bus", x->model);
                result_remedy(r, "A GPU gone from the bus: look for Xid 79 and AER errors in `dmesg`, power-cycle the node "
                                 "(a warm reboot often does not bring it back), then reseat or replace the GPU.");
                return;
        }
        const struct golden_gpu *now = &g->gpus[i];
        result_observed(r, "%s (%s)%s%s%s%s, NUMA node %d", now->model, now->device_id, now->vbios[0] ? ", VBIOS " : "",
                        now->vbios, now->inforom[0] ? ", InfoROM " : "", now->inforom, now->numa_node);
        struct diffs d = {0};
        char not_compared[128] = "";
        if (strcmp(now->device_id, x->device_id) != 0)
                diff_add(&d, "a %s (%s) where the reference has a %s (%s)", now->model, now->device_id, x->model,
                         x->device_id);
        else if (now->model_from_nvml && strcmp(now->model, x->model) != 0)
                diff_add(&d, "named \"%s\", the reference \"%s\"", now->model, x->model);
        if (x->vbios && !now->vbios[0])
                strbuf_appendf(not_compared, sizeof(not_compared), "%sVBIOS", not_compared[0] ? ", " : "");
        else if (x->vbios && strcmp(now->vbios, x->vbios) != 0) {
                unsigned sib = vbios_siblings(ref, x);
                if (sib)
                        diff_add(&d, "VBIOS %s, the reference %s (as on %u other GPU%s)", now->vbios, x->vbios, sib,
                                 sib == 1 ? "" : "s");
                else
                        diff_add(&d, "VBIOS %s, the reference %s", now->vbios, x->vbios);
        }
        if (x->inforom && !now->inforom[0])
                strbuf_appendf(not_compared, sizeof(not_compared), "%sInfoROM", not_compared[0] ? ", " : "");
        else if (x->inforom && strcmp(now->inforom, x->inforom) != 0)
                diff_add(&d, "InfoROM %s, the reference %s", now->inforom, x->inforom);
        if (x->numa_node != now->numa_node)
                diff_add(&d, "on NUMA node %d, the reference %d", now->numa_node, x->numa_node);
        if (not_compared[0])
                result_evidence(r, "not_compared", "%s: NVML did not tell (gpu.nvml)", not_compared);
        if (d.n) {
                result_status(r, STATUS_FAIL, "differs from the reference: %s", diff_summary(&d));
                result_remedy(r, "Find out what changed (a swapped board, a firmware update on one GPU, a moved card) "
                                 "and bring the GPU back to the reference, or capture a new one when the change is "
                                 "intended: `gpuvet policy capture -o %s`.",
                              p->path);
                return;
        }
        result_status(r, STATUS_PASS, "as in the reference%s%s%s", not_compared[0] ? " (" : "", not_compared,
                      not_compared[0] ? " not compared: no NVML)" : "");
}

static void compare_topology(const struct facts *f, const struct golden *g, const struct policy_reference *ref,
                             struct diffs *d) {
        for (size_t a = 0; a < ref->n_topo; a++) {
                long ia = topo_index(f, g, ref->topo_devices[a]);
                for (size_t b = a + 1; b < ref->n_topo && ia >= 0; b++) {
                        long ib = topo_index(f, g, ref->topo_devices[b]);
                        if (ib < 0)
                                continue;
                        enum topo_pcie was = (enum topo_pcie)ref->pcie[a * ref->n_topo + b];
                        enum topo_pcie is = topo_at(&g->topo, (size_t)ia, (size_t)ib)->pcie;
                        if (was != is)
                                diff_add(d, "%s-%s: %s, the reference %s", ref->topo_devices[a], ref->topo_devices[b],
                                         topo_pcie_name(is), topo_pcie_name(was));
                }
        }
        if (!ref->nvlink || !g->topo.nvlink_known)
                return;
        for (size_t a = 0; a < ref->n_gpus; a++) {
                long ia = golden_gpu_index(g, ref->gpus[a].bus_id);
                for (size_t b = a + 1; b < ref->n_gpus && ia >= 0; b++) {
                        long ib = golden_gpu_index(g, ref->gpus[b].bus_id);
                        if (ib < 0)
                                continue;
                        unsigned was = ref->nvlink[a * ref->n_gpus + b];
                        unsigned is = topo_at(&g->topo, (size_t)ia, (size_t)ib)->nvlinks;
                        if (was != is)
                                diff_add(d, "%s-%s: %u NVLink%s, the reference %u", ref->gpus[a].bus_id,
                                         ref->gpus[b].bus_id, is, is == 1 ? "" : "s", was);
                }
        }
}

static void judge_reference_host(const struct check_info *self, const struct facts *f, const struct golden *g,
                                 struct report *rep) {
        const struct policy *p = f->policy;
        const struct policy_reference *ref = &p->reference;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "policy", "%s:%u", p->path, ref->line);
        result_evidence(r, "reference", "captured %s on %s", ref->captured ? ref->captured : "(unknown time)",
                        ref->host ? ref->host : "(unknown host)");
        result_expected(r, "driver %s, %zu NIC%s, the reference's PCIe%s matrix",
                        ref->driver_version ? ref->driver_version : "(not pinned)", ref->n_nics, ref->n_nics == 1 ? "" : "s",
                        ref->nvlink ? " and NVLink" : "");
        struct diffs d = {0};
        if (ref->driver_version && g->driver_version[0] && strcmp(ref->driver_version, g->driver_version) != 0)
                diff_add(&d, "driver %s, the reference %s", g->driver_version, ref->driver_version);
        else if (ref->driver_version && !g->driver_version[0])
                diff_add(&d, "driver version unknown (gpu.driver_version), the reference %s", ref->driver_version);
        for (size_t i = 0; i < ref->n_nics; i++) {
                const struct policy_ref_nic *x = &ref->nics[i];
                const struct golden_nic *now = NULL;
                for (size_t j = 0; j < g->n_nics && !now; j++)
                        if (strcmp(g->nics[j].bus_id, x->bus_id) == 0)
                                now = &g->nics[j];
                if (!now)
                        diff_add(&d, "NIC %s%s%s%s is missing", x->bus_id, x->name ? " (" : "", x->name ? x->name : "",
                                 x->name ? ")" : "");
                else if (now->numa_node != x->numa_node)
                        diff_add(&d, "NIC %s on NUMA node %d, the reference %d", x->bus_id, now->numa_node, x->numa_node);
        }
        for (size_t j = 0; j < g->n_nics; j++) {
                bool known = false;
                for (size_t i = 0; i < ref->n_nics && !known; i++)
                        known = strcmp(g->nics[j].bus_id, ref->nics[i].bus_id) == 0;
                if (!known)
                        diff_add(&d, "NIC %s%s%s%s is not in the reference", g->nics[j].bus_id, g->nics[j].name[0] ? " (" : "",
                                 g->nics[j].name, g->nics[j].name[0] ? ")" : "");
        }
        if (ref->pcie)
                compare_topology(f, g, ref, &d);
        if (ref->nvlink && !g->topo.nvlink_known)
                result_evidence(r, "not_compared", "NVLink matrix: NVML not read (gpu.nvml)");
        result_observed(r, "%s", d.n ? d.all : "as in the reference");
        if (d.n) {
                result_status(r, STATUS_FAIL, "%u difference%s from the reference: %s", d.n, d.n == 1 ? "" : "s",
                              diff_summary(&d));
                result_remedy(r, "Compare `gpuvet topo` with the reference in %s: a link or NIC that went missing needs "
                                 "the hardware seen to; a change made on purpose needs a new capture (`gpuvet policy "
                                 "capture -o %s`).",
                              p->path, p->path);
                return;
        }
        result_status(r, STATUS_PASS, "driver, NICs and topology as in the reference");
}

static void run_reference(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (skip_without_policy(self, f, rep))
                return;
        const struct policy_reference *ref = &f->policy->reference;
        if (!ref->present) {
                struct result *r = result_new(rep, self, "host");
                result_status(r, STATUS_SKIP, "the site policy has no reference node (`gpuvet policy capture` writes one)");
                return;
        }
        struct golden g;
        if (golden_build(f, &g) < 0) {
                struct result *r = result_new(rep, self, "host");
                result_status(r, STATUS_ERROR, "out of memory building the node's topology");
                return;
        }
        for (size_t i = 0; i < ref->n_gpus; i++)
                judge_reference_gpu(self, f, &g, &ref->gpus[i], rep);
        for (size_t i = 0; i < g.n_gpus; i++) {
                bool known = false;
                for (size_t j = 0; j < ref->n_gpus && !known; j++)
                        known = strcmp(ref->gpus[j].bus_id, g.gpus[i].bus_id) == 0;
                if (known)
                        continue;
                struct result *r = result_new(rep, self, g.gpus[i].bus_id);
                result_observed(r, "%s (%s)", g.gpus[i].model, g.gpus[i].device_id);
                result_expected(r, "only the reference's %zu GPU%s", ref->n_gpus, ref->n_gpus == 1 ? "" : "s");
                result_status(r, STATUS_FAIL, "%s is here but not in the reference", g.gpus[i].model);
                result_remedy(r, "A GPU added or moved to another slot: if intended, capture a new reference "
                                 "(`gpuvet policy capture -o %s`).",
                              f->policy->path);
        }
        judge_reference_host(self, f, &g, rep);
        golden_done(&g);
}

CHECK_INFO(policy_reference, "policy", "policy.reference", LEVEL_QUICK, NEED_NVIDIA | NEED_NETDEV | NEED_NVML,
           "No drift from the policy's reference node: GPUs, firmware, NUMA, NICs, topology",
           run_reference);
