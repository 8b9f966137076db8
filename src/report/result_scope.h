/* What a check result concerns, for automation (docs/report-schema.md, "scope"): the node,
 * one GPU by its PCI address, index and UUID, a NIC or one of its ports, a link between
 * two devices, another PCI device, or a named group (the HCAs of one model). Derived from
 * the result's subject and the node's facts, so every check gets it the same way. */
#pragma once

#include "sys/facts.h"

/* A new jansson object (returned as void * so that callers need not include jansson). */
void *result_scope_json(const struct facts *f, const char *subject);
