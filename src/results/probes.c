/* The pure lookups of the probes' facts (results/probes.h). */
#include "results/probes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- pure helpers ---------------------------------------------------------------- */

/* Split "dddd:bb:dd.f" (any domain width, or none) into its domain and "bb:dd.f". */
static const char *split_bus(const char *addr, unsigned long *domain) {
        const char *first = strchr(addr, ':');
        *domain = 0;
        if (first && strchr(first + 1, ':')) {
                *domain = strtoul(addr, NULL, 16);
                return first + 1;
        }
        return addr;
}

bool probe_same_bus(const char *a, const char *b) {
        if (!a || !b || !*a || !*b)
                return false;
        /* Some APIs omit the PCI domain or print 8 hex digits of it. */
        unsigned long da, db;
        const char *ra = split_bus(a, &da), *rb = split_bus(b, &db);
        return da == db && strcasecmp(ra, rb) == 0;
}

/* The PCI address in a subject "gpu0 (0000:1b:00.0)", "" when none. */
static void subject_bus(const char *subject, char *buf, size_t size) {
        buf[0] = '\0';
        const char *open = strchr(subject, '(');
        if (!open)
                return;
        size_t n = strcspn(open + 1, ")");
        snprintf(buf, size, "%.*s", (int)n, open + 1);
}

const struct measurement *probe_find(const struct probe_facts *p, const char *bench, const char *name,
                                     const char *bus, const struct measurement *after) {
        if (!p)
                return NULL;
        size_t i = after ? (size_t)(after - p->rep.m) + 1 : 0;
        for (; i < p->rep.n; i++) {
                const struct measurement *m = &p->rep.m[i];
                char b[32];
                subject_bus(m->subject, b, sizeof(b));
                if (!b[0]) /* a pair, "gpu0->gpu1": the source GPU's */
                        subject_bus(probe_param(m, "from"), b, sizeof(b));
                if (!strcmp(m->bench, bench) && !strcmp(m->name, name) && probe_same_bus(b, bus))
                        return m;
        }
        return NULL;
}

const char *probe_param(const struct measurement *m, const char *key) {
        for (size_t i = 0; m && i < m->n_params; i++)
                if (!strcmp(m->params[i].key, key))
                        return m->params[i].value;
        return "";
}

size_t probes_count_probed(const struct probe_facts *p) {
        size_t n = 0;
        for (size_t i = 0; i < p->rep.n; i++) {
                const struct measurement *m = &p->rep.m[i];
                char b[32];
                subject_bus(m->subject, b, sizeof(b));
                if (!strcmp(m->bench, "functional") && (!strcmp(m->name, "functional") || (!strcmp(m->name, "open") && b[0])))
                        n++;
        }
        return n;
}

bool probes_no_gpu(const struct probe_facts *p, char *why, size_t size) {
        why[0] = '\0';
        if (!p) {
                snprintf(why, size, "the device probes did not run");
                return true;
        }
        if (p->skip_reason[0]) {
                snprintf(why, size, "%s", p->skip_reason);
                return true;
        }
        if (probes_count_probed(p))
                return false;
        const struct probe_run *fr = &p->runs[PROBE_FUNCTIONAL];
        if (fr->note[0]) {
                snprintf(why, size, "the functional probe failed: %s", fr->note);
                return true;
        }
        const struct measurement *backend = NULL, *first_dev = NULL;
        size_t devices = 0, cpu_like = 0;
        for (size_t i = fr->first; i < fr->first + fr->count && i < p->rep.n; i++) {
                const struct measurement *m = &p->rep.m[i];
                if (!strcmp(m->name, "backend"))
                        backend = m;
                if (!strcmp(m->name, "device")) {
                        devices++;
                        first_dev = first_dev ? first_dev : m;
                        /* PoCL's CPU device: OpenCL, no PCI address, memory shared with the host */
                        if (!strcmp(probe_param(m, "backend"), "opencl") && !probe_param(m, "pci_bus_id")[0] &&
                            !strcmp(probe_param(m, "unified_memory"), "yes"))
                                cpu_like++;
                }
        }
        if (backend)
                snprintf(why, size, "no GPU device for the probes: %s", backend->summary);
        else if (devices && cpu_like == devices)
                snprintf(why, size, "no GPU device for the probes (only a CPU OpenCL device: %s)",
                         probe_param(first_dev, "name"));
        else if (devices)
                snprintf(why, size, "no GPU device for the probes: the %s backend shows %zu device(s) (%s%s%s), none of them "
                         "an NVIDIA GPU of this node",
                         probe_param(first_dev, "backend"), devices, probe_param(first_dev, "name"),
                         probe_param(first_dev, "pci_bus_id")[0] ? " at " : "", probe_param(first_dev, "pci_bus_id"));
        else
                snprintf(why, size, "no GPU device for the probes");
        return true;
}
