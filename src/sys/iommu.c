#include "sys/facts.h"

#include <string.h>

int iommu_gather(struct fsroot *fs, struct facts *f) {
        (void)fs;
        memset(&f->iommu, 0, sizeof(f->iommu));
        return 0;
}

void iommu_facts_done(struct iommu_facts *x) { (void)x; }
