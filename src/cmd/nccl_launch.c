#include "cmd/nccl_launch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/rendezvous.h"

extern char **environ;

struct launch_rdv {
        struct rdv_ranks ranks;
        struct rdv_address addr;
        struct rdv_session *session; /* open from the id's exchange to the gather */
};

int nccl_launch_detect(const char *spec, unsigned join_timeout_s, struct nccl_launch *ret, char *err,
                       size_t errsize) {
        *ret = (struct nccl_launch){.launcher = "single process", .nranks = 1, .local_size = 1, .nodes = 1,
                                    .join_timeout_s = join_timeout_s};
        struct launch_rdv *lr = calloc(1, sizeof(*lr));
        if (!lr) {
                snprintf(err, errsize, "out of memory");
                return -ENOMEM;
        }
        const char *const *envp = (const char *const *)environ;
        int r = rdv_ranks_from_env(envp, &lr->ranks, err, errsize);
        if (r < 0 || lr->ranks.launcher == RDV_LAUNCHER_NONE || lr->ranks.size <= 1) {
                free(lr);
                if (r < 0)
                        return r;
                if (spec) {
                        snprintf(err, errsize,
                                 "--rendezvous %s: this process is no rank of a job (none of srun's, mpirun's or "
                                 "GPUVET_RANK and GPUVET_WORLD_SIZE's variables says so)",
                                 spec);
                        return -EINVAL;
                }
                return 0;
        }
        r = spec ? rdv_address_parse(spec, &lr->addr, err, errsize)
                 : rdv_address_default(envp, &lr->ranks, &lr->addr, err, errsize);
        if (r == 0)
                r = rdv_secret_from_env(envp, &lr->ranks, err, errsize);
        if (r < 0) {
                explicit_bzero(lr, sizeof(*lr));
                free(lr);
                return r == -ENOENT ? -EINVAL : r;
        }
        ret->multi_process = true;
        ret->launcher = rdv_launcher_name(lr->ranks.launcher);
        ret->rank = lr->ranks.rank;
        ret->nranks = lr->ranks.size;
        ret->local_rank = lr->ranks.local_rank;
        ret->local_size = lr->ranks.local_size;
        ret->nodes = ret->local_size > 0 ? (ret->nranks + ret->local_size - 1) / ret->local_size : 0;
        rdv_address_format(&lr->addr, ret->rendezvous, sizeof(ret->rendezvous));
        ret->rdv = lr;
        return 0;
}

/* What rank 0 refused while it waited: told at once, whatever -q says, since it may be
 * someone else's process at the job's port. */
static void log_refusal(void *ctx, const char *line) {
        (void)ctx;
        fprintf(stderr, "gpuvet: bench nccl: rendezvous: %s\n", line);
}

int nccl_launch_share_id(void *launch, unsigned char id[COLL_ID_BYTES], char *err, size_t errsize) {
        struct nccl_launch *l = launch;
        struct launch_rdv *lr = l->rdv;
        int r = rdv_open(&lr->ranks, &lr->addr, &lr->session, err, errsize);
        if (r < 0)
                return r;
        rdv_set_log(lr->session, log_refusal, NULL);
        size_t len = l->rank == 0 ? COLL_ID_BYTES : 0;
        r = rdv_share(lr->session, id, &len, COLL_ID_BYTES, l->join_timeout_s * 1000u, err, errsize);
        if (r == 0 && len != COLL_ID_BYTES) {
                snprintf(err, errsize, "rank %d: rank 0 sent %zu bytes, not NCCL's %d-byte id", l->rank, len,
                         COLL_ID_BYTES);
                r = -EPROTO;
        }
        if (r < 0) {
                rdv_close(lr->session);
                lr->session = NULL;
        }
        return r;
}

int nccl_launch_gather(struct nccl_launch *l, bool ok, const char *message, unsigned timeout_s,
                       struct nccl_rank_outcome **ret, char *err, size_t errsize) {
        struct launch_rdv *lr = l->rdv;
        *ret = NULL;
        if (!lr || !lr->session) {
                snprintf(err, errsize, "the ranks never met");
                return -ENOTCONN;
        }
        struct rdv_gathered g = {0};
        size_t len = message ? strlen(message) : 0;
        if (len > RDV_GATHER_MAX)
                len = RDV_GATHER_MAX;
        int r = rdv_gather(lr->session, ok, message ? message : "", len, l->rank == 0 ? &g : NULL, timeout_s * 1000u,
                           err, errsize);
        if (l->rank == 0 && g.ranks) {
                struct nccl_rank_outcome *out = calloc((size_t)g.size, sizeof(*out));
                if (out) {
                        for (int i = 0; i < g.size; i++) {
                                const struct rdv_rank_result *x = &g.ranks[i];
                                out[i].rank = i;
                                out[i].state = x->state == RDV_RANK_OK       ? NCCL_RANK_OK
                                               : x->state == RDV_RANK_FAILED ? NCCL_RANK_FAILED
                                                                             : NCCL_RANK_MISSING;
                                if (x->state == RDV_RANK_FAILED)
                                        snprintf(out[i].message, sizeof(out[i].message), "%s",
                                                 (const char *)x->data);
                        }
                        *ret = out;
                }
        }
        rdv_gathered_free(&g);
        return r;
}

char **nccl_launch_environment(void) {
        size_t n = 0;
        for (char **e = environ; *e; e++)
                n += strncmp(*e, "NCCL_", 5) == 0;
        char **out = calloc(n + 1, sizeof(*out));
        if (!out)
                return NULL;
        size_t k = 0;
        for (char **e = environ; *e && k < n; e++)
                if (strncmp(*e, "NCCL_", 5) == 0 && (out[k] = strdup(*e)) != NULL)
                        k++;
        return out;
}

void nccl_launch_done(struct nccl_launch *l) {
        struct launch_rdv *lr = l->rdv;
        if (lr) {
                rdv_close(lr->session);
                explicit_bzero(lr, sizeof(*lr)); /* the secret */
        }
        free(lr);
        l->rdv = NULL;
}
