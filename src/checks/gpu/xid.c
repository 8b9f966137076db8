/* gpu.xid: Xid errors the driver logged since boot, per GPU, each with its meaning,
 * severity and recommended action from gpuvet's Xid table; the Xids before the driver last
 * re-initialised a GPU are history. gpu.nvswitch_sxid: the NVSwitch driver's SXids, per
 * NVSwitch, as the Fabric Manager user guide judges them. */
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

/* The last line after which the driver re-initialised the GPU at addr (its module loaded
 * again, or the GPU's recovery action went back to None); NULL when none. */
static const struct xid_event *last_reinit(const struct facts *f, const char *addr) {
        const struct xid_event *last = NULL;
        for (size_t i = 0; addr && i < f->xid.n_reinits; i++) {
                const struct xid_event *r = &f->xid.reinits[i];
                if ((!r->addr[0] || strncmp(r->addr, addr, 10) == 0) && (!last || r->seq > last->seq))
                        last = r;
        }
        return last;
}

static size_t since_seq(const struct facts *f, const char *addr) {
        const struct xid_event *r = last_reinit(f, addr);
        return r ? r->seq : 0;
}

/* Count events per code for one address, those after seq only (history: those up to it);
 * returns the number of distinct codes. */
static size_t count_codes_in(const struct facts *f, const char *addr, struct code_count *out,
                             const struct xid_event **ret_last, size_t seq, bool history) {
        size_t n_codes = 0;
        *ret_last = NULL;
        for (size_t i = 0; i < f->xid.n; i++) {
                const struct xid_event *ev = &f->xid.events[i];
                if (!event_is_for(f, ev, addr) || (history ? ev->seq > seq : ev->seq <= seq))
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

static bool is_nvlink5(int code) {
        return code >= 144 && code <= 150;
}

/* One NVLink5 line through the catalog's decode table: its bucket, and what was decoded. */
static const struct xid_resolution *decode_nvlink5(const struct xiddb *table, const struct xid_event *ev,
                                                   char *detail, size_t size) {
        const struct xid_nvlink5_rule *rule =
                ev->has_regs ? xiddb_decode_nvlink5(table, ev->code, ev->unit, ev->intr_info, ev->error_status) : NULL;
        if (rule) {
                const char *bucket = rule->resolution_if_fatal && ev->fatal == 1 ? rule->resolution_if_fatal
                                                                                  : rule->resolution;
                snprintf(detail, size, "%s status 0x%08x: %s (%s)", ev->unit, ev->error_status, bucket,
                         rule->resolution_if_fatal && ev->fatal == 1 ? "promoted to fatal" : rule->severity);
                return xiddb_find_resolution(table, bucket);
        }
        if (ev->unit[0] && ev->fatal == 1) {
                snprintf(detail, size, "%s, fatal, status not in NVIDIA's decode table", ev->unit);
                return xiddb_find_resolution(table, "WORKFLOW_NVLINK5_ERR");
        }
        if (ev->unit[0])
                snprintf(detail, size, "%s, non-fatal, status 0x%08x not in NVIDIA's decode table", ev->unit,
                         ev->error_status);
        else
                snprintf(detail, size, "no unit and fatal word to decode");
        return xiddb_find_resolution(table, "NVLINK5_UNDECODED");
}

struct verdict_of_code {
        enum xid_severity severity;
        bool known;
        const char *name;
        const char *action;
        char detail[160]; /* Xid 154: "now 0x2 Node Reboot Required" */
};

static struct verdict_of_code judge_code(const struct facts *f, const char *addr, int code, size_t seq) {
        const struct xiddb *table = gpudb_xids(f->db);
        const struct xid_info *info = xiddb_find(table, code);
        struct verdict_of_code v = {
                .severity = info ? info->severity : XID_WARNING,
                .known = info != NULL,
                .name = info ? info->name : "not in gpuvet's Xid table",
                .action = info ? info->action
                               : "look it up in NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors)",
        };
        if (is_nvlink5(code) && info) {
                /* The worst of the code's lines since seq, each by the decode table. */
                bool any = false;
                for (size_t i = 0; i < f->xid.n; i++) {
                        const struct xid_event *ev = &f->xid.events[i];
                        if (ev->code != code || ev->seq <= seq || !event_is_for(f, ev, addr))
                                continue;
                        char detail[sizeof(v.detail)];
                        const struct xid_resolution *res = decode_nvlink5(table, ev, detail, sizeof(detail));
                        if (res && (!any || res->severity > v.severity)) {
                                v.severity = res->severity;
                                v.action = res->action;
                                memcpy(v.detail, detail, sizeof(v.detail));
                                any = true;
                        }
                }
                return v;
        }
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

/* The first of the NVRM lines of a GPU the driver could not bring up or lost ("RmInitAdapter
 * failed! (0x24:0x72:1568)" says more than the "rm_init_adapter failed" after it) since seq,
 * for the GPU at addr (addr NULL: for an address where no GPU is now); n counts them. Lines
 * that name no GPU ("probe routine was not called", logged for GPUs given to vfio-pci too)
 * are gpu.driver_binding's. */
static const struct xid_event *first_fault(const struct facts *f, const char *addr, size_t seq, size_t *n) {
        const struct xid_event *first = NULL;
        *n = 0;
        for (size_t i = 0; i < f->xid.n_faults; i++) {
                const struct xid_event *ev = &f->xid.faults[i];
                if (!ev->addr[0] || ev->seq <= seq || !event_is_for(f, ev, addr))
                        continue;
                if (!first)
                        first = ev;
                (*n)++;
        }
        return first;
}

/* Xids before the last re-initialisation: listed, not judged. */
static void evidence_history(struct result *r, const struct facts *f, const char *addr, size_t seq) {
        struct code_count old[MAX_CODES];
        const struct xid_event *last_old;
        size_t n_old = count_codes_in(f, addr, old, &last_old, seq, true);
        if (n_old == 0)
                return;
        char list[512] = "";
        for (size_t k = 0; k < n_old; k++)
                strbuf_appendf(list, sizeof(list), "%sXid %d x%zu", list[0] ? ", " : "", old[k].code, old[k].n);
        const struct xid_event *re = last_reinit(f, addr);
        result_evidence(r, "history", "%s, before the driver re-initialised the GPU (%s)", list,
                        re && !re->addr[0] ? "driver loaded again" : "recovery action back to None");
}

static void judge(const struct check_info *self, const struct facts *f, struct report *rep, const char *subject,
                  const char *addr) {
        struct code_count codes[MAX_CODES];
        const struct xid_event *last;
        size_t seq = since_seq(f, addr);
        size_t n_codes = count_codes_in(f, addr, codes, &last, seq, false);
        size_t n_faults;
        const struct xid_event *fault = first_fault(f, addr, seq, &n_faults);
        if (!addr && n_codes == 0 && !fault)
                return;
        struct result *r = result_new(rep, self, subject);
        result_evidence(r, "source", "%s", f->xid.source);
        const char *since = seq ? "since the driver re-initialised the GPU" : "since boot";
        result_expected(r, "no hardware Xid %s", since);
        evidence_history(r, f, addr, seq);
        if (fault) {
                result_observed(r, "%zu driver fault line%s%s", n_faults, n_faults == 1 ? "" : "s",
                                n_codes ? ", and Xids" : "");
                result_evidence(r, "kernel_log", "%s", fault->text);
                if (strstr(fault->text, "not supported by")) {
                        result_status(r, STATUS_FAIL, "the installed driver does not support the GPU: %s", fault->text);
                        result_remedy(r, "Install a driver that supports this GPU: a branch that still lists it "
                                         "(`gpuvet detect` names it), and for a GPU without a GSP (before Turing) the "
                                         "proprietary kernel modules, not the open ones; then reboot.");
                        return;
                }
                result_status(r, STATUS_FAIL, "the driver %s the GPU: %s",
                              strstr(fault->text, "fallen off the bus") ? "lost" : "could not initialise", fault->text);
                result_remedy(r, "Drain the node and power-cycle it (a reboot may not retrain the link); if the GPU "
                                 "still fails, reseat it and its riser/cable, then have it replaced (RMA). "
                                 "`dmesg | grep -i nvrm` shows the driver's messages.");
                return;
        }
        if (n_codes == 0) {
                result_observed(r, "none");
                result_status(r, STATUS_PASS, "no Xid logged %s", since);
                return;
        }
        char observed[1024] = "", actions[2048] = "";
        enum status worst = STATUS_PASS;
        int worst_code = 0; /* the first Xid of the worst severity: the result's code */
        size_t n_app = 0, n_ignored = 0;
        for (size_t k = 0; k < n_codes; k++) {
                struct verdict_of_code v = judge_code(f, addr, codes[k].code, seq);
                strbuf_appendf(observed, sizeof(observed), "%sXid %d x%zu (%s%s%s%s)", observed[0] ? ", " : "",
                               codes[k].code, codes[k].n, v.name, v.detail[0] ? ": " : "", v.detail,
                               v.known && v.severity == XID_IGNORE ? "; ignored per NVIDIA's catalog" : "");
                enum status s = v.severity == XID_CRITICAL  ? STATUS_FAIL
                                : v.severity == XID_WARNING ? STATUS_WARN
                                                            : STATUS_PASS;
                n_app += v.severity == XID_APPLICATION;
                n_ignored += v.severity == XID_IGNORE;
                if (status_worse(worst, s) != worst) {
                        worst = s;
                        worst_code = codes[k].code;
                }
                if (s != STATUS_PASS)
                        strbuf_appendf(actions, sizeof(actions), "%sXid %d: %s", actions[0] ? "; " : "", codes[k].code,
                                       v.action);
        }
        result_observed(r, "%s", observed);
        if (worst != STATUS_PASS)
                result_code(r, "xid.%d", worst_code);
        result_evidence(r, "last", "%s Xid %d: %s", last->addr, last->code, last->text);
        const char *where = addr ? "" : " for a device that is not on the PCI bus now";
        /* The kernel log records no nvidia-smi -r: a reset without a driver reload or a
         * recovery action back to None cannot be seen, and the verdict says so. */
        const char *unseen = seq ? "" : " (a reset by nvidia-smi -r is not in the kernel log, so gpuvet cannot see "
                                        "one: after the reset, reload the driver or reboot to clear this)";
        switch (worst) {
        case STATUS_FAIL:
                result_status(r, STATUS_FAIL, "critical Xid logged %s%s: the GPU needs a reset, a reboot or service%s",
                              since, where, unseen);
                break;
        case STATUS_WARN:
                result_status(r, STATUS_WARN, "GPU fault Xid logged %s%s: recoverable, act if it repeats", since, where);
                break;
        default:
                if (n_ignored == 0)
                        result_status(r, STATUS_PASS, "%zu application Xid code%s %s: faults of programs, not of the GPU",
                                      n_app, n_app == 1 ? "" : "s", since);
                else
                        result_status(r, STATUS_PASS,
                                      "%zu application and %zu informational Xid code%s %s (NVIDIA's catalog: "
                                      "restart the program, or ignore): nothing to do on the node",
                                      n_app, n_ignored, n_app + n_ignored == 1 ? "" : "s", since);
                return;
        }
        if (addr) {
                /* xid.json's actions say `nvidia-smi -r -i <index>`; nvidia-smi -i also takes
                 * the PCI address, which the kernel log gives without NVML. */
                char filled[sizeof(actions)];
                strbuf_replace(filled, sizeof(filled), actions, "<index>", addr);
                result_remedy(r, "%s", filled);
        } else {
                result_remedy(r, "%s", actions);
        }
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

CHECK_INFO_USES(gpu_xid, "gpu", "gpu.xid", LEVEL_QUICK, NEED_XID, NEED_BURN,
           "No hardware Xid error logged since boot (each with its meaning and action)",
           run_xid);

static bool from_fm_log(const struct facts *f, const struct sxid_event *ev) {
        return ev->source && f->xid.fm_log && strcmp(ev->source, f->xid.fm_log) == 0;
}

/* The Fabric Manager logs the SXids the kernel log has too: an event of its log that the
 * kernel log of the same switch, code, severity and link holds is not counted twice. */
static bool reported_by_kernel(const struct facts *f, const struct sxid_event *ev) {
        if (!from_fm_log(f, ev))
                return false;
        for (size_t i = 0; i < f->xid.n_sxids; i++) {
                const struct sxid_event *k = &f->xid.sxids[i];
                if (!from_fm_log(f, k) && strcmp(k->addr, ev->addr) == 0 && k->code == ev->code &&
                    k->fatal == ev->fatal && k->link == ev->link)
                        return true;
        }
        return false;
}

/* The Fabric Manager user guide, "NVSwitch SXid Errors": a non-fatal SXid is informational
 * (jobs go on, maybe slower); after a fatal one the GPUs behind the port, or every GPU and
 * NVSwitch when the port joins two baseboards, need a reset before new work. */
static void judge_switch(const struct check_info *self, const struct facts *f, struct report *rep, const char *addr) {
        struct result *r = result_new(rep, self, addr);
        result_expected(r, "no fatal SXid since boot");
        size_t n_fatal = 0, n_nonfatal = 0;
        const struct sxid_event *worst = NULL;
        const char *sources[2] = {NULL, NULL};
        char codes[256] = "";
        for (size_t i = 0; i < f->xid.n_sxids; i++) {
                const struct sxid_event *ev = &f->xid.sxids[i];
                if (strcmp(ev->addr, addr) != 0 || reported_by_kernel(f, ev))
                        continue;
                ev->fatal ? n_fatal++ : n_nonfatal++;
                if (!worst || (ev->fatal && !worst->fatal))
                        worst = ev;
                char one[24];
                snprintf(one, sizeof(one), "%d%s", ev->code, ev->fatal ? " fatal" : "");
                if (!strstr(codes, one) && strlen(codes) + strlen(one) + 3 < sizeof(codes))
                        strbuf_appendf(codes, sizeof(codes), "%s%s", codes[0] ? ", " : "", one);
                if (ev->source && !sources[0])
                        sources[0] = ev->source;
                else if (ev->source && strcmp(sources[0], ev->source) != 0)
                        sources[1] = ev->source;
        }
        result_evidence(r, "source", "%s%s%s", sources[0] ? sources[0] : f->xid.source ? f->xid.source : "/dev/kmsg",
                        sources[1] ? ", " : "", sources[1] ? sources[1] : "");
        if (!worst) {
                result_observed(r, "none");
                result_status(r, STATUS_PASS, "no SXid logged since boot");
                return;
        }
        result_observed(r, "%zu fatal, %zu non-fatal SXid%s: %s", n_fatal, n_nonfatal,
                        n_fatal + n_nonfatal == 1 ? "" : "s", codes);
        char link[24] = "";
        if (worst->link >= 0)
                snprintf(link, sizeof(link), " on link %d", worst->link);
        result_evidence(r, "last", "%s", worst->text);
        if (worst->fatal) {
                result_status(r, STATUS_FAIL, "fatal NVSwitch error (SXid %d%s): the GPUs behind it need a reset before "
                                              "new work", worst->code, link);
                result_remedy(r, "Drain the node. A port to a GPU: reset that GPU and the others of the job "
                                 "(nvidia-smi -r -i <gpu>). A port between baseboards, or no port named: stop the Fabric "
                                 "Manager and the GPU applications, reset all GPUs and NVSwitches (nvidia-smi -r, no "
                                 "-i), start the Fabric Manager again. Reboot or power-cycle if it persists (NVIDIA Fabric "
                                 "Manager user guide, NVSwitch SXid Errors).");
                return;
        }
        result_status(r, STATUS_WARN, "non-fatal NVSwitch error (SXid %d%s): jobs go on, perhaps slower", worst->code,
                      link);
        result_remedy(r, "Nothing to reset (NVIDIA: non-fatal SXids are informational); if they repeat, check the "
                         "NVLink counters (gpu.nvlink) and the Fabric Manager log, and plan service of the NVSwitch tray "
                         "or baseboard.");
}

static void run_nvswitch_sxid(const struct check_info *self, const struct facts *f, struct report *rep) {
        size_t n_switches = 0;
        for (size_t i = 0; i < f->pci.n; i++)
                n_switches += pci_is_nvswitch(&f->pci.devs[i]);
        if (n_switches == 0 && f->xid.n_sxids == 0) {
                struct result *r = result_new(rep, self, "host");
                result_status(r, STATUS_SKIP, "no NVSwitch on the PCI bus (HGX B200/B300 NVSwitches report through "
                                              "NVSDM, not SXids)");
                return;
        }
        if (!f->xid.source && !f->xid.fm_log) {
                struct result *r = result_new(rep, self, "host");
                result_evidence(r, "source", "/dev/kmsg");
                result_status(r, STATUS_SKIP, "no kernel log or Fabric Manager log to read (/dev/kmsg: %s)",
                              strerror(f->xid.kmsg_errno));
                return;
        }
        /* Each NVSwitch on the bus, then any that logged SXids and is gone from it. */
        for (size_t i = 0; i < f->pci.n; i++)
                if (pci_is_nvswitch(&f->pci.devs[i]))
                        judge_switch(self, f, rep, f->pci.devs[i].addr);
        for (size_t i = 0; i < f->xid.n_sxids; i++) {
                const char *addr = f->xid.sxids[i].addr;
                bool done = false;
                for (size_t k = 0; k < f->pci.n && !done; k++)
                        done = pci_is_nvswitch(&f->pci.devs[k]) && strcmp(f->pci.devs[k].addr, addr) == 0;
                for (size_t j = 0; j < i && !done; j++)
                        done = strcmp(f->xid.sxids[j].addr, addr) == 0;
                if (!done)
                        judge_switch(self, f, rep, addr);
        }
}

CHECK_INFO(gpu_nvswitch_sxid, "gpu", "gpu.nvswitch_sxid", LEVEL_QUICK, NEED_XID,
           "No fatal NVSwitch error (SXid) logged since boot, per NVSwitch", run_nvswitch_sxid);
