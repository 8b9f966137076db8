#include "data/nicdb.h"
#include "data/embedded.h"
#include "data/json_doc.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NICS_SCHEMA "gpuvet.nics/1"

/* "15b3": four hex digits, as pci.ids writes them. */
static int parse_hexid(json_t *v, uint16_t *ret) {
        const char *s = json_is_string(v) ? json_string_value(v) : NULL;
        if (!s || strlen(s) != 4 || strspn(s, "0123456789abcdef") != 4)
                return -EINVAL;
        *ret = (uint16_t)strtoul(s, NULL, 16);
        return 0;
}

static int parse_model(json_t *e, size_t i, struct nicdb *db, uint16_t *ids, char *why, size_t whysize) {
        json_t *name = json_object_get(e, "name"), *devices = json_object_get(e, "device_ids"),
               *rate = json_object_get(e, "max_port_gbps");
        struct nic_model *m = &db->models[db->n];
        if (!json_is_string(name) || parse_hexid(json_object_get(e, "vendor"), &m->vendor) < 0) {
                snprintf(why, whysize, "NIC %zu needs a string \"name\" and a \"vendor\" of four hex digits", i);
                return -EINVAL;
        }
        m->name = json_string_value(name);
        if (!json_is_number(rate) || !(json_number_value(rate) > 0) || json_number_value(rate) > 10000) {
                snprintf(why, whysize, "NIC %.64s: \"max_port_gbps\" must be a number above 0 and at most 10000",
                         m->name);
                return -EINVAL;
        }
        m->max_port_gbps = json_number_value(rate);
        if (!json_is_array(devices) || json_array_size(devices) == 0) {
                snprintf(why, whysize, "NIC %.64s: \"device_ids\" must be a non-empty list", m->name);
                return -EINVAL;
        }
        m->device_ids = ids;
        size_t k;
        json_t *d;
        json_array_foreach(devices, k, d) {
                uint16_t id;
                if (parse_hexid(d, &id) < 0) {
                        snprintf(why, whysize, "NIC %.64s: device id %zu must be four lowercase hex digits", m->name,
                                 k);
                        return -EINVAL;
                }
                const struct nic_model *other = nicdb_find(db, m->vendor, id);
                for (size_t j = 0; j < m->n_device_ids && !other; j++)
                        if (m->device_ids[j] == id)
                                other = m;
                if (other) {
                        snprintf(why, whysize, "device %04x:%04x is listed for both %.64s and %.64s", m->vendor, id,
                                 other->name, m->name);
                        return -EINVAL;
                }
                m->device_ids[m->n_device_ids++] = id;
        }
        db->n++;
        return 0;
}

static int parse(json_t *root, void *table, char *why, size_t whysize) {
        struct nicdb *db = table;
        json_t *schema = json_object_get(root, "schema"), *list = json_object_get(root, "nics");
        if (!json_is_string(schema) || strcmp(json_string_value(schema), NICS_SCHEMA) != 0) {
                snprintf(why, whysize, "\"schema\" must be \"%s\"", NICS_SCHEMA);
                return -EINVAL;
        }
        if (!json_is_array(list)) {
                snprintf(why, whysize, "\"nics\" must be a list");
                return -EINVAL;
        }
        size_t total_ids = 0, i;
        json_t *e;
        json_array_foreach(list, i, e) {
                json_t *devices = json_object_get(e, "device_ids");
                total_ids += json_is_array(devices) ? json_array_size(devices) : 0;
        }
        db->models = calloc(json_array_size(list) + 1, sizeof(*db->models));
        db->ids = calloc(total_ids + 1, sizeof(*db->ids));
        if (!db->models || !db->ids)
                return -ENOMEM;
        uint16_t *next = db->ids;
        json_array_foreach(list, i, e) {
                if (!json_is_object(e)) {
                        snprintf(why, whysize, "NIC %zu must be an object", i);
                        return -EINVAL;
                }
                int r = parse_model(e, i, db, next, why, whysize);
                if (r < 0)
                        return r;
                next += db->models[db->n - 1].n_device_ids;
        }
        return 0;
}

static void done(void *table) {
        nicdb_done(table);
}

int nicdb_load(const char *dir, struct nicdb *ret, char *err, size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        char source[512];
        json_t *root = json_doc_open(dir, "nics.json", (const char *)embedded_nics_json, embedded_nics_json_len, source,
                                     sizeof(source), err, errsize);
        return json_doc_take(root, source, &ret->json, ret, parse, done, err, errsize);
}

int nicdb_load_buffer(const char *buf, size_t len, const char *source, struct nicdb *ret, char *err, size_t errsize) {
        memset(ret, 0, sizeof(*ret));
        return json_doc_take(json_doc_parse(buf, len, source, err, errsize), source, &ret->json, ret, parse, done, err,
                             errsize);
}

void nicdb_done(struct nicdb *db) {
        free(db->models);
        free(db->ids);
        json_decref(db->json);
        memset(db, 0, sizeof(*db));
}

const struct nic_model *nicdb_find(const struct nicdb *db, uint32_t vendor, uint32_t device) {
        if (!db)
                return NULL;
        for (size_t i = 0; i < db->n; i++)
                if (db->models[i].vendor == vendor)
                        for (size_t k = 0; k < db->models[i].n_device_ids; k++)
                                if (db->models[i].device_ids[k] == device)
                                        return &db->models[i];
        return NULL;
}
