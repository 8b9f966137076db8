#include "sys/topo.h"
#include "core/array.h"
#include "sys/facts.h"
#include "sys/nvml_facts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Deeper than any real PCIe hierarchy (a few switch levels); bounds a walk over a parent
 * chain that a corrupt capture could make cyclic. */
#define TOPO_MAX_DEPTH 64

static const char *const pcie_names[TOPO_PCIE_COUNT] = {
        [TOPO_SELF] = "X", [TOPO_PIX] = "PIX", [TOPO_PXB] = "PXB",
        [TOPO_PHB] = "PHB", [TOPO_NODE] = "NODE", [TOPO_SYS] = "SYS",
};

const char *topo_pcie_name(enum topo_pcie r) {
        return (unsigned)r < TOPO_PCIE_COUNT ? pcie_names[r] : "?";
}

const char *topo_cell_text(const struct topo_cell *c, char *buf, size_t size) {
        if (c->pcie == TOPO_SELF)
                snprintf(buf, size, " X ");
        else if (c->nvlinks_unknown)
                snprintf(buf, size, "NV?");
        else if (c->nvlinks > 0)
                snprintf(buf, size, "NV%u", c->nvlinks);
        else
                snprintf(buf, size, "%s", topo_pcie_name(c->pcie));
        return buf;
}

bool topo_is_nvswitch_id(unsigned int pci_device_id) {
        if ((pci_device_id & 0xffff) != 0x10de)
                return false;
        /* First generation (DGX-2, V100), second (HGX A100), third (HGX H100/H200). Newer
         * switches are still recognised through facts.pci (class 0x0680, vendor NVIDIA). */
        static const unsigned int ids[] = {0x1ac0, 0x1ac1, 0x1ac2, 0x1af1, 0x22a3};
        for (size_t i = 0; i < ARRAY_COUNT(ids); i++)
                if (pci_device_id >> 16 == ids[i])
                        return true;
        return false;
}

int topo_host_bridge(const struct pci_facts *p, size_t i, char *buf, size_t size) {
        const struct pci_dev *d = &p->devs[i];
        /* "/sys/devices/pci0000:16/0000:16:02.0/..." : the first "pciDDDD:BB" component. */
        for (const char *s = d->sysfs_path; *s;) {
                while (*s == '/')
                        s++;
                size_t len = strcspn(s, "/");
                if (len > 3 && len < 24 && strncmp(s, "pci", 3) == 0 && memchr(s, ':', len)) {
                        snprintf(buf, size, "%.*s", (int)len, s);
                        return 0;
                }
                s += len;
        }
        /* No sysfs path (a hand-made fact set): the bus of the top of the parent chain. */
        size_t top = i;
        for (int hops = 0; p->devs[top].parent >= 0 && hops < TOPO_MAX_DEPTH; hops++)
                top = (size_t)p->devs[top].parent;
        const char *addr = p->devs[top].addr;
        if (strlen(addr) < 7)
                return -ENOENT;
        snprintf(buf, size, "pci%.7s", addr);
        return 0;
}

/* The ancestors of i, nearest first; returns how many. */
static size_t chain(const struct pci_facts *p, size_t i, size_t *ret) {
        size_t n = 0;
        for (int up = p->devs[i].parent; up >= 0 && (size_t)up < p->n && n < TOPO_MAX_DEPTH; up = p->devs[up].parent)
                ret[n++] = (size_t)up;
        return n;
}

enum topo_pcie topo_pcie_relation(const struct pci_facts *p, size_t a, size_t b, int node_a, int node_b,
                                  unsigned n_cpu_nodes) {
        if (a == b)
                return TOPO_SELF;
        size_t ca[TOPO_MAX_DEPTH], cb[TOPO_MAX_DEPTH];
        size_t na = chain(p, a, ca), nb = chain(p, b, cb);
        /* One device upstream of the other counts as the common ancestor itself. */
        for (size_t i = 0; i < na; i++)
                if (ca[i] == b)
                        return i <= 1 ? TOPO_PIX : TOPO_PXB;
        for (size_t j = 0; j < nb; j++)
                if (cb[j] == a)
                        return j <= 1 ? TOPO_PIX : TOPO_PXB;
        /* i, j: bridges strictly between the common ancestor and a, b. */
        for (size_t i = 0; i < na; i++)
                for (size_t j = 0; j < nb; j++)
                        if (ca[i] == cb[j])
                                return i <= 1 && j <= 1 ? TOPO_PIX : TOPO_PXB;

        char ha[24], hb[24];
        if (topo_host_bridge(p, a, ha, sizeof(ha)) == 0 && topo_host_bridge(p, b, hb, sizeof(hb)) == 0 &&
            strcmp(ha, hb) == 0)
                return TOPO_PHB;
        if (node_a >= 0 && node_a == node_b)
                return TOPO_NODE;
        /* No node known (a VM, a kernel without NUMA): one node with CPUs means one node. */
        if ((node_a < 0 || node_b < 0) && n_cpu_nodes <= 1)
                return TOPO_NODE;
        return TOPO_SYS;
}

/* True when the far end of a link is an NVSwitch: by its PCI id, else by its bus id in sysfs. */
static bool link_to_switch(const struct pci_facts *p, const struct nvml_nvlink *l) {
        if (nv_ok(l->remote_device_id) && topo_is_nvswitch_id(l->remote_device_id.v))
                return true;
        if (!nv_ok(l->remote_bus_id) || !p)
                return false;
        char addr[32];
        if (nvml_bus_id_normalise(l->remote_bus_id.v, addr, sizeof(addr)) < 0)
                return false;
        const struct pci_dev *d = pci_find(p, addr);
        return d && pci_is_nvswitch(d);
}

static bool link_active(const struct nvml_nvlink *l) {
        return nv_ok(l->state) && l->state.v == 1;
}

static bool same_bus_id(const char *nvml_id, const char *other) {
        char x[32], y[32];
        if (nvml_bus_id_normalise(nvml_id, x, sizeof(x)) < 0 || nvml_bus_id_normalise(other, y, sizeof(y)) < 0)
                return false;
        return strcasecmp(x, y) == 0;
}

/* Links of a that end on b itself (NVLink bridges, DGX-1 cube meshes). */
static unsigned direct_links(const struct nvml_gpu *a, const struct nvml_gpu *b) {
        if (!nv_ok(b->pci_bus_id))
                return 0;
        unsigned n = 0;
        for (unsigned l = 0; l < a->nvlink_count && l < NV_NVLINK_MAX; l++)
                if (link_active(&a->nvlink[l]) && nv_ok(a->nvlink[l].remote_bus_id) &&
                    same_bus_id(a->nvlink[l].remote_bus_id.v, b->pci_bus_id.v))
                        n++;
        return n;
}

static unsigned switch_links(const struct pci_facts *p, const struct nvml_gpu *a) {
        unsigned n = 0;
        for (unsigned l = 0; l < a->nvlink_count && l < NV_NVLINK_MAX; l++)
                if (link_active(&a->nvlink[l]) && link_to_switch(p, &a->nvlink[l]))
                        n++;
        return n;
}

unsigned topo_nvlinks(const struct pci_facts *p, const struct nvml_gpu *a, const struct nvml_gpu *b) {
        if (a == b)
                return 0;
        unsigned ab = direct_links(a, b), ba = direct_links(b, a);
        unsigned direct = ab > ba ? ab : ba;
        unsigned sa = switch_links(p, a), sb = switch_links(p, b);
        unsigned via_switch = sa < sb ? sa : sb;
        /* Two fabrics (GPU cliques the Fabric Manager partitioned apart) do not talk. */
        if (via_switch && nv_ok(a->fabric_clique_id) && nv_ok(b->fabric_clique_id) &&
            a->fabric_clique_id.v != b->fabric_clique_id.v)
                via_switch = 0;
        return direct + via_switch;
}

bool topo_nvlinks_readable(const struct nvml_gpu *g, unsigned char *ret_state, int *ret_rc, const char **ret_fn) {
        const struct nv_u32 *end = &g->nvlink_end;
        bool walk_done = g->nvlink_count >= NV_NVLINK_MAX ||
                         (end->state == NV_ERROR &&
                          (end->rc == NV_RC_NOT_SUPPORTED || end->rc == NV_RC_INVALID_ARGUMENT));
        if (!walk_done) {
                *ret_state = end->state;
                *ret_rc = end->rc;
                *ret_fn = end->fn ? end->fn : g->timed_out ? g->timeout_fn : NULL;
                return false;
        }
        for (unsigned l = 0; l < g->nvlink_count && l < NV_NVLINK_MAX; l++) {
                const struct nvml_nvlink *k = &g->nvlink[l];
                if (!nv_ok(k->state)) { /* the walk went past it: an error on a link that exists */
                        *ret_state = k->state.state;
                        *ret_rc = k->state.rc;
                        *ret_fn = k->state.fn;
                        return false;
                }
                if (!link_active(k) || nv_ok(k->remote_bus_id) || nv_ok(k->remote_device_id))
                        continue;
                *ret_state = k->remote_bus_id.state;
                *ret_rc = k->remote_bus_id.rc;
                *ret_fn = k->remote_bus_id.fn;
                return false;
        }
        return true;
}

static int numa_of(const struct facts *f, const struct pci_dev *d) {
        enum numa_gpu_source src;
        return numa_resolve_node(&f->numa, d->have_numa_node, d->numa_node, d->local_cpulist, &src);
}

static int nvml_index_of(const struct nvml_facts *nv, const char *addr) {
        if (!nv)
                return -1;
        for (unsigned i = 0; i < nv->n_gpus; i++)
                if (nv_ok(nv->gpus[i].pci_bus_id) && same_bus_id(nv->gpus[i].pci_bus_id.v, addr))
                        return (int)i;
        return -1;
}

int topo_build(const struct facts *f, const struct nvml_facts *nv, struct topo *t) {
        memset(t, 0, sizeof(*t));
        const struct pci_facts *p = &f->pci;
        size_t n_nics = 0;
        for (size_t i = 0; i < p->n; i++)
                if (pci_is_network(&p->devs[i]))
                        n_nics++;
        size_t n = f->gpus.n + n_nics;
        t->devs = calloc(n ? n : 1, sizeof(*t->devs));
        t->cells = calloc(n ? n * n : 1, sizeof(*t->cells));
        if (!t->devs || !t->cells) {
                topo_done(t);
                return -ENOMEM;
        }
        t->n_cpu_nodes = f->numa.n_cpu_nodes;
        t->nvlink_known = nv && nv->init_state == NVML_INIT_OK;

        for (size_t g = 0; g < f->gpus.n; g++) {
                struct topo_dev *d = &t->devs[t->n++];
                d->kind = TOPO_GPU;
                d->gpu_index = g;
                d->pci_index = f->gpus.gpus[g].pci_index;
                snprintf(d->label, sizeof(d->label), "GPU%zu", g);
                d->numa_node = g < f->numa.n_gpus ? f->numa.gpus[g].node : numa_of(f, &p->devs[d->pci_index]);
                d->nvml_index = t->nvlink_known ? nvml_index_of(nv, p->devs[d->pci_index].addr) : -1;
                if (d->nvml_index >= 0)
                        d->nvlinks_unknown = !topo_nvlinks_readable(&nv->gpus[d->nvml_index], &d->nvlink_state,
                                                                    &d->nvlink_rc, &d->nvlink_fn);
                t->n_gpus++;
        }
        for (size_t i = 0; i < p->n; i++) {
                if (!pci_is_network(&p->devs[i]))
                        continue;
                struct topo_dev *d = &t->devs[t->n++];
                d->kind = TOPO_NIC;
                d->pci_index = i;
                d->nvml_index = -1;
                snprintf(d->label, sizeof(d->label), "NIC%zu", t->n_nics++);
                d->numa_node = numa_of(f, &p->devs[i]);
                const char *name = netdev_rdma_name(&f->netdev, p->devs[i].addr);
                snprintf(d->rdma, sizeof(d->rdma), "%s", name ? name : "");
                name = netdev_net_name(&f->netdev, p->devs[i].addr);
                snprintf(d->netdev, sizeof(d->netdev), "%s", name ? name : "");
        }
        for (size_t i = 0; i < t->n; i++)
                if (topo_host_bridge(p, t->devs[i].pci_index, t->devs[i].host_bridge, sizeof(t->devs[i].host_bridge)) < 0)
                        t->devs[i].host_bridge[0] = '\0';

        for (size_t a = 0; a < t->n; a++)
                for (size_t b = 0; b < t->n; b++) {
                        const struct topo_dev *da = &t->devs[a], *db = &t->devs[b];
                        struct topo_cell *c = &t->cells[a * t->n + b];
                        c->pcie = a == b ? TOPO_SELF
                                         : topo_pcie_relation(p, da->pci_index, db->pci_index, da->numa_node,
                                                              db->numa_node, t->n_cpu_nodes);
                        if (a != b && da->nvml_index >= 0 && db->nvml_index >= 0) {
                                c->nvlinks = topo_nvlinks(p, &nv->gpus[da->nvml_index], &nv->gpus[db->nvml_index]);
                                c->nvlinks_unknown = da->nvlinks_unknown || db->nvlinks_unknown;
                        }
                }
        return 0;
}

void topo_done(struct topo *t) {
        free(t->devs);
        free(t->cells);
        memset(t, 0, sizeof(*t));
}
