#include "sys/facts.h"

#include <string.h>

int numa_gather(struct fsroot *fs, struct facts *f) {
        (void)fs;
        memset(&f->numa, 0, sizeof(f->numa));
        return 0;
}

void numa_facts_done(struct numa_facts *x) { (void)x; }
