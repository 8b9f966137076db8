#include "report/envelope.h"

#include "version.h"

json_t *envelope_new(const char *schema, const char *command) {
        return json_pack("{s:s, s:{s:s, s:s}, s:s}", "schema", schema, "tool", "name", "gpuvet", "version", GPUVET_VERSION,
                         "command", command);
}

json_t *envelope_summary(const unsigned counts[_STATUS_COUNT], enum status verdict, double duration_ms) {
        json_t *summary = json_object();
        for (int s = 0; s < _STATUS_COUNT; s++)
                json_object_set_new(summary, status_name((enum status)s), json_integer(counts[s]));
        json_object_set_new(summary, "verdict", json_string(status_name(verdict)));
        json_object_set_new(summary, "duration_ms", json_real(duration_ms));
        return summary;
}
