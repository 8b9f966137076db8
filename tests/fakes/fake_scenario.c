/* Scenario files for the fake NVML: a line-based format, documented in
 * tests/fakes/README.md. Every problem is reported as "fake-nvml: FILE:LINE: problem";
 * nothing in a file can crash the parser (each value is range-checked, each string
 * bounded, includes nested at most FAKE_MAX_INCLUDE deep). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "fake_scenario.h"

#define FAKE_MAX_INCLUDE 8
#define FAKE_LINE_MAX 4096

enum key_kind { KT_STR, KT_U32, KT_S32, KT_U64, KT_BYTES, KT_MW, KT_BOOL, KT_ENUM, KT_PSTATE, KT_CC,
                KT_BUSID, KT_RETURN, KT_UUID128 };

struct enum_name {
        const char *name;
        unsigned int value;
};

static const struct enum_name brand_names[] = {
        {"unknown", NVML_BRAND_UNKNOWN}, {"quadro", NVML_BRAND_QUADRO}, {"tesla", NVML_BRAND_TESLA},
        {"nvs", NVML_BRAND_NVS}, {"grid", NVML_BRAND_GRID}, {"geforce", NVML_BRAND_GEFORCE},
        {"titan", NVML_BRAND_TITAN}, {"nvidia_vapps", NVML_BRAND_NVIDIA_VAPPS},
        {"nvidia_vpc", NVML_BRAND_NVIDIA_VPC}, {"nvidia_vcs", NVML_BRAND_NVIDIA_VCS},
        {"nvidia_vws", NVML_BRAND_NVIDIA_VWS}, {"nvidia_cloud_gaming", NVML_BRAND_NVIDIA_CLOUD_GAMING},
        {"quadro_rtx", NVML_BRAND_QUADRO_RTX}, {"nvidia_rtx", NVML_BRAND_NVIDIA_RTX},
        {"nvidia", NVML_BRAND_NVIDIA}, {"geforce_rtx", NVML_BRAND_GEFORCE_RTX},
        {"titan_rtx", NVML_BRAND_TITAN_RTX}, {NULL, 0},
};
static const struct enum_name arch_names[] = {
        {"volta", NVML_DEVICE_ARCH_VOLTA}, {"turing", NVML_DEVICE_ARCH_TURING},
        {"ampere", NVML_DEVICE_ARCH_AMPERE}, {"ada", NVML_DEVICE_ARCH_ADA},
        {"hopper", NVML_DEVICE_ARCH_HOPPER}, {"blackwell", NVML_DEVICE_ARCH_BLACKWELL},
        {"unknown", NVML_DEVICE_ARCH_UNKNOWN}, {NULL, 0},
};
static const struct enum_name compute_mode_names[] = {
        {"default", NVML_COMPUTEMODE_DEFAULT}, {"exclusive_thread", NVML_COMPUTEMODE_EXCLUSIVE_THREAD},
        {"prohibited", NVML_COMPUTEMODE_PROHIBITED}, {"exclusive_process", NVML_COMPUTEMODE_EXCLUSIVE_PROCESS},
        {NULL, 0},
};
static const struct enum_name fabric_health_names[] = {
        {"not_supported", NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED}, {"healthy", NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY},
        {"unhealthy", NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY},
        {"limited_capacity", NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY},
        {NULL, 0},
};
static const struct enum_name fabric_state_names[] = {
        {"not_supported", NVML_GPU_FABRIC_STATE_NOT_SUPPORTED}, {"not_started", NVML_GPU_FABRIC_STATE_NOT_STARTED},
        {"in_progress", NVML_GPU_FABRIC_STATE_IN_PROGRESS}, {"completed", NVML_GPU_FABRIC_STATE_COMPLETED},
        {NULL, 0},
};

struct key_info {
        const char *name;
        enum key_kind kind;
        const void *extra; /* unit (const char *) or enum table */
};

static const struct key_info keys[K_COUNT] = {
#define FAKE_KEY_INFO(id, name, kind, extra) [K_##id] = {name, kind, extra},
        FAKE_KEYS(FAKE_KEY_INFO)
#undef FAKE_KEY_INFO
};

static const struct enum_name return_names[] = {
        {"SUCCESS", NVML_SUCCESS}, {"UNINITIALIZED", NVML_ERROR_UNINITIALIZED},
        {"INVALID_ARGUMENT", NVML_ERROR_INVALID_ARGUMENT}, {"NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED},
        {"NO_PERMISSION", NVML_ERROR_NO_PERMISSION}, {"ALREADY_INITIALIZED", NVML_ERROR_ALREADY_INITIALIZED},
        {"NOT_FOUND", NVML_ERROR_NOT_FOUND}, {"INSUFFICIENT_SIZE", NVML_ERROR_INSUFFICIENT_SIZE},
        {"INSUFFICIENT_POWER", NVML_ERROR_INSUFFICIENT_POWER}, {"DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED},
        {"TIMEOUT", NVML_ERROR_TIMEOUT}, {"IRQ_ISSUE", NVML_ERROR_IRQ_ISSUE},
        {"LIBRARY_NOT_FOUND", NVML_ERROR_LIBRARY_NOT_FOUND}, {"FUNCTION_NOT_FOUND", NVML_ERROR_FUNCTION_NOT_FOUND},
        {"CORRUPTED_INFOROM", NVML_ERROR_CORRUPTED_INFOROM}, {"GPU_IS_LOST", NVML_ERROR_GPU_IS_LOST},
        {"RESET_REQUIRED", NVML_ERROR_RESET_REQUIRED}, {"OPERATING_SYSTEM", NVML_ERROR_OPERATING_SYSTEM},
        {"LIB_RM_VERSION_MISMATCH", NVML_ERROR_LIB_RM_VERSION_MISMATCH}, {"IN_USE", NVML_ERROR_IN_USE},
        {"MEMORY", NVML_ERROR_MEMORY}, {"NO_DATA", NVML_ERROR_NO_DATA},
        {"VGPU_ECC_NOT_SUPPORTED", NVML_ERROR_VGPU_ECC_NOT_SUPPORTED},
        {"INSUFFICIENT_RESOURCES", NVML_ERROR_INSUFFICIENT_RESOURCES},
        {"FREQ_NOT_SUPPORTED", NVML_ERROR_FREQ_NOT_SUPPORTED},
        {"ARGUMENT_VERSION_MISMATCH", NVML_ERROR_ARGUMENT_VERSION_MISMATCH},
        {"DEPRECATED", NVML_ERROR_DEPRECATED}, {"NOT_READY", NVML_ERROR_NOT_READY},
        {"GPU_NOT_FOUND", NVML_ERROR_GPU_NOT_FOUND}, {"INVALID_STATE", NVML_ERROR_INVALID_STATE},
        {"RESET_TYPE_NOT_SUPPORTED", NVML_ERROR_RESET_TYPE_NOT_SUPPORTED}, {"UNKNOWN", NVML_ERROR_UNKNOWN},
        {NULL, 0},
};

bool fake_return_from_name(const char *name, nvmlReturn_t *ret)
{
        if (strncmp(name, "NVML_ERROR_", 11) == 0)
                name += 11;
        else if (strncmp(name, "NVML_", 5) == 0)
                name += 5;
        for (const struct enum_name *e = return_names; e->name; e++)
                if (strcmp(e->name, name) == 0) {
                        *ret = (nvmlReturn_t)e->value;
                        return true;
                }
        return false;
}

/* --- parse context ------------------------------------------------------------------ */

struct parse {
        struct fake_scenario *sc;
        const char *file;
        unsigned int line;
        /* the current section: GPUs first..last, mig (-1 for the GPU itself), or global */
        bool in_gpu;
        unsigned int first, last;
        int mig;
        bool gpu_count_set;
        unsigned int gpu_count;
        unsigned int max_defined; /* highest GPU index defined + 1 */
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static bool perr(const struct parse *p, const char *fmt, ...)
{
        va_list ap;
        fprintf(stderr, "fake-nvml: %s:%u: ", p->file, p->line);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        return false;
}

static char *trim(char *s)
{
        while (*s && isspace((unsigned char)*s))
                s++;
        size_t n = strlen(s);
        while (n > 0 && isspace((unsigned char)s[n - 1]))
                s[--n] = '\0';
        return s;
}

/* A decimal or 0x-hex unsigned number filling the whole of S (no sign). */
static bool parse_ull(const char *s, unsigned long long *out)
{
        if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
                return false;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 0);
        if (errno != 0 || end == s || *end != '\0')
                return false;
        *out = v;
        return true;
}

/* Splits "NUMBER [UNIT]" (or "NUMBERUNIT") in place: S keeps the number, the unit is
 * copied into UNIT (empty if none; "?" if too long to be one). */
static void split_unit(char *s, char unit[16])
{
        char *u = s;
        if (*u == '-')
                u++;
        if (u[0] == '0' && (u[1] == 'x' || u[1] == 'X')) {
                u += 2;
                while (isxdigit((unsigned char)*u))
                        u++;
        } else {
                while (isdigit((unsigned char)*u) || *u == '.')
                        u++;
        }
        char *num_end = u;
        while (*u && isspace((unsigned char)*u))
                u++;
        if (strlen(u) >= 16)
                strcpy(unit, "?");
        else
                strcpy(unit, u);
        *num_end = '\0';
}

/* "69.62" with SCALE 1000 -> 69620; at most 3 decimals; integer part bounded. */
static bool parse_fixed(const char *s, unsigned long long scale, unsigned long long *out)
{
        unsigned long long ip = 0, fp = 0, fscale = 1;
        const char *c = s;
        if (!isdigit((unsigned char)*c))
                return false;
        for (; isdigit((unsigned char)*c); c++) {
                if (ip > (ULLONG_MAX / 10 - 10) / (scale ? scale : 1))
                        return false;
                ip = ip * 10 + (unsigned long long)(*c - '0');
        }
        if (*c == '.') {
                c++;
                if (!isdigit((unsigned char)*c))
                        return false;
                for (; isdigit((unsigned char)*c); c++) {
                        if (fscale >= scale)
                                return false; /* more precision than the unit holds */
                        fp = fp * 10 + (unsigned long long)(*c - '0');
                        fscale *= 10;
                }
        }
        if (*c != '\0')
                return false;
        *out = ip * scale + fp * (scale / fscale);
        return true;
}

static bool parse_bool(const char *s, bool *out)
{
        static const char *const yes[] = {"1", "yes", "on", "true", "enabled", "enable", "up", "active", NULL};
        static const char *const no[] = {"0", "no", "off", "false", "disabled", "disable", "down", "inactive", NULL};
        for (int i = 0; yes[i]; i++)
                if (strcasecmp(s, yes[i]) == 0)
                        return *out = true, true;
        for (int i = 0; no[i]; i++)
                if (strcasecmp(s, no[i]) == 0)
                        return *out = false, true;
        return false;
}

/* "0000:18:00.0" or "00000000:18:00.0" (hex); normalised for comparisons. */
/* One hex number at *p, ended by end; *p moves past end. (sscanf was a tenth of the
 * fake's nvmlInit.) */
static bool hex_field(const char **p, char end, unsigned int *ret)
{
        if (!isxdigit((unsigned char)**p))
                return false;
        char *e;
        errno = 0;
        unsigned long v = strtoul(*p, &e, 16);
        if (errno || v > UINT_MAX || *e != end)
                return false;
        *ret = (unsigned int)v;
        *p = end ? e + 1 : e;
        return true;
}

static bool parse_busid(const char *s, unsigned int *dom, unsigned int *bus, unsigned int *dev, unsigned int *fn)
{
        unsigned int d, b, v, f;
        if (strlen(s) > 20 || !hex_field(&s, ':', &d) || !hex_field(&s, ':', &b) || !hex_field(&s, '.', &v) ||
            !hex_field(&s, '\0', &f))
                return false;
        if (b > 0xff || v > 0x1f || f > 7)
                return false;
        *dom = d, *bus = b, *dev = v, *fn = f;
        return true;
}

bool fake_busid_parse(const char *s, unsigned int *dom, unsigned int *bus, unsigned int *dev, unsigned int *fn);
bool fake_busid_parse(const char *s, unsigned int *dom, unsigned int *bus, unsigned int *dev, unsigned int *fn)
{
        return parse_busid(s, dom, bus, dev, fn);
}

static bool parse_enum(const struct enum_name *t, const char *s, unsigned long long *out)
{
        for (; t->name; t++)
                if (strcasecmp(t->name, s) == 0)
                        return *out = t->value, true;
        return false;
}

static bool set_str(const struct parse *p, char **slot, const char *v)
{
        if (strlen(v) >= FAKE_STR_MAX)
                return perr(p, "value too long (%zu characters, at most %d)", strlen(v), FAKE_STR_MAX - 1);
        char *c = strdup(v);
        if (!c)
                return perr(p, "out of memory");
        free(*slot);
        *slot = c;
        return true;
}

/* Parses the value of key K into dev D. "N/A" (the key is absent: the fake answers
 * NOT_SUPPORTED) has been handled by the caller. */
static bool parse_key_value(const struct parse *p, struct fake_dev *d, enum fake_key k, char *v)
{
        const struct key_info *ki = &keys[k];
        unsigned long long x = 0;
        char unit[16] = "";
        char shown[64]; /* the value as written, for messages */
        bool b;

        size_t shown_len = strnlen(v, sizeof(shown) - 1); /* snprintf here cost as much as the parse */
        memcpy(shown, v, shown_len);
        shown[shown_len] = '\0';

        switch (ki->kind) {
        case KT_STR:
                if (!*v)
                        return perr(p, "%s: empty value", ki->name);
                if (!set_str(p, &d->s[k], v))
                        return false;
                break;
        case KT_BUSID: {
                unsigned int a, bb, c, e;
                if (!parse_busid(v, &a, &bb, &c, &e))
                        return perr(p, "%s: '%s' is not a PCI bus id (DOMAIN:BUS:DEVICE.FUNCTION)", ki->name, v);
                if (!set_str(p, &d->s[k], v))
                        return false;
                break;
        }
        case KT_U32:
        case KT_U64:
        case KT_S32: {
                split_unit(v, unit);
                const char *want = ki->extra;
                if (!*v || (v[0] == '-' && !v[1]))
                        return perr(p, "%s: '%s' is not a number", ki->name, shown);
                if (*unit && (!want || strcasecmp(unit, want) != 0))
                        return perr(p, "%s: unexpected unit '%s'%s%s", ki->name, unit, want ? ", expected " : "",
                                    want ? want : "");
                bool neg = ki->kind == KT_S32 && v[0] == '-';
                if (!parse_ull(neg ? v + 1 : v, &x))
                        return perr(p, "%s: '%s' is not a number", ki->name, shown);
                if (ki->kind == KT_U32 && x > UINT_MAX)
                        return perr(p, "%s: %llu is out of range", ki->name, x);
                if (ki->kind == KT_S32) {
                        if (x > (neg ? 2147483648ull : 2147483647ull))
                                return perr(p, "%s: value out of range", ki->name);
                        /* NVML returns these as unsigned int; a negative threshold (seen in
                         * nvidia-smi captures of passed-through GPUs) is its two's complement */
                        x = neg ? (unsigned long long)(unsigned int)(-(long long)x) : x;
                }
                break;
        }
        case KT_BYTES: {
                static const struct {
                        const char *u;
                        unsigned long long mul;
                } units[] = {{"", 1}, {"B", 1}, {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30},
                             {"TiB", 1ull << 40}};
                split_unit(v, unit);
                unsigned long long mul = 0;
                for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
                        if (strcmp(unit, units[i].u) == 0)
                                mul = units[i].mul;
                if (!parse_ull(v, &x))
                        return perr(p, "%s: '%s' is not a number", ki->name, shown);
                if (!mul)
                        return perr(p, "%s: unknown unit '%s' (B, KiB, MiB, GiB, TiB)", ki->name, unit);
                if (x > ULLONG_MAX / mul)
                        return perr(p, "%s: value out of range", ki->name);
                x *= mul;
                break;
        }
        case KT_MW:
                split_unit(v, unit);
                if (!*unit || strcmp(unit, "mW") == 0) {
                        if (!parse_ull(v, &x) || x > UINT_MAX)
                                return perr(p, "%s: '%s' is not a number of milliwatts", ki->name, shown);
                } else if (strcmp(unit, "W") == 0) {
                        if (!parse_fixed(v, 1000, &x) || x > UINT_MAX)
                                return perr(p, "%s: '%s' is not a number of watts", ki->name, shown);
                } else {
                        return perr(p, "%s: unknown unit '%s' (mW or W)", ki->name, unit);
                }
                break;
        case KT_BOOL:
                if (!parse_bool(v, &b))
                        return perr(p, "%s: '%s' is not a boolean (1/0, yes/no, enabled/disabled)", ki->name, v);
                x = b;
                break;
        case KT_ENUM:
                if (!parse_enum(ki->extra, v, &x) && !(parse_ull(v, &x) && x <= UINT_MAX))
                        return perr(p, "%s: unknown value '%s'", ki->name, v);
                break;
        case KT_PSTATE:
                if ((v[0] == 'P' || v[0] == 'p') && parse_ull(v + 1, &x) && x <= 15)
                        break;
                if (strcasecmp(v, "unknown") == 0) {
                        x = NVML_PSTATE_UNKNOWN;
                        break;
                }
                if (!parse_ull(v, &x) || (x > 15 && x != NVML_PSTATE_UNKNOWN))
                        return perr(p, "%s: '%s' is not a performance state (P0..P15)", ki->name, v);
                break;
        case KT_CC: {
                unsigned int maj, min;
                int n = 0;
                if (sscanf(v, "%u.%u%n", &maj, &min, &n) != 2 || (size_t)n != strlen(v) || maj > 99 || min > 99)
                        return perr(p, "%s: '%s' is not MAJOR.MINOR", ki->name, v);
                x = (unsigned long long)maj << 16 | min;
                break;
        }
        case KT_RETURN: {
                nvmlReturn_t r;
                if (!fake_return_from_name(v, &r))
                        return perr(p, "%s: unknown NVML return code '%s'", ki->name, v);
                x = (unsigned long long)r;
                break;
        }
        case KT_UUID128: {
                /* 32 hex digits, dashes allowed anywhere (as nvidia-smi prints it) */
                unsigned int nd = 0;
                for (const char *c = v; *c; c++) {
                        if (*c == '-')
                                continue;
                        if (!isxdigit((unsigned char)*c) || ++nd > 32)
                                return perr(p, "%s: '%s' is not a 128-bit UUID", ki->name, v);
                }
                if (nd != 32)
                        return perr(p, "%s: '%s' is not a 128-bit UUID", ki->name, v);
                if (!set_str(p, &d->s[k], v))
                        return false;
                break;
        }
        }
        d->u[k] = x;
        d->set[k] = true;
        return true;
}

static void unset_key(struct fake_dev *d, enum fake_key k)
{
        d->set[k] = false;
        d->u[k] = 0;
        free(d->s[k]);
        d->s[k] = NULL;
}

static bool is_na(const char *v)
{
        return strcmp(v, "N/A") == 0 || strcmp(v, "[N/A]") == 0 || strcasecmp(v, "not supported") == 0 ||
               strcmp(v, "[Not Supported]") == 0;
}

/* nvlink.N.FIELD or nvlink.*.FIELD */
static bool parse_nvlink(const struct parse *p, struct fake_dev *d, const char *key, char *v)
{
        static const char *const counters[FAKE_NVLINK_COUNTERS] = {"replay", "recovery", "crc_flit", "crc_data",
                                                                   "ecc_data"};
        const char *rest = key + strlen("nvlink.");
        unsigned int first, last;
        const char *dot = strchr(rest, '.');
        if (!dot)
                return perr(p, "'%s': expected nvlink.LINK.FIELD", key);
        if (dot - rest == 1 && rest[0] == '*') {
                first = 0, last = NVML_NVLINK_MAX_LINKS - 1;
        } else {
                char num[16];
                unsigned long long l;
                if ((size_t)(dot - rest) >= sizeof(num))
                        return perr(p, "'%s': bad link number", key);
                memcpy(num, rest, (size_t)(dot - rest));
                num[dot - rest] = '\0';
                if (!parse_ull(num, &l) || l >= NVML_NVLINK_MAX_LINKS)
                        return perr(p, "'%s': link number must be 0..%d or *", key, NVML_NVLINK_MAX_LINKS - 1);
                first = last = (unsigned int)l;
        }
        const char *field = dot + 1;
        bool na = is_na(v);
        for (unsigned int l = first; l <= last; l++) {
                struct fake_link *lk = &d->links[l];
                if (strcmp(field, "state") == 0) {
                        bool up = false;
                        if (!na && !parse_bool(v, &up))
                                return perr(p, "%s: '%s' is not a link state (up/down)", key, v);
                        lk->state_set = !na;
                        lk->state_up = up;
                        continue;
                }
                if (strcmp(field, "remote_bus_id") == 0) {
                        unsigned int a, b, c, e;
                        if (na) {
                                free(lk->remote_bus_id);
                                lk->remote_bus_id = NULL;
                                continue;
                        }
                        if (!parse_busid(v, &a, &b, &c, &e))
                                return perr(p, "%s: '%s' is not a PCI bus id", key, v);
                        if (!set_str(p, &lk->remote_bus_id, v))
                                return false;
                        continue;
                }
                if (strcmp(field, "remote_device_id") == 0) {
                        unsigned long long x = 0;
                        if (!na && (!parse_ull(v, &x) || x > UINT_MAX))
                                return perr(p, "%s: '%s' is not a number", key, v);
                        lk->remote_device_id_set = !na;
                        lk->remote_device_id = (unsigned int)x;
                        continue;
                }
                int c;
                for (c = 0; c < FAKE_NVLINK_COUNTERS; c++)
                        if (strcmp(field, counters[c]) == 0)
                                break;
                if (c == FAKE_NVLINK_COUNTERS)
                        return perr(p, "'%s': unknown NVLink field '%s' (state, replay, recovery, crc_flit, "
                                       "crc_data, ecc_data, remote_bus_id, remote_device_id)", key, field);
                unsigned long long x = 0;
                if (!na && !parse_ull(v, &x))
                        return perr(p, "%s: '%s' is not a number", key, v);
                lk->err_set[c] = !na;
                lk->err[c] = x;
        }
        return true;
}

/* process = PID USED [gi=N] [ci=N] [sm=N] [mem=N] [enc=N] [dec=N] NAME... */
static bool parse_process(const struct parse *p, struct fake_dev *d, bool graphics, char *v)
{
        if (strcasecmp(v, "none") == 0) {
                for (unsigned int i = 0; i < d->nprocs; i++)
                        free(d->procs[i].name);
                d->nprocs = 0;
                return true;
        }
        struct fake_proc pr = {.gpu_instance_id = 0xFFFFFFFFu, .compute_instance_id = 0xFFFFFFFFu,
                               .graphics = graphics};
        char *save = NULL;
        char *tok = strtok_r(v, " \t", &save);
        unsigned long long x;
        if (!tok || !parse_ull(tok, &x) || x == 0 || x > UINT_MAX)
                return perr(p, "process: expected 'PID USED_MEMORY NAME', PID a positive number");
        pr.pid = (unsigned int)x;
        tok = strtok_r(NULL, " \t", &save);
        if (!tok)
                return perr(p, "process: missing used memory (e.g. 2566MiB)");
        char mem[64];
        if (strlen(tok) >= sizeof(mem))
                return perr(p, "process: bad used memory '%s'", tok);
        strcpy(mem, tok);
        /* "2566 MiB" written with a space: take the unit from the next token */
        char *peek = save;
        while (peek && *peek && isspace((unsigned char)*peek))
                peek++;
        if (peek && (strncmp(peek, "MiB", 3) == 0 || strncmp(peek, "KiB", 3) == 0 || strncmp(peek, "GiB", 3) == 0) &&
            (peek[3] == '\0' || isspace((unsigned char)peek[3]))) {
                tok = strtok_r(NULL, " \t", &save);
                if (strlen(mem) + strlen(tok) + 2 > sizeof(mem))
                        return perr(p, "process: bad used memory");
                strcat(mem, " ");
                strcat(mem, tok);
        }
        struct fake_dev tmp = {0};
        if (!parse_key_value(p, &tmp, K_MEM_USED, mem))
                return false;
        pr.used_bytes = tmp.u[K_MEM_USED];
        char *name = save;
        for (;;) {
                while (name && *name && isspace((unsigned char)*name))
                        name++;
                static const char *const util_keys[4] = {"sm=", "mem=", "enc=", "dec="};
                unsigned int *slot = NULL;
                size_t klen = 3;
                if (name && strncmp(name, "gi=", 3) == 0)
                        slot = &pr.gpu_instance_id;
                else if (name && strncmp(name, "ci=", 3) == 0)
                        slot = &pr.compute_instance_id;
                for (unsigned int k = 0; name && !slot && k < 4; k++)
                        if (strncmp(name, util_keys[k], strlen(util_keys[k])) == 0) {
                                slot = &pr.util[k];
                                klen = strlen(util_keys[k]);
                                pr.sampled = true;
                        }
                if (!slot)
                        break;
                char *sp = name + klen;
                while (*sp && !isspace((unsigned char)*sp))
                        sp++;
                char saved = *sp;
                *sp = '\0';
                if (!parse_ull(name + klen, &x) || x > UINT_MAX)
                        return perr(p, "process: bad '%s'", name);
                *slot = (unsigned int)x;
                *sp = saved;
                name = sp;
        }
        if (!name || !*name)
                return perr(p, "process: missing process name");
        if (strlen(name) > 255)
                return perr(p, "process: name too long");
        if (d->nprocs >= 256)
                return perr(p, "process: too many processes (at most 256 per device)");
        struct fake_proc *np = realloc(d->procs, (d->nprocs + 1) * sizeof(*np));
        if (!np)
                return perr(p, "out of memory");
        d->procs = np;
        pr.name = strdup(name);
        if (!pr.name)
                return perr(p, "out of memory");
        d->procs[d->nprocs++] = pr;
        return true;
}

static bool parse_addresses(const struct parse *p, struct fake_dev *d, int cause, char *v)
{
        d->nretired_addr[cause] = 0;
        if (is_na(v) || strcasecmp(v, "none") == 0)
                return true;
        char *save = NULL;
        for (char *tok = strtok_r(v, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
                unsigned long long a;
                if (!parse_ull(tok, &a))
                        return perr(p, "retired page address '%s' is not a number", tok);
                if (d->nretired_addr[cause] >= FAKE_MAX_RETIRED)
                        return perr(p, "too many retired page addresses (at most %d)", FAKE_MAX_RETIRED);
                d->retired_addr[cause][d->nretired_addr[cause]++] = a;
        }
        return true;
}

/* keys[] by name, for a binary search: a scenario line applies to every GPU of its section,
 * and a linear search of ~150 names for each was most of a fake nvmlInit's time. */
static int keys_by_name[K_COUNT];
static pthread_once_t keys_sorted = PTHREAD_ONCE_INIT;

static int by_key_name(const void *a, const void *b)
{
        return strcmp(keys[*(const int *)a].name, keys[*(const int *)b].name);
}

static void sort_keys(void)
{
        for (int k = 0; k < K_COUNT; k++)
                keys_by_name[k] = k;
        qsort(keys_by_name, K_COUNT, sizeof(keys_by_name[0]), by_key_name);
}

/* The key's index in keys[], or -1. */
static int key_index(const char *key)
{
        pthread_once(&keys_sorted, sort_keys);
        size_t lo = 0, hi = K_COUNT;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(keys[keys_by_name[mid]].name, key);
                if (c == 0)
                        return keys_by_name[mid];
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

static bool dev_key(struct parse *p, struct fake_dev *d, const char *key, char *v)
{
        if (strncmp(key, "nvlink.", 7) == 0)
                return parse_nvlink(p, d, key, v);
        if (strcmp(key, "process") == 0 || strcmp(key, "compute_process") == 0)
                return parse_process(p, d, false, v);
        if (strcmp(key, "graphics_process") == 0)
                return parse_process(p, d, true, v);
        if (strcmp(key, "retired_pages_sbe_addresses") == 0)
                return parse_addresses(p, d, 0, v);
        if (strcmp(key, "retired_pages_dbe_addresses") == 0)
                return parse_addresses(p, d, 1, v);
        if (strcmp(key, "xid") == 0) {
                unsigned long long x;
                if (strcasecmp(v, "none") == 0) {
                        d->nxids = 0;
                        return true;
                }
                if (!parse_ull(v, &x) || x > UINT_MAX)
                        return perr(p, "xid: '%s' is not a number", v);
                if (d->nxids >= FAKE_MAX_XIDS)
                        return perr(p, "xid: too many events (at most %d per GPU)", FAKE_MAX_XIDS);
                d->xids[d->nxids++] = (unsigned int)x;
                return true;
        }
        int k = key_index(key);
        if (k < 0)
                return perr(p, "unknown key '%s'", key);
        if (is_na(v)) {
                unset_key(d, (enum fake_key)k);
                return true;
        }
        return parse_key_value(p, d, (enum fake_key)k, v);
}

static bool global_key(struct parse *p, const char *key, char *v)
{
        struct fake_scenario *sc = p->sc;
        if (strcmp(key, "driver_version") == 0 || strcmp(key, "nvml_version") == 0) {
                char **slot = key[0] == 'd' ? &sc->driver_version : &sc->nvml_version;
                if (is_na(v)) {
                        free(*slot);
                        *slot = NULL;
                        return true;
                }
                if (strlen(v) >= 80)
                        return perr(p, "%s: too long (at most 79 characters)", key);
                return set_str(p, slot, v);
        }
        if (strcmp(key, "cuda_driver_version") == 0) {
                unsigned int maj, min;
                int n = 0;
                unsigned long long x;
                if (is_na(v)) {
                        sc->cuda_set = false;
                        return true;
                }
                if (parse_ull(v, &x) && x <= INT_MAX) {
                        sc->cuda_driver_version = (int)x;
                } else if (sscanf(v, "%u.%u%n", &maj, &min, &n) == 2 && (size_t)n == strlen(v) && maj < 1000 &&
                           min < 100) {
                        sc->cuda_driver_version = (int)(maj * 1000 + min * 10);
                } else {
                        return perr(p, "cuda_driver_version: '%s' is neither 12040 nor 12.4", v);
                }
                sc->cuda_set = true;
                return true;
        }
        if (strcmp(key, "init_error") == 0) {
                if (is_na(v) || strcasecmp(v, "none") == 0) {
                        sc->init_error_set = false;
                        return true;
                }
                if (!fake_return_from_name(v, &sc->init_error))
                        return perr(p, "init_error: unknown NVML return code '%s'", v);
                sc->init_error_set = sc->init_error != NVML_SUCCESS;
                return true;
        }
        if (strcmp(key, "gpu_count") == 0) {
                unsigned long long x;
                if (!parse_ull(v, &x) || x > FAKE_MAX_GPUS)
                        return perr(p, "gpu_count: must be 0..%d", FAKE_MAX_GPUS);
                p->gpu_count_set = true;
                p->gpu_count = (unsigned int)x;
                return true;
        }
        return perr(p, "unknown global key '%s' (GPU keys go in a [gpu N] section)", key);
}

/* [gpu N], [gpu A-B], [gpu *], [gpu N mig M], [global] */
static bool parse_section(struct parse *p, char *s)
{
        size_t n = strlen(s);
        if (n < 2 || s[n - 1] != ']')
                return perr(p, "malformed section header (expected [gpu N] or [global])");
        s[n - 1] = '\0';
        char *body = trim(s + 1);
        if (strcmp(body, "global") == 0) {
                p->in_gpu = false;
                return true;
        }
        char *save = NULL;
        char *w = strtok_r(body, " \t", &save);
        char *idx = w ? strtok_r(NULL, " \t", &save) : NULL;
        char *mig = idx ? strtok_r(NULL, " \t", &save) : NULL;
        char *mid = mig ? strtok_r(NULL, " \t", &save) : NULL;
        if (!w || strcmp(w, "gpu") != 0 || !idx || (mig && (strcmp(mig, "mig") != 0 || !mid)) ||
            strtok_r(NULL, " \t", &save))
                return perr(p, "malformed section header (expected [gpu N], [gpu A-B], [gpu *], [gpu N mig M] "
                               "or [global])");
        unsigned long long a, b;
        char *dash = strchr(idx, '-');
        if (strcmp(idx, "*") == 0) {
                if (p->max_defined == 0)
                        return perr(p, "[gpu *] before any GPU is defined");
                a = 0, b = p->max_defined - 1;
        } else if (dash) {
                *dash = '\0';
                if (!parse_ull(idx, &a) || !parse_ull(dash + 1, &b) || a > b)
                        return perr(p, "bad GPU range");
        } else {
                if (!parse_ull(idx, &a))
                        return perr(p, "bad GPU index '%s'", idx);
                b = a;
        }
        if (b >= FAKE_MAX_GPUS)
                return perr(p, "GPU index %llu out of range (at most %d GPUs)", b, FAKE_MAX_GPUS);
        p->mig = -1;
        if (mig) {
                unsigned long long m;
                if (!parse_ull(mid, &m) || m >= FAKE_MAX_MIG)
                        return perr(p, "MIG device index must be 0..%d", FAKE_MAX_MIG - 1);
                if (a != b)
                        return perr(p, "a MIG section names one GPU");
                p->mig = (int)m;
        }
        p->in_gpu = true;
        p->first = (unsigned int)a;
        p->last = (unsigned int)b;
        if (p->last + 1 > p->sc->n_touched)
                p->sc->n_touched = p->last + 1;
        for (unsigned int g = p->first; g <= p->last; g++) {
                p->sc->devs[g][0].defined = true;
                if (p->mig >= 0) {
                        p->sc->devs[g][1 + p->mig].defined = true;
                        p->sc->mig_touched[g] |= 1u << p->mig;
                }
        }
        if (p->last + 1 > p->max_defined)
                p->max_defined = p->last + 1;
        return true;
}

/* fault FN GPU ERR [WHEN] / hang FN GPU [WHEN] / latency FN MS [GPU] */
static bool parse_rule(struct parse *p, const char *verb, char *args)
{
        struct fake_scenario *sc = p->sc;
        char *tok[6] = {0};
        int nt = 0;
        char *save = NULL;
        for (char *t = strtok_r(args, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
                if (nt == 5)
                        return perr(p, "%s: too many arguments", verb);
                tok[nt++] = t;
        }
        if (sc->nrules >= FAKE_MAX_RULES)
                return perr(p, "too many fault/hang/latency lines (at most %d)", FAKE_MAX_RULES);
        struct fake_rule r = {.fn = -1, .gpu = -1, .when = WHEN_ALWAYS};
        int want_min, want_max, when_at = -1, gpu_at = 1;
        if (strcmp(verb, "fault") == 0) {
                r.action = ACT_FAULT, want_min = 3, want_max = 4, when_at = 3;
        } else if (strcmp(verb, "hang") == 0) {
                r.action = ACT_HANG, want_min = 2, want_max = 3, when_at = 2;
        } else {
                r.action = ACT_LATENCY, want_min = 2, want_max = 3, gpu_at = 2;
        }
        if (nt < want_min || nt > want_max)
                return perr(p, "%s: expected %s", verb,
                            r.action == ACT_FAULT  ? "'fault FUNCTION GPU|* NVML_ERROR_NAME [call=N|after=N|always]'"
                            : r.action == ACT_HANG ? "'hang FUNCTION GPU|* [call=N|after=N|always]'"
                                                   : "'latency FUNCTION|* MS [GPU]'");
        if (strcmp(tok[0], "*") != 0) {
                r.fn = fake_fn_lookup(tok[0]);
                if (r.fn < 0)
                        return perr(p, "%s: unknown NVML function '%s'", verb, tok[0]);
        } else if (r.action != ACT_LATENCY) {
                return perr(p, "%s: name one function (only latency accepts *)", verb);
        }
        if (tok[gpu_at] && strcmp(tok[gpu_at], "*") != 0) {
                unsigned long long g;
                if (!parse_ull(tok[gpu_at], &g) || g >= FAKE_MAX_GPUS)
                        return perr(p, "%s: GPU must be an index or *", verb);
                r.gpu = (int)g;
        }
        if (r.action == ACT_FAULT && !fake_return_from_name(tok[2], &r.err))
                return perr(p, "fault: unknown NVML return code '%s'", tok[2]);
        if (r.action == ACT_LATENCY) {
                unsigned long long ms;
                if (!parse_ull(tok[1], &ms) || ms > 600000)
                        return perr(p, "latency: '%s' is not a number of milliseconds (at most 600000)", tok[1]);
                r.ms = (unsigned int)ms;
        }
        if (when_at >= 0 && tok[when_at]) {
                const char *w = tok[when_at];
                if (strcmp(w, "always") == 0) {
                        r.when = WHEN_ALWAYS;
                } else if (strncmp(w, "call=", 5) == 0 && parse_ull(w + 5, &r.n) && r.n > 0) {
                        r.when = WHEN_CALL;
                } else if (strncmp(w, "after=", 6) == 0 && parse_ull(w + 6, &r.n)) {
                        r.when = WHEN_AFTER;
                } else {
                        return perr(p, "%s: '%s' is not call=N (N >= 1), after=N or always", verb, w);
                }
        }
        sc->rules[sc->nrules++] = r;
        return true;
}

static bool parse_file(struct parse *p, const char *path, int depth);

static bool parse_include(struct parse *p, const char *arg, int depth)
{
        if (depth + 1 >= FAKE_MAX_INCLUDE)
                return perr(p, "include nested too deep (an include loop?)");
        if (!*arg)
                return perr(p, "include: missing file name");
        char full[4096];
        if (arg[0] == '/') {
                if (strlen(arg) >= sizeof(full))
                        return perr(p, "include: path too long");
                strcpy(full, arg);
        } else {
                const char *slash = strrchr(p->file, '/');
                int dl = slash ? (int)(slash - p->file) : 1;
                const char *dir = slash ? p->file : ".";
                if (snprintf(full, sizeof(full), "%.*s/%s", dl, dir, arg) >= (int)sizeof(full))
                        return perr(p, "include: path too long");
        }
        struct parse sub = *p;
        sub.in_gpu = false;
        if (!parse_file(&sub, full, depth + 1))
                return perr(p, "included from here");
        p->gpu_count_set = sub.gpu_count_set;
        p->gpu_count = sub.gpu_count;
        p->max_defined = sub.max_defined;
        return true;
}

static bool parse_line(struct parse *p, char *line, int depth)
{
        char *s = trim(line);
        if (!*s || *s == '#')
                return true;
        /* a trailing comment: whitespace then '#' */
        for (char *c = s + 1; *c; c++)
                if (*c == '#' && isspace((unsigned char)c[-1])) {
                        *c = '\0';
                        s = trim(s);
                        break;
                }
        if (*s == '[')
                return parse_section(p, s);
        char *eq = strchr(s, '=');
        char *sp = s + strcspn(s, " \t");
        if (!eq || sp < eq) {
                /* a statement: VERB ARGS */
                char *args = *sp ? sp + 1 : sp;
                *sp = '\0';
                args = trim(args);
                if (strcmp(s, "include") == 0)
                        return parse_include(p, args, depth);
                if (strcmp(s, "fault") == 0 || strcmp(s, "hang") == 0 || strcmp(s, "latency") == 0)
                        return parse_rule(p, s, args);
                if (!eq)
                        return perr(p, "expected KEY = VALUE, [section], include, fault, hang or latency; got '%s'", s);
                *sp = ' ';
        }
        *eq = '\0';
        char *key = trim(s);
        char *v = trim(eq + 1);
        if (!*key)
                return perr(p, "missing key before '='");
        if (!p->in_gpu)
                return global_key(p, key, v);
        /* A plain key (keys[]; the others are parsed by dev_key) is looked up once for
         * all the section's GPUs. */
        int k = key_index(key);
        bool na = k >= 0 && is_na(v);
        for (unsigned int g = p->first; g <= p->last; g++) {
                struct fake_dev *d = &p->sc->devs[g][p->mig < 0 ? 0 : 1 + p->mig];
                if (na) {
                        unset_key(d, (enum fake_key)k);
                        continue;
                }
                /* the value is tokenised in place by some keys: give each GPU a copy */
                char copy[FAKE_LINE_MAX];
                size_t len = strnlen(v, sizeof(copy) - 1);
                memcpy(copy, v, len);
                copy[len] = '\0';
                if (!(k >= 0 ? parse_key_value(p, d, (enum fake_key)k, copy) : dev_key(p, d, key, copy)))
                        return false;
        }
        return true;
}

static bool parse_file(struct parse *p, const char *path, int depth)
{
        p->file = path;
        p->line = 0;
        FILE *f = fopen(path, "re");
        if (!f)
                return perr(p, "cannot open: %s", strerror(errno));
        char buf[FAKE_LINE_MAX];
        bool ok = true;
        while (ok && fgets(buf, sizeof(buf), f)) {
                p->line++;
                size_t n = strlen(buf);
                if (n == sizeof(buf) - 1 && buf[n - 1] != '\n' && !feof(f)) {
                        ok = perr(p, "line too long (at most %d characters)", FAKE_LINE_MAX - 2);
                        break;
                }
                ok = parse_line(p, buf, depth);
        }
        if (ok && ferror(f))
                ok = perr(p, "read error");
        fclose(f);
        return ok;
}

static void free_dev(struct fake_dev *d)
{
        for (int k = 0; k < K_COUNT; k++)
                free(d->s[k]);
        for (unsigned int i = 0; i < d->nprocs; i++)
                free(d->procs[i].name);
        free(d->procs);
        for (int l = 0; l < NVML_NVLINK_MAX_LINKS; l++)
                free(d->links[l].remote_bus_id);
}

struct fake_scenario *fake_scenario_free(struct fake_scenario *sc)
{
        if (!sc)
                return NULL;
        for (unsigned int g = 0; g < sc->n_touched; g++)
                for (unsigned int m = 0; m < 1 + FAKE_MAX_MIG; m++)
                        if (m == 0 || sc->mig_touched[g] & (1u << (m - 1)))
                                free_dev(&sc->devs[g][m]);
        free(sc->driver_version);
        free(sc->nvml_version);
        free(sc);
        return NULL;
}

struct fake_scenario *fake_scenario_load(const char *path, const char *overlay)
{
        struct fake_scenario *sc = calloc(1, sizeof(*sc));
        if (!sc) {
                fprintf(stderr, "fake-nvml: %s: out of memory\n", path);
                return NULL;
        }
        struct parse p = {.sc = sc, .file = path, .mig = -1};
        if (!parse_file(&p, path, 0))
                return fake_scenario_free(sc);
        if (overlay && *overlay && access(overlay, F_OK) == 0) {
                p.mig = -1;
                if (!parse_file(&p, overlay, 0))
                        return fake_scenario_free(sc);
        }
        p.file = path;
        unsigned int n = p.gpu_count_set ? p.gpu_count : p.max_defined;
        for (unsigned int g = 0; g < n; g++)
                if (!sc->devs[g][0].defined) {
                        perr(&p, "GPU %u is not defined (GPUs are numbered 0..%u without gaps)", g, n - 1);
                        return fake_scenario_free(sc);
                }
        for (unsigned int g = n; g < sc->n_touched; g++)
                for (unsigned int m = 0; m < 1 + FAKE_MAX_MIG; m++)
                        if (m == 0 || sc->mig_touched[g] & (1u << (m - 1)))
                                sc->devs[g][m].defined = false;
        sc->ngpus = n;
        return sc;
}
