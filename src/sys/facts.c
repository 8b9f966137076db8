#include "sys/facts.h"

#include "core/array.h"
#include "core/fsroot.h"

#include <stddef.h>
#include <string.h>

/* The gatherers of the host, PCI and GPU facts take their own struct; the table's column
 * takes the whole facts. */
static int host_input(struct fsroot *fs, struct facts *f) { return host_gather(fs, &f->host); }
static int pci_input(struct fsroot *fs, struct facts *f) { return pci_gather_inventory(fs, &f->pci); }
static int pci_tree_input(struct fsroot *fs, struct facts *f) {
        pci_gather_tree(fs, &f->pci);
        return 0;
}
static int gpus_input(struct fsroot *fs, struct facts *f) {
        (void)fs;
        return gpu_gather(&f->pci, f->db, &f->gpus);
}

#define no_gather NULL
static int (*const gatherers[INPUT_COUNT])(struct fsroot *, struct facts *) = {
#define INPUT(id, member, phase, live, worst_ms, deps, gather, done) [INPUT_##id] = gather,
#include "sys/inputs.def"
#undef INPUT
};
#undef no_gather

#define no_done(member) ((void)(member))
#define INPUT(id, member, phase, live, worst_ms, deps, gather, done)                                               \
        static void done_##id(struct facts *f) { done(&f->member); }
#include "sys/inputs.def"
#undef INPUT
#undef no_done

static void (*const releasers[INPUT_COUNT])(struct facts *) = {
#define INPUT(id, member, phase, live, worst_ms, deps, gather, done) [INPUT_##id] = done_##id,
#include "sys/inputs.def"
#undef INPUT
};

int facts_gather_some(struct fsroot *fs, const struct gpudb *db, input_set needs, struct facts *f) {
        memset(f, 0, sizeof(*f));
        f->db = db;
        if (!fsroot_is_live(fs)) {
                static const struct {
                        const char *dir;
                        unsigned int bit;
                } trees[] = {{"/dev", CAPTURE_DEV}, {"/proc", CAPTURE_PROC}, {"/sys", CAPTURE_SYS},
                             {"/proc/driver/nvidia", CAPTURE_NVIDIA_PROC}, {"/proc/sys", CAPTURE_PROC_SYS}};
                for (size_t i = 0; i < ARRAY_COUNT(trees); i++)
                        if (!fsroot_is_dir(fs, trees[i].dir))
                                f->capture_lacks |= trees[i].bit;
        }
        needs = inputs_closure(needs);
        /* In the table's order: each may use the host, PCI and GPU facts before it. */
        for (size_t i = 0; i < INPUT_COUNT; i++) {
                if (!gatherers[i] || !(needs & (1u << i)))
                        continue;
                int r = gatherers[i](fs, f);
                if (r < 0)
                        return r;
                f->inputs_read |= 1u << i;
        }
        return 0;
}

int facts_gather(struct fsroot *fs, const struct gpudb *db, struct facts *f) {
        return facts_gather_some(fs, db, INPUTS_ALL, f);
}

void facts_done(struct facts *f) {
        for (size_t i = INPUT_COUNT; i-- > 0;)
                releasers[i](f);
}
