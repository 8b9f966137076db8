/* virt facts. (Skeleton: filled in by the virt category work.) */
#pragma once

struct fsroot;
struct facts;

struct virt_facts {
        int unused;
};

int virt_gather(struct fsroot *fs, struct facts *f);
void virt_facts_done(struct virt_facts *x);
