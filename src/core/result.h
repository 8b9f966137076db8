/* Check results and the report that owns them.
 *
 * A check appends one result per subject it judges (the host, or one GPU). Each result
 * carries a status, a one-line summary, observed and expected values, a remedy and
 * evidence (key/value pairs naming where a fact came from). Skip and error always say why
 * in the summary. All strings are copied; the report owns everything. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum status {
        STATUS_PASS,
        STATUS_WARN,
        STATUS_FAIL,
        STATUS_SKIP,
        STATUS_ERROR,
        _STATUS_COUNT,
};

enum level {
        LEVEL_QUICK,
        LEVEL_STANDARD,
        LEVEL_FULL,
        _LEVEL_COUNT,
        _LEVEL_INVALID = -1,
};

const char *status_name(enum status s);
/* The one ordering of statuses every verdict in gpuvet folds with: error > fail > warn >
 * pass > skip (a skipped part does not spoil a passing whole; only skips make a skip). */
enum status status_worse(enum status a, enum status b);
const char *level_name(enum level l);
enum level level_from_name(const char *name);

struct evidence {
        char *key;
        char *value;
};

struct check_info;

struct result {
        const struct check_info *check;
        char *subject; /* "host" or a PCI address */
        enum status status;
        char *summary;
        char *observed;
        char *expected;
        char *remedy;
        /* An error's cause when other results may share it ("nvmlDeviceGetPowerUsage did
         * not return within 2000 ms"): the text report tells one cause once, naming the
         * checks and subjects it stopped. Not in the JSON report, whose results stand
         * alone. NULL: none. */
        char *cause;
        /* A stable code for the finding, for automation: the Xid ("xid.79"), an error
         * code a vendor tool gave, or NULL for the check's own id (docs/report-schema.md,
         * "code"). */
        char *code;
        struct evidence *evidence;
        size_t n_evidence;
};

struct report {
        struct result *results;
        size_t n_results, cap_results;
        unsigned counts[_STATUS_COUNT];
        bool out_of_memory;
};

void report_init(struct report *rep);
void report_done(struct report *rep);

/* Start a result for check on subject; the check then fills it with the setters below.
 * On allocation failure a static sink is returned and the report is marked out of memory,
 * so checks never need to test the return value. */
struct result *result_new(struct report *rep, const struct check_info *check, const char *subject);

void result_status(struct result *r, enum status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void result_observed(struct result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void result_expected(struct result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void result_remedy(struct result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void result_cause(struct result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void result_code(struct result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void result_evidence(struct result *r, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Recount statuses after checks ran (results may be amended in place). */
void report_tally(struct report *rep);

/* The node's verdict: the worst status of the report (status_worse), told as pass, warn or
 * fail: an error is a fail (the node could not be cleared), and a report of skips alone
 * passes (nothing that ran found a fault). */
enum status report_verdict(const struct report *rep);
