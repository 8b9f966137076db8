/* container facts. (Skeleton: filled in by the container category work.) */
#pragma once

struct fsroot;
struct facts;

struct container_facts {
        int unused;
};

int container_gather(struct fsroot *fs, struct facts *f);
void container_facts_done(struct container_facts *x);
