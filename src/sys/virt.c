#include "sys/facts.h"

#include <string.h>

int virt_gather(struct fsroot *fs, struct facts *f) {
        (void)fs;
        memset(&f->virt, 0, sizeof(f->virt));
        return 0;
}

void virt_facts_done(struct virt_facts *x) { (void)x; }
