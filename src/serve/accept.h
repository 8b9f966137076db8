/* Which exposition format a scrape gets, from its Accept header (docs/serve.md, "Formats").
 *
 * Prometheus asks for OpenMetrics first ("application/openmetrics-text;version=1.0.0,...,
 * text/plain;version=0.0.4;q=0.5,*" "/" "*;q=0.1"); curl and older scrapers send nothing or
 * text/plain. The header is untrusted input: any length, any bytes. */
#pragma once

#include <stddef.h>

enum expo_format {
        EXPO_TEXT,        /* Prometheus text format 0.0.4 */
        EXPO_OPENMETRICS, /* OpenMetrics 1.0.0 */
        EXPO_FORMAT_COUNT
};

/* The format for this Accept header (NULL or empty: text). OpenMetrics when
 * application/openmetrics-text is listed with a q above 0 and at least the q of
 * text/plain (or of a wildcard when text/plain is not listed); text otherwise. */
enum expo_format accept_format(const char *header, size_t len);

/* The Content-Type of a body in format f. */
const char *expo_content_type(enum expo_format f);
