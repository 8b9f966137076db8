#include "bench/rdma_wire.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const test_names[RDMA_TEST_COUNT] = {"write_bw", "read_bw", "write_lat"};
static const char *const verb_names[RDMA_CTL_COUNT] = {"step", "ready", "done", "verified", "corrupt", "end",
                                                        "error"};

/* Whether the token (s, len) is the word w. */
static bool token_is(const char *s, size_t len, const char *w) {
        return strlen(w) == len && memcmp(s, w, len) == 0;
}

const char *rdma_test_name(enum rdma_test t) {
        return (unsigned)t < RDMA_TEST_COUNT ? test_names[t] : "?";
}

enum rdma_test rdma_test_from_name(const char *s, size_t len) {
        for (int i = 0; i < RDMA_TEST_COUNT; i++)
                if (token_is(s, len, test_names[i]))
                        return (enum rdma_test)i;
        return RDMA_TEST_INVALID;
}

int rdma_plan_check(const struct rdma_plan *p) {
        if (p->tests == 0 || p->tests >= (1u << RDMA_TEST_COUNT))
                return -EINVAL;
        if (p->min_bytes < 1 || p->min_bytes > p->max_bytes || p->max_bytes > RDMA_WIRE_MAX_BYTES)
                return -EINVAL;
        if (p->iters < 1 || p->iters > 10000000 || p->lat_iters < 2 || p->lat_iters > 10000000)
                return -EINVAL;
        if (p->tx_depth < 1 || p->tx_depth > 4096)
                return -EINVAL;
        return 0;
}

size_t rdma_plan_sizes(const struct rdma_plan *p, uint64_t *out, size_t cap) {
        size_t n = 0;
        uint64_t s = p->min_bytes;
        while (s <= p->max_bytes) {
                if (n < cap)
                        out[n] = s;
                n++;
                if (s == p->max_bytes)
                        break;
                /* the next power of two above s, capped at max */
                uint64_t next = 1;
                while (next <= s)
                        next <<= 1;
                s = next < p->max_bytes ? next : p->max_bytes;
        }
        return n;
}

size_t rdma_hello_format(const struct rdma_hello *h, char *buf, size_t size) {
        char gid[33];
        for (int i = 0; i < 16; i++)
                snprintf(gid + 2 * i, 3, "%02x", h->gid[i]);
        int n = snprintf(buf, size,
                         RDMA_WIRE_MAGIC " hello lid=%u qpn=%" PRIu32 " psn=%" PRIu32 " rkey=%" PRIu32 " addr=0x%" PRIx64
                                         " bytes=%" PRIu64 " gid=%s mtu=%u ll=%s tests=%u min=%" PRIu64 " max=%" PRIu64
                                         " iters=%u lat_iters=%u depth=%u mem=%s\n",
                         h->lid, h->qpn, h->psn, h->rkey, h->addr, h->buf_bytes, gid, h->mtu, h->ethernet ? "eth" : "ib",
                         h->plan.tests, h->plan.min_bytes, h->plan.max_bytes, h->plan.iters, h->plan.lat_iters,
                         h->plan.tx_depth, h->gpu_memory ? "gpu" : "host");
        return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

size_t rdma_ctl_format(const struct rdma_ctl *c, char *buf, size_t size) {
        int n;
        const char *v = (unsigned)c->verb < RDMA_CTL_COUNT ? verb_names[c->verb] : "error";
        switch (c->verb) {
        case RDMA_CTL_STEP:
        case RDMA_CTL_VERIFIED:
                n = snprintf(buf, size, RDMA_WIRE_MAGIC " %s %s %" PRIu64 "\n", v, rdma_test_name(c->test), c->size);
                break;
        case RDMA_CTL_DONE:
        case RDMA_CTL_CORRUPT:
                n = snprintf(buf, size, RDMA_WIRE_MAGIC " %s %s %" PRIu64 " %" PRIu64 "\n", v, rdma_test_name(c->test),
                             c->size, c->count);
                break;
        case RDMA_CTL_ERROR: {
                /* one line: anything unprintable (a newline in a library's message) becomes a space */
                char text[sizeof(c->text)];
                size_t i = 0;
                for (; c->text[i] && i < sizeof(text) - 1; i++)
                        text[i] = c->text[i] >= 0x20 && c->text[i] < 0x7f ? c->text[i] : ' ';
                text[i] = 0;
                n = snprintf(buf, size, RDMA_WIRE_MAGIC " error %s\n", text);
                break;
        }
        default: n = snprintf(buf, size, RDMA_WIRE_MAGIC " %s\n", v); break;
        }
        return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

/* A cursor over (buf, len): tokens separated by single or repeated spaces. */
struct cursor {
        const char *p, *end;
};

static bool next_token(struct cursor *c, const char **tok, size_t *len) {
        while (c->p < c->end && *c->p == ' ')
                c->p++;
        if (c->p >= c->end)
                return false;
        *tok = c->p;
        while (c->p < c->end && *c->p != ' ')
                c->p++;
        *len = (size_t)(c->p - *tok);
        return true;
}

/* A decimal (or 0x hex) number of at most max, the whole token. */
static bool parse_u64(const char *s, size_t len, uint64_t max, uint64_t *ret) {
        int base = 10;
        if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
                base = 16;
                s += 2;
                len -= 2;
        }
        if (len == 0 || len > 20)
                return false;
        uint64_t v = 0;
        for (size_t i = 0; i < len; i++) {
                int d;
                char ch = s[i];
                if (ch >= '0' && ch <= '9')
                        d = ch - '0';
                else if (base == 16 && ch >= 'a' && ch <= 'f')
                        d = ch - 'a' + 10;
                else if (base == 16 && ch >= 'A' && ch <= 'F')
                        d = ch - 'A' + 10;
                else
                        return false;
                if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
                        return false;
                v = v * (uint64_t)base + (uint64_t)d;
        }
        if (v > max)
                return false;
        *ret = v;
        return true;
}

/* The line without its newline (and a CR before it); false when it holds a NUL or another
 * newline, or is longer than a line may be. */
static bool line_bounds(const char *buf, size_t len, struct cursor *c) {
        if (len > 0 && buf[len - 1] == '\n')
                len--;
        if (len > 0 && buf[len - 1] == '\r')
                len--;
        if (len >= RDMA_WIRE_LINE_MAX || memchr(buf, '\n', len) || memchr(buf, '\0', len))
                return false;
        c->p = buf;
        c->end = buf + len;
        const char *tok;
        size_t n;
        return next_token(c, &tok, &n) && token_is(tok, n, RDMA_WIRE_MAGIC);
}

enum hello_key { K_LID, K_QPN, K_PSN, K_RKEY, K_ADDR, K_BYTES, K_GID, K_MTU, K_LL, K_TESTS, K_MIN, K_MAX,
                 K_ITERS, K_LAT_ITERS, K_DEPTH, K_MEM, K_COUNT };
static const char *const hello_keys[K_COUNT] = {"lid", "qpn", "psn", "rkey", "addr", "bytes", "gid", "mtu",
                                                "ll", "tests", "min", "max", "iters", "lat_iters", "depth", "mem"};

static bool hex_gid(const char *s, size_t len, uint8_t *gid) {
        if (len != 32)
                return false;
        for (size_t i = 0; i < 16; i++) {
                uint64_t b;
                if (!parse_u64((char[]){'0', 'x', s[2 * i], s[2 * i + 1]}, 4, 255, &b))
                        return false;
                gid[i] = (uint8_t)b;
        }
        return true;
}

/* A flag given as one of two words: no is false, yes is true; any other word is refused. */
static bool either_word(const char *v, size_t n, const char *no, const char *yes, bool *ret) {
        if (!token_is(v, n, no) && !token_is(v, n, yes))
                return false;
        *ret = token_is(v, n, yes);
        return true;
}

static bool hello_value(struct rdma_hello *h, enum hello_key k, const char *v, size_t n) {
        uint64_t x;
        switch (k) {
        case K_LID:
                if (!parse_u64(v, n, 0xffff, &x))
                        return false;
                h->lid = (uint16_t)x;
                return true;
        case K_QPN:
        case K_PSN:
                if (!parse_u64(v, n, 0xffffff, &x))
                        return false;
                *(k == K_QPN ? &h->qpn : &h->psn) = (uint32_t)x;
                return true;
        case K_RKEY:
                if (!parse_u64(v, n, UINT32_MAX, &x))
                        return false;
                h->rkey = (uint32_t)x;
                return true;
        case K_ADDR: return parse_u64(v, n, UINT64_MAX, &h->addr);
        case K_BYTES: return parse_u64(v, n, RDMA_WIRE_MAX_BYTES, &h->buf_bytes);
        case K_GID: return hex_gid(v, n, h->gid);
        case K_MTU:
                if (!parse_u64(v, n, 4096, &x) || (x != 256 && x != 512 && x != 1024 && x != 2048 && x != 4096))
                        return false;
                h->mtu = (unsigned)x;
                return true;
        case K_LL: return either_word(v, n, "ib", "eth", &h->ethernet);
        case K_MEM: return either_word(v, n, "host", "gpu", &h->gpu_memory);
        case K_TESTS:
                if (!parse_u64(v, n, (1u << RDMA_TEST_COUNT) - 1, &x))
                        return false;
                h->plan.tests = (unsigned)x;
                return true;
        case K_MIN: return parse_u64(v, n, RDMA_WIRE_MAX_BYTES, &h->plan.min_bytes);
        case K_MAX: return parse_u64(v, n, RDMA_WIRE_MAX_BYTES, &h->plan.max_bytes);
        case K_ITERS:
        case K_LAT_ITERS:
        case K_DEPTH:
                if (!parse_u64(v, n, 10000000, &x))
                        return false;
                *(k == K_ITERS ? &h->plan.iters : k == K_LAT_ITERS ? &h->plan.lat_iters : &h->plan.tx_depth) =
                        (unsigned)x;
                return true;
        default: return false;
        }
}

int rdma_hello_parse(const char *buf, size_t len, struct rdma_hello *ret) {
        struct cursor c;
        const char *tok;
        size_t n;
        if (!line_bounds(buf, len, &c) || !next_token(&c, &tok, &n) || !token_is(tok, n, "hello"))
                return -EBADMSG;
        struct rdma_hello h = {0};
        bool seen[K_COUNT] = {false};
        while (next_token(&c, &tok, &n)) {
                const char *eq = memchr(tok, '=', n);
                if (!eq)
                        return -EBADMSG;
                size_t klen = (size_t)(eq - tok);
                int k = -1;
                for (int i = 0; i < K_COUNT; i++)
                        if (token_is(tok, klen, hello_keys[i]))
                                k = i;
                if (k < 0)
                        continue; /* a newer peer's key */
                if (seen[k] || !hello_value(&h, (enum hello_key)k, eq + 1, n - klen - 1))
                        return -EBADMSG;
                seen[k] = true;
        }
        for (int i = 0; i < K_COUNT; i++)
                if (!seen[i])
                        return -EBADMSG;
        if (rdma_plan_check(&h.plan) < 0 || h.buf_bytes < h.plan.max_bytes)
                return -EBADMSG;
        *ret = h;
        return 0;
}

int rdma_ctl_parse(const char *buf, size_t len, struct rdma_ctl *ret) {
        struct cursor c;
        const char *tok;
        size_t n;
        if (!line_bounds(buf, len, &c) || !next_token(&c, &tok, &n))
                return -EBADMSG;
        struct rdma_ctl x = {0};
        int verb = -1;
        for (int i = 0; i < RDMA_CTL_COUNT; i++)
                if (token_is(tok, n, verb_names[i]))
                        verb = i;
        if (verb < 0)
                return -EBADMSG;
        x.verb = (enum rdma_ctl_verb)verb;
        if (x.verb == RDMA_CTL_ERROR) {
                while (c.p < c.end && *c.p == ' ')
                        c.p++;
                size_t tl = (size_t)(c.end - c.p);
                if (tl >= sizeof(x.text))
                        tl = sizeof(x.text) - 1;
                for (size_t i = 0; i < tl; i++)
                        x.text[i] = c.p[i] >= 0x20 && c.p[i] < 0x7f ? c.p[i] : '?';
                x.text[tl] = 0;
                *ret = x;
                return 0;
        }
        int args = x.verb == RDMA_CTL_STEP || x.verb == RDMA_CTL_VERIFIED ? 2
                   : x.verb == RDMA_CTL_DONE || x.verb == RDMA_CTL_CORRUPT ? 3
                                                                              : 0;
        if (args > 0) {
                if (!next_token(&c, &tok, &n) || (x.test = rdma_test_from_name(tok, n)) == RDMA_TEST_INVALID)
                        return -EBADMSG;
                if (!next_token(&c, &tok, &n) || !parse_u64(tok, n, RDMA_WIRE_MAX_BYTES, &x.size) || x.size == 0)
                        return -EBADMSG;
                if (args == 3 && (!next_token(&c, &tok, &n) || !parse_u64(tok, n, UINT64_MAX, &x.count)))
                        return -EBADMSG;
        }
        if (next_token(&c, &tok, &n))
                return -EBADMSG;
        *ret = x;
        return 0;
}
