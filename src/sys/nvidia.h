/* nvidia facts. (Skeleton: filled in by the nvidia category work.) */
#pragma once

struct fsroot;
struct facts;

struct nvidia_facts {
        int unused;
};

int nvidia_gather(struct fsroot *fs, struct facts *f);
void nvidia_facts_done(struct nvidia_facts *x);
