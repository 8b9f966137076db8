/* gpuvet detect: GPU model -> architecture -> driver branch and CUDA to install, and which
 * CUDA toolkits, PyTorch wheels and NGC releases run on the installed driver.
 *
 * The answer is built once as a JSON document (schema gpuvet.detect/1, docs/detect.md);
 * the text output is rendered from that same document, so both always agree. */
#pragma once

#include <jansson.h>
#include <stdio.h>

struct compat;
struct facts;
struct gpudb;

/* Build the gpuvet.detect/1 document from gathered facts (pure: no I/O). root is echoed
 * into the document. Returns NULL when out of memory. */
json_t *detect_report(const struct facts *f, const struct compat *c, const char *root);

/* Render the document as readable text: the driver, then one short table per GPU model. */
void detect_write_text(FILE *out, const json_t *doc);

/* `detect --list-gpus`: the GPU table as a gpuvet.gpus/1 document (architectures, then
 * models with their figures and PCI ids; unknown figures null), and as text. */
json_t *detect_gpu_table(const struct gpudb *db);
void detect_write_gpu_table(FILE *out, const json_t *doc);
