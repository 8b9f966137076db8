#include "sys/facts.h"
#include "core/fsroot.h"
#include "core/strparse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_u64(struct fsroot *fs, const char *path, uint64_t *ret) {
        char buf[64];
        int r = fsroot_read_str(fs, path, buf, sizeof(buf));
        return r < 0 ? r : parse_u64(buf, ret);
}

static int read_choice(struct fsroot *fs, const char *path, char *buf, size_t size) {
        char text[256];
        int r = fsroot_read_str(fs, path, text, sizeof(text));
        return r < 0 ? r : parse_bracketed_choice(text, buf, size);
}

int memory_parse_swaps(const char *text, unsigned *ret_n, uint64_t *ret_size_kb, uint64_t *ret_used_kb) {
        unsigned n = 0;
        uint64_t size = 0, used = 0;
        const char *line = text;
        const char *eol = strchr(line, '\n');
        /* The header is always there, even with no swap. */
        if (strncmp(line, "Filename", 8) != 0)
                return -EINVAL;
        for (line = eol ? eol + 1 : ""; *line; line = eol ? eol + 1 : "") {
                eol = strchr(line, '\n');
                size_t len = eol ? (size_t)(eol - line) : strlen(line);
                if (len == 0)
                        continue;
                char buf[512];
                if (len >= sizeof(buf))
                        return -EINVAL;
                memcpy(buf, line, len);
                buf[len] = '\0';
                /* File names with blanks are written octal-escaped (\040), so fields split on blanks. */
                char type[32];
                uint64_t s, u;
                int prio, consumed = 0;
                if (sscanf(buf, "%*s %31s %" SCNu64 " %" SCNu64 " %d %n", type, &s, &u, &prio, &consumed) != 4 ||
                    buf[consumed] != '\0' || u > s || size + s < size)
                        return -EINVAL;
                n++;
                size += s;
                used += u;
        }
        *ret_n = n;
        *ret_size_kb = size;
        *ret_used_kb = used;
        return 0;
}

int memory_gather(struct fsroot *fs, struct facts *f) {
        struct memory_facts *m = &f->memory;
        memset(m, 0, sizeof(*m));

        m->thp_enabled_err = read_choice(fs, "/sys/kernel/mm/transparent_hugepage/enabled", m->thp_enabled,
                                         sizeof(m->thp_enabled));
        m->thp_defrag_err = read_choice(fs, "/sys/kernel/mm/transparent_hugepage/defrag", m->thp_defrag,
                                        sizeof(m->thp_defrag));
        m->swappiness_err = read_u64(fs, "/proc/sys/vm/swappiness", &m->swappiness);
        m->dirty_ratio_err = read_u64(fs, "/proc/sys/vm/dirty_ratio", &m->dirty_ratio);
        m->dirty_background_ratio_err = read_u64(fs, "/proc/sys/vm/dirty_background_ratio", &m->dirty_background_ratio);
        m->dirty_bytes_err = read_u64(fs, "/proc/sys/vm/dirty_bytes", &m->dirty_bytes);
        m->dirty_background_bytes_err = read_u64(fs, "/proc/sys/vm/dirty_background_bytes", &m->dirty_background_bytes);

        char *text = NULL;
        int r = fsroot_read_alloc(fs, "/proc/meminfo", &text, NULL);
        if (r == -ENOMEM)
                return r;
        m->mem_total_err = m->swap_total_err = r;
        if (r == 0) {
                /* A meminfo without MemTotal is malformed; SwapTotal is absent without CONFIG_SWAP. */
                m->mem_total_err = parse_meminfo_kb(text, "MemTotal", &m->mem_total_kb);
                if (m->mem_total_err == -ENOENT || (m->mem_total_err == 0 && m->mem_total_kb == 0))
                        m->mem_total_err = -EINVAL;
                m->swap_total_err = parse_meminfo_kb(text, "SwapTotal", &m->swap_total_kb);
                free(text);
        }

        r = fsroot_read_alloc(fs, "/proc/swaps", &text, NULL);
        if (r == -ENOMEM)
                return r;
        m->swaps_err = r;
        if (r == 0) {
                m->swaps_err = memory_parse_swaps(text, &m->n_swaps, &m->swaps_size_kb, &m->swaps_used_kb);
                free(text);
        }
        return 0;
}

void memory_facts_done(struct memory_facts *x) { memset(x, 0, sizeof(*x)); }
