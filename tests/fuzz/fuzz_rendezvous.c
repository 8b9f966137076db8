/* libFuzzer target: the rendezvous' parsers (src/bench/rendezvous.h). The first byte picks:
 * 0 (and anything else): the input as a stream of messages, parsed one after another as a
 * rank reads its socket; 1: the input as an environment (lines NAME=value) for
 * rdv_ranks_from_env and rdv_address_default; 2: the input as a Slurm host list, per-node
 * task counts and an address spec. Invariants, checked with abort(): a parsed message lies
 * within the input, its key is terminated and its data bounded, and it encodes back to the
 * very bytes it was parsed from (challenge and mac included); its mac computed under a
 * secret proves it under that secret only, and not once a bit of it or of the message
 * changes; accepted ranks satisfy 0 <= rank < size <= 65536 and
 * local_rank < local_size when that is known; a secret taken from the environment is none
 * or RDV_SECRET_MIN..RDV_SECRET_MAX bytes; every refusal leaves a terminated message;
 * a host list's first host is non-empty and has no brackets or commas. */
#include "bench/rendezvous.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void proofs(const struct rdv_msg *parsed) {
        static const uint8_t secret[] = "a secret of the fuzzed job", other[] = "a secret of another job";
        struct rdv_msg m = *parsed;
        uint8_t peer[RDV_CHALLENGE_BYTES];
        memcpy(peer, m.challenge, sizeof(peer));
        rdv_msg_mac(secret, sizeof(secret) - 1, &m, m.challenge, peer, m.mac);
        if (!rdv_msg_mac_ok(secret, sizeof(secret) - 1, &m, m.challenge, peer) ||
            rdv_msg_mac_ok(other, sizeof(other) - 1, &m, m.challenge, peer) ||
            rdv_msg_mac_ok((const uint8_t *)"", 0, &m, m.challenge, peer))
                abort();
        m.mac[m.rank % RDV_MAC_BYTES] ^= 1;
        if (rdv_msg_mac_ok(secret, sizeof(secret) - 1, &m, m.challenge, peer))
                abort();
        m.mac[m.rank % RDV_MAC_BYTES] ^= 1;
        m.rank ^= 1; /* the rank is what a forger would change */
        if (rdv_msg_mac_ok(secret, sizeof(secret) - 1, &m, m.challenge, peer))
                abort();
}

static void messages(const uint8_t *data, size_t size) {
        static uint8_t again[RDV_MSG_MAX];
        size_t at = 0;
        while (at < size) {
                struct rdv_msg m;
                size_t used = 0;
                int r = rdv_msg_parse(data + at, size - at, &m, &used);
                if (r == -EAGAIN || r == -EBADMSG)
                        return;
                if (r != 0 || used < RDV_MSG_HEADER + RDV_MSG_FIXED || used > size - at || used > RDV_MSG_MAX)
                        abort();
                if (strnlen(m.key, RDV_KEY_MAX) == RDV_KEY_MAX || m.data_len > RDV_GATHER_MAX)
                        abort();
                if (m.data_len && (m.data < data + at || m.data + m.data_len > data + at + used))
                        abort();
                size_t n = rdv_msg_encode(&m, again, sizeof(again));
                if (n != used || memcmp(again, data + at, n) != 0)
                        abort();
                proofs(&m);
                at += used;
        }
}

static void environment(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        const char **envp = calloc(size / 2 + 2, sizeof(*envp));
        if (!text || !envp)
                goto out;
        memcpy(text, data, size);
        text[size] = '\0';
        size_t n = 0;
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                envp[n++] = line;
        envp[n] = NULL;
        struct rdv_ranks r;
        char err[256];
        memset(err, 'x', sizeof(err));
        if (rdv_ranks_from_env(envp, &r, err, sizeof(err)) < 0) {
                if (strnlen(err, sizeof(err)) == sizeof(err))
                        abort();
                goto out;
        }
        if (r.rank < 0 || r.rank >= r.size || r.size > RDV_MAX_RANKS || r.launcher >= RDV_LAUNCHER_COUNT ||
            (r.local_size && r.local_rank >= r.local_size) || strnlen(r.job_key, RDV_KEY_MAX) == RDV_KEY_MAX)
                abort();
        /* not with a file to read: a fuzzer's input must not open the machine's files */
        bool names_file = false;
        for (size_t i = 0; i < n; i++)
                names_file |= strncmp(envp[i], "GPUVET_RENDEZVOUS_SECRET_FILE=", 30) == 0;
        memset(err, 'x', sizeof(err));
        if (!names_file) {
                if (rdv_secret_from_env(envp, &r, err, sizeof(err)) < 0) {
                        if (strnlen(err, sizeof(err)) == sizeof(err))
                                abort();
                } else if (r.secret_len && (r.secret_len < RDV_SECRET_MIN || r.secret_len > RDV_SECRET_MAX)) {
                        abort();
                }
        }
        struct rdv_address a;
        memset(err, 'x', sizeof(err));
        if (rdv_address_default(envp, &r, &a, err, sizeof(err)) < 0) {
                if (strnlen(err, sizeof(err)) == sizeof(err))
                        abort();
        } else if (a.transport == RDV_TCP ? !a.host[0] || !a.port[0] : a.transport != RDV_FILE || !a.path[0]) {
                abort();
        }
out:
        free(text);
        free(envp);
}

static void lists(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        if (!text)
                return;
        memcpy(text, data, size);
        text[size] = '\0';
        char host[256];
        if (rdv_hostlist_first(text, host, sizeof(host)) == 0 &&
            (!host[0] || strpbrk(host, "[],") || strnlen(host, sizeof(host)) == sizeof(host)))
                abort();
        int tasks = -1;
        if (rdv_slurm_tasks_on_node(text, (int)(size % 5), &tasks) == 0 && (tasks < 0 || tasks > RDV_MAX_RANKS))
                abort();
        struct rdv_address a;
        char err[256];
        if (rdv_address_parse(text, &a, err, sizeof(err)) == 0) {
                char again[8192];
                rdv_address_format(&a, again, sizeof(again));
                struct rdv_address b;
                if (rdv_address_parse(again, &b, err, sizeof(err)) != 0 || b.transport != a.transport ||
                    strcmp(a.host, b.host) || strcmp(a.port, b.port) || strcmp(a.path, b.path))
                        abort();
        } else if (strnlen(err, sizeof(err)) == sizeof(err)) {
                abort();
        }
        free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size == 0)
                return 0;
        switch (data[0]) {
        case 1:
                environment(data + 1, size - 1);
                break;
        case 2:
                lists(data + 1, size - 1);
                break;
        default:
                messages(data + 1, size - 1);
        }
        return 0;
}
