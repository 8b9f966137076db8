/* Data files compiled into the binary (see tools/embed.py and data/). */
#pragma once
#include <stddef.h>

extern const char embedded_gpus_json[];
extern const size_t embedded_gpus_json_len;
extern const char embedded_compat_json[];
extern const size_t embedded_compat_json_len;
extern const char embedded_xid_json[];
extern const size_t embedded_xid_json_len;
extern const char embedded_tune_profiles_json[];
extern const size_t embedded_tune_profiles_json_len;
extern const char embedded_nics_json[];
extern const size_t embedded_nics_json_len;
extern const char embedded_models_json[];
extern const size_t embedded_models_json_len;
extern const char embedded_ngc_json[];
extern const size_t embedded_ngc_json_len;
extern const char embedded_fleet_rules_json[];
extern const size_t embedded_fleet_rules_json_len;
