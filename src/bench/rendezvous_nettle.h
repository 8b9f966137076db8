/* Nettle's HMAC-SHA256 for the rendezvous (rendezvous_msg.c), loaded when a rendezvous opens
 * rather than linked: every other command would pay for it at start-up (docs/perf.md
 * "Issue 41: start-up"). <nettle/hmac.h> gives the types; its hmac_sha256_* are macros
 * over the nettle_hmac_sha256_* the library exports, which are the names here. Nothing
 * here prints. */
#pragma once

#include <stddef.h>

#include <nettle/hmac.h>

#define RDV_NETTLE_FUNCTIONS(X) X(nettle_hmac_sha256_set_key) X(nettle_hmac_sha256_update) X(nettle_hmac_sha256_digest)

struct rdv_nettle {
#define RDV_NETTLE_FN(f) __typeof__(&f) f;
        RDV_NETTLE_FUNCTIONS(RDV_NETTLE_FN)
#undef RDV_NETTLE_FN
};

/* Load libnettle.so.8 once per process (any thread; later calls return at once). Returns
 * the functions, or NULL with err naming the library, why, and the package. */
const struct rdv_nettle *rdv_nettle_load(char *err, size_t errsize);
