/* How `gpuvet bench nccl` was started: alone (one process, every GPU) or as one rank of a
 * job a launcher started (srun, mpirun, or GPUVET_RANK and GPUVET_WORLD_SIZE), and the
 * rendezvous of such a job's processes (bench/rendezvous.h), held by each rank's parent
 * process: it hands NCCL's id from rank 0 to the others before the communicator is made, and
 * gathers every rank's outcome to rank 0 at the end, even of a rank whose benchmark process
 * was killed at a deadline. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "bench/collective.h"
#include "bench/nccl_job.h"

struct nccl_launch {
        bool multi_process;
        const char *launcher;   /* "single process", "slurm", "openmpi", "gpuvet", ... */
        int rank, nranks, local_rank, local_size;
        int nodes;              /* whole nodes of local_size ranks; 0 when the launcher does not say */
        char rendezvous[512];   /* the address in use, for messages and the report */
        unsigned join_timeout_s;
        void *rdv;              /* the rendezvous' state, owned */
};

/* From the environment and --rendezvous (spec may be NULL); ranks wait join_timeout_s for
 * each other. 0, or -EINVAL with err naming the variable or value at fault (and --rendezvous
 * given to a process that is no rank of a job). */
int nccl_launch_detect(const char *spec, unsigned join_timeout_s, struct nccl_launch *ret, char *err,
                       size_t errsize);
/* bench/nccl_job.h's share_id, in the parent: meet the other ranks and hand rank 0's id to
 * them (rank 0), or receive it (others). */
int nccl_launch_share_id(void *launch, unsigned char id[COLL_ID_BYTES], char *err, size_t errsize);
/* After the job, once the id was shared: every rank gives whether it succeeded and its
 * error; rank 0 gets all of them into *ret (size nranks, malloc'd), the others NULL. Waits
 * timeout_s for the slowest rank. 0, or a negative errno with err (rank 0 still gets *ret,
 * the ranks that never reported marked missing). */
int nccl_launch_gather(struct nccl_launch *l, bool ok, const char *message, unsigned timeout_s,
                       struct nccl_rank_outcome **ret, char *err, size_t errsize);
/* The NCCL_* variables of the environment, "NAME=value" (malloc'd, NULL-terminated). */
char **nccl_launch_environment(void);
void nccl_launch_done(struct nccl_launch *l);
