#include "core/json_real.h"

#include <math.h>

json_t *json_real_or_null(double v) {
        json_t *j = isfinite(v) ? json_real(v) : NULL;
        return j ? j : json_null();
}
