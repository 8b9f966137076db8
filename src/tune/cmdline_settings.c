/* The kernel command-line settings of gpuvet tune (docs/tune.md): one target per boot
 * loader file (cmdline.h), effective at the next boot. */
#include "core/fsroot.h"
#include "core/strv.h"
#include "tune/cmdline.h"
#include "tune/settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const max_cstate_keys[] = {"intel_idle.max_cstate", "processor.max_cstate", NULL};
static const char *const iommu_keys[] = {"intel_iommu", "iommu", NULL};
static const char *const aspm_keys[] = {"pcie_aspm", NULL};

const char *const *tune_cmdline_keys(const char *setting) {
        if (strcmp(setting, "boot.max_cstate") == 0)
                return max_cstate_keys;
        if (strcmp(setting, "boot.iommu") == 0)
                return iommu_keys;
        if (strcmp(setting, "boot.pcie_aspm") == 0)
                return aspm_keys;
        return NULL;
}

static bool intel_cpu(struct fsroot *fs) {
        char *text = NULL;
        size_t len = 0;
        bool intel = fsroot_read_alloc(fs, "/proc/cpuinfo", &text, &len) == 0 && strstr(text, "GenuineIntel");
        free(text);
        return intel;
}

/* The parameters a value stands for, as cmdline.h's value form. */
static void params_of(struct fsroot *fs, const struct tune_setting *s, const char *value, char *buf, size_t size) {
        if (strcmp(value, "none") == 0)
                snprintf(buf, size, "none");
        else if (strcmp(s->key, "boot.max_cstate") == 0)
                snprintf(buf, size, "intel_idle.max_cstate=%s processor.max_cstate=%s", value, value);
        else if (strcmp(s->key, "boot.iommu") == 0)
                /* AMD-Vi is on by default; Intel's VT-d needs asking for. */
                snprintf(buf, size, "%siommu=pt", intel_cpu(fs) ? "intel_iommu=on " : "");
        else
                snprintf(buf, size, "pcie_aspm=%s", value);
}

static int expand_cmdline(struct tune_ctx *c, const struct tune_setting *s, const char *value,
                          struct tune_targets *out) {
        char why[256], wanted[TUNE_VALUE_MAX];
        char **files = tune_cmdline_files(c->fs, why, sizeof(why));
        if (!files)
                return strcmp(why, "out of memory") == 0 ? -ENOMEM
                                                         : tune_targets_add_absent(s, out, "/etc/default/grub", why);
        params_of(c->fs, s, value, wanted, sizeof(wanted));
        const char *const *keys = tune_cmdline_keys(s->key);
        for (size_t i = 0; files[i]; i++) {
                char path[TUNE_PATH_MAX];
                snprintf(path, sizeof(path), "%s%c%s", files[i], TUNE_CMDLINE_SEP, s->key);
                struct tune_target *x = tune_targets_add(out, s, path);
                if (!x) {
                        strv_free(files);
                        return -ENOMEM;
                }
                snprintf(x->wanted, sizeof(x->wanted), "%s", wanted);
                int r = tune_cmdline_read(c->fs, files[i], keys, x->current, sizeof(x->current));
                if (r == -ENOTSUP)
                        snprintf(x->cannot, sizeof(x->cannot), "%s: \"options $kernelopts\" (the command line is in "
                                 "grubenv): use `grubby --update-kernel=ALL --args=\"%s\"`", files[i], wanted);
                else if (r == -ENOENT)
                        snprintf(x->cannot, sizeof(x->cannot), "%s: %s", files[i],
                                 tune_cmdline_kind(files[i]) == CMDLINE_BLS_ENTRY ? "no options line"
                                                                                   : "no GRUB_CMDLINE_LINUX line");
                else if (r == -EILSEQ)
                        snprintf(x->cannot, sizeof(x->cannot), "%s: GRUB_CMDLINE_LINUX is not quoted: put its value in "
                                 "double quotes", files[i]);
                else if (r == -EINVAL)
                        snprintf(x->cannot, sizeof(x->cannot), "%s: the command line holds a NUL byte (a damaged file)",
                                 files[i]);
                else if (r < 0)
                        snprintf(x->cannot, sizeof(x->cannot), "%s: %s", files[i], strerror(-r));
                x->at_boot = true;
                x->in_effect = tune_cmdline_in_effect(c->fs, keys, wanted);
        }
        strv_free(files);
        return 0;
}

static int valid_max_cstate(const char *v) {
        return strcmp(v, "none") == 0 || (v[0] >= '0' && v[0] <= '9' && !v[1]) ? 0 : -EINVAL;
}
static int valid_iommu(const char *v) { return strcmp(v, "pt") == 0 || strcmp(v, "none") == 0 ? 0 : -EINVAL; }
static int valid_aspm(const char *v) { return strcmp(v, "off") == 0 || strcmp(v, "none") == 0 ? 0 : -EINVAL; }

const struct tune_setting tune_boot_max_cstate = {
        "boot.max_cstate", "cpu.cstates", "deepest idle state from early boot (kernel command line)", "0..9|none",
        valid_max_cstate, expand_cmdline};
const struct tune_setting tune_boot_iommu = {
        "boot.iommu", "iommu.enabled", "IOMMU passthrough for host devices (kernel command line)", "pt|none", valid_iommu,
        expand_cmdline};
const struct tune_setting tune_boot_pcie_aspm = {
        "boot.pcie_aspm", "kernel.cmdline", "PCIe link power management (kernel command line)", "off|none", valid_aspm,
        expand_cmdline};
