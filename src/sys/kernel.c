#include "sys/kernel.h"
#include "core/fsroot.h"
#include "core/strparse.h"
#include "core/strv.h"
#include "sys/facts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EFIVARS_DIR "/sys/firmware/efi/efivars"
#define SECURE_BOOT_VAR "SecureBoot-" KERNEL_EFI_GLOBAL_GUID
/* The sysfs interface older kernels offer when efivarfs is not mounted: the raw value
 * without the attribute word. */
#define SECURE_BOOT_LEGACY "/sys/firmware/efi/vars/" SECURE_BOOT_VAR "/data"

/* efivarfs file: a 4-byte attribute word, then the variable's data; SecureBoot's data is
 * one byte, 1 = enabled. */
static void gather_secure_boot(struct fsroot *fs, struct kernel_facts *k) {
        k->secure_boot = -1;
        char *data;
        size_t len;
        snprintf(k->secure_boot_source, sizeof(k->secure_boot_source), "%s/%s", EFIVARS_DIR, SECURE_BOOT_VAR);
        int r = fsroot_read_alloc(fs, k->secure_boot_source, &data, &len);
        if (r == 0) {
                if (len == 5 && (unsigned char)data[4] <= 1)
                        k->secure_boot = (unsigned char)data[4];
                else
                        k->secure_boot_errno = -EBADMSG;
                free(data);
                return;
        }
        if (r != -ENOENT) {
                k->secure_boot_errno = r;
                return;
        }
        if (fsroot_read_alloc(fs, SECURE_BOOT_LEGACY, &data, &len) == 0) {
                snprintf(k->secure_boot_source, sizeof(k->secure_boot_source), "%s", SECURE_BOOT_LEGACY);
                if (len == 1 && (unsigned char)data[0] <= 1)
                        k->secure_boot = (unsigned char)data[0];
                else
                        k->secure_boot_errno = -EBADMSG;
                free(data);
                return;
        }
        /* No SecureBoot variable. With efivarfs mounted (it lists the firmware's
         * variables) that means firmware without Secure Boot support: off. An empty or
         * missing efivars directory means efivarfs is not mounted: unknown. */
        char **names;
        r = fsroot_list(fs, EFIVARS_DIR, &names);
        if (r == -ENOMEM) {
                k->secure_boot_errno = r;
                return;
        }
        if (r == 0 && names[0])
                k->secure_boot = 0;
        else
                k->secure_boot_errno = -ENOTCONN;
        if (r == 0)
                strv_free(names);
}

int kernel_gather(struct fsroot *fs, struct facts *f) {
        struct kernel_facts *k = &f->kernel;
        memset(k, 0, sizeof(*k));
        k->efi_booted = fsroot_is_dir(fs, "/sys/firmware/efi");
        if (k->efi_booted)
                gather_secure_boot(fs, k);
        else
                k->secure_boot = -1;

        char buf[16];
        bool b;
        k->sig_enforce = -1;
        int r = fsroot_read_str(fs, "/sys/module/module/parameters/sig_enforce", buf, sizeof(buf));
        if (r == 0 && (r = parse_bool(buf, &b)) == 0)
                k->sig_enforce = b;
        else
                k->sig_enforce_errno = r;

        /* "none [integrity] confidentiality": the bracketed word is the active mode. */
        char text[128];
        r = fsroot_read_str(fs, "/sys/kernel/security/lockdown", text, sizeof(text));
        if (r == 0 && (r = parse_bracketed_choice(text, k->lockdown, sizeof(k->lockdown))) == 0)
                return 0;
        k->lockdown[0] = '\0';
        k->lockdown_errno = r;
        return 0;
}

void kernel_facts_done(struct kernel_facts *x) { (void)x; }
