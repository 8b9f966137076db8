/* Nettle at run time (rendezvous_nettle.h). */
#include "bench/rendezvous_nettle.h"

#include "core/array.h"
#include "core/dynlib.h"

#include <pthread.h>

const struct rdv_nettle *rdv_nettle_load(char *err, size_t errsize) {
        static const char *const sonames[] = {"libnettle.so.8"};
        static const struct dynlib_fn fns[] = {
#define RDV_NETTLE_ENTRY(f) {#f, NULL, true, offsetof(struct rdv_nettle, f)},
                RDV_NETTLE_FUNCTIONS(RDV_NETTLE_ENTRY)
#undef RDV_NETTLE_ENTRY
        };
        /* Ranks' threads may prove messages at once: one loads, the others wait for it. */
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        static struct dynlib lib;
        static struct rdv_nettle nettle;
        pthread_mutex_lock(&lock);
        int r = dynlib_load_once(sonames, ARRAY_COUNT(sonames), fns, ARRAY_COUNT(fns), &nettle, &lib,
                                 "the rendezvous needs Nettle (Debian/Ubuntu: apt install libnettle8; RHEL/Fedora: "
                                 "dnf install nettle)",
                                 err, errsize);
        pthread_mutex_unlock(&lock);
        if (r < 0)
                return NULL;
        return &nettle;
}
