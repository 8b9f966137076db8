/* Kernel state that decides whether the NVIDIA module can load: UEFI Secure Boot,
 * module signature enforcement and lockdown. (Release and command line are host facts.) */
#pragma once

#include <stdbool.h>

struct fsroot;
struct facts;

/* The EFI global-variable GUID that SecureBoot lives under (UEFI spec 2.x, 3.3). */
#define KERNEL_EFI_GLOBAL_GUID "8be4df61-93ca-11d2-aa0d-00e098032b8c"

struct kernel_facts {
        bool efi_booted;             /* /sys/firmware/efi exists: booted through UEFI */
        int secure_boot;             /* 1 on, 0 off, -1 unknown */
        /* Why secure_boot is unknown: -ENOTCONN efivarfs not mounted, -EBADMSG a value
         * of the wrong size, or the read error; 0 when known. */
        int secure_boot_errno;
        char secure_boot_source[160]; /* the variable file read (or tried) */

        int sig_enforce;             /* /sys/module/module/parameters/sig_enforce: 1, 0, -1 unknown */
        int sig_enforce_errno;       /* -ENOENT: kernel built without CONFIG_MODULE_SIG */

        char lockdown[32];           /* "none", "integrity", "confidentiality"; "" unknown */
        int lockdown_errno;          /* -EACCES: root-only here; -ENOENT: no lockdown LSM */
};

int kernel_gather(struct fsroot *fs, struct facts *f);
void kernel_facts_done(struct kernel_facts *x);
