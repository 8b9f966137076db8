/* memory facts. (Skeleton: filled in by the memory category work.) */
#pragma once

struct fsroot;
struct facts;

struct memory_facts {
        int unused;
};

int memory_gather(struct fsroot *fs, struct facts *f);
void memory_facts_done(struct memory_facts *x);
