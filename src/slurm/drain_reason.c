#include "slurm/drain_reason.h"

#include <stdio.h>
#include <string.h>

bool slurm_reason_is_ours(const char *reason) {
        return reason && strncmp(reason, SLURM_REASON_PREFIX, strlen(SLURM_REASON_PREFIX)) == 0;
}

static bool id_is_plain(const char *id) {
        if (!*id)
                return false;
        for (const char *p = id; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      *p == '.' || *p == '_' || *p == '-'))
                        return false;
        return true;
}

static bool seen_before(const char *const *ids, size_t i) {
        for (size_t j = 0; j < i; j++)
                if (strcmp(ids[j], ids[i]) == 0)
                        return true;
        return false;
}

/* Room for " +N more" with N up to n. */
static size_t more_room(size_t n) {
        char tmp[40];
        return (size_t)snprintf(tmp, sizeof(tmp), " +%zu more", n);
}

char *slurm_reason_build(char *buf, size_t size, const char *const *ids, size_t n, const char *fallback) {
        if (!buf || size == 0)
                return buf;
        size_t limit = size - 1 < SLURM_REASON_MAX ? size - 1 : SLURM_REASON_MAX;
        size_t len = (size_t)snprintf(buf, size, "%s ", SLURM_REASON_PREFIX);
        if (len > limit)
                len = limit;
        buf[len] = '\0';
        size_t distinct = 0, written = 0;
        for (size_t i = 0; i < n; i++)
                if (ids[i] && !seen_before(ids, i))
                        distinct++;
        if (distinct == 0) {
                snprintf(buf + len, limit + 1 - len, "%s", fallback ? fallback : "");
                return buf;
        }
        size_t left = distinct;
        for (size_t i = 0; i < n; i++) {
                if (!ids[i] || seen_before(ids, i))
                        continue;
                size_t want = strlen(ids[i]) + (written ? 1 : 0);
                /* After this id, the ones still left need their " +N more". */
                size_t after = left - 1 ? more_room(left - 1) : 0;
                if (!id_is_plain(ids[i]))
                        continue;
                /* Report order is kept: the ids after the first that does not fit are "more". */
                if (len + want + after > limit)
                        break;
                snprintf(buf + len, limit + 1 - len, "%s%s", written ? "," : "", ids[i]);
                len += want;
                written++;
                left--;
        }
        if (left)
                snprintf(buf + len, limit + 1 - len, "%s+%zu more", written ? " " : "", left);
        return buf;
}
