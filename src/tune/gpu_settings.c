/* The GPU settings of gpuvet tune (docs/tune.md): persistence mode, power limit and
 * applications clocks of every GPU NVML lists, one target per GPU (src/tune/gpu.h). */
#include "tune/gpu.h"
#include "tune/settings.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* One target per GPU, its current value read; judge sets wanted (or why not) from value. */
typedef void (*gpu_judge)(struct tune_gpus *g, const char *bus, const char *value, struct tune_target *x);

static int expand_per_gpu(struct tune_ctx *c, const struct tune_setting *s, const char *value,
                          struct tune_targets *out, enum tune_gpu_attr attr, gpu_judge judge) {
        char pattern[TUNE_PATH_MAX];
        snprintf(pattern, sizeof(pattern), TUNE_GPU_PATH_PREFIX "*/%s", tune_gpu_attr_name(attr));
        struct tune_gpus *g = tune_ctx_gpus(c);
        if (!g)
                return -ENOMEM;
        if (tune_gpus_unavailable(g))
                return tune_targets_add_absent(s, out, pattern, tune_gpus_unavailable(g));
        if (tune_gpus_count(g) == 0)
                return tune_targets_add_absent(s, out, pattern, "NVML lists no GPU");
        for (size_t i = 0; i < tune_gpus_count(g); i++) {
                const char *bus = tune_gpus_bus_id(g, i);
                char path[TUNE_PATH_MAX];
                snprintf(path, sizeof(path), TUNE_GPU_PATH_PREFIX "%s/%s", bus, tune_gpu_attr_name(attr));
                struct tune_target *x = tune_targets_add(out, s, path);
                if (!x)
                        return -ENOMEM;
                char err[240];
                if (tune_gpus_read(g, bus, attr, x->current, sizeof(x->current), err, sizeof(err)) < 0) {
                        x->current[0] = '\0';
                        if (tune_gpus_problem(g, i))
                                snprintf(x->cannot, sizeof(x->cannot), "%s", err);
                        else
                                snprintf(x->cannot, sizeof(x->cannot), "%s: %s", bus, err);
                }
                judge(g, bus, value, x);
        }
        return 0;
}

static void judge_persistence(struct tune_gpus *g, const char *bus, const char *value, struct tune_target *x) {
        (void)g, (void)bus;
        snprintf(x->wanted, sizeof(x->wanted), "%s", value);
}

/* default, max, min: the GPU's own; watts: within its constraints. */
static void judge_power(struct tune_gpus *g, const char *bus, const char *value, struct tune_target *x) {
        struct tune_gpu_limits lim;
        unsigned want = 0;
        bool named = strcmp(value, "default") == 0 || strcmp(value, "max") == 0 || strcmp(value, "min") == 0;
        if (!named)
                (void)tune_gpu_parse_power(value, &want);
        if (x->cannot[0]) {
                snprintf(x->wanted, sizeof(x->wanted), "%s", value);
                return;
        }
        tune_gpus_limits(g, bus, &lim);
        if (!lim.power) {
                snprintf(x->wanted, sizeof(x->wanted), "%s", value);
                snprintf(x->cannot, sizeof(x->cannot), "%s: no power limits to set within (%s)", bus, lim.why_power);
                return;
        }
        if (named)
                want = strcmp(value, "default") == 0 ? lim.default_mw : strcmp(value, "max") == 0 ? lim.max_mw : lim.min_mw;
        tune_gpu_format_power(want, x->wanted, sizeof(x->wanted));
        if (want < lim.min_mw || want > lim.max_mw) {
                char lo[32], hi[32];
                tune_gpu_format_power(lim.min_mw, lo, sizeof(lo));
                tune_gpu_format_power(lim.max_mw, hi, sizeof(hi));
                snprintf(x->cannot, sizeof(x->cannot), "%s takes %s to %s, not %s", bus, lo, hi, x->wanted);
        }
}

/* default: the GPU's default pair; max: its highest memory clock and the highest graphics
 * clock for it; MEM,GR: as given (NVML refuses a pair the GPU does not support). */
static void judge_clocks(struct tune_gpus *g, const char *bus, const char *value, struct tune_target *x) {
        snprintf(x->wanted, sizeof(x->wanted), "%s", value);
        unsigned mem, gr;
        if (tune_gpu_parse_clocks(value, &mem, &gr) == 0) {
                tune_gpu_format_clocks(mem, gr, x->wanted, sizeof(x->wanted));
                return;
        }
        if (x->cannot[0])
                return;
        struct tune_gpu_limits lim;
        tune_gpus_limits(g, bus, &lim);
        bool max = strcmp(value, "max") == 0;
        if (max ? !lim.clocks_max : !lim.clocks_default) {
                snprintf(x->cannot, sizeof(x->cannot), "%s: no %s applications clocks (%s)", bus, value,
                         max && lim.clocks_default ? "it lists no supported clocks" : lim.why_clocks);
                return;
        }
        tune_gpu_format_clocks(max ? lim.max_mem_mhz : lim.default_mem_mhz, max ? lim.max_gr_mhz : lim.default_gr_mhz,
                               x->wanted, sizeof(x->wanted));
}

static int expand_persistence(struct tune_ctx *c, const struct tune_setting *s, const char *value,
                              struct tune_targets *out) {
        return expand_per_gpu(c, s, value, out, TUNE_GPU_PERSISTENCE, judge_persistence);
}

static int expand_power(struct tune_ctx *c, const struct tune_setting *s, const char *value,
                        struct tune_targets *out) {
        return expand_per_gpu(c, s, value, out, TUNE_GPU_POWER_LIMIT, judge_power);
}

static int expand_clocks(struct tune_ctx *c, const struct tune_setting *s, const char *value,
                         struct tune_targets *out) {
        return expand_per_gpu(c, s, value, out, TUNE_GPU_APP_CLOCKS, judge_clocks);
}

static int valid_on_off(const char *v) { return strcmp(v, "on") == 0 || strcmp(v, "off") == 0 ? 0 : -EINVAL; }

static int valid_power(const char *v) {
        unsigned mw;
        if (strcmp(v, "default") == 0 || strcmp(v, "max") == 0 || strcmp(v, "min") == 0)
                return 0;
        return tune_gpu_parse_power(v, &mw) == 0 && mw > 0 ? 0 : -EINVAL;
}

static int valid_clocks(const char *v) {
        unsigned mem, gr;
        if (strcmp(v, "default") == 0 || strcmp(v, "max") == 0)
                return 0;
        return tune_gpu_parse_clocks(v, &mem, &gr);
}

const struct tune_setting tune_gpu_persistence = {
        "gpu.persistence", "gpu.persistence_mode", "persistence mode of every GPU (NVML)", "on|off", valid_on_off,
        expand_persistence};
const struct tune_setting tune_gpu_power_limit = {
        "gpu.power_limit", "gpu.power_limit", "power limit of every GPU (NVML)", "default|max|min|WATTS",
        valid_power, expand_power};
const struct tune_setting tune_gpu_app_clocks = {
        "gpu.app_clocks", "gpu.app_clocks", "applications clocks of every GPU (NVML)", "default|max|MEM_MHZ,GRAPHICS_MHZ",
        valid_clocks, expand_clocks};
