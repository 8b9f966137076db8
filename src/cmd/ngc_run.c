/* `gpuvet ngc pull` and `gpuvet ngc test` (cmd/ngc.h): an NGC image through the container
 * runtime (sys/container_run.h), each step under a deadline. */
#include "cmd/ngc.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/machine.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "cmd/site_policy.h"
#include "core/fsroot.h"
#include "core/strbuf.h"
#include "core/strparse.h"
#include "policy/policy.h"
#include "sys/container_gpu.h"
#include "sys/container_run.h"
#include "sys/facts.h"

#define PULL_TIMEOUT_S 3600 /* a 20 GB framework image on a slow link */
#define TEST_TIMEOUT_S 300  /* start, import the framework, initialise every GPU */

struct run_cli {
        const char *json;
        const char *runtime, *for_driver;
        unsigned timeout_s;
};

enum run_opt { RUN_JSON = 'j', RUN_RUNTIME = 0x100, RUN_FOR_DRIVER, RUN_TIMEOUT };

static int run_option(int id, const struct opt_value *v, void *ctx) {
        struct run_cli *o = ctx;
        switch (id) {
        case RUN_JSON: o->json = v->text; break;
        case RUN_RUNTIME: o->runtime = v->text; break;
        case RUN_FOR_DRIVER: o->for_driver = v->text; break;
        case RUN_TIMEOUT: o->timeout_s = opt_seconds(v); break;
        }
        return -1;
}

#define RUN_OPTIONS(what, default_timeout)                                                                        \
        {.name = "container-runtime", .kind = ARG_PROGRAM, .id = RUN_RUNTIME,                                   \
         .def = "the site policy's container.runtime, $GPUVET_CONTAINER_RUNTIME, else docker then podman in PATH", \
         .help = "docker or podman"},                                                                            \
        {.name = "timeout-run", .kind = ARG_DURATION, .id = RUN_TIMEOUT, .min = 1000, .max = 24 * 3600 * 1000ull,  \
         .def = default_timeout, .help = "kill the " what " after this long"},                                    \
        {.name = "for-driver", .kind = ARG_TEXT, .id = RUN_FOR_DRIVER, .metavar = "VERSION",                      \
         .help = "pick the tag for this driver instead of the loaded one"},                                       \
        OPT_JSON(NGC_SCHEMA), {0}

static const struct opt pull_options[] = {RUN_OPTIONS("pull", "1h")};
static const struct opt test_options[] = {RUN_OPTIONS("container", "5m")};

/* What one subcommand run holds. */
struct ngc_run {
        const char *cmd;
        struct run_cli o;
        struct cmd_args args;
        struct ngc_data d;
        struct machine m;
        const struct ngc_image *img;
        const struct ngc_release *rel;
        char ref[256];
        struct container_runtime rt;
        struct policy policy;
        bool have_policy;
};

/* Parse, load the catalogue, resolve the one IMAGE[:TAG], read the machine (NVML when
 * asked), pick the tag when none was given, and choose the runtime. Returns -1 to go on,
 * else the exit code. */
static int prepare(struct ngc_run *x, const struct cmd_spec *spec, int argc, char **argv, bool nvml) {
        int code = cmd_parse(spec, argc, argv, &x->o, &x->args);
        if (code >= 0)
                return code;
        if (argc - x->args.first_operand != 1)
                return cmd_usage_error(x->cmd, "expected one IMAGE[:TAG] (`gpuvet ngc list` names them)");
        if ((code = ngc_data_load(x->cmd, x->args.common.data_dir, &x->d)) != 0)
                return code;
        if ((code = ngc_resolve(x->cmd, x->d.db, argv[x->args.first_operand], &x->img, &x->rel)) != 0)
                return code;
        code = nvml ? machine_read(x->cmd, &x->args.common, &x->args.nvml, &x->m)
                    : machine_open(x->cmd, &x->args.common, &x->m);
        if (code == 0 && !nvml)
                code = machine_gather(&x->m, x->args.common.timeout_s);
        if (code)
                return code;
        if (!x->rel) {
                struct ngc_node node;
                char driver[64];
                if ((code = ngc_node_read(x->cmd, x->m.facts, &x->d, x->o.for_driver, driver, sizeof(driver), &node)))
                        return code;
                struct ngc_pick *p = malloc(sizeof(*p));
                if (!p)
                        return EXIT_INTERNAL;
                ngc_pick(x->d.compat, x->img, node.gpus, node.n, node.driver, p);
                x->rel = p->release;
                free(p);
                if (!x->rel) {
                        fprintf(stderr, "gpuvet %s: no release of %s runs on driver %s and these GPUs "
                                        "(`gpuvet ngc pick %s` says why); name a tag to %s anyway\n",
                                x->cmd, x->img->name, node.driver, x->img->name, x->cmd + 4);
                        return EXIT_FAILED;
                }
        }
        ngc_ref(x->img, x->rel, x->ref, sizeof(x->ref));
        /* The site policy's container.runtime, as container.gpu_access takes it. */
        if ((code = site_policy_load(x->cmd, NULL, false, x->m.fs, &x->policy, &x->have_policy)) != 0)
                return code;
        const char *named = x->o.runtime, *named_by = "--container-runtime";
        if (!named && x->have_policy && x->policy.container_runtime) {
                named = x->policy.container_runtime;
                named_by = "site policy";
        }
        const char *env = secure_getenv(CONTAINER_RUNTIME_ENV);
        if (!fsroot_is_live(x->m.fs) && !named && !(env && *env))
                return cmd_usage_error(x->cmd, "--root names a capture, and the container runtime would run on this "
                                               "machine: name it with --container-runtime to run anyway");
        if (container_runtime_choose(named, named_by, &x->m.facts->container, &x->rt) < 0) {
                fprintf(stderr, "gpuvet %s: no container runtime: neither docker nor podman is installed (name one "
                                "with --container-runtime PATH)\n",
                        x->cmd);
                return EXIT_FAILED;
        }
        return -1;
}

static int finish(struct ngc_run *x, int code) {
        if (x->have_policy)
                policy_free(&x->policy);
        code = machine_done(&x->m, code);
        ngc_data_done(&x->d);
        return code;
}

/* One line on why the runtime failed, by class. */
static void say_failure(const struct ngc_run *x, const char *step, const struct container_result *r) {
        const char *engine = container_engine_name(x->rt.engine);
        const char *cause = r->cause[0] ? r->cause : r->err_tail;
        switch (r->outcome) {
        case CONTAINER_NO_RUNTIME:
                fprintf(stderr, "gpuvet %s: %s could not be started: %s\n", x->cmd, x->rt.exe, cause);
                break;
        case CONTAINER_NO_DAEMON:
                fprintf(stderr, "gpuvet %s: %s cannot reach its daemon (`systemctl start %s`): %s\n", x->cmd, engine,
                        engine, cause);
                break;
        case CONTAINER_NO_IMAGE:
                if (strcmp(step, "pull") == 0)
                        fprintf(stderr, "gpuvet %s: the registry has no %s: %s\n", x->cmd, x->ref, cause);
                else
                        fprintf(stderr, "gpuvet %s: %s is not present locally: `gpuvet ngc pull %s:%s` first\n", x->cmd,
                                x->ref, x->img->name, x->rel->tag);
                break;
        case CONTAINER_TIMEOUT:
                fprintf(stderr, "gpuvet %s: `%s` did not finish within %.0f s; it was killed (--timeout-run gives "
                                "it longer)%s%s\n",
                        x->cmd, r->command, (double)r->elapsed_ms / 1e3, r->cleanup[0] ? "; " : "", r->cleanup);
                break;
        case CONTAINER_GPU_HOOK:
                fprintf(stderr, "gpuvet %s: the NVIDIA container hook failed (`nvidia-ctk runtime configure "
                                "--runtime=%s`, then restart %s): %s\n",
                        x->cmd, engine, engine, cause);
                break;
        case CONTAINER_DRIVER_TOO_OLD:
                fprintf(stderr, "gpuvet %s: the driver is too old for %s (`gpuvet ngc pick %s` names one that runs): "
                                "%s\n",
                        x->cmd, x->ref, x->img->name, cause);
                break;
        case CONTAINER_CDI:
                fprintf(stderr, "gpuvet %s: the CDI device could not be resolved (`nvidia-ctk cdi generate "
                                "--output=/etc/cdi/nvidia.yaml`): %s\n",
                        x->cmd, cause);
                break;
        default:
                fprintf(stderr, "gpuvet %s: `%s` failed (exit %d): %s\n", x->cmd, r->command, r->exit_status, cause);
                break;
        }
}

/* ---- pull ---- */

const struct cmd_spec cmd_ngc_pull_spec = {
        .name = "ngc pull",
        .synopsis = "[OPTIONS] IMAGE[:TAG]",
        .summary = "Pull an NGC image with docker or podman (`gpuvet ngc list` names them); without a tag, the "
                   "release `gpuvet ngc pick` chooses for this node. containerd (ctr) is not driven.",
        .opts = pull_options,
        .notes = "--root reads the GPUs and driver under DIR (with a named runtime); --data-dir reads gpus.json, "
                 "compat.json and ngc.json from DIR.",
        .exit_status = "0 pulled, 1 the pull failed (the message says why), 2 bad input, 3 internal error.",
        .operand_words = "pytorch|nemo|tritonserver|tensorflow|tensorrt|cuda|rapids|deepstream",
        .takes_operands = true,
        .on_option = run_option,
};

static json_t *outcome_json(const struct ngc_run *x, const char *command, const struct container_result *r) {
        json_t *doc = json_object();
        json_object_set_new(doc, "schema", json_string(NGC_SCHEMA));
        json_object_set_new(doc, "command", json_string(command));
        json_object_set_new(doc, "image", json_string(x->img->name));
        json_object_set_new(doc, "release", json_string(x->rel->release));
        json_object_set_new(doc, "ref", json_string(x->ref));
        json_object_set_new(doc, "runtime", json_string(x->rt.exe));
        json_object_set_new(doc, "outcome", json_string(container_outcome_name(r->outcome)));
        json_object_set_new(doc, "cause", r->cause[0] ? json_string(r->cause) : json_null());
        json_object_set_new(doc, "seconds", json_real((double)r->elapsed_ms / 1e3));
        return doc;
}

int ngc_pull(int argc, char **argv) {
        struct ngc_run x = {.cmd = "ngc pull"};
        int code = prepare(&x, &cmd_ngc_pull_spec, argc, argv, false);
        if (code >= 0)
                return finish(&x, code);
        unsigned timeout_s = x.o.timeout_s ? x.o.timeout_s : PULL_TIMEOUT_S;
        struct container_result r;
        if (container_pull(&x.rt, x.ref, timeout_s * 1000u, &r) < 0) {
                fprintf(stderr, "gpuvet ngc pull: out of memory\n");
                return finish(&x, EXIT_INTERNAL);
        }
        if (r.outcome != CONTAINER_OK)
                say_failure(&x, "pull", &r);
        code = r.outcome == CONTAINER_OK ? EXIT_PASS : EXIT_FAILED;
        if (x.o.json) {
                int c = ngc_print_json(outcome_json(&x, "pull", &r), x.o.json);
                code = c ? c : code;
        }
        if (ngc_text_wanted(x.o.json) && code == EXIT_PASS) {
                printf("pulled %s with %s (%.1f s)\n", x.ref, container_engine_name(x.rt.engine),
                       (double)r.elapsed_ms / 1e3);
        }
        container_result_done(&r);
        return finish(&x, code);
}

/* ---- test ---- */

const struct cmd_spec cmd_ngc_test_spec = {
        .name = "ngc test",
        .synopsis = "[OPTIONS] IMAGE[:TAG]",
        .summary = "Run an NGC image (already pulled; never pulled here) with every GPU and check, inside it, that "
                   "the framework sees each of the host's GPUs (UUIDs, from NVML) and that a 512x512 matmul on each "
                   "matches the CPU's (PyTorch and NeMo; TensorFlow compares the GPU count, as it shows no UUIDs). "
                   "Images without a framework test (CUDA, Triton, TensorRT, RAPIDS, DeepStream) are checked with "
                   "nvidia-smi's GPU list only. Without a tag, the release `gpuvet ngc pick` chooses.",
        .opts = test_options,
        .nvml = true,
        .notes = "--root reads the GPUs under DIR (with a named runtime); --nvml-lib loads this libnvidia-ml for the "
                 "host's GPUs.",
        .exit_status = "0 pass, 1 the test failed or could not run (the message says why), 2 bad input, 3 internal "
                       "error.",
        .operand_words = "pytorch|nemo|tritonserver|tensorflow|tensorrt|cuda|rapids|deepstream",
        .takes_operands = true,
        .on_option = run_option,
};

int ngc_test(int argc, char **argv) {
        struct ngc_run x = {.cmd = "ngc test"};
        int code = prepare(&x, &cmd_ngc_test_spec, argc, argv, true);
        if (code >= 0)
                return finish(&x, code);
        const struct facts *f = x.m.facts;
        const struct ngc_test *t = x.img->test;
        unsigned timeout_s = x.o.timeout_s ? x.o.timeout_s : TEST_TIMEOUT_S;

        /* The host's GPUs: NVML's UUIDs, else the count on the PCI bus. */
        char (*host)[96] = calloc(CONTAINER_GPU_MAX, sizeof(*host));
        struct ngc_seen *s = calloc(1, sizeof(*s));
        if (!host || !s) {
                free(host);
                free(s);
                return finish(&x, EXIT_INTERNAL);
        }
        size_t n_host = 0;
        for (unsigned i = 0; f->nvml.init_state == NVML_INIT_OK && i < f->nvml.n_gpus && n_host < CONTAINER_GPU_MAX; i++)
                if (nv_ok(f->nvml.gpus[i].uuid) && f->nvml.gpus[i].uuid.v[0])
                        snprintf(host[n_host++], sizeof(host[0]), "%s", f->nvml.gpus[i].uuid.v);
        size_t host_count = n_host ? n_host : f->gpus.n;

        struct container_result r;
        if (container_image_inspect(&x.rt, x.ref, timeout_s * 1000u, &r) < 0) {
                code = EXIT_INTERNAL;
                goto out;
        }
        if (r.outcome == CONTAINER_OK) {
                container_result_done(&r);
                const char *cmd[10];
                size_t n = 0;
                for (size_t i = 0; i < t->n_command; i++)
                        cmd[n++] = t->command[i];
                if (t->script)
                        cmd[n++] = t->script;
                cmd[n] = NULL;
                if (container_run_gpus(&x.rt, x.ref, cmd, timeout_s * 1000u, &r) < 0) {
                        code = EXIT_INTERNAL;
                        goto out;
                }
        }
        /* A framework script that found a wrong matmul exits 1 after printing its report. */
        bool ran = r.outcome == CONTAINER_OK || (r.outcome == CONTAINER_EXITED && t->script);
        if (!ran) {
                say_failure(&x, "run", &r);
                code = EXIT_FAILED;
                if (x.o.json)
                        code = ngc_print_json(outcome_json(&x, "test", &r), x.o.json) ? EXIT_INTERNAL : code;
                container_result_done(&r);
                goto out;
        }
        s->count = -1;
        s->max_abs_err = -1;
        if (t->script) {
                ngc_read_framework(r.out, s);
        } else {
                struct container_gpu_facts *g = calloc(1, sizeof(*g));
                if (g) {
                        container_gpu_parse_uuids(r.out, g);
                        for (size_t i = 0; i < g->n_uuids; i++)
                                snprintf(s->uuids[i], sizeof(s->uuids[0]), "%s", g->uuids[i]);
                        s->n_uuids = g->n_uuids;
                        s->count = (long long)g->n_uuids;
                        free(g);
                }
        }
        struct ngc_test_verdict v;
        ngc_test_judge(t, s, host, n_host, host_count, &v);
        code = v.pass ? EXIT_PASS : EXIT_FAILED;
        if (x.o.json) {
                json_t *doc = outcome_json(&x, "test", &r);
                json_object_set_new(doc, "test", json_string(t->name));
                json_object_set_new(doc, "note", t->note ? json_string(t->note) : json_null());
                json_object_set_new(doc, "framework", s->have_report ? json_string(s->framework) : json_null());
                json_object_set_new(doc, "framework_version", s->have_report ? json_string(s->version) : json_null());
                json_object_set_new(doc, "host_gpu_count", json_integer((json_int_t)host_count));
                json_object_set_new(doc, "container_gpu_count", s->count >= 0 ? json_integer(s->count) : json_null());
                json_t *seen = json_array(), *miss = json_array();
                for (size_t i = 0; i < s->n_uuids; i++)
                        json_array_append_new(seen, json_string(s->uuids[i]));
                for (size_t i = 0; v.compare_uuids && i < n_host; i++)
                        if (!ngc_uuid_listed(s->uuids, s->n_uuids, host[i]))
                                json_array_append_new(miss, json_string(host[i]));
                json_object_set_new(doc, "container_gpus", seen);
                json_object_set_new(doc, "missing_gpus", miss);
                json_object_set_new(doc, "uuids_compared", json_boolean(v.compare_uuids));
                json_object_set_new(doc, "matmul_ok", t->script ? json_boolean(s->matmul_ok) : json_null());
                json_object_set_new(doc, "max_abs_err", s->max_abs_err >= 0 ? json_real(s->max_abs_err) : json_null());
                json_object_set_new(doc, "verdict", json_string(v.pass ? "pass" : "fail"));
                int c = ngc_print_json(doc, x.o.json);
                code = c ? c : code;
        }
        if (ngc_text_wanted(x.o.json)) {
                printf("%s (%s, with %s)\n", x.ref, x.img->title, container_engine_name(x.rt.engine));
                if (t->note)
                        printf("  note: %s\n", t->note);
                if (!v.report_ok)
                        printf("  ✗ the test script printed no report (exit %d): %s\n", r.exit_status,
                               r.err_tail[0] ? r.err_tail : "no message");
                else
                        printf("  %s %s%s%s sees %lld of the host's %zu GPUs%s%s%s\n", v.gpus_ok ? "✓" : "✗",
                               t->script ? s->framework : "nvidia-smi", s->version[0] ? " " : "", s->version, s->count,
                               host_count,
                               v.compare_uuids ? (v.n_missing ? "; missing: " : " (same UUIDs)") : " (count only)",
                               v.missing, "");
                if (t->script && v.report_ok) {
                        if (s->matmul_ok)
                                printf("  ✓ a 512x512 matmul on each GPU matches the CPU (max error %.3g)\n", s->max_abs_err);
                        else
                                printf("  ✗ the matmul on the GPUs does not match the CPU (max error %.3g)\n", s->max_abs_err);
                }
                printf("%s\n", v.pass ? "PASS" : "FAIL");
        }
        container_result_done(&r);
out:
        free(host);
        free(s);
        return finish(&x, code);
}
