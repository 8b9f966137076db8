#include "slurm/node_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The next line of [p, end): its end (the '\n' or end). */
static const char *line_end(const char *p, const char *end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        return nl ? nl : end;
}

/* The first occurrence of word (NUL-terminated) in [p, end), or NULL. */
static const char *find(const char *p, const char *end, const char *word) {
        size_t n = strlen(word);
        for (; (size_t)(end - p) >= n; p++)
                if (memcmp(p, word, n) == 0)
                        return p;
        return NULL;
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* Whether [p, end) starts with Slurm's reason suffix " [user@YYYY-MM-DDTHH:MM:SS]"; its
 * length into *ret_len. The user is a name or a uid: no space, '[', ']' or '@'. */
static bool reason_suffix(const char *p, const char *end, size_t *ret_len) {
        static const char stamp[] = "dddd-dd-ddTdd:dd:dd";
        const char *q = p;
        if (end - q < 2 || q[0] != ' ' || q[1] != '[')
                return false;
        q += 2;
        const char *user = q;
        while (q < end && *q != '@' && *q != ' ' && *q != '[' && *q != ']')
                q++;
        if (q == user || q >= end || *q != '@')
                return false;
        q++;
        if ((size_t)(end - q) < sizeof(stamp))
                return false;
        for (size_t i = 0; i < sizeof(stamp) - 1; i++)
                if (stamp[i] == 'd' ? !is_digit(q[i]) : q[i] != stamp[i])
                        return false;
        if (q[sizeof(stamp) - 1] != ']')
                return false;
        *ret_len = (size_t)(q + sizeof(stamp) - p);
        return true;
}

static bool word_is(const char *w, size_t n, const char *s) {
        return strlen(s) == n && memcmp(w, s, n) == 0;
}

/* Each '+'-separated word of the state into flags. sinfo's markers ("*", "~", "#", "$",
 * "@", "%", "!", "^", "-") can end a word; they are not part of its name. */
static unsigned state_flags(const char *s, size_t len) {
        unsigned flags = 0;
        const char *end = s + len;
        for (const char *w = s; w < end;) {
                const char *plus = memchr(w, '+', (size_t)(end - w));
                const char *we = plus ? plus : end;
                size_t n = (size_t)(we - w);
                while (n > 0 && strchr("*~#$@%!^-", w[n - 1]))
                        n--;
                if (word_is(w, n, "DRAIN") || word_is(w, n, "DRAINED") || word_is(w, n, "DRAINING"))
                        flags |= SLURM_NODE_DRAIN;
                else if (word_is(w, n, "DOWN"))
                        flags |= SLURM_NODE_DOWN;
                else if (word_is(w, n, "FAIL") || word_is(w, n, "FAILING"))
                        flags |= SLURM_NODE_FAIL;
                else if (word_is(w, n, "NOT_RESPONDING"))
                        flags |= SLURM_NODE_NOT_RESPONDING;
                w = plus ? plus + 1 : end;
        }
        return flags;
}

/* The record of name: a line that starts "NodeName=<name>" then a space or its end. */
static const char *find_record(const char *buf, const char *end, const char *name, const char **ret_end) {
        static const char key[] = "NodeName=";
        size_t n = strlen(name);
        for (const char *p = buf; p < end;) {
                const char *le = line_end(p, end);
                size_t ll = (size_t)(le - p);
                if (ll >= sizeof(key) - 1 + n && memcmp(p, key, sizeof(key) - 1) == 0 &&
                    memcmp(p + sizeof(key) - 1, name, n) == 0 &&
                    (ll == sizeof(key) - 1 + n || p[sizeof(key) - 1 + n] == ' ')) {
                        *ret_end = le;
                        return p;
                }
                p = le < end ? le + 1 : end;
        }
        return NULL;
}

int slurm_node_parse(const char *buf, size_t len, const char *name, struct slurm_node *out) {
        memset(out, 0, sizeof(*out));
        if (!buf || !name || !*name)
                return -ENOENT;
        const char *end = buf + len, *le;
        const char *rec = find_record(buf, end, name, &le);
        if (!rec)
                return -ENOENT;
        /* scontrol ends every record with a newline: one without is output cut short, and
         * a state read in part is no state to act on. */
        if (le == end)
                return -EBADMSG;
        /* State precedes Reason and every free-form field (Comment, Extra) in the record. */
        const char *st = find(rec, le, " State=");
        if (!st)
                return -EBADMSG;
        st += strlen(" State=");
        const char *se = st;
        while (se < le && *se != ' ')
                se++;
        size_t sl = (size_t)(se - st);
        if (sl == 0 || sl >= sizeof(out->state))
                return -EBADMSG;
        /* Slurm's states are printable ASCII words; anything else (a NUL, a control byte)
         * is not a state to act on. */
        for (const char *q = st; q < se; q++)
                if (*q < 0x21 || *q > 0x7e)
                        return -EBADMSG;
        memcpy(out->state, st, sl);
        out->state[sl] = '\0';
        out->flags = state_flags(st, sl);

        const char *r = find(se, le, " Reason=");
        if (!r)
                return 0;
        r += strlen(" Reason=");
        const char *re = le;
        size_t suffix;
        for (const char *q = r; q < le; q++)
                if (*q == ' ' && reason_suffix(q, le, &suffix)) {
                        re = q;
                        break;
                }
        size_t rl = (size_t)(re - r);
        if (!(out->reason = malloc(rl + 1)))
                return -ENOMEM;
        memcpy(out->reason, r, rl);
        out->reason[rl] = '\0';
        return 0;
}

void slurm_node_done(struct slurm_node *n) {
        if (!n)
                return;
        free(n->reason);
        n->reason = NULL;
}
