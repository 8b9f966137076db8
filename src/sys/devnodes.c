#include "sys/devnodes.h"
#include "core/array.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "core/strv.h"
#include "sys/facts.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* Opened by every CUDA process (nvidia-uvm for its unified memory), or by tools. */
static const char *const fixed_nodes[] = {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"};

/* "nvidia7" -> 7; false for nvidiactl, nvidia-uvm and the like. */
static bool gpu_node_minor(const char *name, unsigned *ret) {
        if (strncmp(name, "nvidia", 6) != 0 || !name[6])
                return false;
        unsigned v = 0;
        for (const char *p = name + 6; *p; p++) {
                if (*p < '0' || *p > '9' || v > 255)
                        return false;
                v = v * 10 + (unsigned)(*p - '0');
        }
        *ret = v;
        return true;
}

static int add_node(struct fsroot *fs, struct devnode_facts *x, const char *name) {
        struct devnode *grown = realloc(x->nodes, (x->n + 1) * sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        x->nodes = grown;
        struct devnode *d = &x->nodes[x->n++];
        memset(d, 0, sizeof(*d));
        snprintf(d->name, sizeof(d->name), "%s", name);
        char path[64];
        snprintf(path, sizeof(path), "/dev/%s", name);
        struct stat st;
        int r = fsroot_stat(fs, path, &st);
        if (r < 0) {
                d->err = -r;
                return 0;
        }
        d->mode = st.st_mode;
        d->uid = st.st_uid;
        d->gid = st.st_gid;
        d->major = major(st.st_rdev);
        d->minor = minor(st.st_rdev);
        return 0;
}

static int cmp_minor(const void *a, const void *b) {
        unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
        return (x > y) - (x < y);
}

static int gather_nodes(struct fsroot *fs, struct devnode_facts *x) {
        int r;
        for (size_t i = 0; i < ARRAY_COUNT(fixed_nodes); i++)
                if ((r = add_node(fs, x, fixed_nodes[i])) < 0)
                        return r;
        x->caps_dir = fsroot_is_dir(fs, "/dev/nvidia-caps");

        char **names;
        r = fsroot_list(fs, "/dev", &names);
        if (r < 0) {
                x->list_errno = -r;
                return r == -ENOMEM ? r : 0;
        }
        unsigned minors[256];
        size_t n_minors = 0;
        for (char **n = names; *n; n++) {
                unsigned m;
                if (gpu_node_minor(*n, &m) && n_minors < ARRAY_COUNT(minors))
                        minors[n_minors++] = m;
                /* Only a capture can lack device nodes altogether: asked there alone. */
                if (!x->live && !x->any_device_node) {
                        char path[300];
                        struct stat st;
                        snprintf(path, sizeof(path), "/dev/%s", *n);
                        /* lstat-like: a /dev/stdin symlink is not a device. */
                        x->any_device_node = fsroot_stat(fs, path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode));
                }
        }
        strv_free(names);
        /* Numeric order, so nvidia10 follows nvidia9. */
        qsort(minors, n_minors, sizeof(minors[0]), cmp_minor);
        for (size_t i = 0; i < n_minors; i++) {
                char name[24];
                snprintf(name, sizeof(name), "nvidia%u", minors[i]);
                if ((r = add_node(fs, x, name)) < 0)
                        return r;
        }
        return 0;
}

static void gather_params(struct fsroot *fs, struct devnode_facts *x) {
        x->params.mode = x->params.uid = x->params.gid = -1;
        char *text;
        if (fsroot_read_alloc(fs, "/proc/driver/nvidia/params", &text, NULL) < 0)
                return;
        static const struct {
                const char *key;
                size_t offset;
        } keys[] = {
                {"DeviceFileMode: ", offsetof(struct devnode_params, mode)},
                {"DeviceFileUID: ", offsetof(struct devnode_params, uid)},
                {"DeviceFileGID: ", offsetof(struct devnode_params, gid)},
        };
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
                for (size_t i = 0; i < ARRAY_COUNT(keys); i++) {
                        size_t len = strlen(keys[i].key);
                        uint64_t v;
                        if (strncmp(line, keys[i].key, len) == 0 && parse_u64(line + len, &v) == 0 && v <= 0x7fffffff)
                                *(long *)((char *)&x->params + keys[i].offset) = (long)v;
                }
        free(text);
}

static int gather_gpu_minors(struct fsroot *fs, struct devnode_facts *x) {
        char **addrs;
        if (fsroot_list(fs, "/proc/driver/nvidia/gpus", &addrs) < 0)
                return 0;
        size_t n = strv_length(addrs);
        x->gpu_minors = n ? calloc(n, sizeof(*x->gpu_minors)) : NULL;
        if (n && !x->gpu_minors) {
                strv_free(addrs);
                return -ENOMEM;
        }
        for (char **a = addrs; *a; a++) {
                char path[128], *text;
                snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%.32s/information", *a);
                if (fsroot_read_alloc(fs, path, &text, NULL) < 0)
                        continue;
                const char *at = strstr(text, "Device Minor:");
                uint64_t minor;
                char value[32];
                if (at && sscanf(at + strlen("Device Minor:"), " %31s", value) == 1 && parse_u64(value, &minor) == 0 &&
                    minor < 256) {
                        struct gpu_minor *g = &x->gpu_minors[x->n_gpu_minors++];
                        snprintf(g->addr, sizeof(g->addr), "%.15s", *a);
                        g->minor = (unsigned)minor;
                }
                free(text);
        }
        strv_free(addrs);
        return 0;
}

/* The group's name from /etc/group, for a remedy that names it. */
static void gather_group_name(struct fsroot *fs, struct devnode_facts *x) {
        if (x->params.gid <= 0)
                return;
        char *text;
        if (fsroot_read_alloc(fs, "/etc/group", &text, NULL) < 0)
                return;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                /* name:password:gid:members, the password field often empty */
                char *pw = strchr(line, ':');
                char *gid_field = pw ? strchr(pw + 1, ':') : NULL;
                if (!gid_field)
                        continue;
                char *end = strchr(gid_field + 1, ':');
                if (end)
                        *end = '\0';
                uint64_t gid;
                if (parse_u64(gid_field + 1, &gid) == 0 && gid == (uint64_t)x->params.gid) {
                        *pw = '\0';
                        snprintf(x->group_name, sizeof(x->group_name), "%.63s", line);
                        break;
                }
        }
        free(text);
}

int devnodes_gather(struct fsroot *fs, struct facts *f) {
        struct devnode_facts *x = &f->devnodes;
        x->live = fsroot_is_live(fs);
        int r;
        if ((r = gather_nodes(fs, x)) < 0 || (r = gather_gpu_minors(fs, x)) < 0)
                return r;
        gather_params(fs, x);
        gather_group_name(fs, x);
        struct stat st;
        if (fsroot_stat(fs, "/usr/bin/nvidia-modprobe", &st) == 0 && S_ISREG(st.st_mode)) {
                x->modprobe_present = true;
                x->modprobe_setuid = (st.st_mode & S_ISUID) && st.st_uid == 0;
        }
        return 0;
}

void devnodes_facts_done(struct devnode_facts *x) {
        free(x->nodes);
        free(x->gpu_minors);
        memset(x, 0, sizeof(*x));
}

const struct devnode *devnodes_find(const struct devnode_facts *x, const char *name) {
        for (size_t i = 0; i < x->n; i++)
                if (strcmp(x->nodes[i].name, name) == 0)
                        return &x->nodes[i];
        return NULL;
}
