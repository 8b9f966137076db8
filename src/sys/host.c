#include "sys/host.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "core/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void cpuinfo_field(const char *text, const char *key, char *buf, size_t size) {
        size_t klen = strlen(key);
        for (const char *line = text; line && *line;) {
                const char *eol = strchr(line, '\n');
                size_t len = eol ? (size_t)(eol - line) : strlen(line);
                if (strncmp(line, key, klen) == 0 && (line[klen] == '\t' || line[klen] == ' ' || line[klen] == ':')) {
                        const char *colon = memchr(line, ':', len);
                        if (colon) {
                                const char *v = colon + 1;
                                while (*v == ' ')
                                        v++;
                                size_t vlen = (size_t)(line + len - v);
                                if (vlen >= size)
                                        vlen = size - 1;
                                memcpy(buf, v, vlen);
                                buf[vlen] = '\0';
                                return;
                        }
                }
                line = eol ? eol + 1 : NULL;
        }
}

static bool cpuinfo_has_flag(const char *text, const char *flag) {
        char flags[8192] = "";
        cpuinfo_field(text, "flags", flags, sizeof(flags));
        size_t flen = strlen(flag);
        for (char *p = flags; (p = strstr(p, flag)); p += flen)
                if ((p == flags || p[-1] == ' ') && (p[flen] == ' ' || p[flen] == '\0'))
                        return true;
        return false;
}

static void gather_cpuinfo(struct fsroot *fs, struct host_facts *h) {
        char *text;
        if (fsroot_read_alloc(fs, "/proc/cpuinfo", &text, NULL) < 0)
                return;
        cpuinfo_field(text, "model name", h->cpu_model, sizeof(h->cpu_model));
        if (!h->cpu_model[0]) /* POWER and Arm name the CPU differently */
                cpuinfo_field(text, "cpu", h->cpu_model, sizeof(h->cpu_model));
        cpuinfo_field(text, "vendor_id", h->cpu_vendor, sizeof(h->cpu_vendor));
        h->cpu_hypervisor_flag = cpuinfo_has_flag(text, "hypervisor");
        free(text);
}

/* One /proc/modules line: "name size refcount deps state address [taints]". Garbage (a
 * damaged capture, binary bytes) must not pass for a list that lacks a module. */
static bool module_line_valid(const char *line) {
        size_t n = strspn(line, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
        return n > 0 && n < 64 && line[n] == ' ' && line[n + 1] >= '0' && line[n + 1] <= '9';
}

static void gather_modules(struct fsroot *fs, struct host_facts *h) {
        char *text;
        int r = fsroot_read_alloc(fs, "/proc/modules", &text, NULL);
        if (r < 0) {
                h->modules_errno = r;
                return;
        }
        for (char *line = text; line && *line;) {
                char *eol = strchr(line, '\n');
                if (eol)
                        *eol = '\0';
                if (*line && !module_line_valid(line)) {
                        h->modules_errno = -EBADMSG;
                        break;
                }
                char *sp = strchr(line, ' ');
                if (sp)
                        *sp = '\0';
                if (*line && strv_push(&h->modules, line) < 0) {
                        h->modules_errno = -ENOMEM;
                        break;
                }
                line = eol ? eol + 1 : NULL;
        }
        free(text);
        if (h->modules_errno) {
                strv_free(h->modules);
                h->modules = NULL;
                return;
        }
        h->have_modules = true;
}

static void read_into(struct fsroot *fs, const char *path, char *buf, size_t size) {
        if (fsroot_read_str(fs, path, buf, size) < 0)
                buf[0] = '\0';
}

int host_gather(struct fsroot *fs, struct host_facts *h) {
        memset(h, 0, sizeof(*h));
        read_into(fs, "/proc/sys/kernel/hostname", h->hostname, sizeof(h->hostname));
        /* A capture or a container may lack the kernel's name ("(none)" before it is set):
         * the name the system gives itself at boot is the next best. */
        if (!h->hostname[0] || strcmp(h->hostname, "(none)") == 0) {
                read_into(fs, "/etc/hostname", h->hostname, sizeof(h->hostname));
                h->hostname[strcspn(h->hostname, " \t\n#")] = '\0';
        }
        read_into(fs, "/proc/sys/kernel/osrelease", h->kernel_release, sizeof(h->kernel_release));
        read_into(fs, "/proc/version", h->kernel_version, sizeof(h->kernel_version));
        char uptime[64];
        if (fsroot_read_str(fs, "/proc/uptime", uptime, sizeof(uptime)) == 0) {
                char *end;
                double v = strtod(uptime, &end);
                if (end != uptime && v > 0 && v < 1e10)
                        h->uptime_s = v;
        }
        read_into(fs, "/sys/class/dmi/id/sys_vendor", h->dmi_sys_vendor, sizeof(h->dmi_sys_vendor));
        read_into(fs, "/sys/class/dmi/id/product_name", h->dmi_product_name, sizeof(h->dmi_product_name));

        char *text;
        if (fsroot_read_alloc(fs, "/etc/os-release", &text, NULL) == 0 ||
            fsroot_read_alloc(fs, "/usr/lib/os-release", &text, NULL) == 0) {
                (void)parse_env_value(text, "PRETTY_NAME", h->os_name, sizeof(h->os_name));
                free(text);
        }

        char online[1024];
        unsigned n;
        if (fsroot_read_str(fs, "/sys/devices/system/cpu/online", online, sizeof(online)) == 0 &&
            parse_cpulist(online, NULL, 0, &n) == 0)
                h->n_cpus_online = n;

        size_t len;
        if (fsroot_read_alloc(fs, "/proc/cmdline", &h->cmdline, &len) == 0)
                while (len > 0 && h->cmdline[len - 1] == '\n')
                        h->cmdline[--len] = '\0';

        if (fsroot_read_alloc(fs, "/proc/meminfo", &text, NULL) == 0) {
                (void)parse_meminfo_kb(text, "MemTotal", &h->mem_total_kb);
                free(text);
        }
        gather_cpuinfo(fs, h);
        gather_modules(fs, h);
        return 0;
}

void host_facts_done(struct host_facts *h) {
        free(h->cmdline);
        strv_free(h->modules);
        memset(h, 0, sizeof(*h));
}

bool host_module_loaded(const struct host_facts *h, const char *name) {
        return strv_contains(h->modules, name);
}
