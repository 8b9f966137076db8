/* kernel facts. (Skeleton: filled in by the kernel category work.) */
#pragma once

struct fsroot;
struct facts;

struct kernel_facts {
        int unused;
};

int kernel_gather(struct fsroot *fs, struct facts *f);
void kernel_facts_done(struct kernel_facts *x);
