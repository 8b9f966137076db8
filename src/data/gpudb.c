#include "data/gpudb.h"
#include "core/array.h"
#include "data/embedded.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GPUS_SCHEMA "gpuvet.gpus/1"

static const char *opt_str(json_t *obj, const char *key) {
        json_t *v = json_object_get(obj, key);
        return json_is_string(v) ? json_string_value(v) : NULL;
}

static double opt_num(json_t *obj, const char *key) {
        json_t *v = json_object_get(obj, key);
        return json_is_number(v) ? json_number_value(v) : 0.0;
}

/* A whole number in 0..max, or absent (0). Anything else is refused: converting a
 * negative or huge double to unsigned is undefined behaviour. */
static int opt_uint(json_t *obj, const char *key, unsigned max, unsigned *ret) {
        double v = opt_num(obj, key);
        if (!(v >= 0 && v <= max) || v != (double)(unsigned)v)
                return -EINVAL;
        *ret = (unsigned)v;
        return 0;
}

static int parse_cc(const char *s, int *major, int *minor) {
        char tail;
        return s && sscanf(s, "%d.%d%c", major, minor, &tail) == 2 ? 0 : -EINVAL;
}

/* A list of names from a table of (name, bit) into a mask; -EINVAL on an unknown name or
 * a value that is not a list of strings. */
struct name_bit {
        const char *name;
        unsigned bit;
};

static int names_to_bits(json_t *list, const struct name_bit *table, size_t n, unsigned *ret) {
        if (!json_is_array(list) || json_array_size(list) == 0)
                return -EINVAL;
        unsigned bits = 0;
        size_t i;
        json_t *v;
        json_array_foreach(list, i, v) {
                size_t k = 0;
                while (k < n && !(json_is_string(v) && strcmp(json_string_value(v), table[k].name) == 0))
                        k++;
                if (k == n)
                        return -EINVAL;
                bits |= table[k].bit;
        }
        *ret = bits;
        return 0;
}

static const struct name_bit module_names[] = {
        {"open", GPU_MODULES_OPEN},
        {"proprietary", GPU_MODULES_PROPRIETARY},
};

static const struct name_bit fabric_names[] = {
        {"fabricmanager", GPU_FABRIC_FABRICMANAGER},
        {"nvlsm", GPU_FABRIC_NVLSM},
        {"imex", GPU_FABRIC_IMEX},
};

/* kind and name ("architecture", "hopper"; "GPU", "H100 80GB HBM3") name the entry in why. */
static int load_kernel_modules(json_t *obj, const char *kind, const char *name, unsigned *ret, char *why,
                               size_t whysize) {
        json_t *v = json_object_get(obj, "kernel_modules");
        if (v && names_to_bits(v, module_names, ARRAY_COUNT(module_names), ret) < 0) {
                snprintf(why, whysize, "%s %s: \"kernel_modules\" must list \"open\" and/or \"proprietary\"", kind,
                         name);
                return -EINVAL;
        }
        return 0;
}

static int load_fabric(json_t *a, struct gpu_arch *out) {
        json_t *fab = json_object_get(a, "fabric_services");
        if (!fab)
                return 0;
        if (!json_is_object(fab) || json_object_size(fab) > ARRAY_COUNT(out->fabric))
                return -EINVAL;
        const char *form;
        json_t *v;
        json_object_foreach(fab, form, v) {
                unsigned services;
                if (names_to_bits(v, fabric_names, ARRAY_COUNT(fabric_names), &services) < 0)
                        return -EINVAL;
                out->fabric[out->n_fabric].form = form;
                out->fabric[out->n_fabric++].services = services;
        }
        return 0;
}

static int load_arch(json_t *a, struct gpu_arch *out, char *why, size_t whysize) {
        out->id = opt_str(a, "id");
        out->name = opt_str(a, "name");
        out->sm = opt_str(a, "sm");
        out->min_driver = opt_str(a, "min_driver");
        out->last_cuda_major = opt_str(a, "last_cuda_major");
        out->min_cuda = opt_str(a, "min_cuda");
        const char *last = opt_str(a, "last_branch");
        char tail;
        if (last && (sscanf(last, "R%u%c", &out->last_branch, &tail) != 1 || out->last_branch == 0)) {
                snprintf(why, whysize, "architecture %s: \"last_branch\" must look like \"R580\"", out->id ? out->id : "?");
                return -EINVAL;
        }
        if (!out->id || !out->name || !out->sm || !out->min_driver || !out->min_cuda) {
                snprintf(why, whysize, "architecture %s lacks id, name, sm, min_driver or min_cuda",
                         out->id ? out->id : "(no id)");
                return -EINVAL;
        }
        if (parse_cc(opt_str(a, "cc"), &out->cc_major, &out->cc_minor) < 0) {
                snprintf(why, whysize, "architecture %s: \"cc\" must look like \"9.0\"", out->id);
                return -EINVAL;
        }
        if (load_kernel_modules(a, "architecture", out->id, &out->kernel_modules, why, whysize) < 0)
                return -EINVAL;
        if (load_fabric(a, out) < 0) {
                snprintf(why, whysize, "architecture %s: \"fabric_services\" must map forms to lists of "
                                       "\"fabricmanager\", \"nvlsm\", \"imex\"",
                         out->id);
                return -EINVAL;
        }
        return 0;
}

/* The 4-digit hex ids of list (room checked by the caller) into out, counted in *n; -EINVAL
 * naming GPU gpu and the first bad one (what: "device id"). */
static int load_hex_ids(json_t *list, const char *gpu, const char *what, uint16_t *out, size_t *n, char *why,
                        size_t whysize) {
        size_t i;
        json_t *id;
        json_array_foreach(list, i, id) {
                unsigned v;
                char tail;
                if (!json_is_string(id) || sscanf(json_string_value(id), "%4x%c", &v, &tail) != 1) {
                        snprintf(why, whysize, "GPU %s: %s %zu is not a 4-digit hex string", gpu, what, i);
                        return -EINVAL;
                }
                out[(*n)++] = (uint16_t)v;
        }
        return 0;
}

static int load_model(const struct gpudb *db, json_t *m, struct gpu_model *out, char *why, size_t whysize) {
        out->name = opt_str(m, "name");
        out->arch = opt_str(m, "arch");
        out->form = opt_str(m, "form");
        if (!out->name || !out->arch || !out->form) {
                snprintf(why, whysize, "GPU %s lacks name, arch or form", out->name ? out->name : "(no name)");
                return -EINVAL;
        }
        if (!gpudb_arch(db, out->arch)) {
                snprintf(why, whysize, "GPU %s: unknown architecture \"%s\"", out->name, out->arch);
                return -EINVAL;
        }
        if (parse_cc(opt_str(m, "cc"), &out->cc_major, &out->cc_minor) < 0) {
                snprintf(why, whysize, "GPU %s: \"cc\" must look like \"9.0\"", out->name);
                return -EINVAL;
        }
        out->datacenter = json_is_true(json_object_get(m, "datacenter"));
        out->host_link = opt_str(m, "host_link");
        if (!out->host_link)
                out->host_link = strcmp(out->form, "superchip") == 0 ? "c2c" : "pcie";
        if (strcmp(out->host_link, "pcie") != 0 && strcmp(out->host_link, "c2c") != 0) {
                snprintf(why, whysize, "GPU %s: \"host_link\" must be \"pcie\" or \"c2c\"", out->name);
                return -EINVAL;
        }
        if (load_kernel_modules(m, "GPU", out->name, &out->kernel_modules, why, whysize) < 0)
                return -EINVAL;
        out->memory_type = opt_str(m, "memory_type");
        out->min_driver = opt_str(m, "min_driver");
        int ma, mi;
        if (out->min_driver && sscanf(out->min_driver, "%d.%d", &ma, &mi) < 1) {
                snprintf(why, whysize, "GPU %s: \"min_driver\" must be a dotted version", out->name);
                return -EINVAL;
        }
        out->nvlink_known = json_object_get(m, "nvlink_links") != NULL;
        out->nvlink_bridge = json_is_true(json_object_get(m, "nvlink_bridge"));
        out->memory_gb = opt_num(m, "memory_gb");
        out->mem_bw_gbps = opt_num(m, "mem_bw_gbps");
        if (opt_uint(m, "pcie_gen", 16, &out->pcie_gen) < 0 || opt_uint(m, "pcie_width", 32, &out->pcie_width) < 0 ||
            opt_uint(m, "nvlink_links", 64, &out->nvlink_links) < 0 ||
            opt_uint(m, "max_power_w", 100000, &out->max_power_w) < 0) {
                snprintf(why, whysize, "GPU %s: pcie_gen, pcie_width, nvlink_links and max_power_w must be whole numbers in range",
                         out->name);
                return -EINVAL;
        }
        out->nvlink_gbps_per_dir = opt_num(m, "nvlink_gbps_per_dir");
        json_t *t = json_object_get(m, "tflops");
        out->tflops = (struct gpu_tflops){
                .fp64 = opt_num(t, "fp64"), .fp64_tc = opt_num(t, "fp64_tc"), .fp32 = opt_num(t, "fp32"),
                .tf32 = opt_num(t, "tf32"), .fp16 = opt_num(t, "fp16"), .bf16 = opt_num(t, "bf16"),
                .fp8 = opt_num(t, "fp8"), .int8 = opt_num(t, "int8"), .fp4 = opt_num(t, "fp4"),
        };
        json_t *ids = json_object_get(m, "device_ids");
        if (!json_is_array(ids) || json_array_size(ids) == 0 ||
            json_array_size(ids) > ARRAY_COUNT(out->device_ids)) {
                snprintf(why, whysize, "GPU %s: \"device_ids\" must be a list of 1 to 12 hex ids", out->name);
                return -EINVAL;
        }
        if (load_hex_ids(ids, out->name, "device id", out->device_ids, &out->n_device_ids, why, whysize) < 0)
                return -EINVAL;
        json_t *subs = json_object_get(m, "subsystem_ids");
        if (subs && (!json_is_array(subs) ||
                     json_array_size(subs) > ARRAY_COUNT(out->subsystem_ids))) {
                snprintf(why, whysize, "GPU %s: \"subsystem_ids\" must be a list of at most 8 hex ids", out->name);
                return -EINVAL;
        }
        return load_hex_ids(subs, out->name, "subsystem id", out->subsystem_ids, &out->n_subsystem_ids, why, whysize);
}

static int load_from(json_t *root, struct gpudb *db, char *why, size_t whysize) {
        const char *schema = opt_str(root, "schema");
        if (!schema || strcmp(schema, GPUS_SCHEMA) != 0) {
                snprintf(why, whysize, "\"schema\" must be \"%s\"", GPUS_SCHEMA);
                return -EINVAL;
        }
        json_t *archs = json_object_get(root, "architectures"), *models = json_object_get(root, "gpus");
        if (!json_is_array(archs) || !json_is_array(models)) {
                snprintf(why, whysize, "\"architectures\" and \"gpus\" must be lists");
                return -EINVAL;
        }
        db->archs = calloc(json_array_size(archs) + 1, sizeof(*db->archs));
        db->models = calloc(json_array_size(models) + 1, sizeof(*db->models));
        if (!db->archs || !db->models)
                return -ENOMEM;
        size_t i;
        json_t *v;
        json_array_foreach(archs, i, v) {
                int r = load_arch(v, &db->archs[db->n_archs], why, whysize);
                if (r < 0)
                        return r;
                db->n_archs++;
        }
        json_array_foreach(models, i, v) {
                int r = load_model(db, v, &db->models[db->n_models], why, whysize);
                if (r < 0)
                        return r;
                db->n_models++;
        }
        return 0;
}

/* Takes the parsed document (NULL on a parse error described by jerr) and builds the db. */
static int load_document(json_t *root, const json_error_t *jerr, const char *source, struct gpudb **ret,
                         char *err, size_t errsize) {
        if (!root) {
                snprintf(err, errsize, "%s: line %d: %s", source, jerr->line, jerr->text);
                return -EINVAL;
        }
        struct gpudb *db = calloc(1, sizeof(*db));
        if (!db) {
                json_decref(root);
                return -ENOMEM;
        }
        snprintf(db->source, sizeof(db->source), "%s", source);
        db->json = root;
        pthread_mutex_init(&db->lazy_lock, NULL);
        char why[256] = "";
        int r = load_from(root, db, why, sizeof(why));
        if (r < 0) {
                snprintf(err, errsize, "%s: %s", db->source, r == -ENOMEM ? "out of memory" : why);
                gpudb_free(db);
                return r;
        }
        *ret = db;
        return 0;
}

int gpudb_load_buffer(const char *buf, size_t len, const char *source, struct gpudb **ret, char *err,
                      size_t errsize) {
        json_error_t jerr;
        json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
        return load_document(root, &jerr, source, ret, err, errsize);
}

/* gpus.json's companions, xid.json and nics.json: each read with it from a --data-dir that
 * holds it, so that a bad file stops the command at once; else its compiled-in copy is
 * parsed on first use (gpudb.h says why). */
enum companion { COMPANION_XIDS, COMPANION_NICS, COMPANION_COUNT };

static const char *const companion_file[COMPANION_COUNT] = {[COMPANION_XIDS] = "xid.json",
                                                             [COMPANION_NICS] = "nics.json"};

static bool *companion_loaded(struct gpudb *db, enum companion which) {
        return which == COMPANION_XIDS ? &db->xids_loaded : &db->nics_loaded;
}

/* From dir, or the compiled-in copy when dir is NULL; a table that fails is left empty. */
static int load_companion(struct gpudb *db, enum companion which, const char *dir, char *err, size_t errsize) {
        int r;
        if (which == COMPANION_XIDS) {
                if ((r = xiddb_load(dir, &db->xids, err, errsize)) < 0)
                        memset(&db->xids, 0, sizeof(db->xids));
        } else {
                if ((r = nicdb_load(dir, &db->nics, err, errsize)) < 0)
                        memset(&db->nics, 0, sizeof(db->nics));
        }
        return r;
}

int gpudb_load(const char *dir, struct gpudb **ret, char *err, size_t errsize) {
        int r;
        if (!dir) {
                r = gpudb_load_buffer(embedded_gpus_json, embedded_gpus_json_len, "built-in gpus.json", ret, err,
                                      errsize);
        } else {
                char source[512];
                snprintf(source, sizeof(source), "%s/gpus.json", dir);
                json_error_t jerr;
                json_t *root = json_load_file(source, JSON_REJECT_DUPLICATES, &jerr);
                r = load_document(root, &jerr, source, ret, err, errsize);
        }
        if (r < 0)
                return r;
        for (int which = 0; dir && which < COMPANION_COUNT; which++) {
                char file[512];
                snprintf(file, sizeof(file), "%s/%s", dir, companion_file[which]);
                if (access(file, F_OK) != 0)
                        continue;
                r = load_companion(*ret, (enum companion)which, dir, err, errsize);
                if (r < 0) {
                        *ret = gpudb_free(*ret);
                        return r;
                }
                *companion_loaded(*ret, (enum companion)which) = true;
        }
        /* Else the compiled-in tables, parsed by gpudb_xids and gpudb_nics when a check needs them. */
        return 0;
}

/* db with its companion loaded: the compiled-in copy parsed on first use. A cache filled
 * behind a lock; the db itself was allocated non-const. */
static struct gpudb *with_companion(const struct gpudb *db, enum companion which) {
        struct gpudb *filled = (struct gpudb *)db;
        pthread_mutex_lock(&filled->lazy_lock);
        bool *loaded = companion_loaded(filled, which);
        if (!*loaded) {
                char err[256];
                (void)load_companion(filled, which, NULL, err, sizeof(err)); /* a bad one stays empty */
                *loaded = true;
        }
        pthread_mutex_unlock(&filled->lazy_lock);
        return filled;
}

const struct xiddb *gpudb_xids(const struct gpudb *db) {
        return db ? &with_companion(db, COMPANION_XIDS)->xids : NULL;
}

const struct nicdb *gpudb_nics(const struct gpudb *db) {
        return db ? &with_companion(db, COMPANION_NICS)->nics : NULL;
}

struct gpudb *gpudb_free(struct gpudb *db) {
        if (!db)
                return NULL;
        free(db->models);
        free(db->archs);
        json_decref(db->json);
        if (db->xids_loaded)
                xiddb_done(&db->xids);
        if (db->nics_loaded)
                nicdb_done(&db->nics);
        pthread_mutex_destroy(&db->lazy_lock);
        free(db);
        return NULL;
}

const struct gpu_model *gpudb_find(const struct gpudb *db, uint32_t vendor, uint32_t device) {
        if (!db || vendor != 0x10de)
                return NULL;
        for (size_t i = 0; i < db->n_models; i++)
                for (size_t k = 0; k < db->models[i].n_device_ids; k++)
                        if (db->models[i].device_ids[k] == device)
                                return &db->models[i];
        return NULL;
}

const struct gpu_model *gpudb_find_subsystem(const struct gpudb *db, uint32_t vendor, uint32_t device,
                                             uint32_t subsys_device) {
        if (!db || vendor != 0x10de)
                return NULL;
        const struct gpu_model *first = NULL, *unrestricted = NULL;
        for (size_t i = 0; i < db->n_models; i++) {
                const struct gpu_model *m = &db->models[i];
                bool has_id = false;
                for (size_t k = 0; k < m->n_device_ids && !has_id; k++)
                        has_id = m->device_ids[k] == device;
                if (!has_id)
                        continue;
                for (size_t k = 0; k < m->n_subsystem_ids; k++)
                        if (m->subsystem_ids[k] == subsys_device)
                                return m;
                if (!first)
                        first = m;
                if (!unrestricted && m->n_subsystem_ids == 0)
                        unrestricted = m;
        }
        return unrestricted ? unrestricted : first;
}

const char *gpudb_min_driver(const struct gpudb *db, const struct gpu_model *m) {
        if (!m)
                return NULL;
        if (m->min_driver)
                return m->min_driver;
        const struct gpu_arch *a = gpudb_arch(db, m->arch);
        return a ? a->min_driver : NULL;
}

const struct gpu_arch *gpudb_arch(const struct gpudb *db, const char *id) {
        for (size_t i = 0; db && id && i < db->n_archs; i++)
                if (strcmp(db->archs[i].id, id) == 0)
                        return &db->archs[i];
        return NULL;
}

unsigned gpudb_kernel_modules(const struct gpudb *db, const struct gpu_model *m) {
        if (!m)
                return 0;
        if (m->kernel_modules)
                return m->kernel_modules;
        const struct gpu_arch *a = gpudb_arch(db, m->arch);
        return a ? a->kernel_modules : 0;
}

unsigned gpudb_fabric_services(const struct gpudb *db, const struct gpu_model *m) {
        const struct gpu_arch *a = m ? gpudb_arch(db, m->arch) : NULL;
        for (size_t i = 0; a && i < a->n_fabric; i++)
                if (strcmp(a->fabric[i].form, m->form) == 0)
                        return a->fabric[i].services;
        return 0;
}
