/* iommu facts. (Skeleton: filled in by the iommu category work.) */
#pragma once

struct fsroot;
struct facts;

struct iommu_facts {
        int unused;
};

int iommu_gather(struct fsroot *fs, struct facts *f);
void iommu_facts_done(struct iommu_facts *x);
