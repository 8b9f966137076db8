/* Xid events: the log line parser, kmsg and syslog sources, and the gpu.xid check. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks/check.h"
#include "core/fsroot.h"
#include "tree.h"

static void test_parse_line(void **state) {
        (void)state;
        struct xid_event ev;
        const char *l = "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";
        assert_int_equal(xid_parse_line(l, strlen(l), &ev), 1);
        assert_string_equal(ev.addr, "0000:3b:00.0");
        assert_int_equal(ev.code, 79);
        assert_string_equal(ev.text, "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");

        /* Older drivers: no "PCI:" prefix; MIG adds the GPU instance after the address. */
        l = "[ 269.517039] NVRM: Xid (0000:01:00): 3, C 00000005 SC 00000007";
        assert_int_equal(xid_parse_line(l, strlen(l), &ev), 1);
        assert_string_equal(ev.addr, "0000:01:00.0");
        assert_int_equal(ev.code, 3);
        l = "NVRM: Xid (PCI:0000:9d:00 GPU-I:05): 43, pid=1, Ch 00000010";
        assert_int_equal(xid_parse_line(l, strlen(l), &ev), 1);
        assert_string_equal(ev.addr, "0000:9d:00.0");
        assert_int_equal(ev.code, 43);

        assert_int_equal(ev.recovery_action, -1);

        /* Xid 154 names the driver's recovery action; R610 renamed the texts, so the value
         * is what counts (open-gpu-kernel-modules gpu.c; issue 1353). */
        l = "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)";
        assert_int_equal(xid_parse_line(l, strlen(l), &ev), 1);
        assert_int_equal(ev.code, 154);
        assert_int_equal(ev.recovery_action, 2);
        l = "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (PF FLR)";
        assert_int_equal(xid_parse_line(l, strlen(l), &ev), 1);
        assert_int_equal(ev.recovery_action, 1);
        l = "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x4 (Drain and Reset) to 0x0 (None)";
        assert_int_equal(xid_parse_line(l, strlen(l), &ev), 1);
        assert_int_equal(ev.recovery_action, 0);
        l = "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed to 0xzz";
        assert_int_equal(xid_parse_line(l, strlen(l), &ev), 1);
        assert_int_equal(ev.recovery_action, -1);
        l = "NVRM: Xid (PCI:0000:01:00): 154, changed from 0x0 (None) to 0x123456 (x)";
        assert_int_equal(xid_parse_line(l, strlen(l), &ev), 1);
        assert_int_equal(ev.recovery_action, -1); /* too long to be an action */

        const char *not_xid[] = {
                "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15",
                "NVRM: Xid (PCI:0000:3b:00) 79",          /* no colon after the address */
                "NVRM: Xid (PCI:zzzz:3b:00): 79, x",      /* not hex */
                "NVRM: Xid (PCI:0000:3b:00): , x",        /* no code */
                "NVRM: Xid (PCI:0000:3b:00): 9999999, x", /* absurd code */
                "NVRM: Xid (",
        };
        for (size_t i = 0; i < sizeof(not_xid) / sizeof(not_xid[0]); i++)
                assert_int_equal(xid_parse_line(not_xid[i], strlen(not_xid[i]), &ev), 0);
}

/* The NVRM lines of a GPU the driver could not bring up, which carry no Xid number. */
static void test_parse_fault_lines(void **state) {
        (void)state;
        struct xid_event ev;
        const char *l = "4,1201,8842211,-;NVRM: GPU 0000:c3:00.0: RmInitAdapter failed! (0x24:0x72:1568)";
        assert_int_equal(nvrm_fault_parse_line(l, strlen(l), &ev), 1);
        assert_string_equal(ev.addr, "0000:c3:00.0");
        assert_string_equal(ev.text, "NVRM: GPU 0000:c3:00.0: RmInitAdapter failed! (0x24:0x72:1568)");
        assert_int_equal(ev.code, 0);
        l = "Nov 19 22:40:13 h kernel: NVRM: GPU at PCI:0000:41:00: GPU-5c4e8a27-...\n";
        assert_int_equal(nvrm_fault_parse_line(l, strlen(l), &ev), 0); /* no fault in it */
        l = "Nov 19 22:40:13 h kernel: NVRM: GPU 0000:41:00.0: GPU has fallen off the bus.";
        assert_int_equal(nvrm_fault_parse_line(l, strlen(l), &ev), 1);
        assert_string_equal(ev.addr, "0000:41:00.0");
        l = "nvidia 0000:9d:00.0: probe with driver nvidia failed with error -1";
        assert_int_equal(nvrm_fault_parse_line(l, strlen(l), &ev), 1);
        assert_string_equal(ev.addr, "0000:9d:00.0");
        /* The summary lines name no GPU. */
        l = "NVRM: The NVIDIA probe routine failed for 1 device(s).";
        assert_int_equal(nvrm_fault_parse_line(l, strlen(l), &ev), 1);
        assert_string_equal(ev.addr, "");
        /* An Xid line is xid_parse_line's, not a fault line. */
        l = "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";
        assert_int_equal(nvrm_fault_parse_line(l, strlen(l), &ev), 0);
        l = "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15";
        assert_int_equal(nvrm_fault_parse_line(l, strlen(l), &ev), 0);

        struct xid_facts x = {0};
        xid_parse_log("6,1,0,-;Linux version 6.8\n"
                      "3,2,9000,-;NVRM: GPU 0000:c3:00.0: RmInitAdapter failed! (0x24:0x72:1568)\n"
                      "4,3,9001,-;NVRM: Xid (PCI:0000:61:00): 94, pid=48211, name=python3\n",
                      1, &x);
        assert_int_equal(x.n, 1);
        assert_int_equal(x.n_faults, 1);
        assert_string_equal(x.faults[0].addr, "0000:c3:00.0");
        xid_facts_done(&x);
}

static void test_parse_log_sources(void **state) {
        (void)state;
        struct xid_facts x = {0};
        xid_parse_log("6,1,0,-;Linux version 6.8\n"
                      "4,2,86533918201,-;NVRM: Xid (PCI:0000:61:00): 94, pid=48211, name=python3\n"
                      " SUBSYSTEM=pci\n",
                      1, &x);
        assert_int_equal(x.n, 1);
        assert_int_equal(x.events[0].usec, 86533918201LL);
        xid_facts_done(&x);

        /* Syslog: only what follows the last kernel boot banner counts. */
        xid_parse_log("Nov 18 09:12:01 h kernel: Linux version 5.15\n"
                      "Nov 19 22:40:13 h kernel: NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus.\n"
                      "Nov 20 08:00:00 h sshd: echo Linux version spoof\n"
                      "Nov 20 08:00:02 h kernel: Linux version 5.15\n"
                      "Nov 20 09:00:00 h kernel: NVRM: Xid (PCI:0000:41:00): 48, DBE\n",
                      0, &x);
        assert_int_equal(x.n, 1);
        assert_int_equal(x.events[0].code, 48);
        assert_int_equal(x.events[0].usec, -1);
        xid_facts_done(&x);
}

static void test_gather_prefers_kmsg(void **state) {
        (void)state;
        char *root = tree_new("xid");
        tree_put(root, "var/log/kern.log", "Nov 20 09:00:00 h kernel: NVRM: Xid (PCI:0000:41:00): 48, DBE\n");
        struct fsroot *fs;
        struct facts f = {0};
        assert_int_equal(fsroot_open(root, &fs), 0);
        assert_int_equal(xid_gather(fs, &f), 0);
        assert_string_equal(f.xid.source, "/var/log/kern.log");
        assert_int_equal(f.xid.kmsg_errno, ENOENT);
        assert_int_equal(f.xid.n, 1);
        xid_facts_done(&f.xid);

        tree_put(root, "dev/kmsg", "4,2,5,-;NVRM: Xid (PCI:0000:41:00): 79, lost\n");
        assert_int_equal(xid_gather(fs, &f), 0);
        assert_string_equal(f.xid.source, "/dev/kmsg");
        assert_int_equal(f.xid.events[0].code, 79);
        xid_facts_done(&f.xid);
        fsroot_free(fs);
        tree_remove(root);
}

/* One GPU at 0000:41:00.0, the built-in Xid table, and the given events. */
struct node {
        struct facts f;
        struct pci_dev dev;
        struct gpu gpu;
        struct gpudb *db;
        struct xid_event events[8];
};

static void node_init(struct node *n) {
        memset(n, 0, sizeof(*n));
        char err[256];
        assert_int_equal(gpudb_load(NULL, &n->db, err, sizeof(err)), 0);
        n->f.db = n->db;
        snprintf(n->dev.addr, sizeof(n->dev.addr), "0000:41:00.0");
        n->f.pci.devs = &n->dev;
        n->f.pci.n = 1;
        n->f.gpus.gpus = &n->gpu;
        n->f.gpus.n = 1;
        n->f.xid.source = "/dev/kmsg";
        n->f.xid.events = n->events;
}

static struct xid_event *add(struct node *n, const char *addr, int code) {
        struct xid_event *ev = &n->events[n->f.xid.n++];
        snprintf(ev->addr, sizeof(ev->addr), "%s", addr);
        ev->code = code;
        snprintf(ev->text, sizeof(ev->text), "text %d", code);
        ev->recovery_action = -1;
        ev->fatal = -1;
        ev->seq = n->f.xid.n; /* log order, from 1 as xid_parse_log counts lines */
        return ev;
}

/* An event as the parser makes it from a kernel log line, added to n. */
static struct xid_event *add_line(struct node *n, const char *line) {
        struct xid_event *ev = &n->events[n->f.xid.n++];
        assert_int_equal(xid_parse_line(line, strlen(line), ev), 1);
        ev->seq = n->f.xid.n;
        return ev;
}

static const struct result *run(struct node *n, struct report *rep, size_t expect_results) {
        report_init(rep);
        check_gpu_xid.run(&check_gpu_xid, &n->f, rep);
        assert_int_equal(rep->n_results, expect_results);
        return &rep->results[0];
}

static void test_check(void **state) {
        (void)state;
        struct node n;
        struct report rep;
        node_init(&n);
        const struct result *r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "none");
        report_done(&rep);

        add(&n, "0000:41:00.0", 13);
        add(&n, "0000:41:00.0", 13);
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->observed, "Xid 13 x2 (Graphics engine exception (usually an application fault))");
        report_done(&rep);

        /* 63 (a row marked for remapping) is IGNORE in NVIDIA's catalog: reported, not judged. */
        add(&n, "0000:41:00.0", 63);
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_PASS);
        assert_non_null(strstr(r->observed, "Xid 63 x1 (Memory row remap / page retirement event recorded; ignored per "
                                            "NVIDIA's catalog)"));
        assert_non_null(strstr(r->summary, "1 application and 1 informational Xid codes"));
        report_done(&rep);

        /* A GPU that fell off the bus and is gone from it: reported on the host. */
        add(&n, "0000:3b:00.0", 79);
        r = run(&n, &rep, 2);
        assert_int_equal(rep.results[1].status, STATUS_FAIL);
        assert_string_equal(rep.results[1].subject, "host");
        assert_string_equal(rep.results[1].observed, "Xid 79 x1 (GPU has fallen off the bus)");
        assert_string_equal(rep.results[1].evidence[1].value, "0000:3b:00.0 Xid 79: text 79");
        report_done(&rep);

        n.events[3].code = 4242;
        r = run(&n, &rep, 2);
        assert_int_equal(rep.results[1].status, STATUS_WARN);
        assert_string_equal(rep.results[1].observed, "Xid 4242 x1 (not in gpuvet's Xid table)");
        report_done(&rep);

        gpudb_free(n.db);

        /* 38 is IGNORE and 109 RESET_GPU in NVIDIA's catalog (the old table had them the
         * other way round). */
        node_init(&n);
        add(&n, "0000:41:00.0", 38);
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&rep);
        add(&n, "0000:41:00.0", 109);
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->remedy, "Xid 109: drain the node and reset the GPU"));
        /* the table's placeholder filled in with the GPU the result is about (ux-review) */
        assert_non_null(strstr(r->remedy, "nvidia-smi -r -i 0000:41:00.0"));
        assert_null(strstr(r->remedy, "<index>"));
        assert_null(strstr(r->remedy, "Xid 38"));
        report_done(&rep);
        gpudb_free(n.db);

        /* Xid 154: the latest line's action decides; back to None means recovered. */
        node_init(&n);
        add(&n, "0000:41:00.0", 79);
        n.events[0].code = 119;
        add(&n, "0000:41:00.0", 154)->recovery_action = 2;
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->observed, "Xid 154 x1 (Driver changed the GPU recovery action: now 0x2 Node Reboot "
                                            "Required)"));
        assert_non_null(strstr(r->remedy, "Xid 154: drain the node and reboot it"));
        report_done(&rep);
        n.f.xid.n = 0;
        add(&n, "0000:41:00.0", 154)->recovery_action = 3;
        add(&n, "0000:41:00.0", 154)->recovery_action = 0;
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_PASS);
        assert_non_null(strstr(r->observed, "Xid 154 x2 (Driver changed the GPU recovery action: now 0x0 None; ignored"));
        report_done(&rep);
        n.events[1].recovery_action = 9; /* a value newer than the table */
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_WARN);
        assert_non_null(strstr(r->observed, "now 0x9, an action gpuvet does not know"));
        report_done(&rep);
        n.events[1].recovery_action = -1; /* a line without one: the table's own entry */
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_WARN);
        report_done(&rep);

        n.f.xid.source = NULL;
        n.f.xid.kmsg_errno = EPERM;
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_SKIP);
        assert_non_null(strstr(r->summary, "needs root to read the kernel log"));
        report_done(&rep);
        gpudb_free(n.db);
}

/* The loader: the catalog's buckets, a code's own words winning, the older schema. */
static void test_table(void **state) {
        (void)state;
        struct xiddb x;
        char err[256];
        assert_int_equal(xiddb_load(NULL, &x, err, sizeof(err)), 0);
        const struct xid_info *i = xiddb_find(&x, 46);
        assert_non_null(i);
        assert_int_equal(i->severity, XID_CRITICAL);
        assert_string_equal(i->resolution, "RESET_GPU");
        assert_string_equal(i->mnemonic, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR");
        assert_non_null(strstr(xiddb_find(&x, 79)->action, "power-cycle"));
        for (int code = 144; code <= 150; code++)
                assert_int_equal(xiddb_find(&x, code)->severity, XID_CRITICAL);
        assert_int_equal(xiddb_find_recovery(&x, 4)->severity, XID_CRITICAL);
        assert_null(xiddb_find_recovery(&x, 99));
        xiddb_done(&x);

        static const char v1[] = "{\"schema\": \"gpuvet.xid/1\", \"xids\": [{\"code\": 79, \"name\": \"off the bus\", "
                                 "\"severity\": \"critical\", \"action\": \"reboot\"}]}";
        assert_int_equal(xiddb_load_buffer(v1, sizeof(v1) - 1, "v1.json", &x, err, sizeof(err)), 0);
        assert_int_equal(xiddb_find(&x, 79)->severity, XID_CRITICAL);
        assert_null(xiddb_find(&x, 79)->resolution);
        xiddb_done(&x);

        static const char own[] = "{\"schema\": \"gpuvet.xid/2\", \"resolutions\": {\"IGNORE\": {\"severity\": \"ignore\", "
                                  "\"action\": \"none\"}}, \"xids\": [{\"code\": 63, \"name\": \"n\", \"resolution\": "
                                  "\"IGNORE\", \"severity\": \"warning\"}]}";
        assert_int_equal(xiddb_load_buffer(own, sizeof(own) - 1, "own.json", &x, err, sizeof(err)), 0);
        assert_int_equal(xiddb_find(&x, 63)->severity, XID_WARNING);
        assert_string_equal(xiddb_find(&x, 63)->action, "none");
        xiddb_done(&x);

        static const char *const bad[] = {
                "{\"schema\": \"gpuvet.xid/2\", \"xids\": [{\"code\": 1, \"name\": \"n\", \"resolution\": \"NOPE\"}]}",
                ("{\"schema\": \"gpuvet.xid/2\", \"resolutions\": {\"A\": {\"severity\": \"fatal\", \"action\": \"x\"}}, "
                 "\"xids\": []}"),
                "{\"schema\": \"gpuvet.xid/2\", \"recovery_actions\": {\"values\": [{\"value\": 1}]}, \"xids\": []}",
                "{\"schema\": \"gpuvet.xid/3\", \"xids\": []}",
        };
        static const char *const why[] = {"resolution must name an entry", "resolution A needs", "recovery action 0 needs",
                                          "\"schema\" must be"};
        for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
                assert_int_equal(xiddb_load_buffer(bad[k], strlen(bad[k]), "bad.json", &x, err, sizeof(err)), -EINVAL);
                assert_non_null(strstr(err, why[k]));
                assert_non_null(strstr(err, "bad.json: "));
        }
}

/* Codes 162-172 of NVIDIA's catalog, which the hand-kept table stopped before. */
static void test_catalog_codes(void **state) {
        (void)state;
        struct xiddb x;
        char err[256];
        assert_int_equal(xiddb_load(NULL, &x, err, sizeof(err)), 0);
        for (int code = 1; code <= 172; code++)
                assert_non_null(xiddb_find(&x, code));
        assert_int_equal(xiddb_find(&x, 167)->severity, XID_CRITICAL); /* PCIe fatal timeout */
        assert_int_equal(xiddb_find(&x, 169)->severity, XID_CRITICAL); /* SEC2 halt, twin of 62 */
        assert_string_equal(xiddb_find(&x, 169)->resolution, "RESET_GPU");
        assert_string_equal(xiddb_find(&x, 171)->resolution, "WORKFLOW_XID_48");
        assert_non_null(strstr(xiddb_find(&x, 171)->action, "DRAM"));
        assert_non_null(strstr(xiddb_find(&x, 172)->action, "SRAM"));
        assert_int_equal(xiddb_find(&x, 162)->severity, XID_IGNORE);
        assert_int_equal(xiddb_find(&x, 165)->severity, XID_WARNING);
        xiddb_done(&x);
}

/* Xid 144-150 by unit and error status, as the catalog's decode table says. Lines: the
 * review's reproducer (domain review L3) and the formats leptonai/gpud PR 1174 quotes. */
static void test_nvlink5_decode(void **state) {
        (void)state;
        struct xid_event ev;
        const char *l = "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 "
                        "0x00000001 0x00000000 0x00100000 0x00000004)";
        assert_int_equal(xid_parse_line(l, strlen(l), &ev), 1);
        assert_string_equal(ev.unit, "RLW_RXPIPE");
        assert_int_equal(ev.fatal, 0);
        assert_int_equal(ev.has_regs, 1);
        assert_int_equal(ev.intr_info, 0x0409a0c2);
        assert_int_equal(ev.error_status, 8);
        l = "NVRM: Xid (PCI:0000:00:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 00 (0x025001c6 0x00000000 0x00000000 "
            "0x00000000 0x00000000 0x00000000)";
        assert_int_equal(xid_parse_line(l, strlen(l), &ev), 1);
        assert_string_equal(ev.unit, "NETIR_LINK_EVT");
        assert_int_equal(ev.fatal, 1);
        assert_int_equal((ev.intr_info >> 20) & 0x3f, 37);

        l = "NVRM: Xid (PCI:0000:41:00): 150, MSE Degraded Fatal XC0 i0 Link -1 (0x00000000 0xffffffff 0x0 0x0 0x0 "
            "0x0)";
        assert_int_equal(xid_parse_line(l, strlen(l), &ev), 1);
        assert_string_equal(ev.unit, "MSE Degraded");
        assert_int_equal(ev.fatal, 1);
        l = "NVRM: Xid (PCI:0000:41:00): 145, pid='<unknown>', name=<unknown>, NVLink: RLW Error (Link 0x3) (0x80000000 "
            "0x0 0x0 0x0 0x0 0x0)";
        assert_int_equal(xid_parse_line(l, strlen(l), &ev), 1);
        assert_string_equal(ev.unit, "");
        assert_int_equal(ev.fatal, -1);

        struct node n;
        struct report rep;
        node_init(&n);
        /* The reproducer: not the decode table's format, so undecoded, a warning, not critical. */
        add_line(&n, "NVRM: Xid (PCI:0000:41:00): 145, pid='<unknown>', name=<unknown>, NVLink: RLW Error (Link 0x3) "
                     "(0x80000000 0x0 0x0 0x0 0x0 0x0)");
        const struct result *r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_WARN);
        report_done(&rep);
        /* RLW_CTRL status 0x80000000: IGNORE, non-fatal. */
        n.f.xid.n = 0;
        add_line(&n, "NVRM: Xid (PCI:0000:41:00): 145, RLW_CTRL Nonfatal XC0 i0 Link 3 (0x00000003 0x80000000 0x0 0x0 "
                     "0x0 0x0)");
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_PASS);
        assert_non_null(strstr(r->observed, "RLW_CTRL status 0x80000000: IGNORE"));
        report_done(&rep);
        /* RLW_REMAP 0x1: XID_154_EVAL, restart the application when no Xid 154 came with it. */
        n.f.xid.n = 0;
        add_line(&n, "NVRM: Xid (PCI:0000:41:00): 145, RLW_REMAP Nonfatal XC0 i0 Link 3 (0x00000004 0x00000001 0x0 0x0 "
                     "0x0 0x0)");
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&rep);
        /* ... and the Xid 154's action when one did. */
        add_line(&n, "NVRM: Xid (PCI:0000:41:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and "
                     "Reset)");
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_FAIL);
        report_done(&rep);
        /* RLW_TAGSTATE 0x2: RESET_GPU, fatal. */
        n.f.xid.n = 0;
        add_line(&n, "NVRM: Xid (PCI:0000:41:00): 145, RLW_TAGSTATE Fatal XC0 i0 Link 3 (0x00000008 0x00000002 0x0 0x0 "
                     "0x0 0x0)");
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_FAIL);
        report_done(&rep);
        /* The gpud line: RLW_RXPIPE 0x8 is IGNORE; the same unit's 0x1 promoted to fatal resets. */
        n.f.xid.n = 0;
        add_line(&n, "NVRM: Xid (PCI:0000:41:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 "
                     "0x00000001 0x00000000 0x00100000 0x00000004)");
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&rep);
        add_line(&n, "NVRM: Xid (PCI:0000:41:00): 145, RLW_RXPIPE Fatal XC0 i0 Link 13 (0x000000c6 0x00000001 0x0 0x0 "
                     "0x0 0x0)");
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->observed, "promoted to fatal"));
        report_done(&rep);
        /* 149 link down: the reason field decides (38: IGNORE; 37: a peer went down, reset). */
        n.f.xid.n = 0;
        add_line(&n, "NVRM: Xid (PCI:0000:41:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 00 (0x026001c6 0x00000000 0x0 "
                     "0x0 0x0 0x0)");
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&rep);
        add_line(&n, "NVRM: Xid (PCI:0000:41:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 00 (0x025001c6 0x00000000 0x0 "
                     "0x0 0x0 0x0)");
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_FAIL);
        report_done(&rep);
        /* A fatal line of a unit the table does not list: fatal is believed. */
        n.f.xid.n = 0;
        add_line(&n, "NVRM: Xid (PCI:0000:41:00): 146, TLW_NEW Fatal XC0 i0 Link 1 (0x1 0x00000040 0x0 0x0 0x0 0x0)");
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_FAIL);
        report_done(&rep);
        gpudb_free(n.db);
}

/* NVRM fault lines of a GPU still bound to nvidia reach its gpu.xid result; the multi-line
 * "fallen off the bus" report (NVIDIA/NVSentinel issue 155) is read from kmsg and syslog. */
static void test_faults_reach_gpu(void **state) {
        (void)state;
        struct xid_facts x = {0};
        xid_parse_log("6,1,0,-;Linux version 6.8\n"
                      "3,2,1843308145,-;NVRM: The NVIDIA GPU 0000:b3:00.0\\x0aNVRM: (PCI ID: 10de:26b5) installed in "
                      "this system has\\x0aNVRM: fallen off the bus and is not responding to commands.\n",
                      1, &x);
        assert_int_equal(x.n_faults, 1);
        assert_string_equal(x.faults[0].addr, "0000:b3:00.0");
        assert_null(strstr(x.faults[0].text, "\\x0a"));
        xid_facts_done(&x);
        xid_parse_log("Nov 20 08:00:02 h kernel: Linux version 5.15\n"
                      "Nov 20 09:00:00 h kernel: NVRM: The NVIDIA GPU 0000:b3:00.0\n"
                      "Nov 20 09:00:00 h kernel: NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
                      "Nov 20 09:00:00 h kernel: NVRM: fallen off the bus and is not responding to commands.\n",
                      0, &x);
        assert_int_equal(x.n_faults, 1);
        assert_string_equal(x.faults[0].addr, "0000:b3:00.0");
        xid_facts_done(&x);

        /* gpu-operator issue 1146: the GPU stays bound to nvidia, no Xid is logged. */
        struct node n;
        struct report rep;
        node_init(&n);
        struct xid_event faults[1];
        const char *l = "NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x24:0x72:1568)";
        assert_int_equal(nvrm_fault_parse_line(l, strlen(l), &faults[0]), 1);
        faults[0].seq = 1;
        n.f.xid.faults = faults;
        n.f.xid.n_faults = 1;
        const struct result *r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->summary, "could not initialise"));
        assert_non_null(strstr(r->summary, "RmInitAdapter failed"));
        report_done(&rep);
        /* A GPU the open modules cannot drive (no GSP): a driver to install, not hardware to
         * replace. The report's three lines as users quote them (tests/fixtures/SOURCES.md). */
        struct xid_facts y = {0};
        xid_parse_log("Nov 20 08:00:02 h kernel: Linux version 6.12\n"
                      "Nov 20 08:00:09 h kernel: NVRM: The NVIDIA GPU 0000:41:00.0 (PCI ID: 10de:1bb3) installed in "
                      "this system\n"
                      "Nov 20 08:00:09 h kernel: NVRM: is not supported by open nvidia.ko because it does not include "
                      "the\n"
                      "Nov 20 08:00:09 h kernel: NVRM: required GPU System Processor (GSP).\n",
                      0, &y);
        assert_int_equal(y.n_faults, 1);
        assert_string_equal(y.faults[0].addr, "0000:41:00.0");
        n.f.xid.faults = y.faults;
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->summary, "does not support the GPU"));
        assert_non_null(strstr(r->remedy, "proprietary kernel modules"));
        report_done(&rep);
        xid_facts_done(&y);
        n.f.xid.faults = faults;
        /* A fault line that names no GPU ("probe routine was not called", also logged for GPUs
         * given to vfio-pci) is gpu.driver_binding's. */
        l = "NVRM: The NVIDIA probe routine was not called for 1 device(s).";
        assert_int_equal(nvrm_fault_parse_line(l, strlen(l), &faults[0]), 1);
        faults[0].seq = 1;
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_PASS);
        report_done(&rep);
        gpudb_free(n.db);
}

/* Xids before the driver re-initialised the GPU are history: listed, not judged. */
static void test_reinit(void **state) {
        (void)state;
        struct xid_facts x = {0};
        xid_parse_log("6,1,0,-;Linux version 6.8\n"
                      "6,2,10,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.95.05\n"
                      "4,3,20,-;NVRM: Xid (PCI:0000:41:00): 48, pid='<unknown>', name=<unknown>, DBE\n"
                      "4,4,21,-;NVRM: Xid (PCI:0000:41:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 "
                      "(GPU Reset Required)\n"
                      "6,5,90,-;NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.95.05\n",
                      1, &x);
        assert_true(x.driver_loaded_seen);
        assert_int_equal(x.n, 2);
        assert_int_equal(x.n_reinits, 1); /* the boot's own load is not one */
        assert_string_equal(x.reinits[0].addr, "");

        struct node n;
        struct report rep;
        node_init(&n);
        memcpy(n.events, x.events, 2 * sizeof(*x.events));
        n.f.xid.n = 2;
        /* Before: the DBE fails the GPU, and the summary says a reset cannot be seen. */
        const struct result *r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_FAIL);
        assert_non_null(strstr(r->summary, "not in the kernel log"));
        report_done(&rep);
        /* After the driver loaded again: history. */
        n.f.xid.reinits = x.reinits;
        n.f.xid.n_reinits = 1;
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_PASS);
        assert_string_equal(r->summary, "no Xid logged since the driver re-initialised the GPU");
        bool history = false;
        for (size_t i = 0; i < r->n_evidence; i++)
                history |= strcmp(r->evidence[i].key, "history") == 0 && strstr(r->evidence[i].value, "Xid 48 x1");
        assert_true(history);
        report_done(&rep);
        xid_facts_done(&x);

        /* The GPU's recovery action back to None re-initialised that GPU only. */
        xid_parse_log("4,3,20,-;NVRM: Xid (PCI:0000:41:00): 48, DBE\n"
                      "4,4,21,-;NVRM: Xid (PCI:0000:41:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 "
                      "(GPU Reset Required)\n"
                      "4,5,99,-;NVRM: Xid (PCI:0000:41:00): 154, GPU recovery action changed from 0x1 (GPU Reset "
                      "Required) to 0x0 (None)\n"
                      "4,6,120,-;NVRM: Xid (PCI:0000:41:00): 13, pid=7, name=a.out, Graphics Exception\n",
                      1, &x);
        assert_int_equal(x.n_reinits, 1);
        assert_string_equal(x.reinits[0].addr, "0000:41:00.0");
        memcpy(n.events, x.events, 4 * sizeof(*x.events));
        n.f.xid.n = 4;
        n.f.xid.reinits = x.reinits;
        r = run(&n, &rep, 1);
        assert_int_equal(r->status, STATUS_PASS);
        assert_non_null(strstr(r->observed, "Xid 13 x1"));
        assert_null(strstr(r->observed, "Xid 48"));
        report_done(&rep);
        xid_facts_done(&x);
        gpudb_free(n.db);
}

/* NVSwitch SXids: the Fabric Manager user guide's format and judgement. */
static void test_sxid(void **state) {
        (void)state;
        struct sxid_event ev;
        const char *l = "[ 123.4] nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 24007, Fatal, Link 44 sourcetrack "
                        "timeout error";
        assert_int_equal(sxid_parse_line(l, strlen(l), &ev), 1);
        assert_string_equal(ev.addr, "0000:07:00.0");
        assert_int_equal(ev.code, 24007);
        assert_true(ev.fatal);
        assert_int_equal(ev.link, 44);
        assert_string_equal(ev.text, "nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 24007, Fatal, Link 44 sourcetrack "
                                     "timeout error");
        l = "nvidia-nvswitch3: SXid (PCI:0000:c1:00.0): 28006, Non-fatal, Link 46 MC TS crumbstore MCTO (First)";
        assert_int_equal(sxid_parse_line(l, strlen(l), &ev), 1);
        assert_false(ev.fatal);
        /* The report's further lines are not counted again. */
        l = "nvidia-nvswitch3: SXid (PCI:0000:c1:00.0): 28006, Severity 0 Engine instance 46 Sub-engine instance 00";
        assert_int_equal(sxid_parse_line(l, strlen(l), &ev), 0);
        l = "[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus "
            "id 00000000:86:00.0 physical id 3 port 33";
        assert_int_equal(sxid_parse_line(l, strlen(l), &ev), 1);
        assert_string_equal(ev.addr, "0000:86:00.0");
        assert_int_equal(ev.code, 20034);
        assert_true(ev.fatal);
        assert_int_equal(ev.link, 33);
        /* sscanf's %x takes a sign: "-6" must not become bus 0xfffffffa (found by fuzz_xid). */
        l = "[Jul 09 2024 18:14:07] [ERROR] [tid 1727] detected NVSwitch fatal error 12028 on fid 0 on NVSwitch pci "
            "bus id 0000:-6:00.0 physical id 3 port 61";
        assert_int_equal(sxid_parse_line(l, strlen(l), &ev), 0);
        l = "nvidia-nvswitch3: SXid (PCI:0000: c1:00.0): 28006, Non-fatal, Link 46";
        assert_int_equal(sxid_parse_line(l, strlen(l), &ev), 0);
        struct xid_event xe;
        l = "NVRM: Xid (PCI:0000:-6:00): 79, pid=1, GPU has fallen off the bus.";
        assert_int_equal(xid_parse_line(l, strlen(l), &xe), 0);

        /* The Fabric Manager log: only its current run counts. */
        struct xid_facts x = {0};
        sxid_parse_fm_log("[Jul 09 2024 18:14:07] [ERROR] [tid 12727] detected NVSwitch fatal error 12028 on fid 0 on "
                          "NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 61\n"
                          "[Jul 10 2024 08:00:00] [INFO] [tid 1] Abort CUDA jobs when FM exits = 1\n"
                          "[Jul 10 2024 09:00:00] [ERROR] [tid 12727] detected NVSwitch non-fatal error 12028 on fid 0 "
                          "on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 61\n",
                          "/var/log/fabricmanager.log", &x);
        assert_int_equal(x.n_sxids, 1);
        assert_false(x.sxids[0].fatal);

        struct facts f = {0};
        struct pci_dev sw = {.addr = "0000:86:00.0", .have_ids = true, .vendor = 0x10de, .class_code = 0x068000};
        f.pci.devs = &sw;
        f.pci.n = 1;
        f.xid.source = "/dev/kmsg";
        f.xid.fm_log = x.fm_log;
        struct report rep;
        report_init(&rep);
        check_gpu_nvswitch_sxid.run(&check_gpu_nvswitch_sxid, &f, &rep);
        assert_int_equal(rep.n_results, 1);
        assert_int_equal(rep.results[0].status, STATUS_PASS);
        report_done(&rep);
        f.xid.sxids = x.sxids;
        f.xid.n_sxids = x.n_sxids;
        report_init(&rep);
        check_gpu_nvswitch_sxid.run(&check_gpu_nvswitch_sxid, &f, &rep);
        assert_int_equal(rep.results[0].status, STATUS_WARN);
        report_done(&rep);
        xid_facts_done(&x);
        /* A fatal one in the kernel log, on a switch the bus no longer shows. */
        struct sxid_event fatal;
        l = "nvidia-nvswitch0: SXid (PCI:0000:07:00.0): 24007, Fatal, Link 44 sourcetrack timeout error";
        assert_int_equal(sxid_parse_line(l, strlen(l), &fatal), 1);
        f.xid.sxids = &fatal;
        f.xid.n_sxids = 1;
        report_init(&rep);
        check_gpu_nvswitch_sxid.run(&check_gpu_nvswitch_sxid, &f, &rep);
        assert_int_equal(rep.n_results, 2);
        assert_string_equal(rep.results[1].subject, "0000:07:00.0");
        assert_int_equal(rep.results[1].status, STATUS_FAIL);
        assert_non_null(strstr(rep.results[1].remedy, "reset all GPUs and NVSwitches"));
        report_done(&rep);
        /* The same event in the kernel log and the Fabric Manager's counts once. */
        struct sxid_event both[2];
        l = "nvidia-nvswitch0: SXid (PCI:0000:86:00.0): 12028, Non-fatal, Link 61 egress non-posted PRIV error";
        assert_int_equal(sxid_parse_line(l, strlen(l), &both[0]), 1);
        both[0].source = "/dev/kmsg";
        l = "[Jul 09 2024 18:14:07] [ERROR] [tid 1] detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci bus "
            "id 00000000:86:00.0 physical id 3 port 61";
        assert_int_equal(sxid_parse_line(l, strlen(l), &both[1]), 1);
        both[1].source = "/var/log/fabricmanager.log";
        f.xid.fm_log = "/var/log/fabricmanager.log";
        f.xid.sxids = both;
        f.xid.n_sxids = 2;
        report_init(&rep);
        check_gpu_nvswitch_sxid.run(&check_gpu_nvswitch_sxid, &f, &rep);
        assert_int_equal(rep.n_results, 1);
        assert_string_equal(rep.results[0].observed, "0 fatal, 1 non-fatal SXid: 12028");
        assert_string_equal(rep.results[0].evidence[0].value, "/dev/kmsg");
        report_done(&rep);
        /* No NVSwitch and no SXid: nothing to judge. */
        f.pci.n = 0;
        f.xid.n_sxids = 0;
        report_init(&rep);
        check_gpu_nvswitch_sxid.run(&check_gpu_nvswitch_sxid, &f, &rep);
        assert_int_equal(rep.results[0].status, STATUS_SKIP);
        report_done(&rep);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_catalog_codes),
                cmocka_unit_test(test_nvlink5_decode),
                cmocka_unit_test(test_faults_reach_gpu),
                cmocka_unit_test(test_reinit),
                cmocka_unit_test(test_sxid),
                cmocka_unit_test(test_parse_line),
                cmocka_unit_test(test_parse_fault_lines),
                cmocka_unit_test(test_parse_log_sources),
                cmocka_unit_test(test_gather_prefers_kmsg),
                cmocka_unit_test(test_check),
                cmocka_unit_test(test_table),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
