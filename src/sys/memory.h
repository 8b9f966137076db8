/* Host memory settings that matter to GPU work: transparent huge pages, swappiness and
 * swap, dirty page-cache limits, and the amount of RAM.
 *
 * Values carry an errno beside them as in sys/cpu.h: 0 read, -ENOENT absent here, any
 * other negative errno unreadable or malformed. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct fsroot;
struct facts;

struct memory_facts {
        char thp_enabled[16];           /* bracketed choice of transparent_hugepage/enabled: "madvise" */
        int thp_enabled_err;
        char thp_defrag[24];            /* of transparent_hugepage/defrag: "madvise", "defer+madvise" */
        int thp_defrag_err;

        uint64_t swappiness;            /* /proc/sys/vm/swappiness, 0-200 */
        int swappiness_err;
        uint64_t dirty_ratio, dirty_background_ratio;       /* percent; 0 when the _bytes form is set */
        int dirty_ratio_err, dirty_background_ratio_err;
        uint64_t dirty_bytes, dirty_background_bytes;       /* 0 when the _ratio form is in force */
        int dirty_bytes_err, dirty_background_bytes_err;

        uint64_t mem_total_kb;          /* /proc/meminfo MemTotal */
        int mem_total_err;
        uint64_t swap_total_kb;         /* /proc/meminfo SwapTotal */
        int swap_total_err;

        unsigned n_swaps;               /* active swap areas in /proc/swaps */
        uint64_t swaps_size_kb, swaps_used_kb;
        int swaps_err;
};

/* Gather f->memory. Returns 0, or -ENOMEM; unreadable files are recorded in the facts. */
int memory_gather(struct fsroot *fs, struct facts *f);
void memory_facts_done(struct memory_facts *x);

/* /proc/swaps: a header line, then "Filename Type Size Used Priority" per area, sizes in
 * KiB. Returns 0, or -EINVAL when a line is malformed. Pure: no I/O. */
int memory_parse_swaps(const char *text, unsigned *ret_n, uint64_t *ret_size_kb, uint64_t *ret_used_kb);
