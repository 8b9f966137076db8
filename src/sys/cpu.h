/* cpu facts. (Skeleton: filled in by the cpu category work.) */
#pragma once

struct fsroot;
struct facts;

struct cpu_facts {
        int unused;
};

int cpu_gather(struct fsroot *fs, struct facts *f);
void cpu_facts_done(struct cpu_facts *x);
