/* Rendezvous of the processes of one multi-process benchmark (gpuvet bench nccl, issue 15),
 * without an MPI library: which rank this process is (from the launcher's environment),
 * where rank 0 is, rank 0's blob (NCCL's ncclUniqueId) handed to every rank, and at the end
 * every rank's result gathered to rank 0. Pure POSIX; nothing here knows NCCL, nothing
 * prints: errors are negative errnos with a message in the caller's err buffer.
 *
 * A run, on every rank:
 *     rdv_ranks_from_env(environ, &ranks, ...);
 *     rdv_address_parse(spec, ...) or rdv_address_default(environ, &ranks, ...);
 *     rdv_open(&ranks, &addr, &session, ...);
 *     rank 0: ncclGetUniqueId(&id); rdv_share(session, &id, &len, sizeof(id), ...)
 *     others: rdv_share(session, &id, &len, sizeof(id), ...)      (receives it)
 *     ... ncclCommInitRank, the benchmark ...
 *     rdv_gather(session, ok, result, result_len, &gathered, ...)  (rank 0 gets them all)
 *     rdv_close(session);
 * Every blocking call takes a timeout (monotonic clock) and ends with -ETIMEDOUT and a
 * message naming the ranks that did not come, never hangs. Messages on the wire and in
 * files are framed by rdv_msg_encode/rdv_msg_parse (magic, version, length, checksum). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RDV_MAX_RANKS 65536
#define RDV_KEY_MAX 128      /* the job key, with its NUL */
#define RDV_BLOB_MAX 512     /* what rank 0 shares (NCCL's id is 128 bytes) */
#define RDV_GATHER_MAX 4096  /* what each rank gives the gather */
#define RDV_DEFAULT_PORT_BASE 29500u
#define RDV_DERIVED_PORTS 1000u /* Slurm-derived ports: base .. base + 999 */
#define RDV_SECRET_MIN 16     /* bytes: a shorter secret is refused as guessable */
#define RDV_SECRET_MAX 1024
#define RDV_CHALLENGE_BYTES 16
#define RDV_MAC_BYTES 32      /* HMAC-SHA256 */
#define RDV_MAX_LISTEN 16     /* rank 0's listening sockets (one per address it binds) */

enum rdv_launcher {
        RDV_LAUNCHER_NONE,    /* one process, nothing launched it with ranks */
        RDV_LAUNCHER_GPUVET,  /* GPUVET_RANK / GPUVET_WORLD_SIZE */
        RDV_LAUNCHER_OPENMPI, /* mpirun of Open MPI: OMPI_COMM_WORLD_* */
        RDV_LAUNCHER_SLURM,   /* a task of srun: SLURM_PROCID with SLURM_STEP_ID */
        RDV_LAUNCHER_PMI,     /* MPICH/Hydra, Intel MPI: PMI_RANK / PMI_SIZE */
        RDV_LAUNCHER_PMIX,    /* a PMIx server (PRRTE): PMIX_RANK */
        RDV_LAUNCHER_COUNT,
};

struct rdv_ranks {
        enum rdv_launcher launcher;
        int rank, size;             /* 0 <= rank < size <= RDV_MAX_RANKS */
        int local_rank, local_size; /* on this node; local_size 0 when the launcher does not say */
        char job_key[RDV_KEY_MAX];  /* "" when the launcher names no job (explicit runs) */
        /* The job's rendezvous secret (rdv_secret_from_env), which every rank proves it holds
         * and rank 0 proves back; secret_len 0: none, and any process that reaches rank 0's
         * port and names a free rank is taken for it (docs/bench.md, "Trust"). */
        size_t secret_len;
        uint8_t secret[RDV_SECRET_MAX];
};

/* "none", "gpuvet", "openmpi", "slurm", "pmi", "pmix". */
const char *rdv_launcher_name(enum rdv_launcher l);

/* The ranks from a NULL-terminated "NAME=value" environment (environ), first launcher
 * that matches wins:
 *  1. GPUVET_RANK/GPUVET_WORLD_SIZE[/GPUVET_LOCAL_RANK/GPUVET_LOCAL_SIZE];
 *  2. Open MPI's OMPI_COMM_WORLD_RANK/_SIZE/_LOCAL_RANK/_LOCAL_SIZE;
 *  3. PMI_RANK/PMI_SIZE with MPI_LOCALRANKID/MPI_LOCALNRANKS (MPICH's Hydra, Intel MPI);
 *  4. PMIX_RANK with PMIX_SIZE (else OMPI_UNIVERSE_SIZE, else GPUVET_WORLD_SIZE);
 *  5. Slurm: SLURM_PROCID/SLURM_LOCALID with SLURM_STEP_NUM_TASKS (else SLURM_NTASKS) and
 *     the local size from SLURM_STEP_TASKS_PER_NODE (else SLURM_TASKS_PER_NODE) at
 *     SLURM_NODEID -- only in a task of srun, that is when SLURM_STEP_ID (or SLURM_STEPID)
 *     is a step id up to 0xfffffff0: a batch script (sbatch without srun), an salloc shell
 *     or its interactive step, or the extern step have SLURM_NTASKS and even SLURM_PROCID=0,
 *     yet are one process.
 * The MPI launchers come before Slurm because under Slurm they start their ranks from a
 * daemon per node that srun launched, whose SLURM_PROCID and step size the ranks inherit;
 * PMI's and PMIx's variables are skipped where they are srun's own (srun --mpi=pmi2/pmix:
 * the same rank, and the same size or none), as Slurm's then say more (the local size).
 * None: one process, rank 0 of 1. Without the launcher's local rank, the local rank is the
 * rank and the local size 0 (unknown). The job key is GPUVET_JOB_KEY, else the launcher's
 * job: "SLURM_JOB_ID.SLURM_STEP_ID", OMPI_MCA_ess_base_jobid (else PMIX_NAMESPACE),
 * PMI_KVSNAME (else PMIX_NAMESPACE), PMIX_NAMESPACE.
 * Returns 0, or -EINVAL with a message naming the variable and its value (a malformed
 * number, rank outside 0..size-1, size over RDV_MAX_RANKS, local rank not below the local
 * size, PMIX_RANK without a size). */
/* NAME's value in envp (NAME=VALUE entries, as environ), or NULL: the readers take an
 * environment as an argument so that the fuzzer and the tests can give one. */
const char *rdv_env_get(const char *const *envp, const char *name);

int rdv_ranks_from_env(const char *const *envp, struct rdv_ranks *ret, char *err, size_t err_size);

/* The job's rendezvous secret into ranks->secret: GPUVET_RENDEZVOUS_SECRET (the value's
 * bytes), else the contents of the file GPUVET_RENDEZVOUS_SECRET_FILE names, without its
 * trailing newline -- a regular file this user owns that neither its group nor others may
 * read (as ssh asks of a private key). Neither set: secret_len 0 and 0 returned. -EINVAL
 * with a message for a secret under RDV_SECRET_MIN or over RDV_SECRET_MAX bytes, or a file
 * that cannot be read or is open to others; the secret's bytes never appear in a message. */
int rdv_secret_from_env(const char *const *envp, struct rdv_ranks *ranks, char *err, size_t err_size);

/* Slurm's per-node task counts ("8(x2),4": 8 on nodes 0 and 1, 4 on node 2): the count on
 * node node_index. 0, -EINVAL (malformed), or -ERANGE (fewer nodes than node_index + 1). */
int rdv_slurm_tasks_on_node(const char *tasks_per_node, int node_index, int *ret);

/* The first host of a Slurm hostlist ("gpu[01-04,07],login1" -> "gpu01"; zero padding
 * kept; several bracket groups "rack[1-2]-gpu[3-4]" -> "rack1-gpu3"). 0, -EINVAL
 * (malformed, empty), -ENAMETOOLONG (does not fit size). */
int rdv_hostlist_first(const char *hostlist, char *buf, size_t size);

enum rdv_transport {
        RDV_TCP,  /* rank 0 listens on host:port; the others connect */
        RDV_FILE, /* a file on a filesystem every rank sees (rank 0 writes, others poll) */
};

struct rdv_address {
        enum rdv_transport transport;
        char host[256]; /* TCP: a name or an address, IPv6 without its brackets */
        char port[8];   /* TCP: "0" lets rank 0 pick one (tests: rdv_bound_port) */
        char path[4096]; /* FILE */
};

/* "tcp://HOST:PORT" (HOST may be "[v6]") or "file:PATH". 0 or -EINVAL with a message. */
int rdv_address_parse(const char *spec, struct rdv_address *ret, char *err, size_t err_size);
/* When the user gave no --rendezvous: GPUVET_RENDEZVOUS (a spec as above); else MASTER_ADDR
 * and MASTER_PORT (torchrun's convention; port RDV_DEFAULT_PORT_BASE without MASTER_PORT) -> tcp;
 * else, for the tasks of srun (ranks->launcher RDV_LAUNCHER_SLURM), the first host of
 * SLURM_STEP_NODELIST (else SLURM_JOB_NODELIST), where srun's block distribution puts task
 * 0, and port rdv_slurm_port(SLURM_JOB_ID, SLURM_STEP_ID) -- not for mpirun's ranks inside an
 * allocation, whose step differs between mpirun's node and the others; else (size > 1) -ENOENT
 * with a message saying what to set. A single process needs none: -ENOENT too, and the
 * caller skips the rendezvous. -EINVAL for a malformed value. */
int rdv_address_default(const char *const *envp, const struct rdv_ranks *ranks, struct rdv_address *ret, char *err,
                        size_t err_size);
/* The port of a Slurm step: RDV_DEFAULT_PORT_BASE + (job_id * 64 + step_id) % RDV_DERIVED_PORTS,
 * so the steps of one job and jobs of nearby ids sharing a first node differ. */
unsigned rdv_slurm_port(unsigned long job_id, unsigned long step_id);
/* "tcp://host:port" or "file:path", for messages. */
void rdv_address_format(const struct rdv_address *a, char *buf, size_t size);

struct rdv_session;

/* Start this rank's part: rank 0 of a tcp address binds and listens at once (so that a
 * port "0" is known, and peers that come early find it) where the address says: a numeric
 * address there only (0.0.0.0 or :: for every address of the node); a name on the
 * addresses it resolves to on this node -- and when those are all loopback while the name
 * is not localhost's (Debian's /etc/hosts gives the node's own name 127.0.1.1), on the
 * node's other addresses too, where the other nodes reach it. It raises its soft limit of
 * open files to size + 64 when lower (a connection per rank stays open until rdv_close);
 * the others connect in rdv_share. 0, -EADDRNOTAVAIL (the address is not this node's),
 * -EADDRINUSE and the like (rank 0 could not listen), -EMFILE (the hard limit of open files
 * is below size + 64), -ENOENT (Nettle, for the messages' HMAC, could not be loaded),
 * -ENOMEM; with a message. */
int rdv_open(const struct rdv_ranks *ranks, const struct rdv_address *addr, struct rdv_session **ret, char *err,
             size_t err_size);
/* The port rank 0 listens on (tcp), 0 otherwise. */
unsigned rdv_bound_port(const struct rdv_session *s);
/* Rank 0 (tcp): the addresses it listens on, numeric, "127.0.0.1:5000, [::1]:5000". */
void rdv_listening(const struct rdv_session *s, char *buf, size_t size);
/* Where rank 0 tells what it refused while it waits (a connection that was no rank, a
 * forged or malformed hello): one line each, "refused 127.0.0.1:40312: why". NULL: only
 * the last one, in the timeout's message. */
void rdv_set_log(struct rdv_session *s, void (*log)(void *ctx, const char *line), void *ctx);

/* Rank 0: give blob[0..*len) to every other rank, returning once all size - 1 have joined
 * and been answered (then it stops listening). Others: wait for rank 0 (connecting again
 * until the deadline: it may start later) and receive its blob into blob (capacity cap), its
 * length in *len; over a file, they return once rank 0 has seen them. Once per session.
 * Over tcp, rank 0 first sends each connection a challenge; a rank answers with its HELLO
 * and an HMAC of both sides' challenges, its rank, world size and job key under the job's
 * secret, and rank 0's blob comes with an HMAC the rank checks in turn, so neither side
 * takes the other's word without the secret. Rank 0 refuses, tells rdv_set_log's log, and
 * drops a connection that is not a rank of this job -- a wrong proof, a malformed message,
 * another job key or world size, a rank out of range or already taken -- and goes on
 * waiting for the real rank: nothing a connection sends ends the rendezvous.
 * Returns 0; -ETIMEDOUT ("rank 3 of 4 did not join within 30 s (tcp://host:port); refused:
 * ..." naming the last refusal); "rank 2 of 4: rank 0 at ... did not answer within 30 s");
 * -EPROTO when rank 0 refused this rank (why in the message), or rank 0 could not prove the
 * secret; -ENXIO (rank 0's host name does not resolve: told at once, not at the
 * deadline); -EMSGSIZE (blob over RDV_BLOB_MAX or cap); others from the system calls. */
int rdv_share(struct rdv_session *s, void *blob, size_t *len, size_t cap, unsigned timeout_ms, char *err,
              size_t err_size);

enum rdv_rank_state {
        RDV_RANK_MISSING, /* did not report before the deadline */
        RDV_RANK_OK,      /* data holds its result */
        RDV_RANK_FAILED,  /* data holds its error message */
};

struct rdv_gathered {
        int size;
        struct rdv_rank_result {
                enum rdv_rank_state state;
                size_t len;
                unsigned char *data; /* len bytes and a NUL (for messages); NULL when missing */
        } *ranks; /* size entries, rank 0's own included */
};

/* Every rank gives one blob (up to RDV_GATHER_MAX): its result when ok, else its error
 * message; rank 0 gets all of them into *ret (others: ret may be NULL). Ends as a barrier:
 * no rank returns 0 before rank 0 holds every rank's blob. A rank whose connection ends
 * before its blob is RDV_RANK_FAILED with a message saying so (its process died: the gather
 * need not wait for it). Rank 0 returns 0 when every rank is OK or FAILED; with -ETIMEDOUT
 * (missing ranks RDV_RANK_MISSING, named in the message) *ret is filled all the same, so a
 * report can still show the ranks that came. Once only. Free with rdv_gathered_free (also
 * after an error). */
int rdv_gather(struct rdv_session *s, bool ok, const void *data, size_t len, struct rdv_gathered *ret,
               unsigned timeout_ms, char *err, size_t err_size);
void rdv_gathered_free(struct rdv_gathered *g);

/* Close the connections; rank 0 of a file address removes the files it wrote. NULL is fine. */
void rdv_close(struct rdv_session *s);

/* ---- the wire (and file) format, exposed for the fuzzer and the tests ------------------
 * Header: magic "GVRV", version (u16), type (u16), payload length (u32), FNV-1a checksum of
 * the payload (u32); payload: rank (u32), size (u32), nonce (u64), status (u8), key length
 * (u8), challenge (16 bytes), mac (32 bytes), the key, the data; all little-endian.
 * Version 2 added the challenge and the mac (version 1 ranks are refused as malformed). */
#define RDV_MSG_MAGIC 0x56525647u /* "GVRV" read as little-endian */
#define RDV_MSG_VERSION 2u
#define RDV_MSG_HEADER 16u
#define RDV_MSG_FIXED (18u + RDV_CHALLENGE_BYTES + RDV_MAC_BYTES)
#define RDV_MSG_MAX (RDV_MSG_HEADER + RDV_MSG_FIXED + 255u + RDV_GATHER_MAX)

enum rdv_msg_type {
        RDV_MSG_HELLO = 1, /* a rank to rank 0: its rank, the world size, the job key */
        RDV_MSG_BLOB,      /* rank 0's blob (tcp reply, and the file rank 0 publishes) */
        RDV_MSG_REFUSE,    /* rank 0 to a rank it refuses: data is why */
        RDV_MSG_RESULT,    /* a rank's gathered blob; status 0 ok, 1 failed */
        RDV_MSG_RELEASE,   /* rank 0 to all: the gather is complete */
        RDV_MSG_CHALLENGE, /* rank 0 to a connection it accepted: challenge is its nonce */
        RDV_MSG_TYPE_COUNT,
};

struct rdv_msg {
        enum rdv_msg_type type;
        uint32_t rank, size;
        uint64_t nonce; /* rank 0's session, so that the files of another run are ignored */
        uint8_t status;
        uint8_t challenge[RDV_CHALLENGE_BYTES]; /* CHALLENGE: rank 0's; HELLO: the rank's */
        uint8_t mac[RDV_MAC_BYTES];             /* rdv_msg_mac: HELLO, BLOB, and the files */
        char key[RDV_KEY_MAX];
        const uint8_t *data; /* into the parsed buffer (rdv_msg_parse), or the caller's */
        size_t data_len;     /* <= RDV_GATHER_MAX */
};

/* Encode m into buf (cap bytes). Returns the length, or 0 when it does not fit or m is
 * invalid (key over 127 bytes, data over RDV_GATHER_MAX, an unknown type). */
size_t rdv_msg_encode(const struct rdv_msg *m, uint8_t *buf, size_t cap);
/* Parse one message at the start of buf: 0 with *ret (data pointing into buf) and its
 * length in *ret_used; -EAGAIN when buf holds only its beginning (read more); -EBADMSG
 * when it is not one (magic, version, type, length over RDV_MSG_MAX, checksum, a key
 * longer than the payload or with a NUL). Pure: no I/O, no allocation. */
int rdv_msg_parse(const uint8_t *buf, size_t len, struct rdv_msg *ret, size_t *ret_used);
/* The HMAC-SHA256, under secret (secret_len 0: an empty key, which proves nothing), of m's
 * type, rank, size, nonce, status, key and data, with the two challenges of its exchange
 * (rank 0's, then the rank's; zeros where there are none); m->mac is not part of it. */
void rdv_msg_mac(const uint8_t *secret, size_t secret_len, const struct rdv_msg *m,
                 const uint8_t root_challenge[RDV_CHALLENGE_BYTES], const uint8_t rank_challenge[RDV_CHALLENGE_BYTES],
                 uint8_t ret[RDV_MAC_BYTES]);
/* Whether m->mac is that HMAC (compared in constant time). */
bool rdv_msg_mac_ok(const uint8_t *secret, size_t secret_len, const struct rdv_msg *m,
                    const uint8_t root_challenge[RDV_CHALLENGE_BYTES], const uint8_t rank_challenge[RDV_CHALLENGE_BYTES]);
