#include "sys/netdev.h"
#include "core/fsroot.h"
#include "core/strv.h"
#include "sys/facts.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "0000:1c:00.0": 4 hex, ':', 2 hex, ':', 2 hex, '.', 1 digit 0-7. */
static bool is_pci_addr(const char *s, size_t len) {
        static const char shape[] = "xxxx:xx:xx.d";
        if (len != sizeof(shape) - 1)
                return false;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                if (shape[i] == 'x' ? !isxdigit(c) : shape[i] == 'd' ? !(c >= '0' && c <= '7') : c != (unsigned char)shape[i])
                        return false;
        }
        return true;
}

int netdev_pci_from_path(const char *path, char *ret, size_t size) {
        const char *found = NULL;
        for (const char *p = path; p && *p;) {
                while (*p == '/')
                        p++;
                size_t len = strcspn(p, "/");
                if (len && is_pci_addr(p, len))
                        found = p;
                p += len;
        }
        if (!found || size < 13)
                return -ENOENT;
        memcpy(ret, found, 12);
        ret[12] = '\0';
        return 0;
}

/* List class dir; every entry whose device link resolves to a PCI function is kept. */
static int gather_class(struct fsroot *fs, const char *dir, struct netdev **ret, size_t *ret_n, int *ret_errno) {
        char **names = NULL;
        int r = fsroot_list(fs, dir, &names);
        if (r < 0) {
                *ret_errno = r == -ENOENT ? 0 : -r;
                return 0;
        }
        size_t n = strv_length(names);
        *ret = calloc(n ? n : 1, sizeof(**ret));
        if (!*ret) {
                strv_free(names);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                char link[512], target[512];
                snprintf(link, sizeof(link), "%s/%s/device", dir, names[i]);
                /* A device that is not PCI (lo, bridges, bonds) has no device link. */
                if (fsroot_realpath(fs, link, target, sizeof(target)) < 0)
                        continue;
                struct netdev *d = &(*ret)[*ret_n];
                if (netdev_pci_from_path(target, d->pci_addr, sizeof(d->pci_addr)) < 0)
                        continue;
                snprintf(d->name, sizeof(d->name), "%s", names[i]);
                (*ret_n)++;
        }
        strv_free(names);
        return 0;
}

int netdev_gather(struct fsroot *fs, struct facts *f) {
        struct netdev_facts *x = &f->netdev;
        int r = gather_class(fs, "/sys/class/infiniband", &x->rdma, &x->n_rdma, &x->rdma_errno);
        if (r < 0)
                return r;
        return gather_class(fs, "/sys/class/net", &x->net, &x->n_net, &x->net_errno);
}

void netdev_facts_done(struct netdev_facts *x) {
        free(x->rdma);
        free(x->net);
        memset(x, 0, sizeof(*x));
}

static const char *find(const struct netdev *v, size_t n, const char *pci_addr) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i].pci_addr, pci_addr) == 0)
                        return v[i].name;
        return NULL;
}

const char *netdev_rdma_name(const struct netdev_facts *x, const char *pci_addr) {
        return find(x->rdma, x->n_rdma, pci_addr);
}

const char *netdev_net_name(const struct netdev_facts *x, const char *pci_addr) {
        return find(x->net, x->n_net, pci_addr);
}
