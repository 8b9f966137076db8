/* The node's inventory: what a vendor asks first (model, OS, kernel, CPUs, memory, each GPU
 * and its link). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/array.h"
#include "core/strparse.h"
#include "html/html_escape.h"
#include "html/html_page.h"
#include "report/html_sections.h"

static const char *number_text(double v, const char *fmt, char *buf, size_t size) {
        if (!isfinite(v))
                return NULL;
        snprintf(buf, size, fmt, v);
        return buf;
}

/* The report gives the speed in GT/s, written from sysfs's MT/s. */
static void link_text(double gts, double width, char *buf, size_t size) {
        unsigned gen = isfinite(gts) && gts > 0 && gts < 1e6 ? pcie_gen_from_mts((unsigned)lround(gts * 1000)) : 0;
        if (!isfinite(gts) || !isfinite(width))
                snprintf(buf, size, "unknown");
        else if (gen)
                snprintf(buf, size, "Gen%u x%.0f", gen, width);
        else
                snprintf(buf, size, "%.1f GT/s x%.0f", gts, width);
}

static void host_table(struct html_buf *b, struct doc_reader *r, json_t *host) {
        char cpus[32], mem[48], nodes[32];
        json_t *numa = doc_array(r, host, "host", "numa_nodes", false);
        const char *const rows[][2] = {
                {"Hostname", doc_string(r, host, "host", "hostname", false)},
                {"System", doc_string(r, host, "host", "dmi_product_name", false)},
                {"Vendor", doc_string(r, host, "host", "dmi_sys_vendor", false)},
                {"OS", doc_string(r, host, "host", "os", false)},
                {"Kernel", doc_string(r, host, "host", "kernel_release", false)},
                {"CPU", doc_string(r, host, "host", "cpu_model", false)},
                {"CPUs online", number_text(doc_number(r, host, "host", "cpus_online", false), "%.0f", cpus, sizeof(cpus))},
                {"Memory", number_text(doc_number(r, host, "host", "mem_total_mib", false) / 1024, "%.1f GiB", mem,
                                       sizeof(mem))},
                {"NUMA nodes", numa ? number_text((double)json_array_size(numa), "%.0f", nodes, sizeof(nodes)) : NULL},
                {"Kernel command line", doc_string(r, host, "host", "kernel_cmdline", false)},
        };
        static const char *const headers[] = {"Host", ""};
        html_table_begin(b, "kv host", headers, 2);
        for (size_t i = 0; i < ARRAY_COUNT(rows); i++)
                html_table_row(b, rows[i], 2);
        html_table_end(b);
}

static void gpu_table(struct html_buf *b, struct doc_reader *r, json_t *gpus) {
        if (!json_array_size(gpus)) {
                html_element(b, "p", "muted", "No NVIDIA GPU on the PCI bus.");
                return;
        }
        static const char *const headers[] = {"#", "PCI bus id", "Name", "Architecture", "CC", "Driver", "NUMA",
                                              "PCIe link (now / max)"};
        html_table_begin(b, "gpus", headers, 8);
        for (size_t i = 0; i < json_array_size(gpus); i++) {
                char where[32], index[32], numa_text[32], link[112] = "", now[48], max[48];
                snprintf(where, sizeof(where), "gpus[%zu]", i);
                json_t *g = doc_array_object(r, gpus, "gpus", i);
                if (!g)
                        return;
                json_t *pl = doc_object(r, g, where, "pcie_link", false);
                if (pl) {
                        link_text(doc_number(r, pl, "pcie_link", "current_speed_gts", false),
                                  doc_number(r, pl, "pcie_link", "current_width", false), now, sizeof(now));
                        link_text(doc_number(r, pl, "pcie_link", "max_speed_gts", false),
                                  doc_number(r, pl, "pcie_link", "max_width", false), max, sizeof(max));
                        snprintf(link, sizeof(link), "%s / %s", now, max);
                }
                const char *cells[8] = {
                        number_text(doc_number(r, g, where, "index", false), "%.0f", index, sizeof(index)),
                        doc_string(r, g, where, "pci_bus_id", false),
                        doc_string(r, g, where, "name", false),
                        doc_string(r, g, where, "architecture", false),
                        doc_string(r, g, where, "compute_capability", false),
                        doc_string(r, g, where, "driver", false),
                        number_text(doc_number(r, g, where, "numa_node", false), "%.0f", numa_text, sizeof(numa_text)),
                        pl ? link : NULL,
                };
                html_table_row(b, cells, 8);
        }
        html_table_end(b);
}

void html_inventory_section(struct html_buf *b, struct node_doc *docs, size_t n) {
        /* check's inventory first: bench and burn read the same machine, but a check names it
         * most fully. */
        struct node_doc *src = NULL;
        for (int pass = 0; pass < 2 && !src; pass++)
                for (size_t i = 0; i < n && !src; i++)
                        if (json_is_object(json_object_get(docs[i].doc, "host")) &&
                            (pass == 1 || (docs[i].kind == NODE_DOC_CHECK && docs[i].command &&
                                           strcmp(docs[i].command, "check") == 0)))
                                src = &docs[i];
        if (!src)
                return;
        struct doc_reader *r = src->reader;
        html_buf_puts(b, "<section id=\"inventory\">\n<h2>Inventory</h2>\n");
        host_table(b, r, doc_object(r, src->doc, "", "host", false));
        html_element(b, "h3", NULL, "GPUs");
        gpu_table(b, r, doc_array(r, src->doc, "", "gpus", false));
        html_buf_puts(b, "</section>\n");
}
