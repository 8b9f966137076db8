#include "report/report_json.h"
#include "report/burn_json.h"
#include "report/envelope.h"
#include "report/result_scope.h"
#include "core/json_text.h"
#include "checks/check.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#define REPORT_SCHEMA "gpuvet.report/1"

/* Machine text (hostnames, os-release, sysfs strings, NVML names) can hold any bytes:
 * json_text keeps the key with the invalid bytes replaced, where json_string would give
 * NULL and drop it. */
void *report_json_host(const struct facts *f) {
        const struct host_facts *h = &f->host;
        json_t *o = json_object();
        json_object_set_new(o, "hostname", json_text(h->hostname));
        json_object_set_new(o, "kernel_release", json_text(h->kernel_release));
        json_object_set_new(o, "kernel_version", json_text(h->kernel_version));
        json_object_set_new(o, "os", json_text(h->os_name));
        json_object_set_new(o, "cpu_model", json_text(h->cpu_model));
        json_object_set_new(o, "cpu_vendor", json_text(h->cpu_vendor));
        json_object_set_new(o, "cpus_online", h->n_cpus_online ? json_integer(h->n_cpus_online) : json_null());
        json_object_set_new(o, "mem_total_mib", h->mem_total_kb ? json_integer((json_int_t)(h->mem_total_kb / 1024)) : json_null());
        json_object_set_new(o, "dmi_sys_vendor", json_text(h->dmi_sys_vendor));
        json_object_set_new(o, "dmi_product_name", json_text(h->dmi_product_name));
        json_object_set_new(o, "kernel_cmdline", json_text(h->cmdline));
        /* cpulist "" marks a memory-only node (GPU or CXL memory), null an unreadable one:
         * json_text gives null for "", so the empty list is written as itself. */
        json_t *nodes = json_array();
        for (size_t i = 0; i < f->numa.n_nodes; i++) {
                const struct numa_node *nd = &f->numa.nodes[i];
                json_t *n = json_object();
                json_object_set_new(n, "node", json_integer(nd->id));
                const char *cpus = nd->cpulist;
                json_object_set_new(n, "cpulist", !cpus ? json_null() : *cpus ? json_text(cpus) : json_string(""));
                json_object_set_new(n, "mem_total_mib",
                                    nd->mem_err == 0 ? json_integer((json_int_t)(nd->mem_total_kb / 1024)) : json_null());
                json_array_append_new(nodes, n);
        }
        json_object_set_new(o, "numa_nodes", nodes);
        return o;
}

void *report_json_gpus(const struct facts *f) {
        json_t *a = json_array();
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct gpu *g = &f->gpus.gpus[i];
                const struct pci_dev *d = gpu_pci(f, i);
                json_t *o = json_object();
                char buf[64];
                json_object_set_new(o, "index", json_integer((json_int_t)i));
                json_object_set_new(o, "pci_bus_id", json_string(d->addr));
                gpu_describe(f, i, buf, sizeof(buf));
                json_object_set_new(o, "name", json_text(buf));
                if (d->have_ids) {
                        snprintf(buf, sizeof(buf), "%04x:%04x", d->vendor, d->device);
                        json_object_set_new(o, "pci_id", json_string(buf));
                } else {
                        json_object_set_new(o, "pci_id", json_null());
                }
                const struct gpu_arch *arch = g->model ? gpudb_arch(f->db, g->model->arch) : NULL;
                json_object_set_new(o, "architecture", arch ? json_string(arch->id) : json_null());
                if (g->model) {
                        snprintf(buf, sizeof(buf), "%d.%d", g->model->cc_major, g->model->cc_minor);
                        json_object_set_new(o, "compute_capability", json_string(buf));
                } else {
                        json_object_set_new(o, "compute_capability", json_null());
                }
                json_object_set_new(o, "driver", json_text(d->driver));
                /* The node resolved from numa_node or, lacking it, from local_cpulist; -1 when sysfs
                 * tells something but no single node; null when it tells nothing. */
                const struct numa_gpu *ng = i < f->numa.n_gpus ? &f->numa.gpus[i] : NULL;
                if (ng && ng->source != NUMA_GPU_UNRESOLVED)
                        json_object_set_new(o, "numa_node", json_integer(ng->node));
                else if (d->have_numa_node || *d->local_cpulist)
                        json_object_set_new(o, "numa_node", json_integer(-1));
                else
                        json_object_set_new(o, "numa_node", json_null());
                json_object_set_new(o, "local_cpulist", json_text(d->local_cpulist));
                json_object_set_new(o, "iommu_group", d->iommu_group >= 0 ? json_integer(d->iommu_group) : json_null());
                if (d->have_link) {
                        json_t *l = json_object();
                        json_object_set_new(l, "current_speed_gts", json_real(d->cur_speed_mts / 1000.0));
                        json_object_set_new(l, "max_speed_gts", json_real(d->max_speed_mts / 1000.0));
                        json_object_set_new(l, "current_width", json_integer(d->cur_width));
                        json_object_set_new(l, "max_width", json_integer(d->max_width));
                        json_object_set_new(o, "pcie_link", l);
                } else {
                        json_object_set_new(o, "pcie_link", json_null());
                }
                json_array_append_new(a, o);
        }
        return a;
}

void report_json_outcome(void *o, const char *observed, const char *expected, const char *remedy) {
        json_object_set_new(o, "observed", json_text(observed));
        json_object_set_new(o, "expected", json_text(expected));
        json_object_set_new(o, "remedy", json_text(remedy));
}

static json_t *result_json(const struct facts *f, const struct result *r) {
        json_t *o = json_object();
        json_object_set_new(o, "id", json_string(r->check->id));
        json_object_set_new(o, "category", json_string(r->check->category));
        json_object_set_new(o, "level", json_string(level_name(r->check->level)));
        json_object_set_new(o, "subject", json_text(r->subject));
        json_object_set_new(o, "scope", result_scope_json(f, r->subject));
        json_object_set_new(o, "code", r->code ? json_text(r->code) : json_string(r->check->id));
        json_object_set_new(o, "status", json_string(status_name(r->status)));
        json_object_set_new(o, "summary", json_text(r->summary));
        report_json_outcome(o, r->observed, r->expected, r->remedy);
        json_t *ev = json_object();
        for (size_t i = 0; i < r->n_evidence; i++)
                json_object_set_new(ev, r->evidence[i].key,
                                    *r->evidence[i].value ? json_text(r->evidence[i].value) : json_string(""));
        json_object_set_new(o, "evidence", ev);
        return o;
}

char *report_json(const struct facts *f, const struct report *rep, const struct run_info *run) {
        json_t *root = envelope_new(REPORT_SCHEMA, run->command);
        json_object_set_new(root, "level", json_string(level_name(run->level)));
        json_object_set_new(root, "root", json_text(run->root));
        json_object_set_new(root, "policy", json_text(run->policy));
        json_object_set_new(root, "host", report_json_host(f));
        json_object_set_new(root, "gpus", report_json_gpus(f));
        if (f->burn)
                json_object_set_new(root, "burn", burn_json(f->burn));

        json_t *checks = json_array();
        for (size_t i = 0; i < rep->n_results; i++)
                json_array_append_new(checks, result_json(f, &rep->results[i]));
        json_object_set_new(root, "checks", checks);

        json_t *summary = envelope_summary(rep->counts, report_verdict(rep), run->duration_ms);
        json_object_set_new(summary, "strict", json_boolean(run->strict));
        json_object_set_new(root, "summary", summary);

        char *out = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        json_decref(root);
        return out;
}
