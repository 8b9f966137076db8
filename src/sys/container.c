#include "sys/container.h"
#include "core/array.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "core/strv.h"
#include "sys/facts.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAEMON_JSON "/etc/docker/daemon.json"
#define CONTAINERD_CONFIG "/etc/containerd/config.toml"
#define CONTAINERD_DROPINS "/etc/containerd/conf.d"
#define CDI_KIND_NVIDIA "nvidia.com/gpu"

/* Where packages and installers put these executables, in PATH order. */
static const char *const bin_dirs[] = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
                                       "/usr/bin",        "/sbin",          "/bin",
                                       "/snap/bin"};

static bool find_executable(struct fsroot *fs, const char *name, char *buf, size_t size) {
        if (name[0] == '/') {
                if (fsroot_access(fs, name) < 0)
                        return false;
                snprintf(buf, size, "%s", name);
                return true;
        }
        for (size_t i = 0; i < ARRAY_COUNT(bin_dirs); i++) {
                char path[CONTAINER_EXE_PATH];
                snprintf(path, sizeof(path), "%s/%s", bin_dirs[i], name);
                if (fsroot_access(fs, path) == 0) {
                        snprintf(buf, size, "%s", path);
                        return true;
                }
        }
        buf[0] = '\0';
        return false;
}

static void copy_str(char *buf, size_t size, const char *s) { snprintf(buf, size, "%s", s ? s : ""); }

/* The runtime that docker would hand a GPU container to: one named "nvidia" first, else
 * any whose path is the toolkit's nvidia-container-runtime (operators rename it). */
static void docker_find_runtime(json_t *runtimes, struct container_facts *c) {
        json_t *nvidia = json_object_get(runtimes, "nvidia");
        const char *name = "nvidia", *key;
        json_t *value;
        if (!json_is_object(nvidia)) {
                nvidia = NULL;
                json_object_foreach(runtimes, key, value) {
                        const char *path = json_string_value(json_object_get(value, "path"));
                        if (path && strstr(path, "nvidia-container-runtime")) {
                                nvidia = value;
                                name = key;
                                break;
                        }
                }
        }
        if (!nvidia)
                return;
        copy_str(c->docker_nvidia_runtime, sizeof(c->docker_nvidia_runtime), name);
        copy_str(c->docker_nvidia_runtime_path, sizeof(c->docker_nvidia_runtime_path),
                 json_string_value(json_object_get(nvidia, "path")));
}

static void gather_daemon_json(struct fsroot *fs, struct container_facts *c) {
        char *text;
        size_t len;
        c->docker_cdi_feature = -1;
        int r = fsroot_read_alloc(fs, DAEMON_JSON, &text, &len);
        if (r == -ENOENT)
                return;
        if (r < 0) {
                c->daemon_json = CONTAINER_FILE_UNREADABLE;
                c->daemon_json_errno = r;
                return;
        }
        json_error_t err;
        json_t *root = json_loadb(text, len, 0, &err);
        free(text);
        if (!root || !json_is_object(root)) {
                c->daemon_json = CONTAINER_FILE_MALFORMED;
                if (root)
                        copy_str(c->daemon_json_error, sizeof(c->daemon_json_error), "the top level is not a JSON object");
                else
                        snprintf(c->daemon_json_error, sizeof(c->daemon_json_error), "line %d, column %d: %s", err.line,
                                 err.column, err.text);
                json_decref(root);
                return;
        }
        c->daemon_json = CONTAINER_FILE_OK;
        json_t *runtimes = json_object_get(root, "runtimes");
        if (json_is_object(runtimes))
                docker_find_runtime(runtimes, c);
        char found[CONTAINER_EXE_PATH];
        if (c->docker_nvidia_runtime_path[0])
                c->docker_nvidia_runtime_installed =
                        find_executable(fs, c->docker_nvidia_runtime_path, found, sizeof(found));
        else if (c->docker_nvidia_runtime[0])
                /* A runtime without "path" runs the executable named like the runtime. */
                c->docker_nvidia_runtime_installed = find_executable(fs, c->docker_nvidia_runtime, found, sizeof(found));
        copy_str(c->docker_default_runtime, sizeof(c->docker_default_runtime),
                 json_string_value(json_object_get(root, "default-runtime")));
        json_t *cdi = json_object_get(json_object_get(root, "features"), "cdi");
        if (json_is_boolean(cdi))
                c->docker_cdi_feature = json_is_true(cdi);
        json_decref(root);
}

/* containerd's config is TOML and Debian's well-kept packages hold no TOML parser for C,
 * so this is a line scan for the few things that matter: a runtimes.nvidia* table (config
 * version 2 `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]`, version 3
 * `[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.nvidia]`, or dotted keys),
 * a BinaryName pointing at nvidia-container-runtime, default_runtime_name, disabled_plugins
 * and imports. */
static void quoted_value(const char *line, char *buf, size_t size) {
        const char *q = strchr(line, '"');
        const char *e = q ? strchr(q + 1, '"') : NULL;
        if (!e) {
                buf[0] = '\0';
                return;
        }
        snprintf(buf, size, "%.*s", (int)(e - q - 1), q + 1);
}

static bool scan_containerd(const char *text, const char *path, struct container_facts *c) {
        bool imports_dropins = false;
        unsigned lineno = 0;
        char buf[512];
        for (const char *line = text; text_next_line(&line, buf, sizeof(buf));) {
                lineno++;

                char *s = buf;
                while (isspace((unsigned char)*s))
                        s++;
                if (*s == '#' || !*s)
                        continue;
                if (strncmp(s, "imports", 7) == 0 && strstr(s, CONTAINERD_DROPINS))
                        imports_dropins = true;
                /* docker's containerd.io package ships `disabled_plugins = ["cri"]`. */
                if (strncmp(s, "disabled_plugins", 16) == 0 &&
                    (strstr(s, "\"cri\"") || strstr(s, "\"io.containerd.grpc.v1.cri\"")))
                        c->containerd_cri_disabled = true;
                if (strncmp(s, "default_runtime_name", 20) == 0)
                        quoted_value(s, c->containerd_default_runtime, sizeof(c->containerd_default_runtime));
                bool hit = strstr(s, "runtimes.nvidia") || strstr(s, "runtimes.\"nvidia") ||
                           (strncmp(s, "BinaryName", 10) == 0 && strstr(s, "nvidia-container-runtime"));
                if (hit && !c->containerd_nvidia_runtime) {
                        c->containerd_nvidia_runtime = true;
                        snprintf(c->containerd_nvidia_where, sizeof(c->containerd_nvidia_where), "%s:%u: %.200s", path,
                                 lineno, s);
                }
        }
        return imports_dropins;
}

static int gather_containerd(struct fsroot *fs, struct container_facts *c) {
        char *text;
        int r = fsroot_read_alloc(fs, CONTAINERD_CONFIG, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                c->containerd_config = CONTAINER_FILE_UNREADABLE;
                c->containerd_config_errno = r;
                return 0;
        }
        c->containerd_config = CONTAINER_FILE_OK;
        bool dropins = scan_containerd(text, CONTAINERD_CONFIG, c);
        free(text);
        if (!dropins)
                return 0;
        /* `nvidia-ctk runtime configure` of recent toolkits writes its runtime to a
         * drop-in and adds the imports line; containerd reads drop-ins only then. */
        char **names;
        r = fsroot_list(fs, CONTAINERD_DROPINS, &names);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        for (char **n = names; *n; n++) {
                size_t l = strlen(*n);
                if (l < 5 || strcmp(*n + l - 5, ".toml") != 0)
                        continue;
                char path[512];
                snprintf(path, sizeof(path), "%s/%s", CONTAINERD_DROPINS, *n);
                if (fsroot_read_alloc(fs, path, &text, NULL) < 0)
                        continue;
                (void)scan_containerd(text, path, c);
                free(text);
        }
        strv_free(names);
        return 0;
}

/* The driver a spec was generated for: it mounts libcuda.so.<driver version>. */
static void cdi_driver_version(const char *text, char *buf, size_t size) {
        for (const char *p = text; (p = strstr(p, "libcuda.so."));) {
                p += strlen("libcuda.so.");
                size_t n = strspn(p, "0123456789.");
                if (n > 0 && n < size && memchr(p, '.', n)) {
                        snprintf(buf, size, "%.*s", (int)n, p);
                        return;
                }
        }
}

static void unquote(char *s) {
        size_t n = strlen(s);
        while (n > 0 && isspace((unsigned char)s[n - 1]))
                s[--n] = '\0';
        if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
                memmove(s, s + 1, n - 2);
                s[n - 2] = '\0';
        }
}

/* A YAML spec without a YAML parser: the top-level "kind:" and the number of items in the
 * top-level "devices:" list (nvidia-ctk writes them at column 0 or 2). */
static int cdi_scan_yaml(const char *text, char *kind, size_t kind_size, unsigned *ret_devices) {
        bool in_devices = false;
        int item_indent = -1;
        unsigned devices = 0;
        kind[0] = '\0';
        char buf[512];
        for (const char *line = text; text_next_line(&line, buf, sizeof(buf));) {

                int indent = (int)strspn(buf, " ");
                const char *s = buf + indent;
                if (!*s || *s == '#' || *s == '\r' || strncmp(s, "---", 3) == 0)
                        continue; /* blank, comment, document marker */
                if (indent == 0 && *s != '-') {
                        in_devices = strncmp(s, "devices:", 8) == 0;
                        if (strncmp(s, "kind:", 5) == 0) {
                                snprintf(kind, kind_size, "%s", s + 5 + strspn(s + 5, " "));
                                unquote(kind);
                        }
                        continue;
                }
                if (!in_devices || *s != '-')
                        continue;
                if (item_indent < 0)
                        item_indent = indent;
                if (indent == item_indent)
                        devices++;
        }
        *ret_devices = devices;
        return kind[0] ? 0 : -EINVAL;
}

static int cdi_scan_json(const char *text, size_t len, char *kind, size_t kind_size, unsigned *ret_devices,
                         char *why, size_t why_size) {
        json_error_t err;
        json_t *root = json_loadb(text, len, 0, &err);
        if (!root) {
                snprintf(why, why_size, "line %d, column %d: %s", err.line, err.column, err.text);
                return -EINVAL;
        }
        const char *k = json_string_value(json_object_get(root, "kind"));
        snprintf(kind, kind_size, "%s", k ? k : "");
        json_t *devices = json_object_get(root, "devices");
        *ret_devices = json_is_array(devices) ? (unsigned)json_array_size(devices) : 0;
        json_decref(root);
        if (!kind[0]) {
                snprintf(why, why_size, "no \"kind\" string");
                return -EINVAL;
        }
        return 0;
}

static void cdi_bad(struct container_facts *c, const char *path, const char *why) {
        if (c->cdi_bad_path[0])
                return;
        copy_str(c->cdi_bad_path, sizeof(c->cdi_bad_path), path);
        copy_str(c->cdi_bad_reason, sizeof(c->cdi_bad_reason), why);
}

static void cdi_scan_file(struct fsroot *fs, const char *path, bool json, struct container_facts *c) {
        char *text;
        size_t len;
        int r = fsroot_read_alloc(fs, path, &text, &len);
        if (r < 0) {
                cdi_bad(c, path, strerror(-r));
                return;
        }
        char kind[128], why[256] = "no top-level \"kind:\"";
        unsigned devices = 0;
        r = json ? cdi_scan_json(text, len, kind, sizeof(kind), &devices, why, sizeof(why))
                 : cdi_scan_yaml(text, kind, sizeof(kind), &devices);
        if (r < 0) {
                cdi_bad(c, path, why);
                free(text);
                return;
        }
        c->cdi_specs++;
        if (strcmp(kind, CDI_KIND_NVIDIA) == 0) {
                if (c->cdi_nvidia_specs++ == 0)
                        copy_str(c->cdi_first_nvidia, sizeof(c->cdi_first_nvidia), path);
                c->cdi_nvidia_devices += devices;
                if (!c->cdi_driver_version[0])
                        cdi_driver_version(text, c->cdi_driver_version, sizeof(c->cdi_driver_version));
        }
        free(text);
}

static int gather_cdi(struct fsroot *fs, struct container_facts *c) {
        static const char *const dirs[] = {"/etc/cdi", "/var/run/cdi"};
        char **paths;
        int r = fsroot_list_dirs(fs, dirs, ARRAY_COUNT(dirs), &paths);
        if (r < 0)
                return r;
        for (char **p = paths; *p; p++) {
                const char *name = strrchr(*p, '/') + 1;
                size_t l = strlen(name);
                bool json = l > 5 && strcmp(name + l - 5, ".json") == 0;
                bool yaml = (l > 5 && strcmp(name + l - 5, ".yaml") == 0) || (l > 4 && strcmp(name + l - 4, ".yml") == 0);
                if (json || yaml) /* the CDI registry reads only these */
                        cdi_scan_file(fs, *p, json, c);
        }
        strv_free(paths);
        return 0;
}

int container_gather(struct fsroot *fs, struct facts *f) {
        struct container_facts *c = &f->container;
        memset(c, 0, sizeof(*c));
        struct {
                const char *name;
                char *buf;
        } const exes[] = {
                {"docker", c->docker},
                {"dockerd", c->dockerd},
                {"containerd", c->containerd},
                {"podman", c->podman},
                {"nvidia-ctk", c->nvidia_ctk},
                {"nvidia-container-cli", c->nvidia_container_cli},
                {"nvidia-container-runtime", c->nvidia_container_runtime},
                {"nvidia-container-runtime-hook", c->nvidia_container_runtime_hook},
        };
        for (size_t i = 0; i < ARRAY_COUNT(exes); i++)
                (void)find_executable(fs, exes[i].name, exes[i].buf, CONTAINER_EXE_PATH);
        c->have_containers_dir = fsroot_is_dir(fs, "/etc/containers");
        c->have_toolkit_config = fsroot_access(fs, "/etc/nvidia-container-runtime/config.toml") == 0;
        gather_daemon_json(fs, c);
        int r;
        if ((r = gather_containerd(fs, c)) < 0 || (r = gather_cdi(fs, c)) < 0)
                return r;
        return 0;
}

void container_facts_done(struct container_facts *x) { (void)x; }
