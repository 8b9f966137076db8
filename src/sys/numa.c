#include "sys/facts.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "core/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* parse_cpulist's id limit, for CPU and node ids alike. */
#define NUMA_ID_BITS 65536

/* "Node 0 MemTotal:       129839104 kB" */
static int parse_node_memtotal(const char *text, int node, uint64_t *ret_kb) {
        char key[48];
        snprintf(key, sizeof(key), "Node %d MemTotal:", node);
        const char *p = strstr(text, key);
        if (!p || (p != text && p[-1] != '\n'))
                return -ENOENT;
        p += strlen(key);
        char value[32];
        size_t n = strcspn(p, "\n");
        if (n >= sizeof(value))
                return -EINVAL;
        memcpy(value, p, n);
        value[n] = '\0';
        char *unit = strstr(value, "kB");
        if (!unit)
                return -EINVAL;
        *unit = '\0';
        return parse_u64(value, ret_kb);
}

static int node_ids(struct fsroot *fs, struct numa_facts *nf, uint64_t *mask) {
        char *text = NULL;
        unsigned n;
        nf->nodes_err = fsroot_read_alloc(fs, "/sys/devices/system/node/online", &text, NULL);
        if (nf->nodes_err == 0)
                nf->nodes_err = parse_cpulist(text, mask, NUMA_ID_BITS, &n);
        free(text);
        if (nf->nodes_err == 0 || nf->nodes_err == -ENOMEM)
                return nf->nodes_err;
        /* Without a readable online list, the nodeN directories say which nodes exist. */
        memset(mask, 0, NUMA_ID_BITS / 8);
        char **names = NULL;
        int r = fsroot_list(fs, "/sys/devices/system/node", &names);
        if (r == -ENOMEM)
                return r;
        for (size_t i = 0; names && names[i]; i++) {
                uint64_t id;
                if (strncmp(names[i], "node", 4) == 0 && names[i][4] >= '0' && names[i][4] <= '9' &&
                    parse_u64(names[i] + 4, &id) == 0 && id < NUMA_ID_BITS)
                        mask[id / 64] |= 1ull << (id % 64);
        }
        strv_free(names);
        return 0;
}

static int gather_node(struct fsroot *fs, struct numa_node *nd) {
        char path[96];
        char *text = NULL;
        snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", nd->id);
        nd->cpulist_err = fsroot_read_alloc(fs, path, &text, NULL);
        if (nd->cpulist_err == -ENOMEM)
                return -ENOMEM;
        if (nd->cpulist_err == 0) {
                text[strcspn(text, "\n")] = '\0';
                nd->cpulist_err = parse_cpulist(text, NULL, 0, &nd->n_cpus);
                if (nd->cpulist_err == 0)
                        nd->cpulist = text;
                else
                        free(text);
        }
        snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", nd->id);
        nd->mem_err = fsroot_read_alloc(fs, path, &text, NULL);
        if (nd->mem_err == -ENOMEM)
                return -ENOMEM;
        if (nd->mem_err == 0) {
                nd->mem_err = parse_node_memtotal(text, nd->id, &nd->mem_total_kb);
                /* A meminfo without this node's MemTotal line is malformed, not absent. */
                if (nd->mem_err == -ENOENT)
                        nd->mem_err = -EINVAL;
                free(text);
        }
        return 0;
}

const struct numa_node *numa_find_node(const struct numa_facts *n, int id) {
        for (size_t i = 0; i < n->n_nodes; i++)
                if (n->nodes[i].id == id)
                        return &n->nodes[i];
        return NULL;
}

int numa_resolve_node(const struct numa_facts *n, bool have_numa_node, int numa_node, const char *local_cpulist,
                      enum numa_gpu_source *ret_source) {
        *ret_source = NUMA_GPU_UNRESOLVED;
        if (have_numa_node && numa_node >= 0) {
                *ret_source = NUMA_GPU_FROM_NUMA_NODE;
                return numa_node;
        }
        uint64_t local[NUMA_ID_BITS / 64], node[NUMA_ID_BITS / 64];
        unsigned n_local, n_node;
        if (!local_cpulist || !*local_cpulist ||
            parse_cpulist(local_cpulist, local, NUMA_ID_BITS, &n_local) < 0 || n_local == 0)
                return -1;
        /* Local CPUs outside every node (offline CPUs in a capture) do not vote; the device
         * belongs to a node only when all the others lie in that one node. A device with
         * numa_node -1 has every CPU as local, which spans the nodes and stays -1. */
        int found = -1;
        for (size_t i = 0; i < n->n_nodes; i++) {
                const struct numa_node *nd = &n->nodes[i];
                if (!nd->cpulist || nd->n_cpus == 0 || parse_cpulist(nd->cpulist, node, NUMA_ID_BITS, &n_node) < 0)
                        continue;
                bool hit = false;
                for (size_t w = 0; w < NUMA_ID_BITS / 64 && !hit; w++)
                        hit = (local[w] & node[w]) != 0;
                if (!hit)
                        continue;
                if (found >= 0)
                        return -1;
                found = nd->id;
        }
        if (found >= 0)
                *ret_source = NUMA_GPU_FROM_CPULIST;
        return found;
}

int numa_gather(struct fsroot *fs, struct facts *f) {
        struct numa_facts *nf = &f->numa;
        memset(nf, 0, sizeof(*nf));

        uint64_t *mask = calloc(NUMA_ID_BITS / 64, sizeof(uint64_t));
        if (!mask)
                return -ENOMEM;
        int r = node_ids(fs, nf, mask);
        if (r < 0)
                goto out;
        size_t n = 0;
        for (size_t w = 0; w < NUMA_ID_BITS / 64; w++)
                n += (size_t)__builtin_popcountll(mask[w]);
        nf->nodes = calloc(n ? n : 1, sizeof(*nf->nodes));
        nf->gpus = calloc(f->gpus.n ? f->gpus.n : 1, sizeof(*nf->gpus));
        if (!nf->nodes || !nf->gpus) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t id = bitmap_next_set(mask, NUMA_ID_BITS, 0); id < NUMA_ID_BITS;
             id = bitmap_next_set(mask, NUMA_ID_BITS, id + 1)) {
                struct numa_node *nd = &nf->nodes[nf->n_nodes++];
                nd->id = (int)id;
                if ((r = gather_node(fs, nd)) < 0)
                        goto out;
                if (nd->cpulist_err == 0 && nd->n_cpus > 0)
                        nf->n_cpu_nodes++;
        }

        char buf[32];
        nf->balancing_err = fsroot_read_str(fs, "/proc/sys/kernel/numa_balancing", buf, sizeof(buf));
        if (nf->balancing_err == 0)
                nf->balancing_err = parse_int(buf, &nf->balancing);
        if (nf->balancing_err == 0 && (nf->balancing < 0 || nf->balancing > 3))
                nf->balancing_err = -ERANGE;

        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct pci_dev *d = &f->pci.devs[f->gpus.gpus[i].pci_index];
                nf->gpus[i].node = numa_resolve_node(nf, d->have_numa_node, d->numa_node, d->local_cpulist,
                                                     &nf->gpus[i].source);
        }
        nf->n_gpus = f->gpus.n;
        r = 0;
out:
        free(mask);
        return r;
}

void numa_facts_done(struct numa_facts *x) {
        for (size_t i = 0; i < x->n_nodes; i++)
                free(x->nodes[i].cpulist);
        free(x->nodes);
        free(x->gpus);
        memset(x, 0, sizeof(*x));
}
