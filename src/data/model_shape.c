#include "data/model_shape.h"

#include <string.h>

static const char *const mlp_names[_EST_MLP_COUNT] = {"gated", "plain"};

const char *est_mlp_name(enum est_mlp m) { return (int)m >= 0 && m < _EST_MLP_COUNT ? mlp_names[m] : "?"; }

enum est_mlp est_mlp_from_name(const char *s) {
        for (int i = 0; s && i < _EST_MLP_COUNT; i++)
                if (strcmp(s, mlp_names[i]) == 0)
                        return (enum est_mlp)i;
        return _EST_MLP_INVALID;
}
