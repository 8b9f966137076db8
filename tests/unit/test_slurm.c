/* slurm-health's pure parts: scontrol's node record (src/slurm/node_state.c), the drain
 * reason (drain_reason.c) and the decision table (decide.c), hostile reasons included; and
 * scontrol's own message kept when it fails (scontrol.c, against small stand-in scripts). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/decide.h"
#include "slurm/drain_reason.h"
#include "slurm/node_state.h"
#include "slurm/scontrol.h"

#include <sys/stat.h>
#include <unistd.h>

/* A record as slurmctld 22.05.8 printed it (`scontrol show node -o`) on tests/slurm's configuration. */
#define HEAD                                                                                                           \
        "NodeName=gpunode1 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=2.83 "                 \
        "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.1 NodeHostName=vm "               \
        "Version=22.05.8 OS=Linux 6.18.44-fc-v782 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1 AllocMem=0 FreeMem=15140 "   \
        "Sockets=2 Boards=1 "
#define TAIL                                                                                                           \
        " ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=debug  "                              \
        "BootTime=2026-11-24T18:44:58 SlurmdStartTime=2026-11-25T14:16:10 LastBusyTime=2026-11-25T14:16:11 "           \
        "CfgTRES=cpu=2,mem=1M,billing=2 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s "      \
        "ExtSensorsWatts=0 ExtSensorsTemp=n/s"

static int parse(const char *text, const char *name, struct slurm_node *n) {
        return slurm_node_parse(text, strlen(text), name, n);
}

static void test_parse_states(void **state) {
        (void)state;
        struct slurm_node n;
        assert_int_equal(parse(HEAD "State=IDLE" TAIL "\n", "gpunode1", &n), 0);
        assert_string_equal(n.state, "IDLE");
        assert_int_equal(n.flags, 0);
        assert_null(n.reason);
        slurm_node_done(&n);

        static const struct {
                const char *state;
                unsigned flags;
        } cases[] = {
                {"IDLE+DRAIN", SLURM_NODE_DRAIN},
                {"MIXED+DRAIN", SLURM_NODE_DRAIN},
                {"ALLOCATED+DRAIN", SLURM_NODE_DRAIN},
                {"DRAINED", SLURM_NODE_DRAIN},
                {"DRAINING", SLURM_NODE_DRAIN},
                {"DOWN+DRAIN", SLURM_NODE_DOWN | SLURM_NODE_DRAIN},
                {"DOWN+NOT_RESPONDING", SLURM_NODE_DOWN | SLURM_NODE_NOT_RESPONDING},
                {"IDLE+DRAIN+NOT_RESPONDING", SLURM_NODE_DRAIN | SLURM_NODE_NOT_RESPONDING},
                {"DOWN*", SLURM_NODE_DOWN},
                {"drain~", 0}, /* states are upper case; a lower-case word is not a flag */
                {"IDLE+FAIL", SLURM_NODE_FAIL},
                {"MIXED+FAILING", SLURM_NODE_FAIL},
                {"IDLE+COMPLETING+DRAIN", SLURM_NODE_DRAIN},
                {"IDLE+DRAINEDX", 0},
                {"IDLE++DRAIN+", SLURM_NODE_DRAIN},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char text[2048];
                snprintf(text, sizeof(text), HEAD "State=%s" TAIL " Reason=x [root@2026-11-25T14:16:17]\n", cases[i].state);
                assert_int_equal(parse(text, "gpunode1", &n), 0);
                assert_string_equal(n.state, cases[i].state);
                if (n.flags != cases[i].flags)
                        fail_msg("%s: flags %#x, want %#x", cases[i].state, n.flags, cases[i].flags);
                assert_string_equal(n.reason, "x");
                slurm_node_done(&n);
        }
}

static void test_parse_reasons(void **state) {
        (void)state;
        struct slurm_node n;
        /* Spaces, '=', a State= and a Reason= of its own: the first " Reason=" after State
         * starts it, Slurm's " [user@time]" ends it. */
        assert_int_equal(parse(HEAD "State=IDLE+DRAIN" TAIL
                               " Reason=admin: bad fan x=1 State=IDLE Reason=foo [root@2026-11-25T14:16:17]\n",
                               "gpunode1", &n), 0);
        assert_string_equal(n.state, "IDLE+DRAIN");
        assert_int_equal(n.flags, SLURM_NODE_DRAIN);
        assert_string_equal(n.reason, "admin: bad fan x=1 State=IDLE Reason=foo");
        slurm_node_done(&n);

        /* A uid instead of a name, and free-form fields after the reason. */
        assert_int_equal(parse(HEAD "State=MIXED+DRAIN" TAIL
                               " Reason=gpuvet: gpu.xid [1000@2026-01-02T03:04:05] Comment=a [b@c] Extra=x\n",
                               "gpunode1", &n), 0);
        assert_string_equal(n.reason, "gpuvet: gpu.xid");
        slurm_node_done(&n);

        /* No suffix (reason_time unset): the rest of the line. Brackets that are not the
         * suffix stay in the reason. */
        assert_int_equal(parse(HEAD "State=DOWN" TAIL " Reason=Not responding [slurm@yesterday]\n", "gpunode1", &n), 0);
        assert_string_equal(n.reason, "Not responding [slurm@yesterday]");
        assert_int_equal(n.flags, SLURM_NODE_DOWN);
        slurm_node_done(&n);

        /* An empty reason. */
        assert_int_equal(parse(HEAD "State=IDLE+DRAIN" TAIL " Reason= [root@2026-11-25T14:16:17]\n", "gpunode1", &n), 0);
        assert_string_equal(n.reason, "");
        slurm_node_done(&n);

        /* Not UTF-8, control bytes: kept as bytes. */
        assert_int_equal(parse(HEAD "State=IDLE+DRAIN" TAIL " Reason=\xff\xfe\x01 bad [root@2026-11-25T14:16:17]\n",
                               "gpunode1", &n), 0);
        assert_string_equal(n.reason, "\xff\xfe\x01 bad");
        slurm_node_done(&n);

        /* A very long reason (slurmctld stored 5,000 bytes whole). */
        size_t big = 100000;
        char *text = malloc(big + 1024);
        assert_non_null(text);
        int k = snprintf(text, 1024, HEAD "State=IDLE+DRAIN" TAIL " Reason=gpuvet: ");
        memset(text + k, 'x', big);
        strcpy(text + k + big, " [root@2026-11-25T14:16:17]\n");
        assert_int_equal(parse(text, "gpunode1", &n), 0);
        assert_int_equal(strlen(n.reason), strlen("gpuvet: ") + big);
        assert_true(slurm_reason_is_ours(n.reason));
        slurm_node_done(&n);
        free(text);

        /* A Reason= before State= (inside OS=, say) is not the reason. */
        assert_int_equal(parse("NodeName=gpunode1 OS=Reason=x State=IDLE Partitions=debug\n", "gpunode1", &n), 0);
        assert_null(n.reason);
        slurm_node_done(&n);
}

static void test_parse_records(void **state) {
        (void)state;
        struct slurm_node n;
        /* Only name's line; a name that is a prefix of another is not it. */
        const char *two = "NodeName=gpunode10 State=DOWN Reason=a [root@2026-11-25T14:16:17]\n"
                          "NodeName=gpunode1 State=IDLE+DRAIN Reason=b [root@2026-11-25T14:16:17]\n";
        assert_int_equal(parse(two, "gpunode1", &n), 0);
        assert_string_equal(n.state, "IDLE+DRAIN");
        assert_string_equal(n.reason, "b");
        slurm_node_done(&n);
        assert_int_equal(parse(two, "gpunode10", &n), 0);
        assert_string_equal(n.reason, "a");
        slurm_node_done(&n);
        assert_int_equal(parse(two, "gpunode", &n), -ENOENT);
        assert_int_equal(parse("", "gpunode1", &n), -ENOENT);
        assert_int_equal(parse("Node gpunode1 not found\n", "gpunode1", &n), -ENOENT);
        assert_int_equal(slurm_node_parse(NULL, 0, "gpunode1", &n), -ENOENT);
        assert_int_equal(parse("NodeName=gpunode1 Arch=x86_64\n", "gpunode1", &n), -EBADMSG);
        assert_int_equal(parse("NodeName=gpunode1 State= Reason=x\n", "gpunode1", &n), -EBADMSG);
        /* A state longer than anything Slurm prints is refused, not cut. */
        char longstate[400];
        memset(longstate, 'A', sizeof(longstate));
        memcpy(longstate, "NodeName=gpunode1 State=", 24);
        longstate[sizeof(longstate) - 2] = '\n';
        longstate[sizeof(longstate) - 1] = '\0';
        assert_int_equal(parse(longstate, "gpunode1", &n), -EBADMSG);
        /* A state with a NUL or a control byte is no state (found by fuzz_slurm_node). */
        const char nulstate[] = "NodeName=gpunode1 State=\0\0DOWN Reason=a\n";
        assert_int_equal(slurm_node_parse(nulstate, sizeof(nulstate) - 1, "gpunode1", &n), -EBADMSG);
        assert_int_equal(parse("NodeName=gpunode1 State=IDLE\x01+DRAIN Reason=a\n", "gpunode1", &n), -EBADMSG);
        assert_int_equal(parse("NodeName=gpunode1 State=IDLE\xff Reason=a\n", "gpunode1", &n), -EBADMSG);
        /* The length, not a NUL, ends the input. */
        const char nul[] = "NodeName=gpunode1 State=IDLE+DRAIN Reason=a\0b [root@2026-11-25T14:16:17]\n";
        assert_int_equal(slurm_node_parse(nul, sizeof(nul) - 1, "gpunode1", &n), 0);
        assert_memory_equal(n.reason, "a\0b", 4);
        slurm_node_done(&n);
        /* Cut short: no newline ends the record, so its state is not taken. */
        assert_int_equal(slurm_node_parse(nul, 30, "gpunode1", &n), -EBADMSG);
        assert_int_equal(parse("NodeName=gpunode1 State=IDLE+DRAIN Reason=gpuvet: x [root@2026-11-25T14:16:17]", "gpunode1",
                               &n), -EBADMSG);
}

static void test_reason_build(void **state) {
        (void)state;
        char buf[SLURM_REASON_MAX + 1];
        const char *ids[] = {"gpu.ecc_errors", "pcie.link_width", "gpu.ecc_errors", "pcie.aer"};
        assert_string_equal(slurm_reason_build(buf, sizeof(buf), ids, 4, NULL),
                            "gpuvet: gpu.ecc_errors,pcie.link_width,pcie.aer");
        assert_true(slurm_reason_is_ours(buf));
        assert_string_equal(slurm_reason_build(buf, sizeof(buf), NULL, 0, "check timed out after 40 s"),
                            "gpuvet: check timed out after 40 s");

        /* Many ids: whole ids in order, then how many were left out, within the limit. */
        const char *many[40];
        char names[40][32];
        for (int i = 0; i < 40; i++) {
                snprintf(names[i], sizeof(names[i]), "gpu.check_number_%02d", i);
                many[i] = names[i];
        }
        slurm_reason_build(buf, sizeof(buf), many, 40, NULL);
        assert_true(strlen(buf) <= SLURM_REASON_MAX);
        assert_string_equal(buf, "gpuvet: gpu.check_number_00,gpu.check_number_01,gpu.check_number_02,"
                                 "gpu.check_number_03,gpu.check_number_04 +35 more");
        /* Ids that are not plain are counted, not written; an id longer than the limit ends
         * the list (the ones after it are counted too: report order is kept). */
        char huge[300];
        memset(huge, 'a', sizeof(huge) - 1);
        huge[sizeof(huge) - 1] = '\0';
        const char *odd[] = {"bad id", "x\"y", huge, "pcie.aer"};
        slurm_reason_build(buf, sizeof(buf), odd, 4, NULL);
        assert_string_equal(buf, "gpuvet: +4 more");
        const char *odd2[] = {"pcie.aer", "bad id", "gpu.xid"};
        assert_string_equal(slurm_reason_build(buf, sizeof(buf), odd2, 3, NULL), "gpuvet: pcie.aer,gpu.xid +1 more");
        /* A small buffer still ends in a NUL. */
        char small[12];
        slurm_reason_build(small, sizeof(small), ids, 4, NULL);
        assert_true(strlen(small) < sizeof(small));

        assert_false(slurm_reason_is_ours(NULL));
        assert_false(slurm_reason_is_ours(""));
        assert_false(slurm_reason_is_ours("admin: gpuvet: x"));
        assert_false(slurm_reason_is_ours("GPUVET: x"));
        assert_false(slurm_reason_is_ours("gpuvet"));
        assert_true(slurm_reason_is_ours("gpuvet:x"));
}

/* The table: state x reason x verdict -> action. */
static void test_decide(void **state) {
        (void)state;
        static const char ours[] = "gpuvet: gpu.xid", ours_other[] = "gpuvet: pcie.aer";
        static const struct {
                unsigned flags;
                const char *reason; /* the node's */
                bool healthy;
                enum slurm_action want;
        } cases[] = {
                /* In service. */
                {0, NULL, true, SLURM_ACTION_NONE},
                {0, NULL, false, SLURM_ACTION_DRAIN},
                {SLURM_NODE_NOT_RESPONDING, NULL, false, SLURM_ACTION_DRAIN},
                /* Drained by gpuvet. */
                {SLURM_NODE_DRAIN, ours, true, SLURM_ACTION_RESUME},
                {SLURM_NODE_DRAIN, ours, false, SLURM_ACTION_NONE},
                {SLURM_NODE_DRAIN, ours_other, false, SLURM_ACTION_UPDATE_REASON},
                {SLURM_NODE_DRAIN | SLURM_NODE_NOT_RESPONDING, ours, true, SLURM_ACTION_RESUME},
                /* Drained by someone else, or with no reason: never touched. */
                {SLURM_NODE_DRAIN, "admin: bad fan", true, SLURM_ACTION_NONE},
                {SLURM_NODE_DRAIN, "admin: bad fan", false, SLURM_ACTION_NONE},
                {SLURM_NODE_DRAIN, "NHC: check_fs_mount", false, SLURM_ACTION_NONE},
                {SLURM_NODE_DRAIN, "admin gpuvet: x", true, SLURM_ACTION_NONE},
                {SLURM_NODE_DRAIN, "", true, SLURM_ACTION_NONE},
                {SLURM_NODE_DRAIN, NULL, true, SLURM_ACTION_NONE},
                {SLURM_NODE_DRAIN, "\xff\xfe=State=IDLE", false, SLURM_ACTION_NONE},
                /* DOWN and FAIL: never touched, whoever wrote the reason. */
                {SLURM_NODE_DOWN, "Not responding", true, SLURM_ACTION_NONE},
                {SLURM_NODE_DOWN, "Not responding", false, SLURM_ACTION_NONE},
                {SLURM_NODE_DOWN | SLURM_NODE_DRAIN, ours, true, SLURM_ACTION_NONE},
                {SLURM_NODE_DOWN | SLURM_NODE_DRAIN, ours, false, SLURM_ACTION_NONE},
                {SLURM_NODE_FAIL, "admin: replace", true, SLURM_ACTION_NONE},
                {SLURM_NODE_FAIL | SLURM_NODE_DRAIN, ours, true, SLURM_ACTION_NONE},
                /* In service with a stale reason that is not a drain: a failure drains. */
                {0, "admin: old note", false, SLURM_ACTION_DRAIN},
                {0, ours, true, SLURM_ACTION_NONE},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct slurm_node n = {.flags = cases[i].flags, .reason = (char *)cases[i].reason};
                struct slurm_decision d = slurm_decide(&n, cases[i].healthy, ours);
                if (d.action != cases[i].want)
                        fail_msg("case %zu (flags %#x, reason \"%s\", %s): %s, want %s", i, cases[i].flags,
                                 cases[i].reason ? cases[i].reason : "(none)", cases[i].healthy ? "healthy" : "unhealthy",
                                 slurm_action_name(d.action), slurm_action_name(cases[i].want));
                assert_non_null(d.why);
        }
        assert_string_equal(slurm_action_name(SLURM_ACTION_UPDATE_REASON), "update-reason");
        assert_string_equal(slurm_action_name(_SLURM_ACTION_COUNT), "none");
}

/* A stand-in scontrol in dir running body; its path into path. */
static void stand_in(const char *dir, const char *name, const char *body, char *path, size_t size) {
        snprintf(path, size, "%s/%s", dir, name);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "#!/bin/sh\n%s", body);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(chmod(path, 0755), 0);
}

/* ux-review: "scontrol's own message is lost": scontrol says "Node vm not found" on
 * standard output and exits 1; slurm-health said only "scontrol exited 1". */
static void test_scontrol_message_kept(void **state) {
        (void)state;
        char dir[] = "/tmp/gpuvet-test-scontrol.XXXXXX";
        assert_non_null(mkdtemp(dir));
        char not_found[512], unreachable[512];
        stand_in(dir, "sc-not-found", "echo \"Node $4 not found\"\nexit 1\n", not_found, sizeof(not_found));
        stand_in(dir, "sc-unreachable",
                 "echo 'noise' >&2\necho 'slurm_load_node error: Unable to contact slurm controller' >&2\nexit 1\n",
                 unreachable, sizeof(unreachable));
        struct slurm_node n;
        char err[512];
        struct scontrol sc = {.path = not_found, .timeout_ms = 30000};
        assert_int_equal(scontrol_show_node(&sc, "vm", &n, err, sizeof(err)), -EIO);
        if (!strstr(err, "exited 1: Node vm not found"))
                fail_msg("scontrol's stdout message lost: \"%s\"", err);
        slurm_node_done(&n);
        sc.path = unreachable; /* standard error, its last line, as before */
        assert_int_equal(scontrol_show_node(&sc, "vm", &n, err, sizeof(err)), -EIO);
        if (!strstr(err, "exited 1: slurm_load_node error: Unable to contact slurm controller") || strstr(err, "noise"))
                fail_msg("scontrol's stderr message: \"%s\"", err);
        slurm_node_done(&n);
        assert_int_equal(unlink(not_found), 0);
        assert_int_equal(unlink(unreachable), 0);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_states),
                cmocka_unit_test(test_parse_reasons),
                cmocka_unit_test(test_parse_records),
                cmocka_unit_test(test_reason_build),
                cmocka_unit_test(test_decide),
                cmocka_unit_test(test_scontrol_message_kept),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
