/* The rendezvous' reading of the launcher's environment: ranks, job key, where rank 0 is
 * (rendezvous.h). Pure functions of an environment array: no getenv, no I/O. */
#include "bench/rendezvous.h"
#include "core/array.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slurm's highest step id of a step srun launches (slurm.h, SLURM_MAX_NORMAL_STEP_ID since
 * 20.11); the ids above are the batch script, extern, interactive and pending steps
 * (0xfffffffb, 0xfffffffc, 0xfffffffa, 0xfffffffd; before 20.11 the batch and extern steps
 * were 0xfffffffe and 0xffffffff, above it too). */
#define SLURM_MAX_NORMAL_STEP 0xfffffff0ul

const char *rdv_env_get(const char *const *envp, const char *name) {
        size_t n = strlen(name);
        for (; envp && *envp; envp++)
                if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
                        return *envp + n + 1;
        return NULL;
}

/* A plain decimal: digits only, no sign, no spaces, at most max. */
static int parse_decimal(const char *s, unsigned long max, unsigned long *ret) {
        if (!s || !*s)
                return -EINVAL;
        unsigned long v = 0;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                unsigned d = (unsigned)(*p - '0');
                if (v > (max - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
}

/* Variable name as a number (0..max). 1 when absent, 0 when read, -EINVAL with a message. */
static int env_number(const char *const *envp, const char *name, unsigned long max, unsigned long *ret, char *err,
                      size_t err_size) {
        const char *v = rdv_env_get(envp, name);
        if (!v)
                return 1;
        int r = parse_decimal(v, max, ret);
        if (r == -ERANGE) {
                strbuf_printf(err, err_size, "%s=%s: over %lu", name, v, max);
                return -EINVAL;
        }
        if (r < 0) {
                strbuf_printf(err, err_size, "%s=%s: not a number", name, v);
                return -EINVAL;
        }
        return 0;
}

const char *rdv_launcher_name(enum rdv_launcher l) {
        static const char *const names[RDV_LAUNCHER_COUNT] = {"none", "gpuvet", "openmpi", "slurm", "pmi", "pmix"};
        return (unsigned)l < RDV_LAUNCHER_COUNT ? names[l] : "unknown";
}

int rdv_slurm_tasks_on_node(const char *s, int node_index, int *ret) {
        if (!s || !*s || node_index < 0)
                return -EINVAL;
        long node = 0;
        const char *p = s;
        for (;;) {
                char *end;
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                unsigned long count = strtoul(p, &end, 10), repeat = 1;
                p = end;
                if (*p == '(') {
                        if (p[1] != 'x' || p[2] < '0' || p[2] > '9')
                                return -EINVAL;
                        repeat = strtoul(p + 2, &end, 10);
                        if (*end != ')' || repeat == 0)
                                return -EINVAL;
                        p = end + 1;
                }
                if (count > RDV_MAX_RANKS || repeat > RDV_MAX_RANKS)
                        return -EINVAL;
                if (*p != ',' && *p != '\0')
                        return -EINVAL;
                if (node_index < node + (long)repeat) {
                        /* the rest must still be well formed: parse on, keep the answer */
                        int r = 0;
                        if (*p == ',')
                                r = rdv_slurm_tasks_on_node(p + 1, 0, &(int){0});
                        if (r == -EINVAL)
                                return r;
                        *ret = (int)count;
                        return 0;
                }
                node += (long)repeat;
                if (*p == '\0')
                        return -ERANGE;
                p++;
        }
}

int rdv_hostlist_first(const char *hostlist, char *buf, size_t size) {
        if (!hostlist || !*hostlist || !buf || !size)
                return -EINVAL;
        size_t o = 0;
        const char *p = hostlist;
        while (*p && *p != ',') {
                if (*p == ']' || *p == ' ')
                        return -EINVAL;
                if (*p != '[') {
                        if (o + 1 >= size)
                                return -ENAMETOOLONG;
                        buf[o++] = *p++;
                        continue;
                }
                /* a range list: its first number, as written (zero padding kept) */
                const char *close = strchr(p, ']');
                if (!close || close == p + 1)
                        return -EINVAL;
                for (const char *q = p + 1; q < close; q++)
                        if (!((*q >= '0' && *q <= '9') || *q == '-' || *q == ','))
                                return -EINVAL;
                const char *q = p + 1;
                if (*q < '0' || *q > '9')
                        return -EINVAL;
                while (q < close && *q >= '0' && *q <= '9') {
                        if (o + 1 >= size)
                                return -ENAMETOOLONG;
                        buf[o++] = *q++;
                }
                if (q < close && *q == '-' && (q + 1 == close || q[1] < '0' || q[1] > '9'))
                        return -EINVAL;
                p = close + 1;
        }
        if (o == 0)
                return -EINVAL;
        buf[o] = '\0';
        return 0;
}

struct launcher_vars {
        enum rdv_launcher launcher;
        const char *rank, *size, *local_rank, *local_size;
};

/* The job key: GPUVET_JOB_KEY, else the launcher's. */
static int job_key(const char *const *envp, enum rdv_launcher l, char *key, char *err, size_t err_size) {
        const char *own = rdv_env_get(envp, "GPUVET_JOB_KEY");
        char buf[2 * RDV_KEY_MAX + 2] = "";
        if (own && *own) {
                snprintf(buf, sizeof(buf), "%s", own);
        } else if (l == RDV_LAUNCHER_SLURM) {
                const char *job = rdv_env_get(envp, "SLURM_JOB_ID"), *step = rdv_env_get(envp, "SLURM_STEP_ID");
                if (!step)
                        step = rdv_env_get(envp, "SLURM_STEPID");
                if (job)
                        snprintf(buf, sizeof(buf), "%.*s.%.*s", RDV_KEY_MAX, job, RDV_KEY_MAX, step ? step : "");
        } else if (l == RDV_LAUNCHER_OPENMPI || l == RDV_LAUNCHER_PMI || l == RDV_LAUNCHER_PMIX) {
                const char *names[] = {l == RDV_LAUNCHER_OPENMPI ? "OMPI_MCA_ess_base_jobid"
                                       : l == RDV_LAUNCHER_PMI   ? "PMI_KVSNAME"
                                                                 : "PMIX_NAMESPACE",
                                       "PMIX_NAMESPACE"};
                for (size_t i = 0; i < 2 && !buf[0]; i++) {
                        const char *v = rdv_env_get(envp, names[i]);
                        if (v)
                                snprintf(buf, sizeof(buf), "%.*s", RDV_KEY_MAX, v);
                }
        }
        if (strlen(buf) >= RDV_KEY_MAX) {
                strbuf_printf(err, err_size, "the job key \"%.40s...\" is over %d bytes: set a shorter GPUVET_JOB_KEY",
                              buf, RDV_KEY_MAX - 1);
                return -EINVAL;
        }
        memcpy(key, buf, strlen(buf) + 1);
        return 0;
}

static bool slurm_task(const char *const *envp) {
        const char *step = rdv_env_get(envp, "SLURM_STEP_ID");
        if (!step)
                step = rdv_env_get(envp, "SLURM_STEPID");
        unsigned long id;
        if (!step || !rdv_env_get(envp, "SLURM_PROCID"))
                return false;
        /* a name ("batch", "extern", "interactive", as some tools write them) is no srun step */
        return parse_decimal(step, ~0ul, &id) == 0 && id <= SLURM_MAX_NORMAL_STEP;
}

static const char *size_variable(const char *const *envp, const struct launcher_vars *v);

/* Whether v's rank and size are srun's own (srun --mpi=pmi2 or --mpi=pmix sets PMI_RANK or
 * PMIX_RANK to SLURM_PROCID), rather than those of a launcher that runs under Slurm and
 * starts its ranks from a daemon per node (Hydra, PRRTE): their ranks inherit the daemon's
 * SLURM_PROCID and step size, which describe the daemons, not the ranks. */
static bool same_as_slurm(const char *const *envp, const struct launcher_vars *v) {
        static const struct launcher_vars slurm = {RDV_LAUNCHER_SLURM, "SLURM_PROCID", NULL, NULL, NULL};
        const char *size_name = size_variable(envp, v), *slurm_size_name = size_variable(envp, &slurm);
        const char *size = size_name ? rdv_env_get(envp, size_name) : NULL;
        const char *slurm_size = slurm_size_name ? rdv_env_get(envp, slurm_size_name) : NULL;
        return strcmp(rdv_env_get(envp, v->rank), rdv_env_get(envp, "SLURM_PROCID")) == 0 &&
               (!size || (slurm_size && strcmp(size, slurm_size) == 0));
}

/* Which launcher's variables describe this process: the one that started it. An MPI
 * launcher's come before Slurm's, since under Slurm it starts its ranks from daemons srun
 * launched (see same_as_slurm); PMI's and PMIx's only where they differ from srun's. */
static const struct launcher_vars *which_launcher(const char *const *envp) {
        static const struct launcher_vars vars[] = {
                {RDV_LAUNCHER_GPUVET, "GPUVET_RANK", "GPUVET_WORLD_SIZE", "GPUVET_LOCAL_RANK", "GPUVET_LOCAL_SIZE"},
                {RDV_LAUNCHER_OPENMPI, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                 "OMPI_COMM_WORLD_LOCAL_SIZE"},
                {RDV_LAUNCHER_PMI, "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
                {RDV_LAUNCHER_PMIX, "PMIX_RANK", NULL, NULL, NULL},
                {RDV_LAUNCHER_SLURM, "SLURM_PROCID", NULL, "SLURM_LOCALID", NULL},
        };
        bool slurm = slurm_task(envp);
        for (size_t i = 0; i < ARRAY_COUNT(vars); i++) {
                const struct launcher_vars *v = &vars[i];
                if (v->launcher == RDV_LAUNCHER_SLURM ? slurm
                    : !rdv_env_get(envp, v->rank)      ? false
                    : v->launcher == RDV_LAUNCHER_PMI || v->launcher == RDV_LAUNCHER_PMIX
                            ? !slurm || !same_as_slurm(envp, v)
                            : true)
                        return v;
        }
        return NULL;
}

/* The world size's variable for the launchers whose size has several sources. */
static const char *size_variable(const char *const *envp, const struct launcher_vars *v) {
        static const char *const slurm[] = {"SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", NULL};
        static const char *const pmix[] = {"PMIX_SIZE", "OMPI_UNIVERSE_SIZE", "GPUVET_WORLD_SIZE", NULL};
        if (v->size)
                return v->size;
        const char *const *names = v->launcher == RDV_LAUNCHER_SLURM ? slurm : pmix;
        for (; *names; names++)
                if (rdv_env_get(envp, *names))
                        return *names;
        return NULL;
}

/* Slurm's local size: the tasks of this node's entry in the step's per-node counts. 0 when
 * Slurm does not say. */
static int slurm_local_size(const char *const *envp, int *ret, char *err, size_t err_size) {
        const char *name = "SLURM_STEP_TASKS_PER_NODE";
        const char *per_node = rdv_env_get(envp, name);
        if (!per_node) {
                name = "SLURM_TASKS_PER_NODE";
                per_node = rdv_env_get(envp, name);
        }
        unsigned long node_id = 0;
        int r = env_number(envp, "SLURM_NODEID", RDV_MAX_RANKS, &node_id, err, err_size);
        if (r < 0)
                return r;
        *ret = 0;
        if (!per_node || r == 1)
                return 0;
        r = rdv_slurm_tasks_on_node(per_node, (int)node_id, ret);
        if (r < 0) {
                strbuf_printf(err, err_size, "%s=%s: %s for SLURM_NODEID=%lu", name, per_node,
                              r == -ERANGE ? "no entry" : "not Slurm's per-node task counts", node_id);
                return -EINVAL;
        }
        return 0;
}

int rdv_ranks_from_env(const char *const *envp, struct rdv_ranks *ret, char *err, size_t err_size) {
        struct rdv_ranks out = {.launcher = RDV_LAUNCHER_NONE, .rank = 0, .size = 1, .local_rank = 0, .local_size = 1};
        const struct launcher_vars *v = which_launcher(envp);
        if (!v) {
                *ret = out;
                return job_key(envp, RDV_LAUNCHER_NONE, ret->job_key, err, err_size);
        }
        out.launcher = v->launcher;
        const char *size_name = size_variable(envp, v);
        if (!size_name) {
                strbuf_printf(err, err_size,
                              "%s=%s but no world size (%s): set GPUVET_WORLD_SIZE to the number of ranks", v->rank,
                              rdv_env_get(envp, v->rank),
                              v->launcher == RDV_LAUNCHER_PMIX ? "PMIX_SIZE, OMPI_UNIVERSE_SIZE" : "SLURM_NTASKS");
                return -EINVAL;
        }
        unsigned long rank, size, local_rank = 0, local_size = 0;
        int r = env_number(envp, v->rank, RDV_MAX_RANKS, &rank, err, err_size);
        if (r < 0)
                return r;
        r = env_number(envp, size_name, RDV_MAX_RANKS, &size, err, err_size);
        if (r < 0)
                return r;
        if (r == 1) {
                strbuf_printf(err, err_size, "%s=%s but %s is not set", v->rank, rdv_env_get(envp, v->rank), size_name);
                return -EINVAL;
        }
        if (size < 1) {
                strbuf_printf(err, err_size, "%s=%s: the world size must be at least 1", size_name,
                              rdv_env_get(envp, size_name));
                return -EINVAL;
        }
        if (rank >= size) {
                strbuf_printf(err, err_size, "%s=%s is not below the world size %lu (%s)", v->rank,
                              rdv_env_get(envp, v->rank), size, size_name);
                return -EINVAL;
        }
        /* without the launcher's local rank: the global one (a single node) */
        local_rank = rank;
        bool told_local = false;
        if (v->local_rank) {
                if ((r = env_number(envp, v->local_rank, RDV_MAX_RANKS, &local_rank, err, err_size)) < 0)
                        return r;
                told_local = r == 0;
        }
        if (v->launcher == RDV_LAUNCHER_SLURM) {
                int n;
                if ((r = slurm_local_size(envp, &n, err, err_size)) < 0)
                        return r;
                local_size = (unsigned long)n;
        } else if (v->local_size && (r = env_number(envp, v->local_size, RDV_MAX_RANKS, &local_size, err, err_size)) < 0) {
                return r;
        }
        if (!told_local && local_size && local_rank >= local_size)
                local_size = 0; /* a local size without a local rank: neither is known */
        if (local_size && local_rank >= local_size) {
                strbuf_printf(err, err_size, "%s=%lu is not below this node's %lu ranks",
                              v->local_rank ? v->local_rank : v->rank, local_rank, local_size);
                return -EINVAL;
        }
        out.rank = (int)rank;
        out.size = (int)size;
        out.local_rank = (int)local_rank;
        out.local_size = (int)local_size;
        if ((r = job_key(envp, v->launcher, out.job_key, err, err_size)) < 0)
                return r;
        *ret = out;
        return 0;
}

unsigned rdv_slurm_port(unsigned long job_id, unsigned long step_id) {
        return RDV_DEFAULT_PORT_BASE + (unsigned)((job_id % RDV_DERIVED_PORTS * 64 + step_id) % RDV_DERIVED_PORTS);
}

static int set_port(struct rdv_address *a, const char *name, const char *port, char *err, size_t err_size) {
        unsigned long p;
        if (parse_decimal(port, 65535, &p) < 0 || (p == 0 && strcmp(name, "spec") != 0)) {
                strbuf_printf(err, err_size, "%s=%s: not a port (1-65535)", name, port);
                return -EINVAL;
        }
        snprintf(a->port, sizeof(a->port), "%lu", p);
        return 0;
}

int rdv_address_parse(const char *spec, struct rdv_address *ret, char *err, size_t err_size) {
        struct rdv_address a;
        memset(&a, 0, sizeof(a));
        if (spec && strncmp(spec, "file:", 5) == 0) {
                const char *path = spec + 5;
                if (!*path || strlen(path) + 16 >= sizeof(a.path)) {
                        strbuf_printf(err, err_size, "%s: the rendezvous file needs a path (file:/shared/dir/name)",
                                      spec);
                        return -EINVAL;
                }
                a.transport = RDV_FILE;
                memcpy(a.path, path, strlen(path) + 1);
                *ret = a;
                return 0;
        }
        if (!spec || strncmp(spec, "tcp://", 6) != 0) {
                strbuf_printf(err, err_size, "%s: not a rendezvous address (tcp://HOST:PORT or file:PATH)",
                              spec ? spec : "(null)");
                return -EINVAL;
        }
        const char *host = spec + 6, *colon;
        size_t host_len;
        if (*host == '[') {
                const char *close = strchr(host, ']');
                if (!close || close[1] != ':') {
                        strbuf_printf(err, err_size, "%s: an IPv6 address is written [ADDRESS]:PORT", spec);
                        return -EINVAL;
                }
                host++;
                host_len = (size_t)(close - host);
                colon = close + 1;
        } else {
                colon = strrchr(host, ':');
                host_len = colon ? (size_t)(colon - host) : 0;
                if (colon && memchr(host, ':', host_len)) {
                        strbuf_printf(err, err_size, "%s: write an IPv6 address in brackets: tcp://[ADDRESS]:PORT",
                                      spec);
                        return -EINVAL;
                }
        }
        if (!colon || host_len == 0 || host_len >= sizeof(a.host) || memchr(host, '/', host_len) ||
            memchr(host, '[', host_len) || memchr(host, ']', host_len)) {
                strbuf_printf(err, err_size, "%s: not tcp://HOST:PORT", spec);
                return -EINVAL;
        }
        a.transport = RDV_TCP;
        memcpy(a.host, host, host_len);
        if (set_port(&a, "spec", colon + 1, err, err_size) < 0) {
                strbuf_printf(err, err_size, "%s: the port must be a number 0-65535", spec);
                return -EINVAL;
        }
        *ret = a;
        return 0;
}

int rdv_address_default(const char *const *envp, const struct rdv_ranks *ranks, struct rdv_address *ret, char *err,
                        size_t err_size) {
        struct rdv_address a;
        memset(&a, 0, sizeof(a));
        const char *spec = rdv_env_get(envp, "GPUVET_RENDEZVOUS");
        if (spec && *spec) {
                if (rdv_address_parse(spec, ret, err, err_size) < 0) {
                        strbuf_printf(err, err_size, "GPUVET_RENDEZVOUS=%s: not tcp://HOST:PORT or file:PATH", spec);
                        return -EINVAL;
                }
                return 0;
        }
        a.transport = RDV_TCP;
        const char *master = rdv_env_get(envp, "MASTER_ADDR");
        if (master && *master) {
                if (strlen(master) >= sizeof(a.host) || strchr(master, '/')) {
                        strbuf_printf(err, err_size, "MASTER_ADDR=%s: not a host name or address", master);
                        return -EINVAL;
                }
                memcpy(a.host, master, strlen(master) + 1);
                const char *port = rdv_env_get(envp, "MASTER_PORT");
                if (port) {
                        if (set_port(&a, "MASTER_PORT", port, err, err_size) < 0)
                                return -EINVAL;
                } else {
                        snprintf(a.port, sizeof(a.port), "%u", RDV_DEFAULT_PORT_BASE);
                }
                *ret = a;
                return 0;
        }
        const char *list_name = "SLURM_STEP_NODELIST";
        const char *list = rdv_env_get(envp, list_name);
        if (!list) {
                list_name = "SLURM_JOB_NODELIST";
                list = rdv_env_get(envp, list_name);
        }
        unsigned long job, step = 0;
        int r = env_number(envp, "SLURM_JOB_ID", ~0ul, &job, err, err_size);
        /* only for srun's tasks: under mpirun in an allocation, the ranks on mpirun's own node
         * are not in the step of the daemons srun started on the others, so they would derive
         * another step id and node list */
        if (ranks && ranks->launcher != RDV_LAUNCHER_SLURM)
                list = NULL, r = r < 0 ? 1 : r;
        if (list && r == 0) {
                if (rdv_hostlist_first(list, a.host, sizeof(a.host)) < 0) {
                        strbuf_printf(err, err_size, "%s=%s: not a Slurm host list", list_name, list);
                        return -EINVAL;
                }
                const char *step_name = rdv_env_get(envp, "SLURM_STEP_ID") ? "SLURM_STEP_ID" : "SLURM_STEPID";
                if (env_number(envp, step_name, ~0ul, &step, err, err_size) < 0)
                        return -EINVAL;
                snprintf(a.port, sizeof(a.port), "%u", rdv_slurm_port(job, step));
                *ret = a;
                return 0;
        }
        if (r < 0)
                return r;
        if (ranks && ranks->size <= 1) {
                strbuf_printf(err, err_size, "a single process: no rendezvous");
                return -ENOENT;
        }
        strbuf_printf(err, err_size,
                      "rank %d of %d (launched by %s) does not know where rank 0 is: give --rendezvous tcp://HOST:PORT "
                      "(HOST: rank 0's node) or file:PATH (a shared filesystem), or set MASTER_ADDR and MASTER_PORT",
                      ranks ? ranks->rank : 0, ranks ? ranks->size : 1, rdv_launcher_name(ranks ? ranks->launcher : 0));
        return -ENOENT;
}

void rdv_address_format(const struct rdv_address *a, char *buf, size_t size) {
        if (a->transport == RDV_FILE)
                snprintf(buf, size, "file:%s", a->path);
        else if (strchr(a->host, ':'))
                snprintf(buf, size, "tcp://[%s]:%s", a->host, a->port);
        else
                snprintf(buf, size, "tcp://%s:%s", a->host, a->port);
}
