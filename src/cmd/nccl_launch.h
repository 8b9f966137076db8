/* How `gpuvet bench nccl` was started: alone (one process, every GPU) or as one rank of a
 * job a launcher started (srun, mpirun, torchrun-style variables), and how that rank gets
 * NCCL's id from rank 0 (bench/rendezvous.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "bench/collective.h"

struct nccl_launch {
        bool multi_process;
        const char *launcher;   /* "single process", "slurm", "openmpi", ... */
        int rank, nranks, local_rank, local_size, nodes;
        char rendezvous[512];   /* the address spec in use */
        unsigned join_timeout_s;
        void *rdv;              /* the rendezvous state, owned */
};

/* From the environment and --rendezvous (spec may be NULL); ranks wait join_timeout_s for
 * each other. 0, or -EINVAL with err naming the variable or value at fault (and --rendezvous
 * given to a process that is no rank of a job). */
int nccl_launch_detect(const char *spec, unsigned join_timeout_s, struct nccl_launch *ret, char *err,
                       size_t errsize);
/* bench/nccl_job.h's get_id: rank 0 makes the id and publishes it, the others receive it. */
int nccl_launch_get_id(void *launch, struct coll_lib *lib, unsigned char id[COLL_ID_BYTES], char *err,
                       size_t errsize);
/* The NCCL_* variables of the environment, "NAME=value" (malloc'd, NULL-terminated). */
char **nccl_launch_environment(void);
void nccl_launch_done(struct nccl_launch *l);
