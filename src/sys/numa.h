/* numa facts. (Skeleton: filled in by the numa category work.) */
#pragma once

struct fsroot;
struct facts;

struct numa_facts {
        int unused;
};

int numa_gather(struct fsroot *fs, struct facts *f);
void numa_facts_done(struct numa_facts *x);
