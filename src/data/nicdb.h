/* gpuvet's table of RDMA NIC models (data/nics.json, compiled in; DIR/nics.json overrides it
 * when --data-dir has one): the name and the fastest port of each, by PCI id. The network
 * checks judge a port's rate against it. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct nic_model {
        const char *name;
        uint16_t vendor;
        uint16_t *device_ids;
        size_t n_device_ids;
        double max_port_gbps;
};

struct nicdb {
        struct nic_model *models;
        size_t n;
        uint16_t *ids; /* every model's device_ids, one allocation */
        void *json;    /* keeps the strings alive */
};

/* Load DIR/nics.json when dir has one, else the compiled-in table. -EINVAL with a message
 * naming the file and the problem in err for a malformed one. */
int nicdb_load(const char *dir, struct nicdb *ret, char *err, size_t errsize);
/* The same from len bytes at buf; messages name source. */
int nicdb_load_buffer(const char *buf, size_t len, const char *source, struct nicdb *ret, char *err,
                      size_t errsize);
void nicdb_done(struct nicdb *db);

/* NULL for a device the table does not know. */
const struct nic_model *nicdb_find(const struct nicdb *db, uint32_t vendor, uint32_t device);
