/* gpuvet bench nccl: NCCL's collectives over the node's GPUs (or a launcher's job), swept
 * over sizes as nccl-tests does, each step verified; the largest size's bus bandwidth judged
 * against what the node's links carry and the seed's baselines (docs/bench.md, "nccl"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/baselines.h"
#include "bench/nccl_expect.h"
#include "bench/nccl_job.h"
#include "bench/nccl_judge.h"
#include "cmd/cmd.h"
#include "cmd/machine.h"
#include "cmd/nccl_launch.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "core/array.h"
#include "core/deadline.h"
#include "core/strparse.h"
#include "report/nccl_report.h"

#define MAX_GPUS 64
#define DEFAULT_HANG_S 60
#define DEFAULT_JOIN_S 120
#define DEFAULT_TIMEOUT_S 1800

struct nccl_cli {
        struct nccl_run_options run;
        int gpus[MAX_GPUS];
        size_t n_gpus;
        bool gpus_given;
        const char *json_path;
        const char *rendezvous;
        bool quiet, only_in_place, only_out_of_place, colls_given;
        unsigned hang_s, join_s;
};

static int parse_colls(struct nccl_cli *o, const char *arg) {
        o->run.n_colls = 0;
        if (strcmp(arg, "all") == 0) {
                for (int c = 0; c < NCCL_COLL_COUNT; c++)
                        o->run.colls[o->run.n_colls++] = (enum nccl_coll)c;
                return -1;
        }
        char copy[256];
        snprintf(copy, sizeof(copy), "%s", arg);
        bool seen[NCCL_COLL_COUNT] = {false};
        for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                enum nccl_coll c = nccl_coll_from_name(tok);
                if (c == NCCL_COLL_INVALID)
                        return cmd_usage_error("bench nccl",
                                               "--collectives: no collective \"%s\" (all_reduce, all_gather, "
                                               "reduce_scatter, broadcast, reduce, alltoall, sendrecv, all)",
                                               tok);
                if (!seen[c])
                        o->run.colls[o->run.n_colls++] = c;
                seen[c] = true;
        }
        if (o->run.n_colls == 0)
                return cmd_usage_error("bench nccl", "--collectives: name at least one collective");
        return -1;
}

enum nccl_opt {
        NCCL_OPT_COLLECTIVES = 'C', NCCL_OPT_MINBYTES = 'b', NCCL_OPT_MAXBYTES = 'e', NCCL_OPT_STEPFACTOR = 'f',
        NCCL_OPT_STEPBYTES = 'i', NCCL_OPT_ITERS = 'n', NCCL_OPT_WARMUP = 'w', NCCL_OPT_DATATYPE = 'd',
        NCCL_OPT_OP = 'o', NCCL_OPT_CHECK = 'c', NCCL_OPT_GPUS = 'g', NCCL_OPT_JSON = 'j', NCCL_OPT_QUIET = 'q',
        NCCL_OPT_ROOT_RANK = 0x100, NCCL_OPT_IN_PLACE, NCCL_OPT_OUT_OF_PLACE, NCCL_OPT_RENDEZVOUS,
        NCCL_OPT_JOIN_TIMEOUT, NCCL_OPT_HANG_TIMEOUT,
};

/* -b, -e, -i: nccl-tests' sizes (decimals allowed, "0.5M"), so its command lines carry over. */
static int sweep_size_option(int id, const char *arg, struct nccl_sweep *sw) {
        size_t v;
        const char *name = id == NCCL_OPT_MINBYTES ? "--minbytes" : id == NCCL_OPT_MAXBYTES ? "--maxbytes" : "--stepbytes";
        if (nccl_parse_size(arg, &v) < 0)
                return cmd_usage_error("bench nccl", "%s: expected a size such as 8, 64K, 1G, not \"%s\"", name, arg);
        if (id == NCCL_OPT_MINBYTES)
                sw->min_bytes = v;
        else if (id == NCCL_OPT_MAXBYTES)
                sw->max_bytes = v;
        else {
                sw->step_bytes = v;
                sw->step_factor = 1;
        }
        return -1;
}

static int nccl_option(int id, const struct opt_value *v, void *ctx) {
        struct nccl_cli *o = ctx;
        struct nccl_run_options *r = &o->run;
        switch ((enum nccl_opt)id) {
        case NCCL_OPT_COLLECTIVES:
                o->colls_given = true;
                return parse_colls(o, v->text);
        case NCCL_OPT_MINBYTES:
        case NCCL_OPT_MAXBYTES:
        case NCCL_OPT_STEPBYTES: return sweep_size_option(id, v->text, &r->sweep);
        case NCCL_OPT_STEPFACTOR: r->sweep.step_factor = (unsigned)v->n; break;
        case NCCL_OPT_ITERS: r->iters = (unsigned)v->n; break;
        case NCCL_OPT_WARMUP: r->warmup = (unsigned)v->n; break;
        case NCCL_OPT_DATATYPE: r->dtype = nccl_dtype_from_name(v->text); break;
        case NCCL_OPT_OP: r->op = nccl_redop_from_name(v->text); break;
        case NCCL_OPT_ROOT_RANK: r->root = (int)v->n; break;
        case NCCL_OPT_CHECK: r->check = strcmp(v->text, "1") == 0; break;
        case NCCL_OPT_IN_PLACE: o->only_in_place = true; break;
        case NCCL_OPT_OUT_OF_PLACE: o->only_out_of_place = true; break;
        case NCCL_OPT_GPUS:
                if (!cmd_parse_device_list(v->text, MAX_GPUS, o->gpus, &o->n_gpus))
                        return cmd_usage_error("bench nccl",
                                               "--gpus: expected CUDA device indices 0-%d such as \"0,2\" or \"0-3\", "
                                               "not \"%s\"",
                                               MAX_GPUS - 1, v->text);
                o->gpus_given = true;
                break;
        case NCCL_OPT_RENDEZVOUS: o->rendezvous = v->text; break;
        case NCCL_OPT_HANG_TIMEOUT: o->hang_s = opt_seconds(v); break;
        case NCCL_OPT_JOIN_TIMEOUT: o->join_s = opt_seconds(v); break;
        case NCCL_OPT_JSON: o->json_path = v->text; break;
        case NCCL_OPT_QUIET: o->quiet = true; break;
        }
        return -1;
}

#define DAY_MS (24ull * 3600 * 1000)

static const struct opt nccl_options[] = {
        {.name = "collectives", .letter = 'C', .kind = ARG_LIST,
         .choices = "all_reduce|all_gather|reduce_scatter|broadcast|reduce|alltoall|sendrecv|all",
         .def = "the first four", .help = "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, "
                                          "sendrecv, or all; comma-separated"},
        {.name = "minbytes", .letter = 'b', .kind = ARG_TEXT, .metavar = "SIZE", .def = "8",
         .help = "smallest size; K, M, G are 1024-based, decimals allowed (\"0.5M\"), as nccl-tests"},
        {.name = "maxbytes", .letter = 'e', .kind = ARG_TEXT, .metavar = "SIZE", .def = "1G", .help = "largest size"},
        {.name = "stepfactor", .letter = 'f', .kind = ARG_NUMBER, .min = 2, .max = 1024, .def = "2",
         .help = "multiply the size by N each step"},
        {.name = "stepbytes", .letter = 'i', .kind = ARG_TEXT, .metavar = "SIZE", .help = "add SIZE each step instead"},
        {.name = "iters", .letter = 'n', .kind = ARG_NUMBER, .min = 1, .max = 100000, .def = "20",
         .help = "timed calls per size"},
        {.name = "warmup", .letter = 'w', .kind = ARG_NUMBER, .min = 0, .max = 10000, .def = "5",
         .help = "warm-up calls per size"},
        {.name = "datatype", .letter = 'd', .kind = ARG_ENUM, .metavar = "TYPE",
         .choices = "int8|uint8|int32|uint32|int64|uint64|half|float|double|bfloat16", .def = "float",
         .help = "the element type: int8, uint8, int32, uint32, int64, uint64, half, float, double or bfloat16"},
        {.name = "op", .letter = 'o', .kind = ARG_ENUM, .metavar = "OP", .choices = "sum|prod|max|min|avg",
         .def = "sum", .help = "the reduction: sum, prod, max, min or avg"},
        {.name = "root-rank", .kind = ARG_NUMBER, .id = NCCL_OPT_ROOT_RANK, .min = 0, .max = 65535, .def = "0",
         .help = "root of broadcast and reduce"},
        {.name = "check", .letter = 'c', .kind = ARG_ENUM, .metavar = "0|1", .choices = "0|1", .def = "1",
         .help = "verify every step's output"},
        {.name = "in-place", .kind = ARG_FLAG, .id = NCCL_OPT_IN_PLACE,
         .help = "only in-place calls (default both, as nccl-tests)"},
        {.name = "out-of-place", .kind = ARG_FLAG, .id = NCCL_OPT_OUT_OF_PLACE, .help = "only out-of-place calls"},
        {.name = "gpus", .letter = 'g', .kind = ARG_LIST, .def = "all",
         .help = "CUDA devices to use: \"0,2\", \"0-3\"; a launcher's rank takes the LOCAL_RANK-th of them"},
        {.name = "rendezvous", .kind = ARG_TEXT, .id = NCCL_OPT_RENDEZVOUS, .metavar = "SPEC",
         .def = "$GPUVET_RENDEZVOUS, then MASTER_ADDR/MASTER_PORT, then the Slurm job's first node",
         .help = "where rank 0 hands out NCCL's id in a multi-process job: tcp://HOST:PORT or file:PATH"},
        {.name = "join-timeout", .kind = ARG_DURATION, .id = NCCL_OPT_JOIN_TIMEOUT, .min = 1000, .max = DAY_MS,
         .def = "120s", .help = "how long ranks wait for each other at the rendezvous"},
        {.name = "hang-timeout", .kind = ARG_DURATION, .id = NCCL_OPT_HANG_TIMEOUT, .min = 1000, .max = DAY_MS,
         .def = "60s", .help = "no progress for this long is a hung collective"},
        OPT_JSON("gpuvet.bench-nccl/1"),
        {.name = "quiet", .letter = 'q', .kind = ARG_FLAG, .help = "no text report"},
        {0},
};

const struct cmd_spec cmd_bench_nccl_spec = {
        .name = "bench nccl",
        .summary = "Run NCCL's collectives over this node's GPUs (one process, every GPU), or as one rank of a job "
                   "started by srun or mpirun; sweep the sizes as nccl-tests does, verify every result, and judge "
                   "the bus bandwidth against what the node's links carry (docs/bench.md).",
        .description = "The options take nccl-tests' letters where they mean the same.",
        .opts = nccl_options,
        .exit_status = "0 every collective passed or warned, 1 one failed, gave wrong results, hung or could not "
                       "run, 2 usage or bad input, 3 internal error.",
        .timeout_help = "the whole run's deadline (default: 1800s)",
        .no_default_timeout = true,
        .color = true,
        .on_option = nccl_option,
};

/* Reject what nccl-tests would loop on or what cannot be run. */
static int check_cli(struct nccl_cli *o) {
        struct nccl_run_options *r = &o->run;
        if (o->only_in_place && o->only_out_of_place)
                return cmd_usage_error("bench nccl", "--in-place and --out-of-place exclude each other");
        r->in_place = !o->only_out_of_place;
        r->out_of_place = !o->only_in_place;
        if (nccl_sweep_check(&r->sweep) < 0)
                return cmd_usage_error("bench nccl",
                                       "the sweep from %zu to %zu bytes would never end or is empty (--minbytes must "
                                       "be at most --maxbytes, and above 0 with --stepfactor)",
                                       r->sweep.min_bytes, r->sweep.max_bytes);
        size_t sizes[1];
        long n = nccl_sweep_sizes(&r->sweep, sizes, 1);
        if (n > 64)
                return cmd_usage_error("bench nccl", "the sweep has %ld sizes; at most 64 (raise --stepfactor or "
                                                     "--stepbytes)",
                                       n);
        return -1;
}

int cmd_bench_nccl(int argc, char **argv) {
        static const enum nccl_coll default_colls[] = {NCCL_COLL_ALL_REDUCE, NCCL_COLL_ALL_GATHER,
                                                       NCCL_COLL_REDUCE_SCATTER, NCCL_COLL_BROADCAST};
        struct nccl_cli o = {
                .run = {.dtype = NCCL_DT_FLOAT32, .op = NCCL_OP_SUM, .iters = 20, .warmup = 5, .check = true,
                        .sweep = {.min_bytes = 8, .max_bytes = (size_t)1 << 30, .step_factor = 2}},
                .hang_s = DEFAULT_HANG_S, .join_s = DEFAULT_JOIN_S,
        };
        for (size_t i = 0; i < ARRAY_COUNT(default_colls); i++)
                o.run.colls[o.run.n_colls++] = default_colls[i];
        struct cmd_args args;
        int code = cmd_parse(&cmd_bench_nccl_spec, argc, argv, &o, &args);
        if (code >= 0)
                return code;
        if ((code = check_cli(&o)) >= 0)
                return code;
        unsigned timeout_s = args.common.timeout_s ? args.common.timeout_s : DEFAULT_TIMEOUT_S;

        struct nccl_launch launch;
        char err[512];
        if (nccl_launch_detect(o.rendezvous, o.join_s, &launch, err, sizeof(err)) < 0) {
                fprintf(stderr, "gpuvet bench nccl: %s\n", err);
                return EXIT_USAGE;
        }
        if (launch.multi_process && o.run.root >= launch.nranks)
                return cmd_usage_error("bench nccl", "--root-rank %d: the job has %d ranks", o.run.root, launch.nranks);
        if (!launch.multi_process && o.gpus_given && o.run.root >= (int)o.n_gpus)
                return cmd_usage_error("bench nccl", "--root-rank %d: --gpus gives %zu ranks", o.run.root, o.n_gpus);

        double start = monotonic_ms();
        struct machine m;
        if ((code = machine_open("bench nccl", &args.common, &m)) != 0)
                return code;
        struct baselines *bl = NULL;
        if (baselines_load(args.common.data_dir, &bl, err, sizeof(err)) < 0) {
                fprintf(stderr, "gpuvet bench nccl: %s\n", err);
                code = EXIT_USAGE;
                goto done;
        }
        if ((code = machine_gather(&m, 30)) != 0)
                goto done;

        struct nccl_job_spec js = {.run = &o.run, .hang_s = o.hang_s, .timeout_s = timeout_s};
        if (o.gpus_given) {
                js.gpus = o.gpus;
                js.n_gpus = o.n_gpus;
        }
        if (launch.multi_process) {
                js.multi_process = true;
                js.rank = launch.rank;
                js.nranks = launch.nranks;
                js.local_rank = launch.local_rank;
                js.share_id = nccl_launch_share_id;
                js.share_ctx = &launch;
        }
        struct nccl_job_result job;
        (void)nccl_job_run(&js, &job);
        /* every rank's outcome to rank 0, even of a rank whose benchmark process was killed;
         * the slowest rank may end a hang deadline after the others */
        struct nccl_rank_outcome *outcomes = NULL;
        char gather_err[512] = "";
        if (launch.multi_process && job.joined)
                (void)nccl_launch_gather(&launch, !job.failed, job.failed ? job.error : "", o.hang_s + o.join_s,
                                         &outcomes, gather_err, sizeof(gather_err));

        /* 0: the launcher did not say how many ranks share a node, so neither the node count
         * nor the path between ranks is known, and nothing is expected of it */
        int nodes = launch.nodes;
        struct nccl_fabric fabric = {0};
        if (job.have_info && nodes > 0) {
                const char *ids[NCCL_RUN_MAX_LOCAL];
                for (int i = 0; i < job.info.n_local; i++)
                        ids[i] = job.info.bus_ids[i];
                /* a multi-process job's ranks on this node: assume the node's other ranks' GPUs
                 * are like this one's, as many as the launcher put here */
                size_t n_here = launch.multi_process ? (size_t)(launch.local_size > 0 ? launch.local_size : 1)
                                                     : (size_t)job.info.n_local;
                if (launch.multi_process) {
                        for (size_t i = 1; i < n_here && i < NCCL_RUN_MAX_LOCAL; i++)
                                ids[i] = ids[0];
                }
                nccl_expect(m.facts, ids, n_here < NCCL_RUN_MAX_LOCAL ? n_here : NCCL_RUN_MAX_LOCAL, nodes,
                            &fabric);
        }
        struct bench_report verdicts;
        bench_report_init(&verdicts);
        nccl_judge(&o.run, &job, &fabric, bl, nodes, launch.multi_process ? launch.local_size : job.info.n_local,
                   &verdicts);
        enum status verdict = nccl_verdict(&verdicts, &job, outcomes, outcomes ? (size_t)launch.nranks : 0);

        char **environment = nccl_launch_environment();
        const char *topo_file = getenv("NCCL_TOPO_FILE");
        struct stat st;
        long long topo_bytes = -1;
        int topo_errno = 0;
        if (topo_file && stat(topo_file, &st) == 0 && access(topo_file, R_OK) == 0)
                topo_bytes = (long long)st.st_size;
        else if (topo_file)
                topo_errno = errno;
        struct nccl_report rep = {.run = &o.run, .job = &job, .fabric = &fabric, .verdicts = &verdicts,
                                  .verdict = verdict, .nodes = nodes, .launcher = launch.launcher,
                                  .environment = environment, .topo_file = topo_file, .topo_bytes = topo_bytes,
                                  .topo_errno = topo_errno, .outcomes = outcomes,
                                  .n_outcomes = outcomes ? (size_t)launch.nranks : 0, .rendezvous = launch.rendezvous,
                                  .own_rank = launch.rank,
                                  .hang_s = o.hang_s, .timeout_s = timeout_s,
                                  .duration_ms = monotonic_ms() - start};
        code = verdict == STATUS_FAIL || verdict == STATUS_ERROR ? EXIT_FAILED : EXIT_PASS;
        /* in a multi-process job rank 0 reports for the job; the others only say when they fail */
        bool reporter = !launch.multi_process || launch.rank == 0;
        bool json_to_stdout = o.json_path && strcmp(o.json_path, "-") == 0;
        if (reporter && o.json_path && write_json_output("bench nccl", o.json_path, nccl_report_json(&rep)) != EXIT_PASS)
                code = EXIT_INTERNAL;
        if (reporter && !o.quiet && !json_to_stdout) {
                struct text_options text = {.color = text_want_color(stdout)};
                nccl_report_text(stdout, &rep, &text);
        } else if (!reporter && job.failed) {
                fprintf(stderr, "gpuvet bench nccl: rank %d: %s\n", launch.rank, job.error);
        }
        if (verdicts.out_of_memory)
                code = EXIT_INTERNAL;
        for (char **e = environment; e && *e; e++)
                free(*e);
        free(environment);
        bench_report_done(&verdicts);
        nccl_job_result_done(&job);
        free(outcomes);
        nccl_launch_done(&launch);
done:
        baselines_free(bl);
        return machine_done(&m, code);
}
