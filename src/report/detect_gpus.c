/* gpuvet detect --list-gpus: the GPU table gpuvet judges by (data/gpus.json, or the
 * --data-dir copy), as JSON (schema gpuvet.gpus/1) and as a text table rendered from it. */
#include "report/detect_report.h"
#include "data/gpudb.h"
#include "core/json_text.h"

#include <stdio.h>
#include <string.h>

static json_t *num_or_null(double v) { return v > 0 ? json_real(v) : json_null(); }
static json_t *int_or_null(unsigned v) { return v > 0 ? json_integer(v) : json_null(); }

json_t *detect_gpu_table(const struct gpudb *db) {
        json_t *doc = json_object(), *archs = json_array(), *gpus = json_array();
        json_object_set_new(doc, "schema", json_string("gpuvet.gpus/1"));
        json_object_set_new(doc, "source", json_text(db->source));
        for (size_t i = 0; i < db->n_archs; i++) {
                const struct gpu_arch *a = &db->archs[i];
                char cc[16];
                snprintf(cc, sizeof(cc), "%d.%d", a->cc_major, a->cc_minor);
                json_array_append_new(archs, json_pack("{s:o, s:o, s:o, s:s, s:o, s:o, s:o}", "id", json_text(a->id),
                                                       "name", json_text(a->name), "sm", json_text(a->sm),
                                                       "compute_capability", cc, "min_driver", json_text(a->min_driver),
                                                       "min_cuda", json_text(a->min_cuda), "last_cuda_major",
                                                       json_text(a->last_cuda_major)));
        }
        for (size_t i = 0; i < db->n_models; i++) {
                const struct gpu_model *m = &db->models[i];
                json_t *ids = json_array();
                char cc[16], id[16];
                snprintf(cc, sizeof(cc), "%d.%d", m->cc_major, m->cc_minor);
                for (size_t k = 0; k < m->n_device_ids; k++) {
                        snprintf(id, sizeof(id), "10de:%04x", m->device_ids[k]);
                        json_array_append_new(ids, json_string(id));
                }
                json_array_append_new(
                        gpus, json_pack("{s:o, s:o, s:s, s:o, s:b, s:o, s:o, s:o, s:o, s:I, s:o, s:o}", "name",
                                        json_text(m->name), "architecture", json_text(m->arch), "compute_capability",
                                        cc, "form", json_text(m->form), "datacenter", m->datacenter, "memory_gb",
                                        num_or_null(m->memory_gb), "memory_bandwidth_gbps", num_or_null(m->mem_bw_gbps),
                                        "pcie_gen", int_or_null(m->pcie_gen), "pcie_width", int_or_null(m->pcie_width),
                                        "nvlink_links", (json_int_t)m->nvlink_links, "max_power_w",
                                        int_or_null(m->max_power_w), "pci_ids", ids));
        }
        json_object_set_new(doc, "architectures", archs);
        json_object_set_new(doc, "gpus", gpus);
        return doc;
}

static const char *s(const json_t *o, const char *key) {
        const char *v = json_string_value(json_object_get(o, key));
        return v ? v : "-";
}

static void cell_num(char *buf, size_t size, const json_t *v, const char *fmt) {
        if (json_is_number(v))
                snprintf(buf, size, fmt, json_number_value(v));
        else
                snprintf(buf, size, "-");
}

void detect_write_gpu_table(FILE *out, const json_t *doc) {
        fprintf(out, "GPU table: %s\n\n", s(doc, "source"));
        fprintf(out, "%-20s %-6s %-4s %-11s %s\n", "Architecture", "SM", "CC", "Min driver", "CUDA");
        size_t i;
        const json_t *a;
        json_array_foreach(json_object_get(doc, "architectures"), i, a) {
                char cuda[48];
                const char *last = json_string_value(json_object_get(a, "last_cuda_major"));
                if (last)
                        snprintf(cuda, sizeof(cuda), "%s to %s.x", s(a, "min_cuda"), last);
                else
                        snprintf(cuda, sizeof(cuda), "%s and later", s(a, "min_cuda"));
                fprintf(out, "%-20s %-6s %-4s %-11s %s\n", s(a, "name"), s(a, "sm"), s(a, "compute_capability"),
                        s(a, "min_driver"), cuda);
        }
        fprintf(out, "\n%-36s %-12s %-4s %-9s %7s %8s %-7s %7s %6s  %s\n", "Model", "Architecture", "CC", "Form",
                "Mem GB", "BW GB/s", "PCIe", "NVLinks", "Max W", "PCI ids");
        const json_t *g;
        json_array_foreach(json_object_get(doc, "gpus"), i, g) {
                char mem[16], bw[16], power[16], pcie[16];
                cell_num(mem, sizeof(mem), json_object_get(g, "memory_gb"), "%.0f");
                cell_num(bw, sizeof(bw), json_object_get(g, "memory_bandwidth_gbps"), "%.0f");
                cell_num(power, sizeof(power), json_object_get(g, "max_power_w"), "%.0f");
                const json_t *gen = json_object_get(g, "pcie_gen"), *width = json_object_get(g, "pcie_width");
                if (json_is_integer(gen) && json_is_integer(width))
                        snprintf(pcie, sizeof(pcie), "Gen%lld x%lld", (long long)json_integer_value(gen),
                                 (long long)json_integer_value(width));
                else
                        snprintf(pcie, sizeof(pcie), "-");
                fprintf(out, "%-36s %-12s %-4s %-9s %7s %8s %-7s %7lld %6s  ", s(g, "name"), s(g, "architecture"),
                        s(g, "compute_capability"), s(g, "form"), mem, bw, pcie,
                        (long long)json_integer_value(json_object_get(g, "nvlink_links")), power);
                size_t k;
                const json_t *id;
                json_array_foreach(json_object_get(g, "pci_ids"), k, id) fprintf(out, "%s%s", k ? "," : "",
                                                                                 json_string_value(id));
                fputc('\n', out);
        }
}
