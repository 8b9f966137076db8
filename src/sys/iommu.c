#include "sys/facts.h"
#include "sys/pci_names.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "core/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ecap attribute is printed with "%llx" and no 0x prefix (drivers/iommu/intel/iommu.c). */
static int parse_hex_u64(const char *s, uint64_t *ret) {
        char buf[40];
        size_t len = strlen(s);
        if (len + 3 > sizeof(buf) || strncmp(s, "0x", 2) == 0)
                return -EINVAL;
        snprintf(buf, sizeof(buf), "0x%.*s", (int)len, s);
        return parse_u64(buf, ret);
}

static enum iommu_kind kind_from_name(const char *name) {
        if (strncmp(name, "dmar", 4) == 0)
                return IOMMU_KIND_INTEL;
        if (strncmp(name, "ivhd", 4) == 0)
                return IOMMU_KIND_AMD;
        return IOMMU_KIND_OTHER;
}

static int gather_units(struct fsroot *fs, struct iommu_facts *x) {
        char **names = NULL;
        int r = fsroot_list(fs, "/sys/class/iommu", &names);
        if (r < 0) {
                x->units_errno = r == -ENOENT ? 0 : -r;
                return 0;
        }
        size_t n = strv_length(names);
        x->units = calloc(n ? n : 1, sizeof(*x->units));
        if (!x->units) {
                strv_free(names);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                struct iommu_unit *u = &x->units[x->n_units++];
                snprintf(u->name, sizeof(u->name), "%s", names[i]);
                u->kind = kind_from_name(names[i]);
                if (u->kind != IOMMU_KIND_INTEL)
                        continue;
                char buf[64];
                if (fsroot_read_strf(fs, buf, sizeof(buf), "/sys/class/iommu/%s/intel-iommu/ecap", names[i]) == 0 &&
                    parse_hex_u64(buf, &u->ecap) == 0)
                        u->have_ecap = true;
        }
        strv_free(names);
        return 0;
}

static int cmp_group(const void *a, const void *b) {
        const struct iommu_group *ga = a, *gb = b;
        return (ga->id > gb->id) - (ga->id < gb->id);
}

/* The group numbered id, or NULL (also for id -1: no group). */
static struct iommu_group *group_by_id(struct iommu_facts *x, int id) {
        for (size_t i = 0; i < x->n_groups && id >= 0; i++)
                if (x->groups[i].id == id)
                        return &x->groups[i];
        return NULL;
}

static bool type_tells_mode(const char *type) {
        return strcmp(type, "DMA") == 0 || strcmp(type, "DMA-FQ") == 0 || strcmp(type, "identity") == 0;
}

static void read_group(struct fsroot *fs, struct iommu_group *g) {
        g->read = true;
        if (fsroot_read_strf(fs, g->type, sizeof(g->type), "/sys/kernel/iommu_groups/%d/type", g->id) < 0)
                g->type[0] = '\0';
        char path[96];
        snprintf(path, sizeof(path), "/sys/kernel/iommu_groups/%d/devices", g->id);
        /* An unreadable member list stays NULL: checks report the group as unknown. */
        (void)fsroot_list(fs, path, &g->devices);
}

/* Every group is listed; the GPUs' groups are read (type, members), and when none of them
 * shows the host's DMA mode, groups in order until one does: what the iommu checks ask.
 * A host has a group per device or so (80 on a DGX): reading them all was a tenth of a
 * quick check's system calls. */
static int gather_groups(struct fsroot *fs, struct facts *f) {
        struct iommu_facts *x = &f->iommu;
        char **names = NULL;
        int r = fsroot_list(fs, "/sys/kernel/iommu_groups", &names);
        if (r < 0) {
                x->groups_errno = r == -ENOENT ? 0 : -r;
                return 0;
        }
        size_t n = strv_length(names);
        x->groups = calloc(n ? n : 1, sizeof(*x->groups));
        if (!x->groups) {
                strv_free(names);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                int id;
                if (parse_int(names[i], &id) < 0 || id < 0)
                        continue;
                x->groups[x->n_groups++].id = id;
        }
        strv_free(names);
        qsort(x->groups, x->n_groups, sizeof(*x->groups), cmp_group);

        bool mode_known = false;
        for (size_t i = 0; i < f->gpus.n; i++) {
                struct iommu_group *g = group_by_id(x, f->pci.devs[f->gpus.gpus[i].pci_index].iommu_group);
                if (g && !g->read)
                        read_group(fs, g);
                mode_known |= g && type_tells_mode(g->type);
        }
        for (size_t i = 0; i < x->n_groups && !mode_known; i++) {
                struct iommu_group *g = &x->groups[i];
                if (!g->read)
                        read_group(fs, g);
                mode_known = type_tells_mode(g->type);
        }
        return 0;
}

static bool module_present(struct fsroot *fs, const struct host_facts *h, const char *name) {
        char path[96];
        snprintf(path, sizeof(path), "/sys/module/%s", name);
        return host_module_loaded(h, name) || fsroot_access(fs, path) == 0;
}

static void gather_vfio(struct fsroot *fs, const struct host_facts *h, struct iommu_facts *x) {
        x->mod_vfio = module_present(fs, h, "vfio");
        x->mod_vfio_pci = module_present(fs, h, "vfio_pci");
        x->mod_vfio_iommu_type1 = module_present(fs, h, "vfio_iommu_type1");
        x->mod_iommufd = module_present(fs, h, "iommufd");

        char buf[16];
        bool v;
        x->allow_unsafe_interrupts = IOMMU_UNKNOWN;
        if (fsroot_read_str(fs, "/sys/module/vfio_iommu_type1/parameters/allow_unsafe_interrupts", buf, sizeof(buf)) ==
                    0 &&
            parse_bool(buf, &v) == 0)
                x->allow_unsafe_interrupts = v ? IOMMU_YES : IOMMU_NO;
}

static void gather_irq_remapping(struct fsroot *fs, struct iommu_facts *x) {
        char *text;
        x->irq_remapping = IOMMU_UNKNOWN;
        if (fsroot_read_alloc(fs, "/proc/interrupts", &text, NULL) < 0)
                return;
        /* Remapped interrupts go through irq chips named with an "IR-" prefix, on Intel and
         * AMD alike ("IR-PCI-MSI", "IR-PCI-MSIX-0000:..." since 6.2, "IR-IO-APIC"). */
        x->irq_remapping = strstr(text, "IR-PCI-MSI") || strstr(text, "IR-IO-APIC") ? IOMMU_YES : IOMMU_NO;
        free(text);
}

/* iommu.gpu_groups names the devices that share a GPU's group; look up just those names
 * (loading pci.ids costs more than the rest of a quick check). */
static void name_group_companions(struct facts *f) {
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *gpu = &f->pci.devs[f->gpus.gpus[i].pci_index];
                const struct iommu_group *g = gpu->iommu_group >= 0 ? iommu_find_group(&f->iommu, gpu->iommu_group) : NULL;
                for (char **m = g ? g->devices : NULL; m && *m; m++) {
                        struct pci_dev *d = (struct pci_dev *)pci_find(&f->pci, *m);
                        if (d && d != gpu && d->have_ids && !d->name[0] &&
                            pci_names_lookup((uint16_t)d->vendor, (uint16_t)d->device, d->name, sizeof(d->name)) < 0)
                                d->name[0] = '\0'; /* unknown to pci.ids: the address says enough */
                }
        }
}

int iommu_gather(struct fsroot *fs, struct facts *f) {
        struct iommu_facts *x = &f->iommu;
        memset(x, 0, sizeof(*x));
        int r;
        if ((r = gather_units(fs, x)) < 0 || (r = gather_groups(fs, f)) < 0)
                return r;
        gather_vfio(fs, &f->host, x);
        gather_irq_remapping(fs, x);
        name_group_companions(f);
        return 0;
}

void iommu_facts_done(struct iommu_facts *x) {
        for (size_t i = 0; i < x->n_groups; i++)
                strv_free(x->groups[i].devices);
        free(x->groups);
        free(x->units);
        memset(x, 0, sizeof(*x));
}

const struct iommu_group *iommu_find_group(const struct iommu_facts *x, int id) {
        return group_by_id((struct iommu_facts *)x, id);
}

size_t iommu_count_vfio_gpus(const struct gpu_facts *g, const struct pci_facts *p) {
        size_t n = 0;
        for (size_t i = 0; i < g->n; i++)
                if (strcmp(p->devs[g->gpus[i].pci_index].driver, "vfio-pci") == 0)
                        n++;
        return n;
}

bool iommu_active(const struct iommu_facts *x) {
        return x->n_units > 0 || x->n_groups > 0;
}
