/* JSON strings from machine text. jansson refuses invalid UTF-8 (json_string returns
 * NULL), and a sysfs or DMI string can hold any bytes: a garbled vendor string must not
 * make a field vanish from the report. */
#pragma once

#include <jansson.h>

/* A JSON string of s, with each byte that is not valid UTF-8 replaced by U+FFFD;
 * JSON null when s is NULL or empty. */
json_t *json_text(const char *s);
/* json_text, but an empty s stays the empty string: for a field whose "" means
 * something other than "unknown" (detect's empty answers). */
json_t *json_text_keep_empty(const char *s);
