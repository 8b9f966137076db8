#include "sys/pci.h"
#include "core/array.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "core/strv.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define PCI_EXT_CAP_START 0x100
#define PCI_EXT_CAP_ID_ACS 0x000d
#define PCI_EXT_CAP_ID_ATS 0x000f
#define PCI_ATS_CTRL_ENABLE 0x8000
#define PCI_CONFIG_SPACE_EXT 4096
#define CPUMASK_BITS 4096

static bool looks_like_pci_addr(const char *s) {
        unsigned dom, bus, dev, fn;
        char tail;
        return strlen(s) == 12 && sscanf(s, "%4x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &tail) == 4;
}

static void note_error(struct pci_dev *d, int r) {
        if (r < 0 && r != -ENOENT && d->read_errno == 0)
                d->read_errno = -r;
}

static int read_hex_attr(struct fsroot *fs, const char *addr, const char *attr, uint32_t *ret) {
        char buf[64];
        int r = fsroot_read_strf(fs, buf, sizeof(buf), "/sys/bus/pci/devices/%s/%s", addr, attr);
        if (r < 0)
                return r;
        return parse_hex_u32(buf, ret);
}

static void read_driver_link(struct fsroot *fs, struct pci_dev *d) {
        char path[128];
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", d->addr);
        if (fsroot_readlink_base(fs, path, d->driver, sizeof(d->driver)) < 0)
                d->driver[0] = '\0';
}

/* The ids and the driver from the device's uevent, one read where the attributes take six.
 * -ENOENT (and any read error) sends the caller to the attributes; a uevent that reads but
 * does not parse is this device's ids error. */
static int gather_uevent(struct fsroot *fs, struct pci_dev *d) {
        char buf[1024];
        int r = fsroot_read_strf(fs, buf, sizeof(buf), "/sys/bus/pci/devices/%s/uevent", d->addr);
        if (r < 0)
                return r;
        struct pci_uevent u;
        if (parse_pci_uevent(buf, &u) < 0) {
                d->ids_attr = "uevent";
                d->ids_errno = EINVAL;
                note_error(d, -EINVAL);
                read_driver_link(fs, d);
                return 0;
        }
        d->vendor = u.vendor;
        d->device = u.device;
        d->class_code = u.class_code;
        d->subsys_vendor = u.subsys_vendor;
        d->subsys_device = u.subsys_device;
        memcpy(d->driver, u.driver, sizeof(d->driver));
        d->have_ids = true;
        return 0;
}

/* The same from the attributes and the driver link, for trees without uevent files. */
static void gather_ids_from_attrs(struct fsroot *fs, struct pci_dev *d) {
        static const char *const attrs[] = {"vendor", "device", "class"};
        uint32_t *dest[] = {&d->vendor, &d->device, &d->class_code};
        int r = 0;
        for (size_t i = 0; i < 3 && r == 0; i++) {
                r = read_hex_attr(fs, d->addr, attrs[i], dest[i]);
                if (r < 0) {
                        d->ids_attr = attrs[i];
                        d->ids_errno = -r;
                }
        }
        note_error(d, r);
        d->have_ids = r == 0;
        /* Older kernels and some captures lack subsystem ids: optional, but one that is
         * there and unreadable is an error, not a zero id. */
        note_error(d, read_hex_attr(fs, d->addr, "subsystem_vendor", &d->subsys_vendor));
        note_error(d, read_hex_attr(fs, d->addr, "subsystem_device", &d->subsys_device));
        if (!d->have_ids) {
                /* A capture may hold the class alone (hwloc's gathered trees do). */
                uint32_t cls;
                if (read_hex_attr(fs, d->addr, "class", &cls) == 0)
                        d->class_code = cls;
        }
        read_driver_link(fs, d);
}

static void gather_ids(struct fsroot *fs, struct pci_dev *d) {
        if (gather_uevent(fs, d) < 0)
                gather_ids_from_attrs(fs, d);
}

static void gather_locality(struct fsroot *fs, struct pci_dev *d) {
        char buf[1024];
        int r = fsroot_read_strf(fs, buf, sizeof(buf), "/sys/bus/pci/devices/%s/numa_node", d->addr);
        d->numa_node = -1;
        if (r == 0 && parse_int(buf, &d->numa_node) == 0 && d->numa_node >= -1) {
                d->have_numa_node = true;
        } else if (r != -ENOENT) {
                d->numa_node = -1;
                d->numa_node_errno = r < 0 ? -r : EINVAL;
                note_error(d, r < 0 ? r : -EINVAL);
        }

        r = fsroot_read_strf(fs, buf, sizeof(buf), "/sys/bus/pci/devices/%s/local_cpulist", d->addr);
        unsigned count;
        if (r == 0 && parse_cpulist(buf, NULL, 0, &count) == 0 && strlen(buf) < sizeof(d->local_cpulist)) {
                memcpy(d->local_cpulist, buf, strlen(buf) + 1);
                return;
        }
        r = fsroot_read_strf(fs, buf, sizeof(buf), "/sys/bus/pci/devices/%s/local_cpus", d->addr);
        if (r < 0)
                return;
        uint64_t *mask = calloc(CPUMASK_BITS / 64, sizeof(uint64_t));
        if (!mask)
                return;
        if (parse_cpumask(buf, mask, CPUMASK_BITS, &count) == 0)
                (void)format_cpulist(mask, CPUMASK_BITS, d->local_cpulist, sizeof(d->local_cpulist));
        free(mask);
}

static int read_link_attr(struct fsroot *fs, const struct pci_dev *d, const char *attr, unsigned *ret) {
        char buf[64];
        int r = fsroot_read_strf(fs, buf, sizeof(buf), "/sys/bus/pci/devices/%s/%s", d->addr, attr);
        if (r < 0)
                return r;
        if (strstr(attr, "speed"))
                return parse_link_speed(buf, ret);
        int width;
        if (parse_int(buf, &width) < 0 || width < 0 || width > 32)
                return -EINVAL;
        *ret = (unsigned)width;
        return 0;
}

int pci_read_link_now(struct fsroot *fs, const struct pci_dev *d, unsigned *ret_mts, unsigned *ret_width) {
        int r = read_link_attr(fs, d, "current_link_speed", ret_mts);
        return r < 0 ? r : read_link_attr(fs, d, "current_link_width", ret_width);
}

static void gather_link(struct fsroot *fs, struct pci_dev *d) {
        const struct {
                const char *attr;
                unsigned *dest;
        } attrs[] = {
                {"current_link_speed", &d->cur_speed_mts},
                {"max_link_speed", &d->max_speed_mts},
                {"current_link_width", &d->cur_width},
                {"max_link_width", &d->max_width},
        };
        for (size_t i = 0; i < ARRAY_COUNT(attrs); i++) {
                int r = read_link_attr(fs, d, attrs[i].attr, attrs[i].dest);
                if (r == 0)
                        continue;
                /* No link attributes at all is normal (integrated devices, VM bridges); one
                 * missing among present ones, a garbled value or "Unknown" (link down) is not. */
                if (!(r == -ENOENT && i == 0)) {
                        d->link_errno = -r;
                        d->link_bad_attr = attrs[i].attr;
                        note_error(d, r);
                }
                d->cur_speed_mts = d->max_speed_mts = d->cur_width = d->max_width = 0;
                return;
        }
        d->have_link = true;
}

static void gather_aer(struct fsroot *fs, struct pci_dev *d) {
        static const char *const files[] = {"aer_dev_correctable", "aer_dev_nonfatal", "aer_dev_fatal"};
        uint64_t *dest[] = {&d->aer_correctable, &d->aer_nonfatal, &d->aer_fatal};
        for (size_t i = 0; i < 3; i++) {
                char path[128], *text;
                snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", d->addr, files[i]);
                int r = fsroot_read_alloc(fs, path, &text, NULL);
                if (r < 0) {
                        note_error(d, r);
                        return;
                }
                r = parse_aer_total(text, dest[i]);
                free(text);
                if (r < 0) {
                        note_error(d, r);
                        return;
                }
        }
        d->have_aer = true;
}

static void gather_bars(struct fsroot *fs, struct pci_dev *d) {
        char path[128], *text;
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", d->addr);
        if (fsroot_read_alloc(fs, path, &text, NULL) < 0)
                return;
        struct pci_resource_line lines[PCI_NUM_BARS];
        size_t n;
        if (parse_pci_resource(text, lines, PCI_NUM_BARS, &n) == 0) {
                d->have_bars = true;
                for (size_t i = 0; i < n; i++) {
                        const struct pci_resource_line *l = &lines[i];
                        bool empty = l->start == 0 && l->end == 0;
                        d->bars[i] = (struct pci_bar){
                                .start = l->start,
                                .size = empty ? 0 : l->end - l->start + 1,
                                .flags = l->flags,
                        };
                }
        }
        free(text);
}

bool pci_bar_assigned(const struct pci_bar *b) {
        return b->size > 0 && b->start != 0 && !(b->flags & (PCI_RES_UNSET | PCI_RES_DISABLED));
}

int pci_gpu_aperture(const struct pci_dev *d) {
        if (!d->have_bars)
                return -1;
        int mem[PCI_NUM_BARS], n = 0;
        for (int i = 0; i < PCI_NUM_BARS; i++) {
                const struct pci_bar *b = &d->bars[i];
                if (!(b->flags & PCI_RES_MEM))
                        continue;
                mem[n++] = i;
                if (b->flags & PCI_RES_MEM_64)
                        i++; /* its upper half */
        }
        if (n >= 3)
                return mem[1];
        /* Two memory BARs: the aperture's line may have been cleared by a failed assignment,
         * leaving registers + the small BAR (32 MiB on every NVIDIA GPU); an aperture is larger. */
        if (n == 2 && d->bars[mem[1]].size > PCI_GPU_SMALL_BAR_BYTES)
                return mem[1];
        return -1;
}

static uint32_t le32(const unsigned char *p) {
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Read d's config space: -1 when it cannot be read past the 256 bytes of the standard header
 * (unprivileged reads stop at 64 or 256 bytes), else its length with *ret to free. */
static ssize_t read_config(struct fsroot *fs, const struct pci_dev *d, unsigned char **ret) {
        char path[128], *cfg;
        size_t len;
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", d->addr);
        if (fsroot_read_alloc(fs, path, &cfg, &len) < 0)
                return -1;
        if (len < PCI_EXT_CAP_START + 8) {
                free(cfg);
                return -1;
        }
        *ret = (unsigned char *)cfg;
        return (ssize_t)len;
}

/* The offset of extended capability id in config space c of len bytes; 0 when absent. */
static unsigned find_ext_cap(const unsigned char *c, size_t len, uint16_t id) {
        unsigned off = PCI_EXT_CAP_START;
        for (unsigned hops = 0; off >= PCI_EXT_CAP_START && off + 8 <= len && hops < 64; hops++) {
                uint32_t hdr = le32(c + off);
                if (hdr == 0 || hdr == 0xffffffffu)
                        break;
                if ((hdr & 0xffff) == id)
                        return off;
                off = (hdr >> 20) & 0xffc;
        }
        return 0;
}

/* d's extended capability id: 1 with its capability and control registers (the 16-bit
 * words at +4 and +6, where ACS and ATS both keep them), 0 when d has none, -1 when its
 * config space cannot be read. */
static int read_ext_cap(struct fsroot *fs, const struct pci_dev *d, uint16_t id, uint16_t *cap, uint16_t *ctrl) {
        unsigned char *c;
        ssize_t len = read_config(fs, d, &c);
        if (len < 0)
                return -1;
        unsigned off = find_ext_cap(c, (size_t)len, id);
        if (off) {
                *cap = (uint16_t)(c[off + 4] | c[off + 5] << 8);
                *ctrl = (uint16_t)(c[off + 6] | c[off + 7] << 8);
        }
        free(c);
        return off != 0;
}

static void gather_acs(struct fsroot *fs, struct pci_dev *d) {
        d->acs_read = true;
        int r = read_ext_cap(fs, d, PCI_EXT_CAP_ID_ACS, &d->acs_cap, &d->acs_ctrl);
        d->acs = r < 0 ? PCI_ACS_UNKNOWN : r ? PCI_ACS_PRESENT : PCI_ACS_ABSENT;
}

static void gather_ats(struct fsroot *fs, struct pci_dev *d) {
        uint16_t cap, ctrl;
        int r = read_ext_cap(fs, d, PCI_EXT_CAP_ID_ATS, &cap, &ctrl);
        d->ats = r < 0 ? PCI_ATS_UNKNOWN : r ? PCI_ATS_PRESENT : PCI_ATS_ABSENT;
        if (r > 0)
                d->ats_enabled = (ctrl & PCI_ATS_CTRL_ENABLE) != 0;
}

/* Read the parts of d that are not read yet. */
static void gather_parts(struct fsroot *fs, struct pci_dev *d, unsigned parts) {
        parts &= ~d->parts;
        d->parts |= parts;
        char path[128], buf[64];
        if (parts & PCI_PART_PATH) {
                snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", d->addr);
                if (fsroot_realpath(fs, path, d->sysfs_path, sizeof(d->sysfs_path)) < 0)
                        snprintf(d->sysfs_path, sizeof(d->sysfs_path), "%s", path);
        }
        if (parts & PCI_PART_PLACE) {
                snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group", d->addr);
                if (fsroot_readlink_base(fs, path, buf, sizeof(buf)) == 0 && parse_int(buf, &d->iommu_group) < 0)
                        d->iommu_group = -1;
                gather_locality(fs, d);
        }
        if (parts & PCI_PART_LINK)
                gather_link(fs, d);
        if (parts & PCI_PART_AER)
                gather_aer(fs, d);
        if (parts & PCI_PART_BARS)
                gather_bars(fs, d);
}

static int cmp_addr(const void *key, const void *dev) {
        return strcmp(key, ((const struct pci_dev *)dev)->addr);
}

/* devs is in the order of the sorted directory listing, so sorted by address: a binary
 * search, not a scan (20,000 devices would make link_parents quadratic). */
static int index_of(const struct pci_facts *p, const char *addr) {
        char key[16];
        size_t n = strlen(addr);
        if (n >= sizeof(key))
                return -1;
        for (size_t k = 0; k <= n; k++)
                key[k] = (char)tolower((unsigned char)addr[k]);
        const struct pci_dev *d = bsearch(key, p->devs, p->n, sizeof(*p->devs), cmp_addr);
        return d ? (int)(d - p->devs) : -1;
}

static int cmp_dev(const void *a, const void *b) {
        return strcmp(((const struct pci_dev *)a)->addr, ((const struct pci_dev *)b)->addr);
}

/* The parent is the path component before the device's own, when it is a PCI address:
 * /sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0 -> 0000:00:01.0. */
static void link_parents(struct pci_facts *p) {
        for (size_t i = 0; i < p->n; i++) {
                struct pci_dev *d = &p->devs[i];
                d->parent = -1;
                if (!(d->parts & PCI_PART_PATH))
                        continue;
                char tmp[512];
                snprintf(tmp, sizeof(tmp), "%s", d->sysfs_path);
                char *last = strrchr(tmp, '/');
                if (!last)
                        continue;
                *last = '\0';
                char *prev = strrchr(tmp, '/');
                const char *up = prev ? prev + 1 : tmp;
                if (!looks_like_pci_addr(up))
                        continue;
                d->parent = index_of(p, up);
        }
}

/* What checks judge, by role: a GPU by everything, the bridges above it by their AER
 * counters and the port right above it by its link too (the slot's capability); a network
 * adapter by where it sits and its link. The bridges above either get their place in the
 * tree, which their resolved path gives without a read. The rest (host bridges, storage,
 * USB, the BMC's VGA, NVSwitches: named by id) keep their ids: reading their link, AER and
 * locality files was half of a quick check's system calls, for nothing it reports. */
struct pci_role {
        unsigned self, upstream, port;
};

/* What every report shows of a GPU (its place and its own link: the JSON report's gpus),
 * the inventory; the rest of role_gpu is the tree, read for the checks that judge it. */
static const struct pci_role role_gpu_shown = {
        .self = PCI_PART_PATH | PCI_PART_PLACE | PCI_PART_LINK,
        .upstream = PCI_PART_PATH,
        .port = PCI_PART_PATH,
};
static const struct pci_role role_gpu = {
        .self = PCI_PART_PATH | PCI_PART_PLACE | PCI_PART_LINK | PCI_PART_AER | PCI_PART_BARS,
        .upstream = PCI_PART_PATH | PCI_PART_AER,
        .port = PCI_PART_PATH | PCI_PART_AER | PCI_PART_LINK,
};
static const struct pci_role role_network = {
        .self = PCI_PART_PATH | PCI_PART_PLACE | PCI_PART_LINK,
        .upstream = PCI_PART_PATH,
        .port = PCI_PART_PATH,
};

/* d's parts, then those of every bridge between it and its host bridge: the PCI addresses
 * in its resolved path ("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"), each of
 * which is also that bridge's own resolved path cut after it. */
static void gather_role(struct fsroot *fs, struct pci_facts *p, struct pci_dev *d, const struct pci_role *role) {
        gather_parts(fs, d, role->self);
        const char *path = d->sysfs_path;
        for (const char *comp = strchr(path, '/'); comp; comp = strchr(comp + 1, '/')) {
                char addr[16];
                size_t len = strcspn(comp + 1, "/");
                if (len != 12 || !comp[1 + len])
                        continue; /* not an address, or d's own (the last component) */
                memcpy(addr, comp + 1, 12);
                addr[12] = '\0';
                int up = looks_like_pci_addr(addr) ? index_of(p, addr) : -1;
                if (up < 0)
                        continue;
                struct pci_dev *b = &p->devs[up];
                if (!(b->parts & PCI_PART_PATH)) {
                        b->parts |= PCI_PART_PATH;
                        snprintf(b->sysfs_path, sizeof(b->sysfs_path), "%.*s", (int)(comp + 1 + len - path), path);
                }
                bool port = !strchr(comp + 1 + len + 1, '/');
                gather_parts(fs, b, port ? role->port : role->upstream);
        }
}

static void gather_nvidia_proc(struct fsroot *fs, struct pci_facts *p) {
        char **names = NULL;
        if (fsroot_list(fs, "/proc/driver/nvidia/gpus", &names) < 0)
                return;
        for (size_t i = 0; names[i] && p->n_nvidia_proc_gpus < 64; i++)
                if (looks_like_pci_addr(names[i]))
                        memcpy(p->nvidia_proc_gpus[p->n_nvidia_proc_gpus++], names[i], 13);
        strv_free(names);
}

int pci_gather_inventory(struct fsroot *fs, struct pci_facts *ret) {
        memset(ret, 0, sizeof(*ret));
        gather_nvidia_proc(fs, ret);

        char **names = NULL;
        int r = fsroot_list(fs, "/sys/bus/pci/devices", &names);
        if (r < 0) {
                ret->list_errno = -r;
                return 0;
        }
        size_t n = strv_length(names);
        ret->devs = calloc(n ? n : 1, sizeof(struct pci_dev));
        if (!ret->devs) {
                strv_free(names);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                if (!looks_like_pci_addr(names[i]))
                        continue;
                struct pci_dev *d = &ret->devs[ret->n++];
                for (size_t k = 0; k < 12; k++)
                        d->addr[k] = (char)tolower((unsigned char)names[i][k]);
                d->parent = -1;
                d->iommu_group = -1;
                d->numa_node = -1;
                snprintf(d->sysfs_path, sizeof(d->sysfs_path), "/sys/bus/pci/devices/%s", d->addr);
                gather_ids(fs, d);
        }
        strv_free(names);
        /* Sorted already unless a capture spelled addresses in upper case. */
        for (size_t i = 1; i < ret->n; i++)
                if (strcmp(ret->devs[i - 1].addr, ret->devs[i].addr) > 0) {
                        qsort(ret->devs, ret->n, sizeof(*ret->devs), cmp_dev);
                        break;
                }
        for (size_t i = 0; i < ret->n; i++)
                if (pci_is_nvidia_gpu(ret, &ret->devs[i]))
                        gather_role(fs, ret, &ret->devs[i], &role_gpu_shown);
        link_parents(ret);
        return 0;
}

void pci_gather_tree(struct fsroot *fs, struct pci_facts *ret) {
        for (size_t i = 0; i < ret->n; i++) {
                struct pci_dev *d = &ret->devs[i];
                if (pci_is_nvidia_gpu(ret, d))
                        gather_role(fs, ret, d, &role_gpu);
                else if (pci_is_network(d))
                        gather_role(fs, ret, d, &role_network);
        }
        link_parents(ret);

        /* ACS matters only on the path from a GPU to its root port, and config space reads
         * are slow (each traps to the hypervisor in a VM): read just those bridges. */
        for (size_t i = 0; i < ret->n; i++) {
                if (!pci_is_nvidia_gpu(ret, &ret->devs[i]))
                        continue;
                for (int up = ret->devs[i].parent, hops = 0; up >= 0 && hops < 32; up = ret->devs[up].parent, hops++)
                        if (ret->devs[up].acs == PCI_ACS_UNKNOWN && !ret->devs[up].acs_read)
                                gather_acs(fs, &ret->devs[up]);
        }
        /* ATS on the NICs handed to VMs (on vfio-pci): what GPUDirect RDMA inside a VM needs of
         * them. The NICs the host drives itself are not read: nothing judges their ATS. */
        for (size_t i = 0; i < ret->n; i++)
                if (pci_is_mellanox_nic(&ret->devs[i]) && strcmp(ret->devs[i].driver, "vfio-pci") == 0)
                        gather_ats(fs, &ret->devs[i]);
}

int pci_gather(struct fsroot *fs, struct pci_facts *ret) {
        int r = pci_gather_inventory(fs, ret);
        if (r == 0)
                pci_gather_tree(fs, ret);
        return r;
}

void pci_facts_done(struct pci_facts *p) {
        free(p->devs);
        memset(p, 0, sizeof(*p));
}

bool pci_is_nvidia_gpu(const struct pci_facts *p, const struct pci_dev *d) {
        if (d->have_ids)
                return d->vendor == PCI_VENDOR_NVIDIA && (pci_class_sub(d) == 0x0300 || pci_class_sub(d) == 0x0302);
        /* Without ids (a partial capture), trust the driver's own list of its GPUs. */
        for (size_t i = 0; i < p->n_nvidia_proc_gpus; i++)
                if (strcmp(p->nvidia_proc_gpus[i], d->addr) == 0)
                        return true;
        return false;
}

bool pci_is_nvswitch(const struct pci_dev *d) {
        /* NVSwitch enumerates as an NVIDIA "bridge, other" (class 0x0680). */
        return d->have_ids && d->vendor == PCI_VENDOR_NVIDIA && pci_class_sub(d) == 0x0680;
}

bool pci_is_mellanox_nic(const struct pci_dev *d) {
        return d->have_ids && d->vendor == 0x15b3 && pci_is_network(d);
}

bool pci_is_network(const struct pci_dev *d) {
        return d->have_ids && pci_class_base(d) == 0x02;
}

bool pci_is_bridge(const struct pci_dev *d) {
        return pci_class_sub(d) == PCI_CLASS_BRIDGE_PCI;
}

const struct pci_dev *pci_find(const struct pci_facts *p, const char *addr) {
        int i = index_of(p, addr);
        return i >= 0 ? &p->devs[i] : NULL;
}

bool pci_link_best(const struct pci_facts *p, const struct pci_dev *d, unsigned *ret_mts, unsigned *ret_width) {
        *ret_mts = *ret_width = 0;
        if (!d || !d->have_link || !d->max_speed_mts)
                return false;
        *ret_mts = d->max_speed_mts;
        *ret_width = d->max_width;
        if (p && d->parent >= 0 && (size_t)d->parent < p->n) {
                const struct pci_dev *up = &p->devs[d->parent];
                if (up->have_link && up->max_speed_mts && up->max_speed_mts < *ret_mts)
                        *ret_mts = up->max_speed_mts;
                if (up->have_link && up->max_width && up->max_width < *ret_width)
                        *ret_width = up->max_width;
        }
        return true;
}

double pci_link_gbps(unsigned speed_mts, unsigned width) {
        /* GB/s per lane and direction after line encoding: 8b/10b up to Gen2, 128b/130b
         * for Gen3-5, FLIT mode (242/256) for Gen6 */
        double lane;
        switch (speed_mts) {
        case 2500: lane = 0.25; break;
        case 5000: lane = 0.5; break;
        case 8000: lane = 8.0 * 128 / 130 / 8; break;
        case 16000: lane = 16.0 * 128 / 130 / 8; break;
        case 32000: lane = 32.0 * 128 / 130 / 8; break;
        case 64000: lane = 64.0 * 242 / 256 / 8; break;
        default: return 0;
        }
        return lane * width;
}
