#include "sys/pci_names.h"
#include "core/array.h"
#include "core/dynlib.h"

#include <errno.h>
#include <stddef.h>
#include <pci/pci.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* libpci is loaded on the first lookup (core/dynlib.h says why). */
#define LIBPCI_FUNCTIONS(X) X(pci_alloc) X(pci_init) X(pci_cleanup) X(pci_set_name_list_path) X(pci_lookup_name)
static struct {
#define X(f) __typeof__(&f) f;
        LIBPCI_FUNCTIONS(X)
#undef X
} libpci;

static struct pci_access *access_handle;
static bool init_failed;
static jmp_buf init_escape;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* libpci reports fatal errors through a hook that must not return; the default one
 * exits the process. Only pci_init() can raise it here (when no access method works, as
 * in some containers), so escape from it and run without names. */
static void __attribute__((noreturn, format(printf, 1, 2))) init_error(char *msg, ...) {
        (void)msg;
        longjmp(init_escape, 1);
}

static void __attribute__((format(printf, 1, 2))) quiet(char *msg, ...) { (void)msg; }

static void names_cleanup(void) {
        if (access_handle)
                libpci.pci_cleanup(access_handle);
        access_handle = NULL;
}

static void names_init(void) {
        static const char *const sonames[] = {"libpci.so.3"};
        static const struct dynlib_fn fns[] = {
#define X(f) {#f, NULL, true, offsetof(__typeof__(libpci), f)},
                LIBPCI_FUNCTIONS(X)
#undef X
        };
        static struct dynlib lib;
        char err[256];
        if (dynlib_load(sonames, ARRAY_COUNT(sonames), fns, ARRAY_COUNT(fns), &libpci, &lib, err, sizeof(err)) < 0) {
                init_failed = true; /* no names: lookups answer with the numeric ids */
                return;
        }
        struct pci_access *a = libpci.pci_alloc();
        if (!a) {
                init_failed = true;
                return;
        }
        a->error = init_error;
        a->warning = quiet;
        a->debug = quiet;
        if (setjmp(init_escape)) {
                init_failed = true;
                return; /* a is leaked on purpose: its state after the escape is unknown */
        }
        const char *ids = secure_getenv("GPUVET_PCI_IDS");
        if (ids && *ids)
                libpci.pci_set_name_list_path(a, (char *)ids, 0);
        libpci.pci_init(a);
        access_handle = a;
        atexit(names_cleanup);
}

int pci_names_lookup(uint16_t vendor, uint16_t device, char *buf, size_t size) {
        pthread_once(&init_once, names_init);
        /* NO_HWDB: names from pci.ids alone, the same on every machine with the same file
         * (udev's hwdb varies by host and leaks its handle inside libpci). */
        if (!init_failed && access_handle) {
                const char *name = libpci.pci_lookup_name(access_handle, buf, (int)size,
                                                   PCI_LOOKUP_VENDOR | PCI_LOOKUP_DEVICE | PCI_LOOKUP_NO_NUMBERS |
                                                           PCI_LOOKUP_NO_HWDB,
                                                   vendor, device);
                if (name)
                        return 0;
        }
        snprintf(buf, size, "%04x:%04x", vendor, device);
        return -ENOENT;
}
