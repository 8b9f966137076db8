/* The JSON `dcgmi diag -r LEVEL -j` prints, read into flat results.
 *
 * Every shape DCGM has printed (key names from DCGM's nvvs/include/NvvsJsonStrings.h and
 * dcgmi/Diag.cpp):
 *  - up to 3.3.9 the top key is "DCGM GPU Diagnostic", from 4.0 "DCGM Diagnostic";
 *  - test_categories[] -> tests[] -> {name, results[]}, and from 4.0 a test_summary with
 *    messages tied to no entity;
 *  - a result names its GPU as "gpu_ids" (a string, up to 3.2, that lists every GPU
 *    the result speaks for: "0,1,2,3" on the Deployment tests of a 4-GPU run; a number
 *    in 3.1's Custom tests), "gpu_id" (3.3) or "entity_group" + "entity_id" (4.x), or
 *    nothing (the Deployment tests of some 3.x runs); a result listing several GPUs is
 *    read as one result per GPU, so each GPU's verdict has it;
 *  - 3.1 prints null between the tests of a category;
 *  - text may come before the document (a warning dcgmi or the library prints first, a
 *    wrapper's banner) or after it: DCGM's own readers (testing/python3/DcgmiDiag.py's
 *    trimJsonText, nvvs's JsonResult tests) read from the first '{' to the last '}';
 *  - "warnings" is a string (up to 3.2) or a list of {warning, error_id, error_category,
 *    error_severity} ("warnings" as the message key in one 3.3 case); "info" a string
 *    or a list;
 *  - statuses in JSON are "Pass", "Skip" and "Fail" (a warning prints as Fail);
 *  - a run that could not start is {"<top key>": {"runtime_error": ..., "version": ...}}. */
#pragma once

#include <stddef.h>

enum dcgm_status { DCGM_PASS, DCGM_SKIP, DCGM_FAIL, DCGM_OTHER };

struct dcgm_result {
        char test[64];          /* "software", "Denylist", "diagnostic" */
        char category[32];      /* "Deployment", "Hardware", ...; "" when none */
        char entity[16];        /* "GPU", "CPU"; "" for a result tied to no entity */
        int entity_id;          /* -1 when none */
        enum dcgm_status status;
        char status_text[16];   /* as printed, for an unknown one */
        char message[512];      /* the warnings, joined with "; " */
        char error_ids[64];     /* "29, 45" */
        char info[256];         /* the first info line */
        int is_summary;         /* a 4.x test_summary, not a per-entity result */
};

struct dcgm_diag {
        char top_key[32];         /* "DCGM Diagnostic" or "DCGM GPU Diagnostic" */
        char version[32];         /* DCGM's, when printed */
        char driver_version[32];  /* "Driver Version Detected" */
        char runtime_error[512];  /* the run could not start: why */
        char preamble[256];       /* the first line of text before the document; "" if none */
        struct dcgm_result *results;
        size_t n;
};

/* Parse text (len bytes, not necessarily NUL-terminated), which may carry other text
 * before and after the document. Returns 0, -EINVAL with err saying what is wrong (no
 * JSON document in it, no known top key, a wrong type), or -ENOMEM. On
 * failure *out is empty. Free with dcgm_diag_done. */
int dcgm_diag_parse(const char *text, size_t len, struct dcgm_diag *out, char *err, size_t errsize);
void dcgm_diag_done(struct dcgm_diag *d);

const char *dcgm_status_name(enum dcgm_status s);
