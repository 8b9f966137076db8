#include "slurm/scontrol.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/run_command.h"
#include "core/strbuf.h"

/* A node's record is a few hundred bytes; a cluster's worth is never asked for. */
#define SCONTROL_MAX_OUT (1u << 20)

/* The last line of scontrol's standard error, for a message. */
static const char *last_line(char *s) {
        size_t n = strlen(s);
        while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
                s[--n] = '\0';
        char *nl = strrchr(s, '\n');
        return nl ? nl + 1 : s;
}

/* Run argv; 0 when it exited 0, else a negative errno with err saying why. */
static int run(const struct scontrol *sc, char *const argv[], const char *what, struct command_result *r, char *err,
               size_t err_size) {
        int rc = run_command(argv, sc->timeout_ms, SCONTROL_MAX_OUT, r);
        if (rc == -ENOENT) {
                strbuf_printf(err, err_size, "%s: cannot run %s: not found", what, sc->path);
                return -ENOENT;
        }
        if (rc < 0) {
                strbuf_printf(err, err_size, "%s: cannot run %s: %s", what, sc->path, strerror(-rc));
                return rc;
        }
        if (r->timed_out) {
                strbuf_printf(err, err_size, "%s: %s did not finish within %u ms (killed)", what, sc->path,
                              sc->timeout_ms);
                return -ETIMEDOUT;
        }
        if (r->signal) {
                strbuf_printf(err, err_size, "%s: %s was killed by signal %d", what, sc->path, r->signal);
                return -EIO;
        }
        if (r->exit_status != 0) {
                /* scontrol says some failures on standard output, not error: "Node vm not
                 * found" (scontrol/info_node.c), the one line an admin needs. */
                const char *msg = last_line(r->err_tail);
                char out_tail[256];
                if (!*msg && r->out && r->out_len) {
                        size_t n = r->out_len, keep = n < sizeof(out_tail) - 1 ? n : sizeof(out_tail) - 1;
                        memcpy(out_tail, r->out + n - keep, keep);
                        out_tail[keep] = '\0';
                        msg = last_line(out_tail);
                }
                strbuf_printf(err, err_size, "%s: %s exited %d%s%s", what, sc->path, r->exit_status, *msg ? ": " : "",
                              msg);
                return -EIO;
        }
        if (r->out_truncated) {
                strbuf_printf(err, err_size, "%s: %s printed more than %u bytes", what, sc->path, SCONTROL_MAX_OUT);
                return -EBADMSG;
        }
        return 0;
}

int scontrol_show_node(const struct scontrol *sc, const char *node, struct slurm_node *out, char *err, size_t err_size) {
        memset(out, 0, sizeof(*out));
        char *argv[] = {(char *)sc->path, "show", "node", "-o", (char *)node, NULL};
        struct command_result r;
        char what[160];
        snprintf(what, sizeof(what), "reading node %s's state", node);
        int rc = run(sc, argv, what, &r, err, err_size);
        if (rc == 0) {
                rc = slurm_node_parse(r.out, r.out_len, node, out);
                if (rc == -ENOENT || rc == -EBADMSG) {
                        strbuf_printf(err, err_size, "%s: `%s show node -o %s` printed no %s", what, sc->path, node,
                                      rc == -ENOENT ? "record of that node"
                                                      : "whole record of it (cut short, or no usable State=)");
                        rc = -EBADMSG;
                } else if (rc < 0) {
                        strbuf_printf(err, err_size, "%s: %s", what, strerror(-rc));
                }
        }
        command_result_done(&r);
        return rc;
}

int scontrol_update_argv(const struct scontrol *sc, const char *node, enum slurm_action action, const char *reason,
                         char *buf, size_t buf_size, const char *argv[6]) {
        if (action == SLURM_ACTION_NONE || action >= _SLURM_ACTION_COUNT)
                return 0;
        int n = 0;
        argv[n++] = sc->path;
        argv[n++] = "update";
        int k = snprintf(buf, buf_size, "NodeName=%s", node);
        argv[n++] = buf;
        size_t used = k < 0 ? buf_size : (size_t)k + 1;
        if (action == SLURM_ACTION_RESUME) {
                argv[n++] = "State=RESUME";
        } else {
                argv[n++] = "State=DRAIN";
                if (used < buf_size) {
                        snprintf(buf + used, buf_size - used, "Reason=%s", reason ? reason : "");
                        argv[n++] = buf + used;
                }
        }
        argv[n] = NULL;
        return n;
}

int scontrol_update_node(const struct scontrol *sc, const char *node, enum slurm_action action, const char *reason,
                         char *err, size_t err_size) {
        char buf[512];
        const char *argv[6];
        if (scontrol_update_argv(sc, node, action, reason, buf, sizeof(buf), argv) == 0)
                return 0;
        struct command_result r;
        char what[160];
        snprintf(what, sizeof(what), "%s node %s", slurm_action_name(action), node);
        int rc = run(sc, (char *const *)argv, what, &r, err, err_size);
        command_result_done(&r);
        return rc;
}
