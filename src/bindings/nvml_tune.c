/* NVML for gpuvet tune (gpu.h): each call runs on a worker thread under a deadline; the
 * calling thread waits at most that long, and a call that never returns leaves NVML
 * abandoned for the rest of the run. */
#include "tune/gpu.h"
#include "core/deadline.h"
#include "core/dynlib.h"
#include "core/fsroot.h"
#include "sys/nvml_facts.h"
#include "bindings/nvml.h"
#include "bindings/nvml_deadline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TUNE_MAX_GPUS 64
#define MAX_CLOCKS 256

struct tune_gpus {
        struct nvml_lib *lib;
        bool initialised;
        bool abandoned;       /* a call hung: make no more */
        char hung[160];       /* which, and for how long */
        char why[1024];       /* non-empty: NVML cannot be used */
        unsigned call_ms, init_ms;
        size_t n;
        struct {
                char bus_id[32];
                unsigned index;
                char problem[200]; /* non-empty: NVML lists it but cannot say where it is */
        } gpu[TUNE_MAX_GPUS];
};

/* ---- one call under a deadline ---- */

enum op_kind {
        OP_INIT,
        OP_SHUTDOWN,
        OP_COUNT,
        OP_HANDLE_BY_INDEX,
        OP_HANDLE_BY_BUS,
        OP_PCI_INFO,
        OP_GET_PERSISTENCE,
        OP_GET_POWER_LIMIT,
        OP_GET_POWER_CONSTRAINTS,
        OP_GET_POWER_DEFAULT,
        OP_GET_APP_CLOCK,
        OP_GET_DEFAULT_APP_CLOCK,
        OP_SUPPORTED_MEMORY_CLOCKS,
        OP_SUPPORTED_GRAPHICS_CLOCKS,
        OP_SET_PERSISTENCE,
        OP_SET_POWER_LIMIT,
        OP_SET_APP_CLOCKS,
};

/* The NVML function each op calls: what deadline records and messages name. */
static const char *const op_function[] = {
        [OP_INIT] = "nvmlInit_v2",
        [OP_SHUTDOWN] = "nvmlShutdown",
        [OP_COUNT] = "nvmlDeviceGetCount_v2",
        [OP_HANDLE_BY_INDEX] = "nvmlDeviceGetHandleByIndex_v2",
        [OP_HANDLE_BY_BUS] = "nvmlDeviceGetHandleByPciBusId_v2",
        [OP_PCI_INFO] = "nvmlDeviceGetPciInfo_v3",
        [OP_GET_PERSISTENCE] = "nvmlDeviceGetPersistenceMode",
        [OP_GET_POWER_LIMIT] = "nvmlDeviceGetPowerManagementLimit",
        [OP_GET_POWER_CONSTRAINTS] = "nvmlDeviceGetPowerManagementLimitConstraints",
        [OP_GET_POWER_DEFAULT] = "nvmlDeviceGetPowerManagementDefaultLimit",
        [OP_GET_APP_CLOCK] = "nvmlDeviceGetApplicationsClock",
        [OP_GET_DEFAULT_APP_CLOCK] = "nvmlDeviceGetDefaultApplicationsClock",
        [OP_SUPPORTED_MEMORY_CLOCKS] = "nvmlDeviceGetSupportedMemoryClocks",
        [OP_SUPPORTED_GRAPHICS_CLOCKS] = "nvmlDeviceGetSupportedGraphicsClocks",
        [OP_SET_PERSISTENCE] = "nvmlDeviceSetPersistenceMode",
        [OP_SET_POWER_LIMIT] = "nvmlDeviceSetPowerManagementLimit",
        [OP_SET_APP_CLOCKS] = "nvmlDeviceSetApplicationsClocks",
};

struct op {
        enum op_kind kind;
        const struct nvml_lib *lib;
        unsigned limit_ms; /* 0: the call deadline */
        nvmlDevice_t dev;
        unsigned a, b;
        char bus[32];
        /* results */
        nvmlReturn_t rc;
        unsigned out[2];
        nvmlEnableState_t mode;
        nvmlDevice_t out_dev;
        nvmlPciInfo_t pci;
        unsigned n, list[MAX_CLOCKS];
        /* filled by run_op when the call hung */
        bool hung;
        unsigned elapsed_ms;
};

/* NVML_ERROR_FUNCTION_NOT_FOUND for an optional symbol this library lacks. */
#define CALL(fn, ...) (o->lib->fn ? o->lib->fn(__VA_ARGS__) : NVML_ERROR_FUNCTION_NOT_FOUND)

static nvmlReturn_t call(struct op *o) {
        switch (o->kind) {
        case OP_INIT: return CALL(nvmlInit_v2);
        case OP_SHUTDOWN: return CALL(nvmlShutdown);
        case OP_COUNT: return CALL(nvmlDeviceGetCount_v2, &o->out[0]);
        case OP_HANDLE_BY_INDEX: return CALL(nvmlDeviceGetHandleByIndex_v2, o->a, &o->out_dev);
        case OP_HANDLE_BY_BUS: return CALL(nvmlDeviceGetHandleByPciBusId_v2, o->bus, &o->out_dev);
        case OP_PCI_INFO: return CALL(nvmlDeviceGetPciInfo_v3, o->dev, &o->pci);
        case OP_GET_PERSISTENCE: return CALL(nvmlDeviceGetPersistenceMode, o->dev, &o->mode);
        case OP_GET_POWER_LIMIT: return CALL(nvmlDeviceGetPowerManagementLimit, o->dev, &o->out[0]);
        case OP_GET_POWER_CONSTRAINTS:
                return CALL(nvmlDeviceGetPowerManagementLimitConstraints, o->dev, &o->out[0], &o->out[1]);
        case OP_GET_POWER_DEFAULT: return CALL(nvmlDeviceGetPowerManagementDefaultLimit, o->dev, &o->out[0]);
        case OP_GET_APP_CLOCK: return CALL(nvmlDeviceGetApplicationsClock, o->dev, (nvmlClockType_t)o->a, &o->out[0]);
        case OP_GET_DEFAULT_APP_CLOCK:
                return CALL(nvmlDeviceGetDefaultApplicationsClock, o->dev, (nvmlClockType_t)o->a, &o->out[0]);
        case OP_SUPPORTED_MEMORY_CLOCKS:
                o->n = MAX_CLOCKS;
                return CALL(nvmlDeviceGetSupportedMemoryClocks, o->dev, &o->n, o->list);
        case OP_SUPPORTED_GRAPHICS_CLOCKS:
                o->n = MAX_CLOCKS;
                return CALL(nvmlDeviceGetSupportedGraphicsClocks, o->dev, o->a, &o->n, o->list);
        case OP_SET_PERSISTENCE:
                return CALL(nvmlDeviceSetPersistenceMode, o->dev, o->a ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED);
        case OP_SET_POWER_LIMIT: return CALL(nvmlDeviceSetPowerManagementLimit, o->dev, o->a);
        case OP_SET_APP_CLOCKS: return CALL(nvmlDeviceSetApplicationsClocks, o->dev, o->a, o->b);
        }
        return NVML_ERROR_UNKNOWN;
}

/* NVML writes into the worker's copy; the block gets it only after the call returned in
 * time (core/deadline.h's discipline). */
static void op_work(struct deadline_worker *w, void *block) {
        struct op *b = block, o = *b;
        if (!deadline_begin(w, op_function[o.kind], o.limit_ms))
                return;
        o.rc = call(&o);
        if (!deadline_end(w))
                return;
        *b = o;
}

static void op_publish(void *block, void *dest, unsigned index, const char *hung, unsigned elapsed_ms, void *userdata) {
        (void)index, (void)userdata;
        struct op *d = dest;
        if (hung) {
                d->hung = true;
                d->elapsed_ms = elapsed_ms;
        } else {
                *d = *(struct op *)block;
        }
}

/* Run o; 0 when NVML answered (o->rc says what), -ETIMEDOUT when it hung or hung earlier,
 * -ENOMEM/-EAGAIN when no worker could be started. */
static int run_op(struct tune_gpus *g, struct op *o) {
        if (g->abandoned)
                return -ETIMEDOUT;
        o->lib = g->lib;
        o->rc = NVML_ERROR_UNKNOWN;
        struct op *block = malloc(sizeof(*block));
        if (!block)
                return -ENOMEM;
        *block = *o;
        struct deadline_outcome out;
        int r = nvml_run_one(g->call_ms, op_work, op_publish, block, o, &out);
        if (out.state == DEADLINE_NOT_STARTED)
                return r < 0 ? r : -EAGAIN;
        if (out.state == DEADLINE_ABANDONED) {
                g->abandoned = true;
                snprintf(g->hung, sizeof(g->hung), "%s did not return within %u ms", op_function[o->kind],
                         out.elapsed_ms);
                return -ETIMEDOUT;
        }
        return 0;
}

/* An NVML outcome as tune reports it: 0, or a negative errno with err naming the call. */
static int outcome(struct tune_gpus *g, const struct op *o, int r, char *err, size_t errlen) {
        if (r == -ETIMEDOUT) {
                snprintf(err, errlen, "%s%s%s", o->hung ? "" : "not tried: NVML stopped answering earlier (", g->hung,
                         o->hung ? "" : ")");
                return r;
        }
        if (r < 0) {
                snprintf(err, errlen, "%s: %s", op_function[o->kind], strerror(-r));
                return r;
        }
        if (o->rc == NVML_SUCCESS)
                return 0;
        snprintf(err, errlen, "%s: %s", op_function[o->kind], nvml_return_text(g->lib, o->rc));
        switch (o->rc) {
        case NVML_ERROR_NOT_SUPPORTED:
        case NVML_ERROR_DEPRECATED: /* R590 and later: the applications clocks */
        case NVML_ERROR_FUNCTION_NOT_FOUND: return -ENOTSUP;
        case NVML_ERROR_NO_PERMISSION: return -EACCES;
        case NVML_ERROR_INVALID_ARGUMENT: return -EINVAL;
        default: return -EIO;
        }
}

/* ---- opening ---- */

static void unavailable(struct tune_gpus *g, const char *fmt, const char *a, const char *b) {
        snprintf(g->why, sizeof(g->why), fmt, a, b);
}

struct tune_gpus *tune_gpus_open(const struct tune_gpu_options *o, struct fsroot *fs) {
        struct tune_gpus *g = calloc(1, sizeof(*g));
        if (!g)
                return NULL;
        g->call_ms = o->call_ms ? o->call_ms : NVML_DEADLINE_CALL_MS_DEFAULT;
        g->init_ms = o->init_ms ? o->init_ms : NVML_DEADLINE_INIT_MS_DEFAULT;
        bool named = (o->lib && *o->lib) || dynlib_env(NV_LIB_ENV);
        if (o->off) {
                unavailable(g, "NVML not used (--no-nvml)", "", "");
                return g;
        }
        if (!fsroot_is_live(fs) && !named) {
                unavailable(g, "NVML not used: --root %s is not this machine (name a library with --nvml-lib or $%s)",
                            fsroot_dir(fs), NV_LIB_ENV);
                return g;
        }
        char err[400];
        int r = nvml_lib_load(o->lib, &g->lib, err, sizeof(err));
        if (r == -ENOMEM) {
                free(g);
                return NULL;
        }
        if (r < 0) {
                unavailable(g, "no NVIDIA driver to ask: %s", err, "");
                return g;
        }
        struct op op = {.kind = OP_INIT, .limit_ms = g->init_ms};
        if ((r = outcome(g, &op, run_op(g, &op), err, sizeof(err))) < 0) {
                unavailable(g, "NVML (%s): %s", g->lib->dl.path, err);
                return g;
        }
        g->initialised = true;
        op = (struct op){.kind = OP_COUNT};
        if (outcome(g, &op, run_op(g, &op), err, sizeof(err)) < 0) {
                unavailable(g, "NVML (%s): %s", g->lib->dl.path, err);
                return g;
        }
        unsigned count = op.out[0] < TUNE_MAX_GPUS ? op.out[0] : TUNE_MAX_GPUS;
        for (unsigned i = 0; i < count && !g->abandoned; i++) {
                /* A GPU that fell off the bus still counts: it is listed as one that cannot
                 * be set, not left out of the plan. */
                char *problem = g->gpu[g->n].problem;
                g->gpu[g->n].index = i;
                op = (struct op){.kind = OP_HANDLE_BY_INDEX, .a = i};
                struct op pci = {.kind = OP_PCI_INFO};
                if (outcome(g, &op, run_op(g, &op), problem, sizeof(g->gpu[0].problem)) == 0) {
                        pci.dev = op.out_dev;
                        if (outcome(g, &pci, run_op(g, &pci), problem, sizeof(g->gpu[0].problem)) == 0 &&
                            nvml_bus_id_normalise(pci.pci.busId, g->gpu[g->n].bus_id, sizeof(g->gpu[0].bus_id)) < 0)
                                snprintf(problem, sizeof(g->gpu[0].problem), "NVML gives no PCI address (\"%.40s\")",
                                         pci.pci.busId);
                }
                if (problem[0])
                        snprintf(g->gpu[g->n].bus_id, sizeof(g->gpu[0].bus_id), "index%u", i);
                g->n++;
        }
        if (g->abandoned)
                unavailable(g, "NVML (%s): %s", g->lib->dl.path, g->hung);
        return g;
}

const char *tune_gpus_unavailable(const struct tune_gpus *g) {
        return g->why[0] ? g->why : NULL;
}

size_t tune_gpus_count(const struct tune_gpus *g) {
        return g->why[0] ? 0 : g->n;
}

const char *tune_gpus_bus_id(const struct tune_gpus *g, size_t i) {
        return i < g->n ? g->gpu[i].bus_id : "";
}

const char *tune_gpus_problem(const struct tune_gpus *g, size_t i) {
        return i < g->n && g->gpu[i].problem[0] ? g->gpu[i].problem : NULL;
}

bool tune_gpus_close(struct tune_gpus *g) {
        if (!g)
                return false;
        bool hung = g->abandoned;
        if (g->initialised && !hung) {
                struct op op = {.kind = OP_SHUTDOWN};
                run_op(g, &op);
                hung = g->abandoned;
        }
        if (!hung)
                nvml_lib_free(g->lib);
        free(g);
        return hung;
}

const char *tune_gpu_attr_name(enum tune_gpu_attr a) {
        static const char *const names[] = {[TUNE_GPU_PERSISTENCE] = "persistence_mode",
                                            [TUNE_GPU_POWER_LIMIT] = "power_limit",
                                            [TUNE_GPU_APP_CLOCKS] = "applications_clocks"};
        return (unsigned)a < TUNE_GPU_ATTR_COUNT ? names[a] : "?";
}

/* The handle of the GPU at bus_id, looked up now (see gpu.h). */
static int handle_of(struct tune_gpus *g, const char *bus_id, nvmlDevice_t *dev, char *err, size_t errlen) {
        if (g->why[0]) {
                snprintf(err, errlen, "%s", g->why);
                return -ENODEV;
        }
        size_t i = 0;
        while (i < g->n && strcmp(g->gpu[i].bus_id, bus_id) != 0)
                i++;
        if (i == g->n) {
                snprintf(err, errlen, "NVML has no GPU at %s", bus_id);
                return -ENODEV;
        }
        if (g->gpu[i].problem[0]) {
                snprintf(err, errlen, "GPU %u (NVML index): %s", g->gpu[i].index, g->gpu[i].problem);
                return -EIO;
        }
        struct op op = {.kind = OP_HANDLE_BY_BUS};
        snprintf(op.bus, sizeof(op.bus), "%s", bus_id);
        if (!g->lib->nvmlDeviceGetHandleByPciBusId_v2)
                op = (struct op){.kind = OP_HANDLE_BY_INDEX, .a = g->gpu[i].index};
        int r = outcome(g, &op, run_op(g, &op), err, errlen);
        if (r == 0)
                *dev = op.out_dev;
        return r;
}

/* ---- values ---- */

void tune_gpu_format_power(unsigned mw, char *buf, size_t size) {
        if (mw % 1000 == 0) {
                snprintf(buf, size, "%u W", mw / 1000);
                return;
        }
        char frac[8];
        snprintf(frac, sizeof(frac), "%03u", mw % 1000);
        for (size_t n = strlen(frac); n > 0 && frac[n - 1] == '0'; n--)
                frac[n - 1] = '\0';
        snprintf(buf, size, "%u.%s W", mw / 1000, frac);
}

int tune_gpu_parse_power(const char *text, unsigned *mw) {
        const char *p = text;
        unsigned long long whole = 0, frac = 0;
        unsigned digits = 0, frac_digits = 0;
        for (; *p >= '0' && *p <= '9'; p++, digits++)
                if ((whole = whole * 10 + (unsigned)(*p - '0')) > 100000)
                        return -EINVAL;
        if (*p == '.') {
                for (p++; *p >= '0' && *p <= '9'; p++) {
                        if (++frac_digits <= 3)
                                frac = frac * 10 + (unsigned)(*p - '0');
                        else if (*p != '0')
                                return -EINVAL; /* finer than NVML's milliwatt */
                }
        }
        if (digits == 0 || frac_digits > 6)
                return -EINVAL;
        for (unsigned i = frac_digits < 3 ? frac_digits : 3; i < 3; i++)
                frac *= 10;
        while (*p == ' ')
                p++;
        if (*p == 'W')
                p++;
        if (*p)
                return -EINVAL;
        *mw = (unsigned)(whole * 1000 + frac);
        return 0;
}

void tune_gpu_format_clocks(unsigned mem_mhz, unsigned gr_mhz, char *buf, size_t size) {
        snprintf(buf, size, "memory %u MHz, graphics %u MHz", mem_mhz, gr_mhz);
}

/* Digits only (no sign, no space): what strtoul and %u would let through otherwise. */
static const char *mhz(const char *p, unsigned *ret) {
        unsigned long v = 0;
        const char *start = p;
        for (; *p >= '0' && *p <= '9' && p - start < 6; p++)
                v = v * 10 + (unsigned long)(*p - '0');
        if (p == start || v == 0 || (*p >= '0' && *p <= '9'))
                return NULL;
        *ret = (unsigned)v;
        return p;
}

int tune_gpu_parse_clocks(const char *text, unsigned *mem_mhz, unsigned *gr_mhz) {
        static const char mem_word[] = "memory ", gr_word[] = " MHz, graphics ", tail[] = " MHz";
        const char *p = text;
        bool long_form = strncmp(p, mem_word, strlen(mem_word)) == 0;
        if (long_form)
                p += strlen(mem_word);
        if (!(p = mhz(p, mem_mhz)))
                return -EINVAL;
        if (long_form ? strncmp(p, gr_word, strlen(gr_word)) != 0 : *p != ',')
                return -EINVAL;
        p += long_form ? strlen(gr_word) : 1;
        if (!(p = mhz(p, gr_mhz)))
                return -EINVAL;
        return strcmp(p, long_form ? tail : "") == 0 ? 0 : -EINVAL;
}

/* ---- reading and setting ---- */

int tune_gpus_read(struct tune_gpus *g, const char *bus_id, enum tune_gpu_attr a, char *buf, size_t size, char *err,
                   size_t errlen) {
        nvmlDevice_t dev;
        int r = handle_of(g, bus_id, &dev, err, errlen);
        if (r < 0)
                return r;
        switch (a) {
        case TUNE_GPU_PERSISTENCE: {
                struct op op = {.kind = OP_GET_PERSISTENCE, .dev = dev};
                if ((r = outcome(g, &op, run_op(g, &op), err, errlen)) == 0)
                        snprintf(buf, size, "%s", op.mode == NVML_FEATURE_ENABLED ? "on" : "off");
                return r;
        }
        case TUNE_GPU_POWER_LIMIT: {
                struct op op = {.kind = OP_GET_POWER_LIMIT, .dev = dev};
                if ((r = outcome(g, &op, run_op(g, &op), err, errlen)) == 0)
                        tune_gpu_format_power(op.out[0], buf, size);
                return r;
        }
        case TUNE_GPU_APP_CLOCKS: {
                struct op mem = {.kind = OP_GET_APP_CLOCK, .dev = dev, .a = NVML_CLOCK_MEM};
                struct op gr = {.kind = OP_GET_APP_CLOCK, .dev = dev, .a = NVML_CLOCK_GRAPHICS};
                if ((r = outcome(g, &mem, run_op(g, &mem), err, errlen)) < 0 ||
                    (r = outcome(g, &gr, run_op(g, &gr), err, errlen)) < 0)
                        return r;
                tune_gpu_format_clocks(mem.out[0], gr.out[0], buf, size);
                return 0;
        }
        case TUNE_GPU_ATTR_COUNT: break;
        }
        return -EINVAL;
}

int tune_gpus_write(struct tune_gpus *g, const char *bus_id, enum tune_gpu_attr a, const char *value, char *err,
                    size_t errlen) {
        struct op op = {0};
        unsigned x, y;
        switch (a) {
        case TUNE_GPU_PERSISTENCE:
                if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0)
                        goto bad;
                op = (struct op){.kind = OP_SET_PERSISTENCE, .a = strcmp(value, "on") == 0};
                break;
        case TUNE_GPU_POWER_LIMIT:
                if (tune_gpu_parse_power(value, &x) < 0)
                        goto bad;
                op = (struct op){.kind = OP_SET_POWER_LIMIT, .a = x};
                break;
        case TUNE_GPU_APP_CLOCKS:
                if (tune_gpu_parse_clocks(value, &x, &y) < 0)
                        goto bad;
                op = (struct op){.kind = OP_SET_APP_CLOCKS, .a = x, .b = y};
                break;
        default: goto bad;
        }
        int r = handle_of(g, bus_id, &op.dev, err, errlen);
        return r < 0 ? r : outcome(g, &op, run_op(g, &op), err, errlen);
bad:
        snprintf(err, errlen, "\"%s\" is not a value of %s", value, tune_gpu_attr_name(a));
        return -EINVAL;
}

static unsigned highest(const unsigned *list, unsigned n) {
        unsigned best = 0;
        for (unsigned i = 0; i < n; i++)
                best = list[i] > best ? list[i] : best;
        return best;
}

void tune_gpus_limits(struct tune_gpus *g, const char *bus_id, struct tune_gpu_limits *out) {
        memset(out, 0, sizeof(*out));
        nvmlDevice_t dev;
        char err[160];
        if (handle_of(g, bus_id, &dev, err, sizeof(err)) < 0) {
                snprintf(out->why_power, sizeof(out->why_power), "%s", err);
                snprintf(out->why_clocks, sizeof(out->why_clocks), "%s", err);
                return;
        }
        struct op c = {.kind = OP_GET_POWER_CONSTRAINTS, .dev = dev}, d = {.kind = OP_GET_POWER_DEFAULT, .dev = dev};
        if (outcome(g, &c, run_op(g, &c), out->why_power, sizeof(out->why_power)) == 0 &&
            outcome(g, &d, run_op(g, &d), out->why_power, sizeof(out->why_power)) == 0) {
                out->power = true;
                out->min_mw = c.out[0];
                out->max_mw = c.out[1];
                out->default_mw = d.out[0];
        }
        struct op dm = {.kind = OP_GET_DEFAULT_APP_CLOCK, .dev = dev, .a = NVML_CLOCK_MEM};
        struct op dg = {.kind = OP_GET_DEFAULT_APP_CLOCK, .dev = dev, .a = NVML_CLOCK_GRAPHICS};
        if (outcome(g, &dm, run_op(g, &dm), out->why_clocks, sizeof(out->why_clocks)) == 0 &&
            outcome(g, &dg, run_op(g, &dg), out->why_clocks, sizeof(out->why_clocks)) == 0) {
                out->clocks_default = true;
                out->default_mem_mhz = dm.out[0];
                out->default_gr_mhz = dg.out[0];
        }
        struct op sm = {.kind = OP_SUPPORTED_MEMORY_CLOCKS, .dev = dev};
        if (outcome(g, &sm, run_op(g, &sm), err, sizeof(err)) == 0 && sm.n > 0) {
                struct op sg = {.kind = OP_SUPPORTED_GRAPHICS_CLOCKS, .dev = dev, .a = highest(sm.list, sm.n)};
                if (outcome(g, &sg, run_op(g, &sg), err, sizeof(err)) == 0 && sg.n > 0) {
                        out->clocks_max = true;
                        out->max_mem_mhz = sg.a;
                        out->max_gr_mhz = highest(sg.list, sg.n);
                }
        }
        if (!out->clocks_max && out->clocks_default)
                snprintf(out->why_clocks, sizeof(out->why_clocks), "%s", err);
}
