/* gpu.xid: Xid errors the driver logged since boot, per GPU, each with its meaning,
 * severity and recommended action from gpuvet's Xid table. */
#include "checks/check.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define MAX_CODES 64

struct code_count {
        int code;
        size_t n;
};

/* Whether ev is about the GPU at addr (any function), or, with addr NULL, about an
 * address where no NVIDIA GPU is now. */
static bool event_is_for(const struct facts *f, const struct xid_event *ev, const char *addr) {
        if (addr)
                return strncmp(ev->addr, addr, 10) == 0;
        for (size_t g = 0; g < f->gpus.n; g++)
                if (strncmp(ev->addr, gpu_subject(f, g), 10) == 0)
                        return false;
        return true;
}

/* Count events per code for one address; returns the number of distinct codes. */
static size_t count_codes(const struct facts *f, const char *addr, struct code_count *out,
                          const struct xid_event **ret_last) {
        size_t n_codes = 0;
        *ret_last = NULL;
        for (size_t i = 0; i < f->xid.n; i++) {
                const struct xid_event *ev = &f->xid.events[i];
                if (!event_is_for(f, ev, addr))
                        continue;
                *ret_last = ev;
                size_t k = 0;
                while (k < n_codes && out[k].code != ev->code)
                        k++;
                if (k == n_codes) {
                        if (n_codes == MAX_CODES)
                                continue;
                        out[n_codes++] = (struct code_count){.code = ev->code};
                }
                out[k].n++;
        }
        return n_codes;
}

/* The latest Xid 154 of that address: the driver's current recovery action. */
static const struct xid_event *last_recovery_event(const struct facts *f, const char *addr) {
        const struct xid_event *last = NULL;
        for (size_t i = 0; i < f->xid.n; i++)
                if (f->xid.events[i].code == XID_RECOVERY_ACTION_CHANGED && event_is_for(f, &f->xid.events[i], addr))
                        last = &f->xid.events[i];
        return last;
}

struct verdict_of_code {
        enum xid_severity severity;
        bool known;
        const char *name;
        const char *action;
        char detail[160]; /* Xid 154: "now 0x2 Node Reboot Required" */
};

static struct verdict_of_code judge_code(const struct facts *f, const char *addr, int code) {
        const struct xiddb *table = gpudb_xids(f->db);
        const struct xid_info *info = xiddb_find(table, code);
        struct verdict_of_code v = {
                .severity = info ? info->severity : XID_WARNING,
                .known = info != NULL,
                .name = info ? info->name : "not in gpuvet's Xid table",
                .action = info ? info->action
                               : "look it up in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors)",
        };
        if (code != XID_RECOVERY_ACTION_CHANGED)
                return v;
        /* Judged by the action the latest line names: 0x0 (None) means it recovered. */
        const struct xid_event *ev = last_recovery_event(f, addr);
        if (!ev || ev->recovery_action < 0)
                return v;
        const struct xid_recovery_action *a = xiddb_find_recovery(table, (unsigned)ev->recovery_action);
        if (!a) {
                snprintf(v.detail, sizeof(v.detail), "now 0x%x, an action gpuvet does not know", (unsigned)ev->recovery_action);
                v.severity = XID_WARNING;
                return v;
        }
        snprintf(v.detail, sizeof(v.detail), "now 0x%x %s", a->value, a->name);
        v.severity = a->severity;
        v.action = a->action;
        return v;
}

static void judge(const struct check_info *self, const struct facts *f, struct report *rep, const char *subject,
                  const char *addr) {
        struct code_count codes[MAX_CODES];
        const struct xid_event *last;
        size_t n_codes = count_codes(f, addr, codes, &last);
        if (!addr && n_codes == 0)
                return;
        struct result *r = result_new(rep, self, subject);
        result_evidence(r, "source", "%s", f->xid.source);
        result_expected(r, "no hardware Xid since boot");
        if (n_codes == 0) {
                result_observed(r, "none");
                result_status(r, STATUS_PASS, "no Xid logged since boot");
                return;
        }
        char observed[1024] = "", actions[2048] = "";
        enum status worst = STATUS_PASS;
        size_t n_app = 0, n_ignored = 0;
        for (size_t k = 0; k < n_codes; k++) {
                struct verdict_of_code v = judge_code(f, addr, codes[k].code);
                strbuf_appendf(observed, sizeof(observed), "%sXid %d x%zu (%s%s%s%s)", observed[0] ? ", " : "",
                               codes[k].code, codes[k].n, v.name, v.detail[0] ? ": " : "", v.detail,
                               v.known && v.severity == XID_IGNORE ? "; ignored per NVIDIA's catalog" : "");
                enum status s = v.severity == XID_CRITICAL  ? STATUS_FAIL
                                : v.severity == XID_WARNING ? STATUS_WARN
                                                            : STATUS_PASS;
                n_app += v.severity == XID_APPLICATION;
                n_ignored += v.severity == XID_IGNORE;
                if (s == STATUS_FAIL || (s == STATUS_WARN && worst == STATUS_PASS))
                        worst = s;
                if (s != STATUS_PASS)
                        strbuf_appendf(actions, sizeof(actions), "%sXid %d: %s", actions[0] ? "; " : "", codes[k].code,
                                       v.action);
        }
        result_observed(r, "%s", observed);
        result_evidence(r, "last", "%s Xid %d: %s", last->addr, last->code, last->text);
        const char *where = addr ? "" : " for a device that is not on the PCI bus now";
        switch (worst) {
        case STATUS_FAIL:
                result_status(r, STATUS_FAIL, "critical Xid logged since boot%s: the GPU needs a reset, a reboot or service",
                              where);
                break;
        case STATUS_WARN:
                result_status(r, STATUS_WARN, "GPU fault Xid logged since boot%s: recoverable, act if it repeats", where);
                break;
        default:
                if (n_ignored == 0)
                        result_status(r, STATUS_PASS, "%zu application Xid code%s since boot: faults of programs, not of the GPU",
                                      n_app, n_app == 1 ? "" : "s");
                else
                        result_status(r, STATUS_PASS,
                                      "%zu application and %zu informational Xid code%s since boot (NVIDIA's catalog: "
                                      "restart the program, or ignore): nothing to do on the node",
                                      n_app, n_ignored, n_app + n_ignored == 1 ? "" : "s");
                return;
        }
        result_remedy(r, "%s", actions);
}

static void run_xid(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_skip_without_gpus(self, f, rep))
                return;
        if (!f->xid.source) {
                struct result *r = result_new(rep, self, "host");
                result_evidence(r, "source", "/dev/kmsg");
                if (f->xid.kmsg_errno == EPERM || f->xid.kmsg_errno == EACCES)
                        result_status(r, STATUS_SKIP,
                                      "needs root to read the kernel log (kernel.dmesg_restrict=1 closes /dev/kmsg, and "
                                      "no readable /var/log/kern.log, messages or syslog)");
                else
                        result_status(r, STATUS_SKIP, "no kernel log to read (/dev/kmsg: %s; no /var/log/kern.log, messages "
                                      "or syslog)", strerror(f->xid.kmsg_errno));
                return;
        }
        for (size_t i = 0; i < f->gpus.n; i++)
                judge(self, f, rep, gpu_subject(f, i), gpu_subject(f, i));
        /* A GPU that fell off the bus may be gone from it: its Xids still count. */
        judge(self, f, rep, "host", NULL);
}

CHECK_INFO(gpu_xid, "gpu", "gpu.xid", LEVEL_QUICK, 0,
           "No hardware Xid error logged since boot (each with its meaning and action)",
           run_xid);
