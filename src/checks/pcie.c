/* pcie: the PCIe link of every GPU, AER error counters, ACS on the path to the root
 * port, and BAR sizes. */
#include "checks/check.h"
#include "core/strparse.h"

#include <stdio.h>

static void link_text(unsigned mts, unsigned width, char *buf, size_t size) {
        unsigned gen = pcie_gen_from_mts(mts);
        if (gen)
                snprintf(buf, size, "Gen%u x%u", gen, width);
        else
                snprintf(buf, size, "%.1f GT/s x%u", mts / 1000.0, width);
}

static bool skip_without_link(const struct check_info *self, const struct facts *f, size_t i, struct report *rep) {
        const struct pci_dev *d = gpu_pci(f, i);
        if (d->have_link)
                return false;
        struct result *r = result_new(rep, self, d->addr);
        if (d->read_errno)
                result_status(r, STATUS_ERROR, "cannot read the link attributes of %s: %s", d->addr,
                              "unreadable or malformed current/max_link_* files");
        else
                result_status(r, STATUS_SKIP, "sysfs shows no PCIe link attributes for %s (virtual or integrated device)",
                              d->addr);
        result_evidence(r, "source", "%s/current_link_width", d->sysfs_path);
        return true;
}

static void run_link_width(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_skip_without_gpus(self, f, rep))
                return;
        for (size_t i = 0; i < f->gpus.n; i++) {
                if (skip_without_link(self, f, i, rep))
                        continue;
                const struct pci_dev *d = gpu_pci(f, i);
                struct result *r = result_new(rep, self, d->addr);
                result_observed(r, "x%u", d->cur_width);
                result_expected(r, "x%u", d->max_width);
                result_evidence(r, "source", "%s/current_link_width", d->sysfs_path);
                if (d->cur_width >= d->max_width) {
                        result_status(r, STATUS_PASS, "link runs at its full width x%u", d->max_width);
                        continue;
                }
                /* Unlike speed, width does not drop to save power at idle: a narrow link
                 * is a seating, riser or slot problem. */
                result_status(r, STATUS_FAIL, "link trained at x%u of x%u: %u%% of the lanes are missing",
                              d->cur_width, d->max_width, 100 * (d->max_width - d->cur_width) / d->max_width);
                result_remedy(r,
                              "Reseat the GPU at %s and inspect its riser/cable and slot; check the BIOS slot "
                              "bifurcation setting. Confirm with `lspci -vv -s %s` (LnkSta).",
                              d->addr, d->addr);
        }
}

static void run_link_speed(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_skip_without_gpus(self, f, rep))
                return;
        for (size_t i = 0; i < f->gpus.n; i++) {
                if (skip_without_link(self, f, i, rep))
                        continue;
                const struct pci_dev *d = gpu_pci(f, i);
                struct result *r = result_new(rep, self, d->addr);
                char cur[32], max[32];
                link_text(d->cur_speed_mts, d->cur_width, cur, sizeof(cur));
                link_text(d->max_speed_mts, d->max_width, max, sizeof(max));
                result_observed(r, "%s", cur);
                result_expected(r, "%s", max);
                result_evidence(r, "source", "%s/current_link_speed", d->sysfs_path);
                if (d->cur_speed_mts >= d->max_speed_mts) {
                        result_status(r, STATUS_PASS, "link runs at its maximum speed (%s)", max);
                        continue;
                }
                /* GPUs drop the link to Gen1 when idle to save power: a lower speed here is
                 * only a hint until a load test confirms it. */
                result_status(r, STATUS_WARN,
                              "link at %s below its maximum %s; normal at idle (power saving), the standard level "
                              "confirms it under load",
                              cur, max);
                result_remedy(r,
                              "Run `gpuvet check --level standard` to measure the link under load; if it stays "
                              "below %s there, reseat the GPU and check BIOS PCIe speed settings.",
                              max);
        }
}

const struct check_info check_pcie_link_width = {
        .id = "pcie.link_width",
        .category = "pcie",
        .level = LEVEL_QUICK,
        .title = "Each GPU's PCIe link runs at its full width",
        .run = run_link_width,
};

const struct check_info check_pcie_link_speed = {
        .id = "pcie.link_speed",
        .category = "pcie",
        .level = LEVEL_QUICK,
        .title = "Each GPU's PCIe link runs at its maximum speed (warns at idle)",
        .run = run_link_speed,
};
