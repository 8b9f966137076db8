#include "sys/facts.h"

#include <string.h>

int container_gather(struct fsroot *fs, struct facts *f) {
        (void)fs;
        memset(&f->container, 0, sizeof(f->container));
        return 0;
}

void container_facts_done(struct container_facts *x) { (void)x; }
