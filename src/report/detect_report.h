/* The answer of `gpuvet detect`: GPU model -> architecture -> driver branch and CUDA to
 * install, and which CUDA toolkits, PyTorch wheels and NGC releases run on the installed
 * driver.
 *
 * The answer is built once as a JSON document (schema gpuvet.detect/1, docs/detect.md);
 * the text output is rendered from that same document, so both always agree. */
#pragma once

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

struct compat;
struct facts;
struct gpudb;

/* `--for-driver`: judge for a driver that is not (yet) installed. */
struct detect_for_driver {
        const char *requested; /* as the user wrote it: "580", "R580", "580.95.05" */
        const char *version;   /* the version judged: a branch means its reference driver */
};

/* Resolve --for-driver: a dotted version is taken as is, a branch number (optionally with
 * "R") becomes the branch's reference driver in compat.json. -EINVAL for a malformed value,
 * -ENOENT for a branch compat.json does not list; err says which. */
int detect_resolve_driver(const struct compat *c, const char *requested, struct detect_for_driver *out, char *err,
                          size_t errlen);

/* Build the gpuvet.detect/1 document from gathered facts (pure: no I/O). root is echoed
 * into the document. planned (may be NULL) replaces the installed driver in every judgement.
 * Returns NULL when out of memory. */
json_t *detect_report(const struct facts *f, const struct compat *c, const char *root,
                      const struct detect_for_driver *planned);

/* Render the document as readable text: the driver, then one short table per GPU model. */
void detect_write_text(FILE *out, const json_t *doc);

/* `detect --list-gpus`: the GPU table as a gpuvet.gpus/1 document (architectures, then
 * models with their figures and PCI ids; unknown figures null), and as text. */
json_t *detect_gpu_table(const struct gpudb *db);
void detect_write_gpu_table(FILE *out, const json_t *doc);
