/* gpuvet's table of NVIDIA Xid codes: meaning, severity and the recommended action
 * (data/xid.json, compiled in; DIR/xid.json overrides it when --data-dir has one).
 * Schema gpuvet.xid/2 gives each code the catalog's resolution bucket, whose severity and
 * action apply unless the code names its own; gpuvet.xid/1 files (severity and action on
 * every code) still load. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum xid_severity {
        XID_IGNORE,      /* NVIDIA's catalog says to ignore it: reported, not judged */
        XID_APPLICATION, /* caused by the program that ran */
        XID_WARNING,     /* recoverable fault of the GPU */
        XID_CRITICAL,    /* faulty GPU, or one that needs a reset or reboot */
        _XID_SEVERITY_COUNT,
};

struct xid_info {
        int code;
        const char *name;
        enum xid_severity severity;
        const char *action;
        const char *mnemonic;   /* "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"; NULL when not given */
        const char *resolution; /* the catalog's immediate action, "RESET_GPU"; NULL when not given */
};

/* A driver recovery action (Xid 154's "to 0x2 (Node Reboot Required)", NVML's
 * nvmlDeviceGpuRecoveryAction_t). */
struct xid_recovery_action {
        unsigned value;
        const char *name;
        enum xid_severity severity;
        const char *action;
};

/* A resolution bucket ("RESET_GPU") and gpuvet's severity and remedy for it. */
struct xid_resolution {
        const char *name;
        enum xid_severity severity;
        const char *action;
};

/* A row of the catalog's "XID 144-150 Decode" sheet: the action for an NVLink5 Xid by the
 * unit its line names and the error status (second register). */
#define XID_NVLINK5_UNITS_MAX 4
struct xid_nvlink5_rule {
        int xid;
        const char *units[XID_NVLINK5_UNITS_MAX]; /* the V1 and V2 (R575) names */
        size_t n_units;
        bool has_status;
        uint32_t error_status;
        int link_down_reason;            /* IntrInfo bits 25:20; -1: any */
        const char *resolution;
        const char *resolution_if_fatal; /* a promotable error the line calls Fatal; NULL: none */
        const char *severity;            /* the catalog's words: "Non-fatal", "Link Fatal" */
};

struct xiddb {
        struct xid_info *xids;
        size_t n;
        struct xid_recovery_action *recovery;
        size_t n_recovery;
        struct xid_resolution *resolutions;
        size_t n_resolutions;
        struct xid_nvlink5_rule *nvlink5;
        size_t n_nvlink5;
        void *json; /* keeps the strings alive */
};

/* Load DIR/xid.json when dir has one, else the compiled-in table. -EINVAL with a message
 * naming the file and the problem in err for a malformed one. */
int xiddb_load(const char *dir, struct xiddb *ret, char *err, size_t errsize);
/* The same from len bytes at buf; messages name source. */
int xiddb_load_buffer(const char *buf, size_t len, const char *source, struct xiddb *ret, char *err,
                      size_t errsize);
void xiddb_done(struct xiddb *x);

/* NULL for a code the table does not know. */
const struct xid_info *xiddb_find(const struct xiddb *x, int code);
const char *xid_severity_name(enum xid_severity s);
/* NULL for a value the table does not know. */
const struct xid_recovery_action *xiddb_find_recovery(const struct xiddb *x, unsigned value);
/* NULL for a bucket the table does not name. */
const struct xid_resolution *xiddb_find_resolution(const struct xiddb *x, const char *name);
/* The decode row for an NVLink5 Xid line (unit, IntrInfo, error status); NULL when none. */
const struct xid_nvlink5_rule *xiddb_decode_nvlink5(const struct xiddb *x, int xid, const char *unit,
                                                    uint32_t intr_info, uint32_t error_status);
