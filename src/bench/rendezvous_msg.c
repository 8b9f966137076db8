/* The rendezvous' messages, on the wire and in files (rendezvous.h): framing, encoding, the
 * pure parser the fuzzer drives (tests/fuzz/fuzz_rendezvous.c), and the HMAC that proves a
 * message's sender holds the job's secret (Nettle's HMAC-SHA256). */
#include "bench/rendezvous.h"
#include "bench/rendezvous_nettle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_u16(uint8_t *p, uint16_t v) {
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
}
static void put_u32(uint8_t *p, uint32_t v) {
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get_u32(const uint8_t *p) {
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get_u64(const uint8_t *p) { return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32; }

/* FNV-1a, 32 bits: catches a torn or foreign file, not an attacker. */
static uint32_t checksum(const uint8_t *p, size_t n) {
        uint32_t h = 2166136261u;
        for (size_t i = 0; i < n; i++)
                h = (h ^ p[i]) * 16777619u;
        return h;
}

size_t rdv_msg_encode(const struct rdv_msg *m, uint8_t *buf, size_t cap) {
        size_t key_len = strnlen(m->key, RDV_KEY_MAX);
        if (key_len >= RDV_KEY_MAX || m->data_len > RDV_GATHER_MAX || (m->data_len && !m->data) || m->type < RDV_MSG_HELLO ||
            m->type >= RDV_MSG_TYPE_COUNT)
                return 0;
        size_t payload = RDV_MSG_FIXED + key_len + m->data_len, total = RDV_MSG_HEADER + payload;
        if (total > cap)
                return 0;
        uint8_t *p = buf + RDV_MSG_HEADER;
        put_u32(p, m->rank);
        put_u32(p + 4, m->size);
        put_u64(p + 8, m->nonce);
        p[16] = m->status;
        p[17] = (uint8_t)key_len;
        memcpy(p + 18, m->challenge, RDV_CHALLENGE_BYTES);
        memcpy(p + 18 + RDV_CHALLENGE_BYTES, m->mac, RDV_MAC_BYTES);
        memcpy(p + RDV_MSG_FIXED, m->key, key_len);
        if (m->data_len)
                memcpy(p + RDV_MSG_FIXED + key_len, m->data, m->data_len);
        put_u32(buf, RDV_MSG_MAGIC);
        put_u16(buf + 4, RDV_MSG_VERSION);
        put_u16(buf + 6, (uint16_t)m->type);
        put_u32(buf + 8, (uint32_t)payload);
        put_u32(buf + 12, checksum(p, payload));
        return total;
}

int rdv_msg_parse(const uint8_t *buf, size_t len, struct rdv_msg *ret, size_t *ret_used) {
        /* refuse a foreign stream as early as its first bytes allow, not only once 16 came */
        static const uint8_t magic[4] = {'G', 'V', 'R', 'V'};
        if (memcmp(buf, magic, len < 4 ? len : 4) != 0)
                return -EBADMSG;
        if (len < RDV_MSG_HEADER)
                return -EAGAIN;
        uint16_t version = get_u16(buf + 4), type = get_u16(buf + 6);
        uint32_t payload = get_u32(buf + 8);
        if (version != RDV_MSG_VERSION || type < RDV_MSG_HELLO || type >= RDV_MSG_TYPE_COUNT || payload < RDV_MSG_FIXED ||
            payload > RDV_MSG_MAX - RDV_MSG_HEADER)
                return -EBADMSG;
        if (len - RDV_MSG_HEADER < payload)
                return -EAGAIN;
        const uint8_t *p = buf + RDV_MSG_HEADER;
        if (checksum(p, payload) != get_u32(buf + 12))
                return -EBADMSG;
        size_t key_len = p[17];
        if (key_len >= RDV_KEY_MAX || RDV_MSG_FIXED + key_len > payload || memchr(p + RDV_MSG_FIXED, '\0', key_len))
                return -EBADMSG;
        size_t data_len = payload - RDV_MSG_FIXED - key_len;
        if (data_len > RDV_GATHER_MAX)
                return -EBADMSG;
        struct rdv_msg m = {
                .type = (enum rdv_msg_type)type,
                .rank = get_u32(p),
                .size = get_u32(p + 4),
                .nonce = get_u64(p + 8),
                .status = p[16],
                .data = data_len ? p + RDV_MSG_FIXED + key_len : NULL,
                .data_len = data_len,
        };
        memcpy(m.challenge, p + 18, RDV_CHALLENGE_BYTES);
        memcpy(m.mac, p + 18 + RDV_CHALLENGE_BYTES, RDV_MAC_BYTES);
        memcpy(m.key, p + RDV_MSG_FIXED, key_len);
        m.key[key_len] = '\0';
        *ret = m;
        *ret_used = RDV_MSG_HEADER + payload;
        return 0;
}

void rdv_msg_mac(const uint8_t *secret, size_t secret_len, const struct rdv_msg *m,
                 const uint8_t root_challenge[RDV_CHALLENGE_BYTES], const uint8_t rank_challenge[RDV_CHALLENGE_BYTES],
                 uint8_t ret[RDV_MAC_BYTES]) {
        /* a fixed layout with the key's length, so that no two messages hash the same bytes */
        static const uint8_t label[] = "gpuvet rendezvous v2";
        uint8_t fixed[2 + 4 + 4 + 8 + 1 + 1];
        size_t key_len = strnlen(m->key, RDV_KEY_MAX - 1);
        put_u16(fixed, (uint16_t)m->type);
        put_u32(fixed + 2, m->rank);
        put_u32(fixed + 6, m->size);
        put_u64(fixed + 10, m->nonce);
        fixed[18] = m->status;
        fixed[19] = (uint8_t)key_len;
        /* rdv_open loaded Nettle, or refused to open: without it no MAC can be made or
         * checked, and going on would let a forged message through. */
        char why[512];
        const struct rdv_nettle *n = rdv_nettle_load(why, sizeof(why));
        if (!n) {
                fprintf(stderr, "gpuvet: rendezvous: %s\n", why);
                abort();
        }
        struct hmac_sha256_ctx ctx;
        n->nettle_hmac_sha256_set_key(&ctx, secret_len, secret_len ? secret : (const uint8_t *)"");
        n->nettle_hmac_sha256_update(&ctx, sizeof(label), label);
        n->nettle_hmac_sha256_update(&ctx, RDV_CHALLENGE_BYTES, root_challenge);
        n->nettle_hmac_sha256_update(&ctx, RDV_CHALLENGE_BYTES, rank_challenge);
        n->nettle_hmac_sha256_update(&ctx, sizeof(fixed), fixed);
        n->nettle_hmac_sha256_update(&ctx, key_len, (const uint8_t *)m->key);
        if (m->data_len)
                n->nettle_hmac_sha256_update(&ctx, m->data_len, m->data);
        n->nettle_hmac_sha256_digest(&ctx, RDV_MAC_BYTES, ret);
}

bool rdv_msg_mac_ok(const uint8_t *secret, size_t secret_len, const struct rdv_msg *m,
                    const uint8_t root_challenge[RDV_CHALLENGE_BYTES], const uint8_t rank_challenge[RDV_CHALLENGE_BYTES]) {
        uint8_t want[RDV_MAC_BYTES];
        rdv_msg_mac(secret, secret_len, m, root_challenge, rank_challenge, want);
        uint8_t diff = 0; /* every byte compared: the time says nothing of where they differ */
        for (size_t i = 0; i < RDV_MAC_BYTES; i++)
                diff |= (uint8_t)(want[i] ^ m->mac[i]);
        return diff == 0;
}
