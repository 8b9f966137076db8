#include "report/detect_report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "core/strparse.h"
#include "data/compat.h"
#include "data/gpudb.h"
#include "core/json_text.h"
#include "sys/facts.h"
#include "version.h"

#define DRIVER_VERSION_FILE "/proc/driver/nvidia/version"

/* ---- the document ---- */

/* Machine text: json_text replaces invalid UTF-8 (json_string would drop the key); "" stays "". */
static bool valid_version(const char *s) {
        int cmp;
        return s && *s && version_compare(s, s, &cmp) == 0;
}

/* What compat.json says of a driver version: its branch, support and CUDA reach. */
static void describe_driver(json_t *d, const struct compat *c, const char *version) {
        char branch[16] = "";
        if (version)
                snprintf(branch, sizeof(branch), "R%lu", strtoul(version, NULL, 10));
        json_object_set_new(d, "branch", version ? json_string(branch) : json_null());
        const struct compat_branch *b = compat_branch_of(c, version);
        json_object_set_new(d, "branch_supported", version ? json_boolean(b && b->supported) : json_null());
        json_object_set_new(d, "branch_kind", json_text_keep_empty(b ? b->kind : NULL));
        json_object_set_new(d, "branch_eol", json_text_keep_empty(b ? b->eol : NULL));
        const struct compat_toolkit *native = compat_max_native(c, version), *minor = compat_max_minor(c, version);
        json_object_set_new(d, "max_cuda_native", json_text_keep_empty(native ? native->cuda : NULL));
        json_object_set_new(d, "max_cuda_minor_compat", json_text_keep_empty(minor ? minor->cuda : NULL));
}

static json_t *driver_object(const struct facts *f, const struct compat *c, const char **ret_version) {
        const struct nvidia_facts *nv = &f->nvidia;
        json_t *d = json_object();
        const char *version = nv->have_version && valid_version(nv->driver_version) ? nv->driver_version : NULL;
        *ret_version = version;
        json_object_set_new(d, "installed", json_boolean(version != NULL));
        json_object_set_new(d, "version", json_text_keep_empty(version));
        const char *problem = NULL;
        if (!version) {
                if (nv->have_version)
                        problem = "the driver version in " DRIVER_VERSION_FILE " is not a dotted version";
                else if (nv->version_errno == -ENOENT || nv->version_errno == 0)
                        problem = DRIVER_VERSION_FILE " is absent: no NVIDIA driver is loaded";
                else if (nv->version_errno == -EINVAL)
                        problem = DRIVER_VERSION_FILE " holds no driver version";
                else
                        problem = "could not read " DRIVER_VERSION_FILE;
        }
        json_object_set_new(d, "problem", json_text_keep_empty(problem));
        describe_driver(d, c, version);
        json_object_set_new(d, "source", json_string(DRIVER_VERSION_FILE));
        return d;
}

/* --for-driver: the driver an installer is about to put on the node. */
static json_t *for_driver_object(const struct compat *c, const struct detect_for_driver *planned) {
        if (!planned)
                return json_null();
        json_t *d = json_object();
        json_object_set_new(d, "requested", json_text_keep_empty(planned->requested));
        json_object_set_new(d, "version", json_text_keep_empty(planned->version));
        describe_driver(d, c, planned->version);
        return d;
}

int detect_resolve_driver(const struct compat *c, const char *requested, struct detect_for_driver *out, char *err,
                          size_t errlen) {
        out->requested = requested;
        out->version = NULL;
        const char *digits = requested[0] == 'R' || requested[0] == 'r' ? requested + 1 : requested;
        if (strchr(digits, '.')) {
                if (digits != requested || !valid_version(digits)) {
                        snprintf(err, errlen, "--for-driver \"%s\": expected a driver version like 580.95.05 or a branch like 580",
                                 requested);
                        return -EINVAL;
                }
                out->version = digits;
                return 0;
        }
        int number;
        if (parse_int(digits, &number) < 0 || number <= 0) {
                snprintf(err, errlen, "--for-driver \"%s\": expected a driver version like 580.95.05 or a branch like 580",
                         requested);
                return -EINVAL;
        }
        for (size_t i = 0; i < c->n_branches; i++)
                if (c->branches[i].number == (unsigned)number) {
                        out->version = c->branches[i].reference_driver;
                        return 0;
                }
        int n = snprintf(err, errlen, "--for-driver %s: %s lists no branch R%d (it knows", requested, c->source, number);
        for (size_t i = 0; i < c->n_branches && n > 0 && (size_t)n < errlen; i++)
                n += snprintf(err + n, errlen - (size_t)n, "%s %s", i ? "," : "", c->branches[i].id);
        if (n > 0 && (size_t)n < errlen)
                snprintf(err + n, errlen - (size_t)n, "); give the full version instead, e.g. %d.10.05", number);
        return -ENOENT;
}

static void set_judgement(json_t *o, const struct compat_judgement *j) {
        json_object_set_new(o, "runs", json_boolean(compat_verdict_runs(j->verdict)));
        json_object_set_new(o, "verdict", json_string(compat_verdict_name(j->verdict)));
        json_object_set_new(o, "reason", json_text_keep_empty(j->reason));
}

static json_t *cuda_list(const struct compat *c, const struct compat_gpu *gpu, const char *driver,
                         const char **ret_newest) {
        json_t *list = json_array();
        *ret_newest = NULL;
        for (size_t i = 0; i < c->n_toolkits; i++) {
                const struct compat_toolkit *t = &c->toolkits[i];
                struct compat_judgement j;
                compat_judge_toolkit(c, t, gpu, driver, &j);
                json_t *o = json_object();
                json_object_set_new(o, "version", json_string(t->cuda));
                json_object_set_new(o, "min_driver", json_string(t->min_driver));
                set_judgement(o, &j);
                json_array_append_new(list, o);
                if (compat_verdict_runs(j.verdict))
                        *ret_newest = t->cuda; /* the table is oldest first */
        }
        return list;
}

static json_t *wheel_list(const struct compat *c, const struct compat_gpu *gpu, const char *driver) {
        json_t *list = json_array();
        for (size_t i = 0; i < c->n_wheels; i++) {
                const struct compat_wheel *w = &c->wheels[i];
                struct compat_judgement j;
                compat_judge_wheel(c, w, gpu, driver, &j);
                json_t *o = json_object();
                json_object_set_new(o, "wheel", json_string(w->tag));
                json_object_set_new(o, "cuda", json_string(w->cuda));
                json_object_set_new(o, "min_driver", json_string(w->min_driver));
                json_object_set_new(o, "native_driver", json_string(w->native_driver));
                json_object_set_new(o, "torch_first", json_text_keep_empty(j.torch_first));
                json_object_set_new(o, "torch_last", json_text_keep_empty(j.torch_last));
                set_judgement(o, &j);
                json_array_append_new(list, o);
        }
        return list;
}

static json_t *ngc_list(const struct compat *c, const struct compat_gpu *gpu, const char *driver) {
        json_t *list = json_array();
        for (size_t i = 0; i < c->n_ngc; i++) {
                const struct compat_ngc *n = &c->ngc[i];
                struct compat_judgement j;
                compat_judge_ngc(c, n, gpu, driver, &j);
                json_t *o = json_object();
                json_object_set_new(o, "release", json_string(n->release));
                json_object_set_new(o, "cuda", json_string(n->cuda));
                json_object_set_new(o, "pytorch", json_string(n->pytorch));
                json_object_set_new(o, "native_driver", json_string(n->native_driver));
                json_object_set_new(o, "verified", json_boolean(n->verified));
                set_judgement(o, &j);
                json_array_append_new(list, o);
        }
        return list;
}

/* One entry per GPU model (identical GPUs grouped); unknown devices grouped by id. */
static json_t *gpu_group(const struct facts *f, const struct compat *c, const struct gpu_model *m,
                         uint32_t device, const char *driver, bool assumed) {
        json_t *g = json_object();
        char id[16];
        snprintf(id, sizeof(id), "10de:%04x", device);
        json_object_set_new(g, "model", json_text_keep_empty(m ? m->name : NULL));
        json_object_set_new(g, "known", json_boolean(m != NULL));
        json_object_set_new(g, "pci_device_id", json_string(id));
        json_t *addrs = json_array();
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct gpu *x = &f->gpus.gpus[i];
                const struct pci_dev *d = &f->pci.devs[x->pci_index];
                if (m ? x->model == m : !x->model && d->device == device)
                        json_array_append_new(addrs, json_string(d->addr));
        }
        json_object_set_new(g, "count", json_integer((json_int_t)json_array_size(addrs)));
        json_object_set_new(g, "pci_addresses", addrs);
        const struct gpu_arch *arch = m ? gpudb_arch(f->db, m->arch) : NULL;
        if (!m || !arch) {
                char why[160];
                snprintf(why, sizeof(why),
                         "PCI device %s is not in gpuvet's GPU table: add it to gpus.json (see docs/data-files.md)", id);
                json_object_set_new(g, "problem", json_text_keep_empty(why));
                return g;
        }
        char cc[16], sm[16];
        snprintf(cc, sizeof(cc), "%d.%d", m->cc_major, m->cc_minor);
        snprintf(sm, sizeof(sm), "sm_%d", m->cc_major * 10 + m->cc_minor);
        json_object_set_new(g, "architecture", json_string(arch->id));
        json_object_set_new(g, "architecture_name", json_string(arch->name));
        json_object_set_new(g, "compute_capability", json_string(cc));
        json_object_set_new(g, "sm", json_string(sm));
        json_object_set_new(g, "datacenter", json_boolean(m->datacenter));

        const struct compat_recommendation *rec = compat_recommendation(c, arch->id);
        /* The CUDA to pair with the recommended branch: the newest it runs natively. */
        const struct compat_toolkit *best =
                rec ? compat_newest_native_toolkit_for(c, m->cc_major, m->cc_minor, rec->branch->reference_driver)
                    : compat_newest_toolkit_for(c, m->cc_major, m->cc_minor);
        json_t *r = json_object();
        json_object_set_new(r, "driver_branch", json_text_keep_empty(rec ? rec->branch->id : NULL));
        json_object_set_new(r, "branch_kind", json_text_keep_empty(rec ? rec->branch->kind : NULL));
        json_object_set_new(r, "branch_eol", json_text_keep_empty(rec ? rec->branch->eol : NULL));
        json_object_set_new(r, "driver", json_text_keep_empty(rec ? rec->branch->reference_driver : NULL));
        json_object_set_new(r, "cuda", json_text_keep_empty(best ? best->cuda : NULL));
        json_object_set_new(r, "note", json_text_keep_empty(rec ? rec->note : NULL));
        json_object_set_new(g, "recommended", r);

        /* Without a driver, answer for the recommended branch. */
        const char *eval = driver ? driver : rec ? rec->branch->reference_driver : NULL;
        json_object_set_new(g, "evaluated_driver", json_text_keep_empty(eval));
        json_object_set_new(g, "driver_assumed", json_boolean((assumed || !driver) && eval));
        struct compat_gpu gpu = {.cc_major = m->cc_major, .cc_minor = m->cc_minor, .datacenter = m->datacenter, .arch = arch,
                                 .min_driver = m->min_driver};
        char why[192] = "";
        bool supported = compat_driver_supports_gpu(c, &gpu, eval, why, sizeof(why));
        json_object_set_new(g, "driver_supports_gpu", eval ? json_boolean(supported) : json_null());
        json_object_set_new(g, "problem", supported ? json_null() : json_text_keep_empty(why));
        const char *newest;
        json_t *cuda = cuda_list(c, &gpu, eval, &newest);
        json_object_set_new(g, "newest_cuda", json_text_keep_empty(newest));
        json_object_set_new(g, "cuda", cuda);
        json_object_set_new(g, "pytorch", wheel_list(c, &gpu, eval));
        json_object_set_new(g, "ngc", ngc_list(c, &gpu, eval));
        return g;
}

json_t *detect_report(const struct facts *f, const struct compat *c, const char *root,
                      const struct detect_for_driver *planned) {
        json_t *doc = json_object();
        if (!doc)
                return NULL;
        json_object_set_new(doc, "schema", json_string("gpuvet.detect/1"));
        json_object_set_new(doc, "gpuvet_version", json_string(GPUVET_VERSION));
        json_object_set_new(doc, "root", json_text_keep_empty(root));
        json_t *data = json_object();
        json_object_set_new(data, "gpus", json_string(f->db ? f->db->source : ""));
        json_object_set_new(data, "compat", json_string(c->source));
        json_object_set_new(doc, "data", data);
        const char *driver;
        json_object_set_new(doc, "driver", driver_object(f, c, &driver));
        json_object_set_new(doc, "for_driver", for_driver_object(c, planned));
        bool assumed = planned != NULL;
        if (planned)
                driver = planned->version;
        json_t *gpus = json_array();
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct gpu *x = &f->gpus.gpus[i];
                const struct pci_dev *d = &f->pci.devs[x->pci_index];
                bool seen = false;
                for (size_t k = 0; k < i && !seen; k++) {
                        const struct gpu *y = &f->gpus.gpus[k];
                        seen = x->model ? y->model == x->model : !y->model && f->pci.devs[y->pci_index].device == d->device;
                }
                if (!seen)
                        json_array_append_new(gpus, gpu_group(f, c, x->model, d->device, driver, assumed));
        }
        json_object_set_new(doc, "gpus", gpus);
        return doc;
}

/* ---- text ---- */

static const char *jstr(const json_t *o, const char *key) {
        const char *s = json_string_value(json_object_get(o, key));
        return s ? s : "";
}

static const char *verdict_label(const char *verdict) {
        static const struct {
                const char *verdict, *label;
        } labels[] = {
                {"native", "native"},
                {"minor_compat", "minor-version compatibility"},
                {"forward_compat", "forward compatibility (datacenter)"},
                {"driver_too_old", "no, driver too old"},
                {"arch_unsupported", "no, no code for this GPU"},
                {"gpu_unsupported_by_driver", "no, the driver does not support this GPU"},
        };
        for (size_t i = 0; i < ARRAY_COUNT(labels); i++)
                if (strcmp(labels[i].verdict, verdict) == 0)
                        return labels[i].label;
        return verdict;
}

/* Items of a list grouped by verdict, one line each: "native: 11.8 12.0 ...", with the
 * first item's reason for the ones that do not run. */
static void write_by_verdict(FILE *out, const char *title, const json_t *list, const char *key) {
        static const char *const order[] = {"native", "minor_compat", "forward_compat", "driver_too_old",
                                             "gpu_unsupported_by_driver", "arch_unsupported"};
        bool first_line = true;
        for (size_t v = 0; v < ARRAY_COUNT(order); v++) {
                size_t i, n = 0;
                const json_t *item, *first = NULL;
                json_array_foreach(list, i, item) {
                        if (strcmp(jstr(item, "verdict"), order[v]) != 0)
                                continue;
                        if (!n++) {
                                first = item;
                                fprintf(out, "  %-10s%s:", first_line ? title : "", verdict_label(order[v]));
                                first_line = false;
                        }
                        fprintf(out, " %s", jstr(item, key));
                }
                if (n && !json_is_true(json_object_get(first, "runs")))
                        fprintf(out, "\n  %-10s  (%s)", "", jstr(first, "reason"));
                if (n)
                        fputc('\n', out);
        }
}

static void write_wheels(FILE *out, const json_t *list) {
        size_t i;
        const json_t *w;
        json_array_foreach(list, i, w) {
                char torch[32] = "-";
                const char *first = jstr(w, "torch_first"), *last = jstr(w, "torch_last");
                if (*first && !*last)
                        snprintf(torch, sizeof(torch), "%s+", first);
                else if (*first && strcmp(first, last) == 0)
                        snprintf(torch, sizeof(torch), "%s", first);
                else if (*first)
                        snprintf(torch, sizeof(torch), "%s-%s", first, last);
                bool runs = json_is_true(json_object_get(w, "runs"));
                fprintf(out, "  %-10s%-6s torch %-9s %s", i ? "" : "PyTorch", jstr(w, "wheel"), torch,
                        verdict_label(jstr(w, "verdict")));
                if (!runs)
                        fprintf(out, ": %s", jstr(w, "reason"));
                fputc('\n', out);
        }
}

static void write_gpu(FILE *out, const json_t *g, const json_t *planned) {
        json_int_t count = json_integer_value(json_object_get(g, "count"));
        const json_t *addrs = json_object_get(g, "pci_addresses");
        if (!json_is_true(json_object_get(g, "known"))) {
                fprintf(out, "%lldx unknown NVIDIA GPU %s\n", (long long)count, jstr(g, "pci_device_id"));
        } else {
                fprintf(out, "%lldx %s (%s, compute capability %s, %s%s)\n", (long long)count, jstr(g, "model"),
                        jstr(g, "architecture_name"), jstr(g, "compute_capability"), jstr(g, "sm"),
                        json_is_true(json_object_get(g, "datacenter")) ? ", datacenter" : "");
        }
        fprintf(out, "  %-10s", "PCI");
        size_t i;
        const json_t *a;
        json_array_foreach(addrs, i, a) fprintf(out, "%s%s", i ? " " : "", json_string_value(a));
        fputc('\n', out);
        if (!json_is_true(json_object_get(g, "known"))) {
                fprintf(out, "  %-10s%s\n\n", "Problem", jstr(g, "problem"));
                return;
        }
        const json_t *r = json_object_get(g, "recommended");
        if (*jstr(r, "driver_branch"))
                fprintf(out, "  %-10sdriver %s (%s, EOL %s; e.g. %s) with CUDA %s\n", "Install", jstr(r, "driver_branch"),
                        jstr(r, "branch_kind"), jstr(r, "branch_eol"), jstr(r, "driver"), jstr(r, "cuda"));
        else
                fprintf(out, "  %-10sCUDA %s (no driver branch recommendation in compat.json for %s)\n", "Install",
                        jstr(r, "cuda"), jstr(g, "architecture"));
        if (*jstr(r, "note"))
                fprintf(out, "  %-10s%s\n", "", jstr(r, "note"));
        if (!*jstr(g, "evaluated_driver")) {
                fprintf(out, "\n");
                return;
        }
        if (json_is_true(json_object_get(g, "driver_assumed")) && planned)
                fprintf(out, "  %-10sjudged for %s (--for-driver %s): newest CUDA for this GPU %s\n", "Driver",
                        jstr(g, "evaluated_driver"), jstr(planned, "requested"),
                        *jstr(g, "newest_cuda") ? jstr(g, "newest_cuda") : "none");
        else if (json_is_true(json_object_get(g, "driver_assumed")))
                fprintf(out, "  %-10sno driver installed; below assumes %s %s\n", "Driver", jstr(r, "driver_branch"),
                        jstr(g, "evaluated_driver"));
        else
                fprintf(out, "  %-10s%s: newest CUDA for this GPU %s\n", "Driver", jstr(g, "evaluated_driver"),
                        *jstr(g, "newest_cuda") ? jstr(g, "newest_cuda") : "none");
        if (*jstr(g, "problem"))
                fprintf(out, "  %-10s%s\n", "Problem", jstr(g, "problem"));
        write_by_verdict(out, "CUDA", json_object_get(g, "cuda"), "version");
        write_wheels(out, json_object_get(g, "pytorch"));
        write_by_verdict(out, "NGC", json_object_get(g, "ngc"), "release");
        fputc('\n', out);
}

/* "R580, a supported long-term support branch to 2028-06" and its CUDA reach. */
static void write_branch_state(FILE *out, const json_t *d) {
        char branch_state[128];
        const char *kind = jstr(d, "branch_kind"), *eol = jstr(d, "branch_eol");
        const char *kind_words = strcmp(kind, "LTSB") == 0 ? "long-term support branch"
                                 : strcmp(kind, "PB") == 0 ? "production branch"
                                 : strcmp(kind, "NFB") == 0 ? "new feature branch"
                                                            : "branch";
        if (json_is_true(json_object_get(d, "branch_supported")))
                snprintf(branch_state, sizeof(branch_state), "a supported %s%s%s", kind_words, *eol ? " to " : "", eol);
        else if (*kind && *eol)
                snprintf(branch_state, sizeof(branch_state), "a %s past its end of life in %s", kind_words, eol);
        else if (*kind)
                /* New feature branches get no end of life (NVIDIA's driver lifecycle): an
                 * unsupported one is not for production, not necessarily over. */
                snprintf(branch_state, sizeof(branch_state), "a %s, not for production fleets (no end of life "
                         "published)", kind_words);
        else
                snprintf(branch_state, sizeof(branch_state), "not a datacenter branch NVIDIA lists");
        fprintf(out, "%s, %s): CUDA <= %s natively, <= %s with minor-version compatibility\n", jstr(d, "branch"),
                branch_state, *jstr(d, "max_cuda_native") ? jstr(d, "max_cuda_native") : "none",
                *jstr(d, "max_cuda_minor_compat") ? jstr(d, "max_cuda_minor_compat") : "none");
}

void detect_write_text(FILE *out, const json_t *doc) {
        const json_t *d = json_object_get(doc, "driver"), *gpus = json_object_get(doc, "gpus");
        const json_t *planned = json_object_get(doc, "for_driver");
        if (json_is_true(json_object_get(d, "installed"))) {
                fprintf(out, "Driver %s (", jstr(d, "version"));
                write_branch_state(out, d);
        } else {
                fprintf(out, "Driver: none (%s)\n", jstr(d, "problem"));
        }
        if (json_is_object(planned)) {
                fprintf(out, "Judged for driver %s (--for-driver %s; ", jstr(planned, "version"), jstr(planned, "requested"));
                write_branch_state(out, planned);
        }
        if (json_array_size(gpus) == 0) {
                fprintf(out, "No NVIDIA GPU found under %s/sys/bus/pci/devices.\n",
                        strcmp(jstr(doc, "root"), "/") ? jstr(doc, "root") : "");
                return;
        }
        fputc('\n', out);
        size_t i;
        const json_t *g;
        if (!json_is_object(planned))
                planned = NULL;
        json_array_foreach(gpus, i, g) write_gpu(out, g, planned);
}

