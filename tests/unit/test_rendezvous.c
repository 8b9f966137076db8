/* bench/rendezvous.h: the launchers' environments (each launcher, precedence, bad values,
 * Slurm's batch script that is one process), Slurm's per-node task counts and host lists,
 * the address specs and their defaults, the message framing, and the exchanges with ranks
 * as fork()ed children on 127.0.0.1 (rank 0 in this process, on a port the kernel picks):
 * tcp (IPv4, IPv6, localhost) and file with 4 ranks, the gather with one rank reporting a
 * failure, a rank that never comes (rank 0 and a waiting rank both end at their deadline), a
 * disagreeing world size, a rank of another job refused, strangers on the port, a host that
 * does not exist, the limit of open files, a stale file of another job (and of the same key)
 * ignored, ranks silent or gone at the gather, and no file left behind. The job's secret
 * (issue 38, N14): forged hellos refused and logged while the real rank joins after them, a
 * rank or a "rank 0" with another secret not believed, over tcp and a file; the secret from
 * the environment or a private file; rank 0 listening only where the address says.
 * Success paths have deadlines of 30 s (scaled), the expected timeouts 300 ms; elapsed
 * times are bounded from above generously, never from below beyond the deadline itself. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <cmocka.h>

#include "bench/rendezvous.h"
#include "timescale.h"

#define OK_MS ((unsigned)SCALED_MS(30000))
#define SHORT_MS 300u

static char err[1024];

static int ranks_of(const char *const *envp, struct rdv_ranks *r) {
        err[0] = '\0';
        memset(r, 0x5a, sizeof(*r));
        return rdv_ranks_from_env(envp, r, err, sizeof(err));
}

static void test_launchers(void **state) {
        (void)state;
        struct rdv_ranks r;
        const char *none[] = {"HOME=/root", NULL};
        assert_int_equal(ranks_of(none, &r), 0);
        assert_int_equal(r.launcher, RDV_LAUNCHER_NONE);
        assert_int_equal(r.rank, 0);
        assert_int_equal(r.size, 1);
        assert_string_equal(r.job_key, "");

        const char *gpuvet[] = {"GPUVET_RANK=3", "GPUVET_WORLD_SIZE=8", "GPUVET_LOCAL_RANK=1", "GPUVET_LOCAL_SIZE=4",
                                "GPUVET_JOB_KEY=run7", "OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=2", NULL};
        assert_int_equal(ranks_of(gpuvet, &r), 0);
        assert_int_equal(r.launcher, RDV_LAUNCHER_GPUVET);
        assert_int_equal(r.rank, 3);
        assert_int_equal(r.size, 8);
        assert_int_equal(r.local_rank, 1);
        assert_int_equal(r.local_size, 4);
        assert_string_equal(r.job_key, "run7");
        assert_string_equal(rdv_launcher_name(r.launcher), "gpuvet");

        /* mpirun inside a Slurm allocation: Open MPI's variables describe the ranks */
        const char *ompi[] = {"SLURM_PROCID=0", "SLURM_STEP_ID=0", "SLURM_NTASKS=2", "SLURM_JOB_ID=5",
                              "OMPI_COMM_WORLD_RANK=9", "OMPI_COMM_WORLD_SIZE=16", "OMPI_COMM_WORLD_LOCAL_RANK=1",
                              "OMPI_COMM_WORLD_LOCAL_SIZE=8", "OMPI_MCA_ess_base_jobid=1234567", NULL};
        assert_int_equal(ranks_of(ompi, &r), 0);
        assert_int_equal(r.launcher, RDV_LAUNCHER_OPENMPI);
        assert_int_equal(r.rank, 9);
        assert_int_equal(r.size, 16);
        assert_int_equal(r.local_rank, 1);
        assert_int_equal(r.local_size, 8);
        assert_string_equal(r.job_key, "1234567");

        const char *srun[] = {"SLURM_JOB_ID=4242", "SLURM_STEP_ID=3", "SLURM_PROCID=10", "SLURM_NTASKS=12",
                              "SLURM_STEP_NUM_TASKS=20", "SLURM_LOCALID=2", "SLURM_NODEID=2",
                              "SLURM_STEP_TASKS_PER_NODE=8(x2),4", "SLURM_TASKS_PER_NODE=4(x3)", NULL};
        assert_int_equal(ranks_of(srun, &r), 0);
        assert_int_equal(r.launcher, RDV_LAUNCHER_SLURM);
        assert_int_equal(r.rank, 10);
        assert_int_equal(r.size, 20);
        assert_int_equal(r.local_rank, 2);
        assert_int_equal(r.local_size, 4);
        assert_string_equal(r.job_key, "4242.3");

        /* sbatch's script: SLURM_NTASKS=4 and SLURM_PROCID=0, but no step: one process */
        const char *batch[] = {"SLURM_JOB_ID=200505", "SLURM_NTASKS=4", "SLURM_PROCID=0", "SLURM_LOCALID=0",
                               "SLURM_TASKS_PER_NODE=1(x4)", NULL};
        assert_int_equal(ranks_of(batch, &r), 0);
        assert_int_equal(r.launcher, RDV_LAUNCHER_NONE);
        assert_int_equal(r.size, 1);
        const char *batch_step[] = {"SLURM_JOB_ID=1", "SLURM_STEP_ID=4294967294", "SLURM_NTASKS=4", "SLURM_PROCID=0",
                                    NULL};
        assert_int_equal(ranks_of(batch_step, &r), 0);
        assert_int_equal(r.launcher, RDV_LAUNCHER_NONE);

        /* salloc's interactive step, and the extern step written as a name: one process */
        const char *interactive[] = {"SLURM_JOB_ID=1", "SLURM_STEP_ID=4294967290", "SLURM_NTASKS=4", "SLURM_PROCID=0",
                                     NULL};
        assert_int_equal(ranks_of(interactive, &r), 0);
        assert_int_equal(r.launcher, RDV_LAUNCHER_NONE);
        const char *extern_step[] = {"SLURM_JOB_ID=1", "SLURM_STEP_ID=extern", "SLURM_NTASKS=4", "SLURM_PROCID=0", NULL};
        assert_int_equal(ranks_of(extern_step, &r), 0);
        assert_int_equal(r.launcher, RDV_LAUNCHER_NONE);

        /* Hydra (mpiexec) under Slurm: its proxies are srun's tasks (one per node), the ranks
         * inherit a proxy's SLURM_PROCID and step size: PMI's variables are the ranks' */
        const char *hydra_slurm[] = {"SLURM_JOB_ID=9", "SLURM_STEP_ID=0", "SLURM_PROCID=1", "SLURM_STEP_NUM_TASKS=2",
                                     "SLURM_NODEID=1", "SLURM_STEP_TASKS_PER_NODE=1(x2)", "PMI_RANK=9", "PMI_SIZE=16",
                                     "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=8", NULL};
        assert_int_equal(ranks_of(hydra_slurm, &r), 0);
        assert_int_equal(r.launcher, RDV_LAUNCHER_PMI);
        assert_int_equal(r.rank, 9);
        assert_int_equal(r.size, 16);
        assert_int_equal(r.local_size, 8);
        const char *hydra_slurm0[] = {"SLURM_STEP_ID=0", "SLURM_PROCID=0", "SLURM_STEP_NUM_TASKS=2", "PMI_RANK=0",
                                      "PMI_SIZE=16", NULL};
        assert_int_equal(ranks_of(hydra_slurm0, &r), 0);
        assert_int_equal(r.launcher, RDV_LAUNCHER_PMI);
        assert_int_equal(r.size, 16);
        /* srun --mpi=pmix: PMIX_RANK is SLURM_PROCID, with no size of its own: Slurm's */
        const char *srun_pmix[] = {"SLURM_JOB_ID=9", "SLURM_STEP_ID=1", "SLURM_PROCID=3", "SLURM_STEP_NUM_TASKS=4",
                                   "PMIX_RANK=3", "PMIX_NAMESPACE=slurm.pmix.9.1", NULL};
        assert_int_equal(ranks_of(srun_pmix, &r), 0);
        assert_int_equal(r.launcher, RDV_LAUNCHER_SLURM);
        assert_int_equal(r.size, 4);
        assert_string_equal(r.job_key, "9.1");
        /* srun --mpi=pmi2: the same ranks both ways; Slurm's says more (the local size) */
        const char *srun_pmi2[] = {"SLURM_STEP_ID=1", "SLURM_PROCID=3", "SLURM_STEP_NUM_TASKS=4", "SLURM_NODEID=1",
                                   "SLURM_STEP_TASKS_PER_NODE=2(x2)", "SLURM_LOCALID=1", "PMI_RANK=3", "PMI_SIZE=4",
                                   NULL};
        assert_int_equal(ranks_of(srun_pmi2, &r), 0);
        assert_int_equal(r.launcher, RDV_LAUNCHER_SLURM);
        assert_int_equal(r.local_size, 2);
        /* PRRTE's prterun under Slurm without PMIX_SIZE: a rank that is no srun task's */
        const char *prte_slurm[] = {"SLURM_STEP_ID=0", "SLURM_PROCID=1", "SLURM_STEP_NUM_TASKS=2", "PMIX_RANK=12",
                                    NULL};
        assert_int_equal(ranks_of(prte_slurm, &r), -EINVAL);
        assert_non_null(strstr(err, "GPUVET_WORLD_SIZE"));

        const char *hydra[] = {"PMI_RANK=5", "PMI_SIZE=6", "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=2",
                               "PMI_KVSNAME=kvs_123_0", NULL};
        assert_int_equal(ranks_of(hydra, &r), 0);
        assert_int_equal(r.launcher, RDV_LAUNCHER_PMI);
        assert_int_equal(r.rank, 5);
        assert_int_equal(r.size, 6);
        assert_int_equal(r.local_rank, 1);
        assert_int_equal(r.local_size, 2);
        assert_string_equal(r.job_key, "kvs_123_0");

        const char *pmix[] = {"PMIX_RANK=2", "OMPI_UNIVERSE_SIZE=4", "PMIX_NAMESPACE=prterun-node1-77@1", NULL};
        assert_int_equal(ranks_of(pmix, &r), 0);
        assert_int_equal(r.launcher, RDV_LAUNCHER_PMIX);
        assert_int_equal(r.rank, 2);
        assert_int_equal(r.size, 4);
        assert_string_equal(r.job_key, "prterun-node1-77@1");
        const char *pmix_own[] = {"PMIX_RANK=2", "GPUVET_WORLD_SIZE=3", NULL};
        assert_int_equal(ranks_of(pmix_own, &r), 0);
        assert_int_equal(r.size, 3);
        const char *pmix_alone[] = {"PMIX_RANK=2", NULL};
        assert_int_equal(ranks_of(pmix_alone, &r), -EINVAL);
        assert_non_null(strstr(err, "GPUVET_WORLD_SIZE"));
}

static void expect_refused(const char *const *envp, const char *needle) {
        struct rdv_ranks r;
        assert_int_equal(ranks_of(envp, &r), -EINVAL);
        if (!strstr(err, needle))
                fail_msg("message \"%s\" does not name \"%s\"", err, needle);
}

static void test_bad_values(void **state) {
        (void)state;
        const char *not_number[] = {"GPUVET_RANK=1x", "GPUVET_WORLD_SIZE=4", NULL};
        expect_refused(not_number, "GPUVET_RANK=1x");
        const char *negative[] = {"OMPI_COMM_WORLD_RANK=-1", "OMPI_COMM_WORLD_SIZE=4", NULL};
        expect_refused(negative, "OMPI_COMM_WORLD_RANK=-1");
        const char *beyond[] = {"PMI_RANK=4", "PMI_SIZE=4", NULL};
        expect_refused(beyond, "PMI_RANK=4");
        const char *zero[] = {"GPUVET_RANK=0", "GPUVET_WORLD_SIZE=0", NULL};
        expect_refused(zero, "GPUVET_WORLD_SIZE=0");
        const char *huge[] = {"GPUVET_RANK=0", "GPUVET_WORLD_SIZE=65537", NULL};
        expect_refused(huge, "GPUVET_WORLD_SIZE=65537");
        const char *empty[] = {"GPUVET_RANK=", "GPUVET_WORLD_SIZE=2", NULL};
        expect_refused(empty, "GPUVET_RANK=");
        const char *no_size[] = {"GPUVET_RANK=0", NULL};
        expect_refused(no_size, "GPUVET_WORLD_SIZE");
        const char *spaces[] = {"SLURM_PROCID= 1", "SLURM_STEP_ID=0", "SLURM_NTASKS=2", NULL};
        expect_refused(spaces, "SLURM_PROCID= 1");
        const char *local[] = {"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=2",
                               "OMPI_COMM_WORLD_LOCAL_SIZE=2", NULL};
        expect_refused(local, "OMPI_COMM_WORLD_LOCAL_RANK");
        const char *per_node[] = {"SLURM_PROCID=1", "SLURM_STEP_ID=0", "SLURM_NTASKS=2", "SLURM_NODEID=3",
                                  "SLURM_STEP_TASKS_PER_NODE=1(x2)", NULL};
        expect_refused(per_node, "SLURM_STEP_TASKS_PER_NODE=1(x2)");
        const char *max_ok[] = {"GPUVET_RANK=65535", "GPUVET_WORLD_SIZE=65536", NULL};
        struct rdv_ranks r;
        assert_int_equal(ranks_of(max_ok, &r), 0);
}

static void test_tasks_per_node(void **state) {
        (void)state;
        int n = -1;
        assert_int_equal(rdv_slurm_tasks_on_node("8(x2),4", 0, &n), 0);
        assert_int_equal(n, 8);
        assert_int_equal(rdv_slurm_tasks_on_node("8(x2),4", 1, &n), 0);
        assert_int_equal(n, 8);
        assert_int_equal(rdv_slurm_tasks_on_node("8(x2),4", 2, &n), 0);
        assert_int_equal(n, 4);
        assert_int_equal(rdv_slurm_tasks_on_node("8(x2),4", 3, &n), -ERANGE);
        assert_int_equal(rdv_slurm_tasks_on_node("2,3(x3),1", 3, &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(rdv_slurm_tasks_on_node("2,3(x3),1", 4, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(rdv_slurm_tasks_on_node("16", 0, &n), 0);
        assert_int_equal(n, 16);
        const char *bad[] = {"", "x", "8(2)", "8(x)", "8(x0)", "8(x2", "8,", ",8", "8(x2),y", "8 ,4", "-1"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                if (rdv_slurm_tasks_on_node(bad[i], 0, &n) != -EINVAL)
                        fail_msg("\"%s\" accepted", bad[i]);
}

static void test_hostlist(void **state) {
        (void)state;
        char host[64];
        struct {
                const char *list, *first;
        } good[] = {
                {"gpu[01-04,07],login1", "gpu01"}, {"node7", "node7"},          {"a,b", "a"},
                {"gpu[007]", "gpu007"},             {"rack[1-2]-gpu[3-4]", "rack1-gpu3"},
                {"[5-6]n", "5n"},                   {"gpu[09-10]", "gpu09"},     {"dgx-h100-[000-127]", "dgx-h100-000"},
                {"n[3,1]", "n3"},
        };
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                assert_int_equal(rdv_hostlist_first(good[i].list, host, sizeof(host)), 0);
                assert_string_equal(host, good[i].first);
        }
        const char *bad[] = {"", ",a", "gpu[", "gpu[]", "gpu[a-b]", "gpu]1", "gpu[1-]", "gpu[-1]", "a b", "gpu[[1]]"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                if (rdv_hostlist_first(bad[i], host, sizeof(host)) != -EINVAL)
                        fail_msg("\"%s\" accepted", bad[i]);
        char tiny[5];
        assert_int_equal(rdv_hostlist_first("gpu[01-02]", tiny, sizeof(tiny)), -ENAMETOOLONG);
        assert_int_equal(rdv_hostlist_first("gpu[1]", tiny, sizeof(tiny)), 0);
        assert_string_equal(tiny, "gpu1");
}

static void test_addresses(void **state) {
        (void)state;
        struct rdv_address a;
        char text[256];
        assert_int_equal(rdv_address_parse("tcp://node01:29500", &a, err, sizeof(err)), 0);
        assert_int_equal(a.transport, RDV_TCP);
        assert_string_equal(a.host, "node01");
        assert_string_equal(a.port, "29500");
        assert_int_equal(rdv_address_parse("tcp://[fe80::1]:7", &a, err, sizeof(err)), 0);
        assert_string_equal(a.host, "fe80::1");
        rdv_address_format(&a, text, sizeof(text));
        assert_string_equal(text, "tcp://[fe80::1]:7");
        assert_int_equal(rdv_address_parse("file:/shared/rdv", &a, err, sizeof(err)), 0);
        assert_int_equal(a.transport, RDV_FILE);
        assert_string_equal(a.path, "/shared/rdv");
        const char *bad[] = {"node01:29500", "tcp://node01", "tcp://:1", "tcp://h:65536", "tcp://h:x", "tcp://::1:5",
                             "tcp://[::1]5", "file:", "udp://h:1", "tcp://h/x:1"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                if (rdv_address_parse(bad[i], &a, err, sizeof(err)) != -EINVAL)
                        fail_msg("\"%s\" accepted", bad[i]);

        struct rdv_ranks two = {.launcher = RDV_LAUNCHER_SLURM, .rank = 1, .size = 2};
        const char *torch[] = {"MASTER_ADDR=10.0.0.1", "MASTER_PORT=1234", "SLURM_JOB_NODELIST=x[1-2]",
                               "SLURM_JOB_ID=9", NULL};
        assert_int_equal(rdv_address_default(torch, &two, &a, err, sizeof(err)), 0);
        assert_string_equal(a.host, "10.0.0.1");
        assert_string_equal(a.port, "1234");
        const char *own[] = {"GPUVET_RENDEZVOUS=file:/shared/r", "MASTER_ADDR=10.0.0.1", NULL};
        assert_int_equal(rdv_address_default(own, &two, &a, err, sizeof(err)), 0);
        assert_int_equal(a.transport, RDV_FILE);
        assert_string_equal(a.path, "/shared/r");
        const char *own_bad[] = {"GPUVET_RENDEZVOUS=node1:5", NULL};
        assert_int_equal(rdv_address_default(own_bad, &two, &a, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "GPUVET_RENDEZVOUS=node1:5"));
        const char *no_port[] = {"MASTER_ADDR=node9", NULL};
        assert_int_equal(rdv_address_default(no_port, &two, &a, err, sizeof(err)), 0);
        assert_string_equal(a.port, "29500");
        const char *torch_bad[] = {"MASTER_ADDR=h", "MASTER_PORT=0", NULL};
        assert_int_equal(rdv_address_default(torch_bad, &two, &a, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "MASTER_PORT=0"));
        const char *slurm[] = {"SLURM_JOB_ID=123456", "SLURM_STEP_ID=2", "SLURM_JOB_NODELIST=all[1-9]",
                               "SLURM_STEP_NODELIST=gpu[07-08],cpu1", NULL};
        assert_int_equal(rdv_address_default(slurm, &two, &a, err, sizeof(err)), 0);
        assert_string_equal(a.host, "gpu07");
        char port[16];
        snprintf(port, sizeof(port), "%u", rdv_slurm_port(123456, 2));
        assert_string_equal(a.port, port);
        /* (123456 * 64 + 2) % 1000 = 186 */
        assert_int_equal(rdv_slurm_port(123456, 2), 29500 + 186);
        assert_true(rdv_slurm_port(123456, 2) != rdv_slurm_port(123456, 3));
        for (unsigned long j = 0; j < 5000; j += 7)
                assert_true(rdv_slurm_port(j, j % 5) >= 29500 && rdv_slurm_port(j, j % 5) < 30500);
        /* mpirun's ranks in an allocation: no address from Slurm's variables */
        struct rdv_ranks ompi = {.launcher = RDV_LAUNCHER_OPENMPI, .rank = 1, .size = 2};
        assert_int_equal(rdv_address_default(slurm, &ompi, &a, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "launched by openmpi"));
        const char *nothing[] = {NULL};
        assert_int_equal(rdv_address_default(nothing, &two, &a, err, sizeof(err)), -ENOENT);
        assert_non_null(strstr(err, "--rendezvous"));
        assert_non_null(strstr(err, "MASTER_ADDR"));
}

static void test_messages(void **state) {
        (void)state;
        uint8_t buf[RDV_MSG_MAX];
        struct rdv_msg m = {.type = RDV_MSG_RESULT, .rank = 7, .size = 9, .nonce = 0x0102030405060708ull, .status = 1,
                            .data = (const uint8_t *)"boom", .data_len = 4};
        strcpy(m.key, "4242.0");
        size_t n = rdv_msg_encode(&m, buf, sizeof(buf));
        assert_int_equal(n, RDV_MSG_HEADER + RDV_MSG_FIXED + 6 + 4);
        assert_memory_equal(buf, "GVRV", 4);
        struct rdv_msg back;
        size_t used;
        assert_int_equal(rdv_msg_parse(buf, n, &back, &used), 0);
        assert_int_equal(used, n);
        assert_int_equal(back.type, RDV_MSG_RESULT);
        assert_int_equal(back.rank, 7);
        assert_int_equal(back.size, 9);
        assert_true(back.nonce == m.nonce);
        assert_int_equal(back.status, 1);
        assert_string_equal(back.key, "4242.0");
        assert_int_equal(back.data_len, 4);
        assert_memory_equal(back.data, "boom", 4);
        for (size_t k = 0; k < n; k++)
                assert_int_equal(rdv_msg_parse(buf, k, &back, &used), -EAGAIN);
        buf[n - 1] ^= 1;
        assert_int_equal(rdv_msg_parse(buf, n, &back, &used), -EBADMSG); /* the checksum */
        assert_int_equal(rdv_msg_parse((const uint8_t *)"GET / HTTP/1.1\r\n\r\n", 18, &back, &used), -EBADMSG);
        assert_int_equal(rdv_msg_parse((const uint8_t *)"GX", 2, &back, &used), -EBADMSG);
        m.data_len = RDV_GATHER_MAX + 1;
        assert_int_equal(rdv_msg_encode(&m, buf, sizeof(buf)), 0);
        m.data_len = 4;
        assert_int_equal(rdv_msg_encode(&m, buf, 20), 0);
}

/* ---- exchanges --------------------------------------------------------------------------- */

struct plan {
        int size;
        struct rdv_address addr;
        char key[RDV_KEY_MAX];
        int failing_rank;   /* gives an error string to the gather */
        int size_of[8];     /* the world size each rank believes (0: size) */
        unsigned share_ms;
        const char *secret;        /* every rank's (NULL: none) */
        const char *secret_of[8];  /* a rank's own, where it differs */
};

static void give_secret(struct rdv_ranks *r, const char *secret) {
        r->secret_len = secret ? strlen(secret) : 0;
        if (secret)
                memcpy(r->secret, secret, r->secret_len);
}

static struct rdv_ranks ranks_for(const struct plan *p, int rank) {
        struct rdv_ranks r = {.launcher = RDV_LAUNCHER_GPUVET, .rank = rank, .size = p->size_of[rank] ? p->size_of[rank] : p->size,
                              .local_rank = rank};
        snprintf(r.job_key, sizeof(r.job_key), "%s", p->key);
        give_secret(&r, p->secret_of[rank] ? p->secret_of[rank] : p->secret);
        return r;
}

/* A rank other than 0, in a child: share, check the blob, gather. Exits 0 on success, the
 * step that failed otherwise (its message on stderr). */
static void run_peer(const struct plan *p, int rank) {
        struct rdv_ranks r = ranks_for(p, rank);
        struct rdv_session *s;
        char e[512];
        if (rdv_open(&r, &p->addr, &s, e, sizeof(e)) < 0)
                _exit(10);
        unsigned char blob[RDV_BLOB_MAX];
        size_t len = 0;
        int rc = rdv_share(s, blob, &len, sizeof(blob), p->share_ms ? p->share_ms : OK_MS, e, sizeof(e));
        if (rc < 0) {
                fprintf(stderr, "rank %d: %s\n", rank, e);
                _exit(rc == -ETIMEDOUT ? 11 : rc == -EPROTO ? 12 : 13);
        }
        if (len != 128 || blob[0] != 0xab || blob[127] != 0xcd)
                _exit(14);
        char result[64];
        bool ok = rank != p->failing_rank;
        snprintf(result, sizeof(result), ok ? "rank %d busbw 400" : "rank %d: NCCL failed", rank);
        if (rdv_gather(s, ok, result, strlen(result), NULL, OK_MS, e, sizeof(e)) < 0) {
                fprintf(stderr, "rank %d: %s\n", rank, e);
                _exit(15);
        }
        rdv_close(s);
        _exit(0);
}

static pid_t spawn(const struct plan *p, int rank) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                run_peer(p, rank);
        return pid;
}

static int wait_exit(pid_t pid) {
        int st;
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static double elapsed_ms(const struct timespec *t0) {
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Rank 0 here, opened before the children so that their port is known. */
static struct rdv_session *open_root(struct plan *p) {
        struct rdv_ranks r = ranks_for(p, 0);
        struct rdv_session *s;
        assert_int_equal(rdv_open(&r, &p->addr, &s, err, sizeof(err)), 0);
        if (p->addr.transport == RDV_TCP) {
                assert_true(rdv_bound_port(s) > 0);
                snprintf(p->addr.port, sizeof(p->addr.port), "%u", rdv_bound_port(s));
        }
        return s;
}

static void full_run(struct plan *p) {
        struct rdv_session *s = open_root(p);
        pid_t pids[8];
        for (int r = 1; r < p->size; r++)
                pids[r] = spawn(p, r);
        unsigned char id[128];
        memset(id, 0x11, sizeof(id));
        id[0] = 0xab;
        id[127] = 0xcd;
        size_t len = sizeof(id);
        assert_int_equal(rdv_share(s, id, &len, sizeof(id), OK_MS, err, sizeof(err)), 0);
        struct rdv_gathered g;
        int rc = rdv_gather(s, true, "rank 0 busbw 400", 16, &g, OK_MS, err, sizeof(err));
        if (rc != 0)
                fail_msg("gather: %s", err);
        assert_int_equal(g.size, p->size);
        for (int r = 0; r < p->size; r++) {
                char want[64];
                bool ok = r != p->failing_rank;
                snprintf(want, sizeof(want), ok ? "rank %d busbw 400" : "rank %d: NCCL failed", r);
                assert_int_equal(g.ranks[r].state, ok ? RDV_RANK_OK : RDV_RANK_FAILED);
                assert_string_equal((const char *)g.ranks[r].data, want);
        }
        rdv_gathered_free(&g);
        rdv_close(s);
        for (int r = 1; r < p->size; r++)
                assert_int_equal(wait_exit(pids[r]), 0);
}

static void test_tcp(void **state) {
        (void)state;
        struct plan p = {.size = 4, .failing_rank = 2};
        assert_int_equal(rdv_address_parse("tcp://127.0.0.1:0", &p.addr, err, sizeof(err)), 0);
        strcpy(p.key, "77.0");
        full_run(&p);
        /* localhost by name, which may be IPv6 first: the dual-stack listener takes both */
        struct plan q = {.size = 3, .failing_rank = -1};
        assert_int_equal(rdv_address_parse("tcp://localhost:0", &q.addr, err, sizeof(err)), 0);
        full_run(&q);
}

/* Over IPv6 loopback, where this machine has it. */
static void test_tcp6(void **state) {
        (void)state;
        int fd = socket(AF_INET6, SOCK_STREAM, 0);
        struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
        bool have = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
        if (fd >= 0)
                close(fd);
        if (!have) {
                printf("# no IPv6 loopback here: IPv6 not tried\n");
                return;
        }
        struct plan p = {.size = 3, .failing_rank = 1};
        assert_int_equal(rdv_address_parse("tcp://[::1]:0", &p.addr, err, sizeof(err)), 0);
        full_run(&p);
}

/* Something that is not a rank (a port scanner, a web client) connects first: rank 0 drops
 * it and goes on; 70 connections that say nothing do not keep a rank out. A host name that
 * does not exist is told at once. */
static void test_strangers(void **state) {
        (void)state;
        struct plan p = {.size = 2, .failing_rank = -1};
        assert_int_equal(rdv_address_parse("tcp://127.0.0.1:0", &p.addr, err, sizeof(err)), 0);
        struct rdv_session *s = open_root(&p);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)rdv_bound_port(s)),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(write(fd, "GET / HTTP/1.0\r\n\r\n", 18), 18);
        int silent[70]; /* connect and say nothing: more than rank 0 keeps waiting for a hello */
        for (int i = 0; i < 70; i++) {
                silent[i] = socket(AF_INET, SOCK_STREAM, 0);
                assert_int_equal(connect(silent[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
        }
        pid_t pid = spawn(&p, 1);
        unsigned char id[128] = {0};
        id[0] = 0xab;
        id[127] = 0xcd;
        size_t len = sizeof(id);
        assert_int_equal(rdv_share(s, id, &len, sizeof(id), OK_MS, err, sizeof(err)), 0);
        /* dropped: its challenge, then closed (or reset when closed unread) */
        char c[RDV_MSG_MAX];
        ssize_t got, total = 0;
        while ((got = read(fd, c, sizeof(c))) > 0)
                total += got;
        assert_true(total <= (ssize_t)(RDV_MSG_HEADER + RDV_MSG_FIXED));
        struct rdv_gathered g;
        assert_int_equal(rdv_gather(s, true, "", 0, &g, OK_MS, err, sizeof(err)), 0);
        rdv_gathered_free(&g);
        rdv_close(s);
        close(fd);
        for (int i = 0; i < 70; i++)
                close(silent[i]);
        assert_int_equal(wait_exit(pid), 0);

        struct rdv_ranks r = {.launcher = RDV_LAUNCHER_GPUVET, .rank = 1, .size = 2};
        struct rdv_address a;
        assert_int_equal(rdv_address_parse("tcp://no-such-host.invalid:29500", &a, err, sizeof(err)), 0);
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(rdv_open(&r, &a, &s, err, sizeof(err)), 0);
        int rc = rdv_share(s, id, &len, sizeof(id), 2000, err, sizeof(err));
        /* -ENXIO at once; a machine whose resolver cannot be reached answers EAI_AGAIN
         * instead: then the deadline, still no hang */
        if (rc != -ENXIO && rc != -ETIMEDOUT)
                fail_msg("no-such-host.invalid: %d %s", rc, err);
        assert_true(elapsed_ms(&t0) < SCALED_MS(10000));
        if (rc == -ENXIO && !strstr(err, "does not exist"))
                fail_msg("message: %s", err);
        rdv_close(s);
}

/* Rank 0 of tcp keeps a connection per rank: it raises its soft limit of open files when it
 * can, and says so when the hard limit is too low. In a child, whose limits may go down. */
static void test_file_limit(void **state) {
        (void)state;
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct rlimit rl = {.rlim_cur = 40, .rlim_max = 200};
                struct rdv_address a;
                struct rdv_session *s;
                char e[512];
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0 || rdv_address_parse("tcp://127.0.0.1:0", &a, e, sizeof(e)) < 0)
                        _exit(10);
                struct rdv_ranks r = {.launcher = RDV_LAUNCHER_GPUVET, .rank = 0, .size = 100};
                if (rdv_open(&r, &a, &s, e, sizeof(e)) < 0)
                        _exit(11);
                rdv_close(s);
                if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur != 164)
                        _exit(12);
                r.size = 1000;
                if (rdv_open(&r, &a, &s, e, sizeof(e)) != -EMFILE || !strstr(e, "needs 1064 open files for 1000 ranks"))
                        _exit(13);
                _exit(0);
        }
        assert_int_equal(wait_exit(pid), 0);
}

static void tick(int sig) { (void)sig; }

/* Rank 0 interrupted by a signal every millisecond (a handler without SA_RESTART: every
 * blocking call sees EINTR): the exchanges go on, over tcp and over a file. */
static void test_signals(void **state) {
        (void)state;
        struct sigaction sa = {.sa_handler = tick}, old;
        sigemptyset(&sa.sa_mask);
        assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
        struct itimerval every = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
        assert_int_equal(setitimer(ITIMER_REAL, &every, NULL), 0);
        struct plan p = {.size = 3, .failing_rank = -1};
        assert_int_equal(rdv_address_parse("tcp://127.0.0.1:0", &p.addr, err, sizeof(err)), 0);
        full_run(&p);
        char dir[64], spec[128];
        snprintf(dir, sizeof(dir), "/tmp/gpuvet-rdv-XXXXXX");
        assert_non_null(mkdtemp(dir));
        snprintf(spec, sizeof(spec), "file:%s/rdv", dir);
        struct plan q = {.size = 3, .failing_rank = 2};
        assert_int_equal(rdv_address_parse(spec, &q.addr, err, sizeof(err)), 0);
        full_run(&q);
        assert_int_equal(setitimer(ITIMER_REAL, &off, NULL), 0);
        assert_int_equal(sigaction(SIGALRM, &old, NULL), 0);
        rmdir(dir);
}

static void make_dir(char *dir, size_t size) {
        snprintf(dir, size, "/tmp/gpuvet-rdv-XXXXXX");
        assert_non_null(mkdtemp(dir));
}

static int files_in(const char *dir) {
        DIR *d = opendir(dir);
        assert_non_null(d);
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                        n++;
        closedir(d);
        return n;
}

static void test_file(void **state) {
        (void)state;
        char dir[64], spec[128];
        make_dir(dir, sizeof(dir));
        snprintf(spec, sizeof(spec), "file:%s/rdv", dir);
        struct plan p = {.size = 4, .failing_rank = 3};
        assert_int_equal(rdv_address_parse(spec, &p.addr, err, sizeof(err)), 0);
        strcpy(p.key, "job-file");
        full_run(&p);
        assert_int_equal(files_in(dir), 0);
        rmdir(dir);
}

/* A file of an earlier job at the path: the ranks wait for this job's, and take its blob;
 * with the same job key (explicit runs: none), the earlier run's blob may be read first, but
 * the one returned is this run's. */
static void stale_file_run(const char *stale_key);
static void test_stale_file(void **state) {
        (void)state;
        stale_file_run("old-job");
        stale_file_run("new-job");
}

static void stale_file_run(const char *stale_key) {
        char dir[64], spec[128];
        make_dir(dir, sizeof(dir));
        snprintf(spec, sizeof(spec), "file:%s/rdv", dir);
        struct plan p = {.size = 3, .failing_rank = -1};
        assert_int_equal(rdv_address_parse(spec, &p.addr, err, sizeof(err)), 0);
        strcpy(p.key, "new-job");
        uint8_t buf[RDV_MSG_MAX];
        unsigned char wrong[128] = {0};
        struct rdv_msg stale = {.type = RDV_MSG_BLOB, .size = 3, .nonce = 99, .data = wrong, .data_len = sizeof(wrong)};
        strcpy(stale.key, stale_key);
        size_t n = rdv_msg_encode(&stale, buf, sizeof(buf));
        FILE *f = fopen(p.addr.path, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(buf, 1, n, f), n);
        fclose(f);
        pid_t pids[3];
        for (int r = 1; r < p.size; r++)
                pids[r] = spawn(&p, r);
        usleep(200 * 1000); /* the children find the stale file first (if not, the test still holds) */
        struct rdv_session *s = open_root(&p);
        unsigned char id[128];
        memset(id, 0x22, sizeof(id));
        id[0] = 0xab;
        id[127] = 0xcd;
        size_t len = sizeof(id);
        assert_int_equal(rdv_share(s, id, &len, sizeof(id), OK_MS, err, sizeof(err)), 0);
        struct rdv_gathered g;
        assert_int_equal(rdv_gather(s, true, "x", 1, &g, OK_MS, err, sizeof(err)), 0);
        rdv_gathered_free(&g);
        rdv_close(s);
        for (int r = 1; r < p.size; r++)
                assert_int_equal(wait_exit(pids[r]), 0); /* 14 would be the stale blob */
        assert_int_equal(files_in(dir), 0);
        rmdir(dir);
}

/* Rank 2 of 3 never comes: rank 0 says so at its deadline, the rank that came gets rank 0's
 * refusal (it need not wait out its own), and nothing hangs. */
static void test_missing_rank(void **state) {
        (void)state;
        struct plan p = {.size = 3, .failing_rank = -1};
        assert_int_equal(rdv_address_parse("tcp://127.0.0.1:0", &p.addr, err, sizeof(err)), 0);
        struct rdv_session *s = open_root(&p);
        pid_t pid = spawn(&p, 1);
        unsigned char id[128] = {0};
        size_t len = sizeof(id);
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(rdv_share(s, id, &len, sizeof(id), SHORT_MS, err, sizeof(err)), -ETIMEDOUT);
        double ms = elapsed_ms(&t0);
        assert_true(ms >= SHORT_MS - 1);
        assert_true(ms < SCALED_MS(5000));
        if (!strstr(err, "rank 2 of 3 did not join within 0.3 s (tcp://127.0.0.1:"))
                fail_msg("message: %s", err);
        rdv_close(s);
        assert_int_equal(wait_exit(pid), 12); /* refused by rank 0, not timed out */

        /* a rank waiting for a rank 0 that never comes */
        char e[512];
        struct rdv_ranks r = {.launcher = RDV_LAUNCHER_GPUVET, .rank = 1, .size = 2};
        struct rdv_session *peer;
        assert_int_equal(rdv_open(&r, &p.addr, &peer, e, sizeof(e)), 0); /* the port now closed */
        clock_gettime(CLOCK_MONOTONIC, &t0);
        assert_int_equal(rdv_share(peer, id, &len, sizeof(id), SHORT_MS, e, sizeof(e)), -ETIMEDOUT);
        ms = elapsed_ms(&t0);
        assert_true(ms < SCALED_MS(5000));
        if (!strstr(e, "rank 1 of 2 could not reach rank 0 at tcp://127.0.0.1:"))
                fail_msg("message: %s", e);
        rdv_close(peer);

        /* the file transport: nobody writes the file */
        char dir[64], spec[128];
        make_dir(dir, sizeof(dir));
        snprintf(spec, sizeof(spec), "file:%s/rdv", dir);
        struct rdv_address fa;
        assert_int_equal(rdv_address_parse(spec, &fa, e, sizeof(e)), 0);
        assert_int_equal(rdv_open(&r, &fa, &peer, e, sizeof(e)), 0);
        assert_int_equal(rdv_share(peer, id, &len, sizeof(id), SHORT_MS, e, sizeof(e)), -ETIMEDOUT);
        assert_non_null(strstr(e, "rank 0 did not write"));
        rdv_close(peer);
        /* and rank 0 of a file address whose ranks never join: its file removed at close */
        struct rdv_ranks r0 = {.launcher = RDV_LAUNCHER_GPUVET, .rank = 0, .size = 4};
        assert_int_equal(rdv_open(&r0, &fa, &peer, e, sizeof(e)), 0);
        len = sizeof(id);
        assert_int_equal(rdv_share(peer, id, &len, sizeof(id), SHORT_MS, e, sizeof(e)), -ETIMEDOUT);
        if (!strstr(e, "ranks 1, 2, 3 of 4 did not join within 0.3 s (file:"))
                fail_msg("message: %s", e);
        rdv_close(peer);
        assert_int_equal(files_in(dir), 0);
        rmdir(dir);
}

/* A rank that believes in another world size: rank 0 refuses it, naming why, and waits on
 * for the real rank 1 (nothing a connection says ends the rendezvous): at its deadline it
 * names the refusal. */
static void test_wrong_size(void **state) {
        (void)state;
        struct plan p = {.size = 2, .failing_rank = -1, .size_of = {0, 3}};
        assert_int_equal(rdv_address_parse("tcp://127.0.0.1:0", &p.addr, err, sizeof(err)), 0);
        struct rdv_session *s = open_root(&p);
        pid_t pid = spawn(&p, 1);
        unsigned char id[128] = {0};
        size_t len = sizeof(id);
        assert_int_equal(rdv_share(s, id, &len, sizeof(id), (unsigned)SCALED_MS(3000), err, sizeof(err)), -ETIMEDOUT);
        if (!strstr(err, "rank 1 of 2 did not join") || !strstr(err, "rank 1 says the world size is 3, rank 0 says 2"))
                fail_msg("message: %s", err);
        rdv_close(s);
        assert_int_equal(wait_exit(pid), 12);

        /* a rank of another job is refused, and the rendezvous goes on without it */
        struct plan q = {.size = 2, .failing_rank = -1};
        assert_int_equal(rdv_address_parse("tcp://127.0.0.1:0", &q.addr, err, sizeof(err)), 0);
        strcpy(q.key, "mine");
        s = open_root(&q);
        /* a helper forks the stray, sees it refused (12), then becomes the real rank 1 */
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct plan other = q;
                strcpy(other.key, "theirs");
                if (wait_exit(spawn(&other, 1)) != 12)
                        _exit(20);
                run_peer(&q, 1);
        }
        memset(id, 0, sizeof(id));
        id[0] = 0xab;
        id[127] = 0xcd;
        assert_int_equal(rdv_share(s, id, &len, sizeof(id), OK_MS, err, sizeof(err)), 0);
        struct rdv_gathered g;
        assert_int_equal(rdv_gather(s, true, "", 0, &g, OK_MS, err, sizeof(err)), 0);
        rdv_gathered_free(&g);
        rdv_close(s);
        assert_int_equal(wait_exit(pid), 0);
}

/* ---- the job's secret, forged hellos, where rank 0 listens ------------------------------ */

#define SECRET "0123456789abcdef0123456789abcdef"

/* Connect to rank 0 on 127.0.0.1:port, read its challenge, send a HELLO of rank/size proved
 * with secret (NULL: a mac of zeros), and return what rank 0 answered (its type), or -1. */
static int forge_hello(unsigned port, uint32_t rank, uint32_t size, const char *secret, const char *key) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return -1;
        uint8_t buf[RDV_MSG_MAX];
        size_t have = 0, used;
        struct rdv_msg m;
        int rc = -1;
        for (;;) {
                ssize_t n = read(fd, buf + have, sizeof(buf) - have);
                if (n <= 0)
                        goto out;
                have += (size_t)n;
                int r = rdv_msg_parse(buf, have, &m, &used);
                if (r == 0)
                        break;
                if (r != -EAGAIN)
                        goto out;
        }
        if (m.type != RDV_MSG_CHALLENGE)
                goto out;
        uint8_t root_challenge[RDV_CHALLENGE_BYTES];
        memcpy(root_challenge, m.challenge, sizeof(root_challenge));
        struct rdv_msg hello = {.type = RDV_MSG_HELLO, .rank = rank, .size = size};
        snprintf(hello.key, sizeof(hello.key), "%s", key ? key : "");
        memset(hello.challenge, 0x42, sizeof(hello.challenge));
        if (secret)
                rdv_msg_mac((const uint8_t *)secret, strlen(secret), &hello, root_challenge, hello.challenge, hello.mac);
        size_t n = rdv_msg_encode(&hello, buf, sizeof(buf));
        if (write(fd, buf, n) != (ssize_t)n)
                goto out;
        have = 0;
        for (;;) {
                ssize_t got = read(fd, buf + have, sizeof(buf) - have);
                if (got <= 0)
                        goto out;
                have += (size_t)got;
                int r = rdv_msg_parse(buf, have, &m, &used);
                if (r == 0) {
                        rc = (int)m.type;
                        break;
                }
                if (r != -EAGAIN)
                        goto out;
        }
out:
        close(fd);
        return rc;
}

struct log_lines {
        int n;
        char text[8][400];
};

static void keep_line(void *ctx, const char *line) {
        struct log_lines *l = ctx;
        if (l->n < 8)
                snprintf(l->text[l->n], sizeof(l->text[0]), "%s", line);
        l->n++;
}

static bool logged(const struct log_lines *l, const char *what) {
        for (int i = 0; i < l->n && i < 8; i++)
                if (strstr(l->text[i], what))
                        return true;
        return false;
}

/* The review's attack (N14): a process sends rank 0 a HELLO "rank 1 of 2" before the real
 * rank 1. Refused for want of the job's secret, logged, and the real rank 1 joins after it;
 * so do "rank 5 of 2", rank 0, and a second rank 1, each proved with the right secret: all
 * refused without ending anything, and the job completes. */
static void test_forged_hello(void **state) {
        (void)state;
        struct plan p = {.size = 2, .failing_rank = -1, .secret = SECRET};
        assert_int_equal(rdv_address_parse("tcp://127.0.0.1:0", &p.addr, err, sizeof(err)), 0);
        strcpy(p.key, "7.0");
        struct rdv_session *s = open_root(&p);
        struct log_lines log = {0};
        rdv_set_log(s, keep_line, &log);
        unsigned port = rdv_bound_port(s);
        /* the attackers, in a child (rank 0 answers them from rdv_share, here); then the real
         * rank 1, and then one more rank 1 that must not take its place */
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (forge_hello(port, 1, 2, NULL, "7.0") != RDV_MSG_REFUSE)
                        _exit(20);
                if (forge_hello(port, 1, 2, "not the job's secret at all!", "7.0") != RDV_MSG_REFUSE)
                        _exit(21);
                if (forge_hello(port, 5, 2, SECRET, "7.0") != RDV_MSG_REFUSE)
                        _exit(22);
                if (forge_hello(port, 0, 2, SECRET, "7.0") != RDV_MSG_REFUSE)
                        _exit(23);
                if (forge_hello(port, 1, 2, SECRET, "other.0") != RDV_MSG_REFUSE)
                        _exit(24);
                run_peer(&p, 1);
        }
        unsigned char id[128] = {0};
        id[0] = 0xab;
        id[127] = 0xcd;
        size_t len = sizeof(id);
        if (rdv_share(s, id, &len, sizeof(id), OK_MS, err, sizeof(err)) != 0)
                fail_msg("share: %s", err);
        struct rdv_gathered g;
        assert_int_equal(rdv_gather(s, true, "", 0, &g, OK_MS, err, sizeof(err)), 0);
        assert_int_equal(g.ranks[1].state, RDV_RANK_OK);
        rdv_gathered_free(&g);
        rdv_close(s);
        assert_int_equal(wait_exit(pid), 0);
        assert_int_equal(log.n, 5);
        assert_true(logged(&log, "refused 127.0.0.1:"));
        assert_true(logged(&log, "did not prove the job's rendezvous secret"));
        assert_true(logged(&log, "a process says it is rank 5 of 2"));
        assert_true(logged(&log, "a process says it is rank 0 of 2"));
        assert_true(logged(&log, "job key \"other.0\""));

        /* without a secret: rank 5 of 2 and a stranger are still refused, never fatal */
        struct plan q = {.size = 2, .failing_rank = -1};
        assert_int_equal(rdv_address_parse("tcp://127.0.0.1:0", &q.addr, err, sizeof(err)), 0);
        s = open_root(&q);
        port = rdv_bound_port(s);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (forge_hello(port, 5, 2, "", "") != RDV_MSG_REFUSE)
                        _exit(20);
                run_peer(&q, 1);
        }
        len = sizeof(id);
        if (rdv_share(s, id, &len, sizeof(id), OK_MS, err, sizeof(err)) != 0)
                fail_msg("share: %s", err);
        assert_int_equal(rdv_gather(s, true, "", 0, &g, OK_MS, err, sizeof(err)), 0);
        rdv_gathered_free(&g);
        rdv_close(s);
        assert_int_equal(wait_exit(pid), 0);
}

/* A rank with another secret is refused and says why; a rank whose "rank 0" does not prove
 * the secret (another process took the port) takes nothing from it. Over a file, a blob
 * that does not prove the secret is not taken either. */
static void test_wrong_secret(void **state) {
        (void)state;
        struct plan p = {.size = 2, .failing_rank = -1, .secret = SECRET, .secret_of = {NULL, "fedcba9876543210fedcba9876543210"}};
        assert_int_equal(rdv_address_parse("tcp://127.0.0.1:0", &p.addr, err, sizeof(err)), 0);
        struct rdv_session *s = open_root(&p);
        pid_t pid = spawn(&p, 1);
        unsigned char id[128] = {0};
        size_t len = sizeof(id);
        assert_int_equal(rdv_share(s, id, &len, sizeof(id), (unsigned)SCALED_MS(3000), err, sizeof(err)), -ETIMEDOUT);
        if (!strstr(err, "did not prove the job's rendezvous secret"))
                fail_msg("message: %s", err);
        rdv_close(s);
        assert_int_equal(wait_exit(pid), 12);

        /* rank 0 without the secret the rank has: the rank refuses rank 0's blob */
        struct plan q = {.size = 2, .failing_rank = -1, .secret_of = {NULL, SECRET}};
        assert_int_equal(rdv_address_parse("tcp://127.0.0.1:1", &q.addr, err, sizeof(err)), 0);
        /* rank 0 played by hand, as a process that took its port would: the blob comes
         * with a mac under no secret */
        int lfd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t sl = sizeof(sa);
        assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(listen(lfd, 4), 0);
        assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
        snprintf(q.addr.port, sizeof(q.addr.port), "%u", ntohs(sa.sin_port));
        pid = spawn(&q, 1);
        int cfd = accept(lfd, NULL, NULL);
        assert_true(cfd >= 0);
        uint8_t buf[RDV_MSG_MAX];
        struct rdv_msg ch = {.type = RDV_MSG_CHALLENGE};
        size_t n = rdv_msg_encode(&ch, buf, sizeof(buf));
        assert_int_equal(write(cfd, buf, n), (ssize_t)n);
        size_t have = 0, used;
        struct rdv_msg hello;
        int r;
        do {
                ssize_t got = read(cfd, buf + have, sizeof(buf) - have);
                assert_true(got > 0);
                have += (size_t)got;
        } while ((r = rdv_msg_parse(buf, have, &hello, &used)) == -EAGAIN);
        assert_int_equal(r, 0);
        assert_int_equal(hello.type, RDV_MSG_HELLO);
        unsigned char fake_id[128] = {0};
        fake_id[0] = 0xab;
        fake_id[127] = 0xcd;
        struct rdv_msg blob = {.type = RDV_MSG_BLOB, .size = 2, .nonce = 1, .data = fake_id, .data_len = sizeof(fake_id)};
        rdv_msg_mac((const uint8_t *)"", 0, &blob, ch.challenge, hello.challenge, blob.mac); /* no secret */
        n = rdv_msg_encode(&blob, buf, sizeof(buf));
        assert_int_equal(write(cfd, buf, n), (ssize_t)n);
        assert_int_equal(wait_exit(pid), 12); /* -EPROTO: the blob not taken */
        close(cfd);
        close(lfd);

        /* a file: a blob written without the secret is never taken */
        char dir[64], spec[128];
        make_dir(dir, sizeof(dir));
        snprintf(spec, sizeof(spec), "file:%s/rdv", dir);
        struct plan f = {.size = 2, .failing_rank = -1, .secret = SECRET, .secret_of = {"another secret of 32 bytes......", NULL},
                         .share_ms = SHORT_MS * 3};
        assert_int_equal(rdv_address_parse(spec, &f.addr, err, sizeof(err)), 0);
        s = open_root(&f);
        pid = spawn(&f, 1);
        len = sizeof(id);
        assert_int_equal(rdv_share(s, id, &len, sizeof(id), SHORT_MS * 3, err, sizeof(err)), -ETIMEDOUT);
        rdv_close(s);
        assert_int_equal(wait_exit(pid), 11); /* timed out waiting for a proven blob */
        assert_int_equal(files_in(dir), 0);
        rmdir(dir);
}

/* Both transports with a secret on every rank: the whole exchange. */
static void test_secret_runs(void **state) {
        (void)state;
        struct plan p = {.size = 3, .failing_rank = 2, .secret = SECRET};
        assert_int_equal(rdv_address_parse("tcp://127.0.0.1:0", &p.addr, err, sizeof(err)), 0);
        full_run(&p);
        char dir[64], spec[128];
        make_dir(dir, sizeof(dir));
        snprintf(spec, sizeof(spec), "file:%s/rdv", dir);
        struct plan q = {.size = 3, .failing_rank = 1, .secret = SECRET};
        assert_int_equal(rdv_address_parse(spec, &q.addr, err, sizeof(err)), 0);
        full_run(&q);
        assert_int_equal(files_in(dir), 0);
        rmdir(dir);
}

static void listening_at(const char *spec, char *buf, size_t size, int *rc) {
        struct rdv_address a;
        assert_int_equal(rdv_address_parse(spec, &a, err, sizeof(err)), 0);
        struct rdv_ranks r = {.launcher = RDV_LAUNCHER_GPUVET, .rank = 0, .size = 2};
        struct rdv_session *s = NULL;
        *rc = rdv_open(&r, &a, &s, err, sizeof(err));
        buf[0] = '\0';
        if (*rc == 0)
                rdv_listening(s, buf, size);
        rdv_close(s);
}

/* Rank 0 listens where the address says (N14): 127.0.0.1 only for tcp://127.0.0.1, the
 * loopback addresses for localhost, every address only when asked (0.0.0.0); an address
 * that is not this node's is told at once. */
static void test_bind_where_asked(void **state) {
        (void)state;
        char at[256];
        int rc;
        listening_at("tcp://127.0.0.1:0", at, sizeof(at), &rc);
        assert_int_equal(rc, 0);
        if (strncmp(at, "127.0.0.1:", 10) != 0 || strchr(at, ','))
                fail_msg("tcp://127.0.0.1:0 listens at %s", at);
        listening_at("tcp://localhost:0", at, sizeof(at), &rc);
        assert_int_equal(rc, 0);
        for (char *p = at; p && *p; p = strstr(p, ", ")) {
                p += *p == ',' ? 2 : 0;
                if (strncmp(p, "127.", 4) != 0 && strncmp(p, "[::1]:", 6) != 0)
                        fail_msg("tcp://localhost:0 listens at %s", at);
        }
        listening_at("tcp://0.0.0.0:0", at, sizeof(at), &rc);
        assert_int_equal(rc, 0);
        if (strncmp(at, "0.0.0.0:", 8) != 0)
                fail_msg("tcp://0.0.0.0:0 listens at %s", at);
        /* TEST-NET-2 (RFC 5737): no machine's own address */
        listening_at("tcp://198.51.100.77:0", at, sizeof(at), &rc);
        assert_int_equal(rc, -EADDRNOTAVAIL);
        if (!strstr(err, "rank 0 cannot listen at tcp://198.51.100.77:0") || !strstr(err, "is that this node?"))
                fail_msg("message: %s", err);
}

static void test_secret_from_env(void **state) {
        (void)state;
        struct rdv_ranks r;
        memset(&r, 0, sizeof(r));
        const char *none[] = {"HOME=/", NULL};
        assert_int_equal(rdv_secret_from_env(none, &r, err, sizeof(err)), 0);
        assert_int_equal(r.secret_len, 0);
        const char *value[] = {"GPUVET_RENDEZVOUS_SECRET=" SECRET, "GPUVET_RENDEZVOUS_SECRET_FILE=/nonexistent", NULL};
        assert_int_equal(rdv_secret_from_env(value, &r, err, sizeof(err)), 0);
        assert_int_equal(r.secret_len, strlen(SECRET));
        assert_memory_equal(r.secret, SECRET, strlen(SECRET));
        const char *short_one[] = {"GPUVET_RENDEZVOUS_SECRET=guessable", NULL};
        assert_int_equal(rdv_secret_from_env(short_one, &r, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "fewer than 16"));
        assert_null(strstr(err, "guessable"));

        char dir[64], path[128], var[160];
        make_dir(dir, sizeof(dir));
        snprintf(path, sizeof(path), "%s/secret", dir);
        snprintf(var, sizeof(var), "GPUVET_RENDEZVOUS_SECRET_FILE=%s", path);
        const char *file[] = {var, NULL};
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(SECRET "\n", f);
        fclose(f);
        assert_int_equal(chmod(path, 0644), 0);
        assert_int_equal(rdv_secret_from_env(file, &r, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "mode 0644 lets others read it"));
        assert_int_equal(chmod(path, 0600), 0);
        memset(&r, 0, sizeof(r));
        assert_int_equal(rdv_secret_from_env(file, &r, err, sizeof(err)), 0);
        assert_int_equal(r.secret_len, strlen(SECRET)); /* without its newline */
        assert_memory_equal(r.secret, SECRET, strlen(SECRET));
        char link[128];
        snprintf(link, sizeof(link), "%s/link", dir);
        assert_int_equal(symlink(path, link), 0);
        snprintf(var, sizeof(var), "GPUVET_RENDEZVOUS_SECRET_FILE=%s", link);
        assert_int_equal(rdv_secret_from_env(file, &r, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "symbolic link"));
        unlink(link);
        unlink(path);
        rmdir(dir);
}

/* A rank that joined but never gives its result: rank 0's gather ends at its deadline with
 * the others' results, the missing one marked; a rank whose process ended is a failure. */
static void test_gather_missing(void **state) {
        (void)state;
        struct plan p = {.size = 4, .failing_rank = -1};
        assert_int_equal(rdv_address_parse("tcp://127.0.0.1:0", &p.addr, err, sizeof(err)), 0);
        struct rdv_session *s = open_root(&p);
        pid_t good = spawn(&p, 1);
        pid_t silent = fork();
        assert_true(silent >= 0);
        if (silent == 0) {
                struct rdv_ranks r = ranks_for(&p, 2);
                struct rdv_session *ps;
                unsigned char blob[RDV_BLOB_MAX];
                size_t len;
                if (rdv_open(&r, &p.addr, &ps, NULL, 0) < 0 || rdv_share(ps, blob, &len, sizeof(blob), OK_MS, NULL, 0) < 0)
                        _exit(1);
                pause(); /* hung in its benchmark: killed below */
                _exit(0);
        }
        pid_t dies = fork(); /* rank 3: joins, then its process ends without a result */
        assert_true(dies >= 0);
        if (dies == 0) {
                struct rdv_ranks r = ranks_for(&p, 3);
                struct rdv_session *ps;
                unsigned char blob[RDV_BLOB_MAX];
                size_t len;
                if (rdv_open(&r, &p.addr, &ps, NULL, 0) < 0 || rdv_share(ps, blob, &len, sizeof(blob), OK_MS, NULL, 0) < 0)
                        _exit(1);
                _exit(0);
        }
        unsigned char id[128] = {0};
        id[0] = 0xab;
        id[127] = 0xcd;
        size_t len = sizeof(id);
        assert_int_equal(rdv_share(s, id, &len, sizeof(id), OK_MS, err, sizeof(err)), 0);
        assert_int_equal(wait_exit(dies), 0);
        struct rdv_gathered g;
        assert_int_equal(rdv_gather(s, true, "r0", 2, &g, SHORT_MS * 3, err, sizeof(err)), -ETIMEDOUT);
        if (!strstr(err, "rank 2 of 4 gave no result within 0.9 s"))
                fail_msg("message: %s", err);
        assert_int_equal(g.ranks[3].state, RDV_RANK_FAILED);
        assert_string_equal((const char *)g.ranks[3].data, "rank 3 closed its connection before it gave its result");
        assert_int_equal(g.ranks[0].state, RDV_RANK_OK);
        assert_int_equal(g.ranks[1].state, RDV_RANK_OK);
        assert_string_equal((const char *)g.ranks[1].data, "rank 1 busbw 400");
        assert_int_equal(g.ranks[2].state, RDV_RANK_MISSING);
        rdv_gathered_free(&g);
        rdv_close(s);
        assert_int_equal(wait_exit(good), 0);
        kill(silent, SIGKILL);
        wait_exit(silent);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_launchers),     cmocka_unit_test(test_bad_values),
                cmocka_unit_test(test_tasks_per_node), cmocka_unit_test(test_hostlist),
                cmocka_unit_test(test_addresses),     cmocka_unit_test(test_messages),
                cmocka_unit_test(test_tcp),           cmocka_unit_test(test_tcp6),
                cmocka_unit_test(test_strangers),     cmocka_unit_test(test_file_limit),
                cmocka_unit_test(test_signals),       cmocka_unit_test(test_file),
                cmocka_unit_test(test_stale_file),    cmocka_unit_test(test_missing_rank),
                cmocka_unit_test(test_wrong_size),    cmocka_unit_test(test_gather_missing),
                cmocka_unit_test(test_forged_hello),  cmocka_unit_test(test_wrong_secret),
                cmocka_unit_test(test_secret_runs),   cmocka_unit_test(test_bind_where_asked),
                cmocka_unit_test(test_secret_from_env),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
