/* Identity of the host: names, kernel, OS, CPU model, command line, loaded modules. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct fsroot;

struct host_facts {
        char hostname[256];
        char kernel_release[128]; /* "6.8.0-45-generic" */
        char kernel_version[512]; /* /proc/version */
        char os_name[256];        /* PRETTY_NAME of os-release */
        char cpu_model[256];
        char cpu_vendor[64];
        unsigned n_cpus_online;
        bool cpu_hypervisor_flag; /* "hypervisor" in cpuinfo flags: we run in a VM */
        char *cmdline;            /* NULL when /proc/cmdline is unreadable */
        uint64_t mem_total_kb;    /* 0 when unknown */
        char **modules;           /* loaded modules (/proc/modules), NULL-terminated */
        bool have_modules;
        int modules_errno;        /* why not: a read error, -EBADMSG (not /proc/modules' format) */
        char dmi_sys_vendor[128], dmi_product_name[128]; /* "" when unknown */
        double uptime_s;          /* /proc/uptime's first field; 0 when unknown */
};

int host_gather(struct fsroot *fs, struct host_facts *ret);
void host_facts_done(struct host_facts *h);
bool host_module_loaded(const struct host_facts *h, const char *name);
