#include "policy/capture.h"
#include "results/golden.h"
#include "policy/policy.h"
#include "sys/facts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A YAML double-quoted scalar: safe for any byte a sysfs name or NVML string may hold. */
static void quoted(FILE *out, const char *s) {
        fputc('"', out);
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (*p == '"' || *p == '\\')
                        fprintf(out, "\\%c", *p);
                else if (*p < 0x20 || *p == 0x7f)
                        fprintf(out, "\\x%02x", *p);
                else
                        fputc(*p, out);
        }
        fputc('"', out);
}

static void key_quoted(FILE *out, const char *indent, const char *key, const char *value) {
        fprintf(out, "%s%s: ", indent, key);
        quoted(out, value);
        fputc('\n', out);
}

/* One model for every GPU, or NULL. */
static const char *common_model(const struct golden *g) {
        for (size_t i = 1; i < g->n_gpus; i++)
                if (strcmp(g->gpus[i].model, g->gpus[0].model) != 0)
                        return NULL;
        return g->n_gpus ? g->gpus[0].model : NULL;
}

static void write_commented_sections(FILE *out, const struct facts *f, const struct golden *g) {
        const struct policy_thresholds *t = &policy_thresholds_default;
        const char *model = common_model(g);
        fprintf(out, "# The reference below pins this node. For a policy shared by many nodes, drop it\n"
                     "# and state what they all must be instead:\n"
                     "# expect:\n"
                     "#   gpu_count: %zu\n",
                g->n_gpus);
        if (model) {
                fprintf(out, "#   gpu_model: ");
                quoted(out, model);
                fputc('\n', out);
        }
        if (g->driver_version[0]) {
                fprintf(out, "#   driver_branch: %lu\n", strtoul(g->driver_version, NULL, 10));
        }
        if (f->nvml.cuda_driver_version_str[0])
                fprintf(out, "#   cuda_version: \"%s\"        # the least the driver must support\n",
                        f->nvml.cuda_driver_version_str);
        fprintf(out, "#   mig: false                 # true, false, or managed (a MIG manager creates instances)\n"
                     "#\n"
                     "# checks:                     # per check or category: fail (warnings fail), warn, off\n"
                     "#   pcie.link_width: fail\n"
                     "#   cpu: warn\n"
                     "#\n"
                     "# thresholds:                 # gpuvet's defaults\n"
                     "#   temperature_margin_c: %u\n"
                     "#   power_cap_fraction: %.2f\n"
                     "#   pcie_replays_per_minute: %g\n"
                     "#   ecc_corrected_warn: %llu\n"
                     "#   retired_pages_warn: %u\n"
                     "#\n"
                     "# exceptions:                 # a result allowed on one subject, and why\n"
                     "#   - check: pcie.link_width\n"
                     "#     subject: \"%s\"\n"
                     "#     width: 8\n"
                     "#     reason: \"riser wired x8 by design\"\n"
                     "\n",
                t->temp_margin_c, t->power_cap_fraction, t->pcie_replays_per_minute, t->ecc_corrected_warn,
                t->retired_pages_warn, g->n_gpus ? g->gpus[0].bus_id : "0000:17:00.0");
}

static void write_reference(FILE *out, const struct facts *f, const struct golden *g, const char *when) {
        fprintf(out, "reference:\n");
        key_quoted(out, "  ", "captured", when);
        key_quoted(out, "  ", "host", f->host.hostname);
        if (g->driver_version[0])
                key_quoted(out, "  ", "driver_version", g->driver_version);
        fprintf(out, "  gpus:%s\n", g->n_gpus ? "" : " []");
        for (size_t i = 0; i < g->n_gpus; i++) {
                const struct golden_gpu *x = &g->gpus[i];
                key_quoted(out, "    - ", "bus_id", x->bus_id);
                key_quoted(out, "      ", "device_id", x->device_id);
                key_quoted(out, "      ", "model", x->model);
                if (x->vbios[0])
                        key_quoted(out, "      ", "vbios", x->vbios);
                if (x->inforom[0])
                        key_quoted(out, "      ", "inforom", x->inforom);
                fprintf(out, "      numa_node: %d\n", x->numa_node);
        }
        fprintf(out, "  nics:%s\n", g->n_nics ? "" : " []");
        for (size_t i = 0; i < g->n_nics; i++) {
                const struct golden_nic *x = &g->nics[i];
                key_quoted(out, "    - ", "bus_id", x->bus_id);
                if (x->name[0])
                        key_quoted(out, "      ", "name", x->name);
                fprintf(out, "      numa_node: %d\n", x->numa_node);
        }
        if (g->topo.n == 0)
                return;
        fprintf(out, "  topology:\n    devices: [");
        for (size_t i = 0; i < g->topo.n; i++) {
                fputs(i ? ", " : "", out);
                quoted(out, f->pci.devs[g->topo.devs[i].pci_index].addr);
        }
        fprintf(out, "]\n    pcie:                 # as `nvidia-smi topo -m` without NVLink: X, PIX, PXB, PHB, NODE, SYS\n");
        for (size_t a = 0; a < g->topo.n; a++) {
                fprintf(out, "      - [");
                for (size_t b = 0; b < g->topo.n; b++)
                        fprintf(out, "%s%s", b ? ", " : "", topo_pcie_name(topo_at(&g->topo, a, b)->pcie));
                fprintf(out, "]\n");
        }
        if (!g->topo.nvlink_known || g->n_gpus == 0)
                return;
        fprintf(out, "    nvlink:               # active NVLinks between GPUs, in gpus order\n");
        for (size_t a = 0; a < g->n_gpus; a++) {
                fprintf(out, "      - [");
                for (size_t b = 0; b < g->n_gpus; b++) {
                        if (a == b)
                                fprintf(out, "%sX", b ? ", " : "");
                        else
                                fprintf(out, "%s%u", b ? ", " : "", topo_at(&g->topo, a, b)->nvlinks);
                }
                fprintf(out, "]\n");
        }
}

char *policy_capture_text(const struct facts *f, const struct golden *g, const char *when) {
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        if (!out)
                return NULL;
        fprintf(out, "# gpuvet site policy: node ");
        quoted(out, f->host.hostname);
        fprintf(out, " as captured %s by `gpuvet policy capture`.\n"
                     "# `gpuvet check --policy FILE` fails on any drift from the reference below.\n"
                     "# Format and every key: docs/policy.md.\n"
                     "policy: %u\n\n",
                when, POLICY_FORMAT_VERSION);
        write_commented_sections(out, f, g);
        write_reference(out, f, g, when);
        if (ferror(out)) {
                fclose(out);
                free(text);
                return NULL;
        }
        if (fclose(out) != 0) {
                free(text);
                return NULL;
        }
        return text;
}
