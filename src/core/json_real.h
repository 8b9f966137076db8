/* JSON numbers from measurements. JSON has no NaN or infinity, and jansson's json_real
 * refuses them (NULL): inside json_pack one makes the whole object NULL, and the report
 * loses a row or a key instead of saying the figure is missing. A zero time, a faulty
 * GPU's result or an empty series makes one easily. */
#pragma once

#include <jansson.h>

/* A JSON number of v, or JSON null when v is NaN or infinite. */
json_t *json_real_or_null(double v);
