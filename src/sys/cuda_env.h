/* Environment variables that change how CUDA behaves, where they are set: gpuvet's own
 * environment (/proc/self/environ: what the shell that ran it passes on), /etc/environment
 * (pam_env, every login) and /etc/profile.d/\*.sh (every login shell). */
#pragma once

#include <stddef.h>

struct fsroot;
struct facts;

struct cuda_env_var {
        char name[48];     /* "CUDA_LAUNCH_BLOCKING" */
        char value[128];   /* as written, quotes removed; cut at 127 bytes */
        char where[160];   /* "/etc/environment:3", "/etc/profile.d/cuda.sh:12", "environment" */
};

struct cuda_env_facts {
        struct cuda_env_var *vars; /* every CUDA_*, NSIGHT_*, COMPUTE_PROFILE*, OPENCL_PROFILE* */
        size_t n;
        int environ_errno;         /* 0, or why /proc/self/environ could not be read */
};

int cuda_env_gather(struct fsroot *fs, struct facts *f);
void cuda_env_facts_done(struct cuda_env_facts *x);
