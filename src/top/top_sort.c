/* The process rows' orders (top_model.h, enum top_sort): each key, then the GPU and the
 * PID, so that equal keys never swap places between frames; and the tree view's order
 * built on it (top_model_tree). */
#include "top/top_model.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int by_gpu_pid(const struct top_proc_row *a, const struct top_proc_row *b) {
        if (a->gpu != b->gpu)
                return a->gpu < b->gpu ? -1 : 1;
        if (a->pid != b->pid)
                return a->pid < b->pid ? -1 : 1;
        return (int)a->graphics - (int)b->graphics;
}

static int by_memory(const void *x, const void *y) {
        const struct top_proc_row *a = x, *b = y;
        /* unknown usage last */
        if (a->have_mem != b->have_mem)
                return a->have_mem ? -1 : 1;
        if (a->used_bytes != b->used_bytes)
                return a->used_bytes > b->used_bytes ? -1 : 1;
        return by_gpu_pid(a, b);
}

static int by_util(const void *x, const void *y) {
        const struct top_proc_row *a = x, *b = y;
        if (a->sm_pct != b->sm_pct)
                return a->sm_pct > b->sm_pct ? -1 : 1;
        if (a->gpu_util != b->gpu_util)
                return a->gpu_util > b->gpu_util ? -1 : 1;
        return by_gpu_pid(a, b);
}

static int by_pid(const void *x, const void *y) {
        const struct top_proc_row *a = x, *b = y;
        if (a->pid != b->pid)
                return a->pid < b->pid ? -1 : 1;
        return by_gpu_pid(a, b);
}

/* Larger first, an unknown value (have false) after every known one, ties as by_gpu_pid. */
static int larger_first(bool have_a, double a, bool have_b, double b, const struct top_proc_row *ra,
                        const struct top_proc_row *rb) {
        if (have_a != have_b)
                return have_a ? -1 : 1;
        if (have_a && a != b)
                return a > b ? -1 : 1;
        return by_gpu_pid(ra, rb);
}

static int by_cpu(const void *x, const void *y) {
        const struct top_proc_row *a = x, *b = y;
        return larger_first(a->cpu_pct >= 0, a->cpu_pct, b->cpu_pct >= 0, b->cpu_pct, a, b);
}

static int by_rss(const void *x, const void *y) {
        const struct top_proc_row *a = x, *b = y;
        return larger_first(a->info.have_rss, (double)a->info.rss_kib, b->info.have_rss, (double)b->info.rss_kib, a, b);
}

static int by_time(const void *x, const void *y) {
        const struct top_proc_row *a = x, *b = y;
        return larger_first(a->info.elapsed_s >= 0, a->info.elapsed_s, b->info.elapsed_s >= 0, b->info.elapsed_s, a, b);
}

void top_model_sort(struct top_model *m, enum top_sort key) {
        static int (*const cmp[TOP_SORT_COUNT])(const void *, const void *) = {by_memory, by_util, by_pid,
                                                                              by_cpu,    by_rss,  by_time};
        if (m->n_procs > 1 && key < TOP_SORT_COUNT)
                qsort(m->procs, m->n_procs, sizeof(*m->procs), cmp[key]);
}

const char *top_sort_name(enum top_sort key) {
        static const char *const names[TOP_SORT_COUNT] = {"memory", "utilization", "pid", "cpu", "rss", "time"};
        return key < TOP_SORT_COUNT ? names[key] : "?";
}

/* The tree (top_model_tree): one node per PID, its GPU rows or its host row. */
struct node {
        unsigned int pid, ppid;    /* ppid 0: none known */
        bool can_parent;           /* its /proc entry read: another process's PPid may name it */
        int parent, child, last, next; /* node indices, -1 none: children first to last in best's order */
        unsigned int best;         /* its first GPU row in m->procs' order, its own or a descendant's */
        int host;                  /* m->hosts index, -1: a GPU process */
};

static int node_of(const struct node *nodes, unsigned int n, unsigned int pid) {
        for (unsigned int i = 0; i < n; i++)
                if (nodes[i].pid == pid)
                        return (int)i;
        return -1;
}

/* Every node's parent, from PPid, and no cycle left: a /proc whose PPids go round (a
 * fixture, or PIDs reused between reads) loses the link of its lowest PID. */
static void link_parents(struct node *nodes, unsigned int n) {
        for (unsigned int i = 0; i < n; i++) {
                int p = nodes[i].ppid > 1 ? node_of(nodes, n, nodes[i].ppid) : -1;
                nodes[i].parent = p >= 0 && nodes[p].can_parent && (unsigned int)p != i ? p : -1;
        }
        for (unsigned int i = 0; i < n; i++) {
                int j = nodes[i].parent;
                for (unsigned int steps = 0; j >= 0 && (unsigned int)j != i && steps < n; steps++)
                        j = nodes[j].parent;
                if (j < 0 || (unsigned int)j != i)
                        continue; /* no cycle through i (one above it is cut when its own turn comes) */
                unsigned int low = i;
                for (int k = nodes[i].parent; (unsigned int)k != i; k = nodes[k].parent)
                        if (nodes[k].pid < nodes[low].pid)
                                low = (unsigned int)k;
                nodes[low].parent = -1;
        }
}

/* "|  |  `- ": the ancestors' lines (stack[1..depth-1]) going on or not, then its own. */
static void glyphs(const struct node *nodes, const int *stack, unsigned int depth, bool more, char *out) {
        unsigned int from = depth > TOP_TREE_MAX_DEPTH ? depth - TOP_TREE_MAX_DEPTH : 0, o = 0;
        for (unsigned int d = from + 1; d < depth; d++, o += 3)
                memcpy(out + o, nodes[stack[d]].next >= 0 ? "|  " : "   ", 3);
        if (depth)
                memcpy(out + o, more ? "|- " : "`- ", 3), o += 3;
        out[o] = '\0';
}

int top_model_tree(const struct top_model *m, struct top_tree_line **ret, unsigned int *n_ret) {
        *ret = NULL;
        *n_ret = 0;
        unsigned int total = m->n_procs + m->n_hosts;
        if (total == 0)
                return 0;
        struct node *nodes = calloc(total, sizeof(*nodes));
        int *row_node = calloc(m->n_procs ? m->n_procs : 1, sizeof(*row_node));
        int *stack = calloc(total + 1, sizeof(*stack));
        struct top_tree_line *lines = calloc(total, sizeof(*lines));
        if (!nodes || !row_node || !stack || !lines) {
                free(nodes), free(row_node), free(stack), free(lines);
                return -ENOMEM;
        }
        unsigned int n = 0;
        for (unsigned int i = 0; i < m->n_procs; i++) {
                const struct top_proc_row *r = &m->procs[i];
                int k = node_of(nodes, n, r->pid);
                if (k < 0) {
                        k = (int)n++;
                        nodes[k] = (struct node){.pid = r->pid, .host = -1, .best = UINT_MAX};
                }
                /* gone or in another namespace: no ancestry, top level */
                if (r->info.where == PROC_FOUND && r->info.have_stat && !nodes[k].can_parent) {
                        nodes[k].can_parent = true;
                        nodes[k].ppid = r->info.stat.ppid;
                }
                row_node[i] = k;
        }
        for (unsigned int i = 0; i < m->n_hosts; i++) {
                if (node_of(nodes, n, m->hosts[i].pid) >= 0)
                        continue;
                nodes[n++] = (struct node){.pid = m->hosts[i].pid, .ppid = m->hosts[i].info.stat.ppid,
                                           .can_parent = true, .host = (int)i, .best = UINT_MAX};
        }
        link_parents(nodes, n);
        /* m->procs is in the sort's order: a row's index is its rank, and a node ranks as
         * its best row below it, so that the tree keeps the order chosen */
        for (unsigned int i = 0; i < m->n_procs; i++)
                for (int k = row_node[i]; k >= 0 && nodes[k].best == UINT_MAX; k = nodes[k].parent)
                        nodes[k].best = i;
        /* Siblings never share a best (their rows are apart): each node is appended to its
         * parent's children, or to the roots, when its best row comes, in rank order. A host
         * row cut off its workers by a cycle has none and is left out. */
        int root = -1, root_last = -1;
        for (unsigned int i = 0; i < n; i++)
                nodes[i].child = nodes[i].last = nodes[i].next = -1;
        for (unsigned int i = 0; i < m->n_procs; i++)
                for (int k = row_node[i]; k >= 0 && nodes[k].best == i; k = nodes[k].parent) {
                        int p = nodes[k].parent;
                        int *first = p >= 0 ? &nodes[p].child : &root, *last = p >= 0 ? &nodes[p].last : &root_last;
                        if (*last >= 0)
                                nodes[*last].next = k;
                        else
                                *first = k;
                        *last = k;
                }
        /* depth first, without recursion: a chain of GPU processes may be as long as the list */
        unsigned int depth = 0, out = 0;
        stack[0] = root;
        while (true) {
                int k = stack[depth];
                if (k < 0) {
                        if (depth == 0)
                                break;
                        depth--;
                        stack[depth] = nodes[stack[depth]].next;
                        continue;
                }
                const struct node *nd = &nodes[k];
                unsigned int shown = depth > TOP_TREE_MAX_DEPTH ? TOP_TREE_MAX_DEPTH : depth;
                if (nd->host >= 0) {
                        lines[out] = (struct top_tree_line){.host = true, .index = (unsigned int)nd->host,
                                                            .depth = shown};
                        glyphs(nodes, stack, depth, nd->next >= 0, lines[out].glyphs);
                        out++;
                } else {
                        /* its rows in m->procs' order, one per GPU: each but the last has a
                         * sibling line below it, its own next row */
                        unsigned int last = 0;
                        for (unsigned int i = 0; i < m->n_procs; i++)
                                if (row_node[i] == k)
                                        last = i;
                        for (unsigned int i = nd->best; i < m->n_procs; i++) {
                                if (row_node[i] != k)
                                        continue;
                                lines[out] = (struct top_tree_line){.index = i, .depth = shown};
                                glyphs(nodes, stack, depth, i != last || nd->next >= 0, lines[out].glyphs);
                                out++;
                        }
                }
                stack[++depth] = nd->child;
        }
        free(nodes), free(row_node), free(stack);
        *ret = lines;
        *n_ret = out;
        return 0;
}
