/* kernel: the running kernel's release, the command-line parameters that matter for GPU
 * work, and Secure Boot / module signing, the classic reason an nvidia module won't load. */
#include "checks/check.h"
#include "core/array.h"
#include "core/strparse.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NVIDIA's open-gpu-kernel-modules README (R570 and later) and the R570+ driver README
 * require Linux 4.15 or newer; R550's README still listed 3.10. */
#define KERNEL_MIN_MAJOR 4
#define KERNEL_MIN_MINOR 15

static const char grub_remedy_tail[] =
        "from GRUB_CMDLINE_LINUX in /etc/default/grub, then `update-grub` (Debian/Ubuntu) or "
        "`grub2-mkconfig -o /boot/grub2/grub.cfg` (RHEL), and reboot.";

static void run_version(const struct check_info *self, const struct facts *f, struct report *rep) {
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/proc/sys/kernel/osrelease");
        if (f->host.kernel_version[0])
                result_evidence(r, "proc_version", "%s", f->host.kernel_version);
        const char *rel = f->host.kernel_release;
        unsigned major, minor;
        int n = 0;
        if (!rel[0] || sscanf(rel, "%u.%u%n", &major, &minor, &n) != 2 || n == 0) {
                if (!rel[0] && check_skip_capture_lacks(r, f, "/proc/sys/kernel/osrelease"))
                        return;
                result_observed(r, "%s", rel[0] ? rel : "unknown");
                result_status(r, STATUS_ERROR, "cannot read a kernel release from /proc/sys/kernel/osrelease%s%s",
                              rel[0] ? ": " : "", rel);
                result_remedy(r, "Check that /proc is mounted (`uname -r` shows the release).");
                return;
        }
        result_observed(r, "%s", rel);
        result_expected(r, "Linux %d.%d or newer", KERNEL_MIN_MAJOR, KERNEL_MIN_MINOR);
        if (major < KERNEL_MIN_MAJOR || (major == KERNEL_MIN_MAJOR && minor < KERNEL_MIN_MINOR)) {
                result_status(r, STATUS_WARN,
                              "kernel %s is older than %d.%d, the oldest current NVIDIA drivers (R570 and later) "
                              "build against",
                              rel, KERNEL_MIN_MAJOR, KERNEL_MIN_MINOR);
                result_remedy(r, "Move to a supported distribution kernel (the OS's current LTS release), or stay on "
                                 "the R550 driver branch, whose README still lists Linux 3.10.");
                return;
        }
        result_status(r, STATUS_PASS, "kernel %s", rel);
}

CHECK_INFO(kernel_version, "kernel", "kernel.version", LEVEL_QUICK, 0,
           "Kernel release (informational; warns below 4.15)",
           run_version);

/* Parameters worth showing for GPU work; their meaning is in docs/checks/kernel.md. */
static const char *const relevant[] = {
        "iommu",           "intel_iommu",     "amd_iommu",          "iommu.passthrough", "iommu.strict",
        "pci",             "pcie_aspm",       "pcie_port_pm",       "nomodeset",         "nouveau.modeset",
        "rd.driver.blacklist", "modprobe.blacklist", "module_blacklist", "vfio-pci.ids", "default_hugepagesz",
        "hugepagesz",      "hugepages",       "transparent_hugepage", "isolcpus",        "nohz_full",
        "rcu_nocbs",       "processor.max_cstate", "intel_idle.max_cstate", "idle",      "mitigations",
        "numa_balancing",  "init_on_alloc",
};

static bool is_relevant(const char *key, size_t len) {
        /* Driver options given on the command line: nvidia.NVreg_*, nvidia-drm.modeset ... */
        if (len > 7 && (strncmp(key, "nvidia.", 7) == 0 || strncmp(key, "nvidia-", 7) == 0 ||
                        strncmp(key, "nvidia_", 7) == 0))
                return true;
        for (size_t i = 0; i < ARRAY_COUNT(relevant); i++)
                if (strlen(relevant[i]) == len && strncmp(relevant[i], key, len) == 0)
                        return true;
        return false;
}

struct harmful {
        const char *word; /* "pci=noaer": a pci= option, or key=value */
        const char *why;
};

/* Only parameters whose harm is documented by the kernel itself. */
static const struct harmful harmful[] = {
        {"pci=noaer", "pci=noaer turns PCIe Advanced Error Reporting off: GPU link errors go unreported"},
        {"pci=nommconf", "pci=nommconf disables MMCONFIG: PCIe extended config space (AER, ACS, Resizable BAR) is "
                         "unreachable"},
        {"pcie_aspm=force", "pcie_aspm=force enables ASPM on devices that do not claim to support it; the kernel "
                            "documentation warns it may cause lockups"},
};

static void append(char *buf, size_t size, const char *sep, const char *s, size_t len) {
        size_t used = strlen(buf);
        if (used + 1 >= size)
                return;
        snprintf(buf + used, size - used, "%s%.*s", used ? sep : "", (int)len, s);
}

/* Does the word match a harmful entry? pci= takes a comma-separated option list. */
static const struct harmful *harmful_word(const char *word, size_t len) {
        for (size_t i = 0; i < ARRAY_COUNT(harmful); i++) {
                const char *h = harmful[i].word;
                const char *eq = strchr(h, '=');
                size_t klen = (size_t)(eq - h) + 1;
                if (len < klen || strncmp(word, h, klen) != 0)
                        continue;
                const char *v = word + klen, *end = word + len;
                if (strncmp(h, "pci=", 4) != 0) {
                        if ((size_t)(end - v) == strlen(eq + 1) && strncmp(v, eq + 1, (size_t)(end - v)) == 0)
                                return &harmful[i];
                        continue;
                }
                while (v < end) {
                        const char *comma = memchr(v, ',', (size_t)(end - v));
                        size_t olen = (size_t)((comma ? comma : end) - v);
                        if (olen == strlen(eq + 1) && strncmp(v, eq + 1, olen) == 0)
                                return &harmful[i];
                        v = comma ? comma + 1 : end;
                }
        }
        return NULL;
}

static void run_cmdline(const struct check_info *self, const struct facts *f, struct report *rep) {
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/proc/cmdline");
        if (!f->host.cmdline) {
                if (check_skip_capture_lacks(r, f, "/proc/cmdline"))
                        return;
                result_status(r, STATUS_ERROR, "cannot read /proc/cmdline: the kernel parameters are unknown");
                result_remedy(r, "Check that /proc is mounted (`cat /proc/cmdline`).");
                return;
        }
        result_evidence(r, "cmdline", "%s", f->host.cmdline);
        char shown[2048] = "", reasons[1024] = "", words[256] = "";
        const char *p = f->host.cmdline, *start;
        size_t len;
        while ((start = cmdline_next_word(&p, &len))) {
                size_t klen = strcspn(start, "= \t\n");
                if (klen > len)
                        klen = len;
                if (is_relevant(start, klen))
                        append(shown, sizeof(shown), " ", start, len);
                const struct harmful *h = harmful_word(start, len);
                if (h && !strstr(words, h->word)) {
                        append(reasons, sizeof(reasons), "; ", h->why, strlen(h->why));
                        append(words, sizeof(words), ", ", h->word, strlen(h->word));
                }
        }
        result_observed(r, "%s", shown[0] ? shown : "no GPU-relevant parameters");
        result_expected(r, "none of pci=noaer, pci=nommconf, pcie_aspm=force");
        if (reasons[0]) {
                result_status(r, STATUS_WARN, "%s", reasons);
                result_remedy(r, "Remove %s %s", words, grub_remedy_tail);
                return;
        }
        if (shown[0])
                result_status(r, STATUS_PASS, "GPU-relevant kernel parameters: %s", shown);
        else
                result_status(r, STATUS_PASS, "no GPU-relevant kernel parameters set (kernel defaults)");
}

CHECK_INFO(kernel_cmdline, "kernel", "kernel.cmdline", LEVEL_QUICK, 0,
           "Kernel command-line parameters that matter for GPU work",
           run_cmdline);

static const char secure_boot_remedy[] =
        "Either sign the module: enrol the DKMS signing certificate with `mokutil --import "
        "/var/lib/dkms/mok.pub` (Ubuntu: /var/lib/shim-signed/mok/MOK.der), reboot and confirm the "
        "enrolment in the blue MOK manager screen, rebuild with `dkms autoinstall`, then `modprobe "
        "nvidia`; or install modules your distribution signs (Ubuntu: `ubuntu-drivers install "
        "--gpgpu`, which uses the signed linux-modules-nvidia packages). `dmesg | grep -iE 'module "
        "verification failed|key was rejected|Lockdown'` confirms the cause. Turning Secure Boot off in "
        "the firmware also works, at the cost of boot integrity.";

static void describe_state(const struct kernel_facts *k, char *buf, size_t size) {
        snprintf(buf, size, "Secure Boot %s, module signature enforcement %s, lockdown %s",
                 k->secure_boot == 1   ? "on"
                 : k->secure_boot == 0 ? "off"
                                       : "unknown",
                 k->sig_enforce == 1   ? "on"
                 : k->sig_enforce == 0 ? "off"
                                       : "unknown",
                 k->lockdown[0] ? k->lockdown : "unknown");
}

static void run_secure_boot(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct kernel_facts *k = &f->kernel;
        const struct nvidia_facts *x = &f->nvidia;
        struct result *r = result_new(rep, self, "host");
        if (!k->efi_booted) {
                result_evidence(r, "source", "/sys/firmware/efi");
                result_status(r, STATUS_SKIP, "not booted with UEFI (no /sys/firmware/efi): no Secure Boot");
                return;
        }
        result_evidence(r, "source", "%s", k->secure_boot_source);
        result_evidence(r, "sig_enforce", "%s",
                        k->sig_enforce == 1 ? "Y" : k->sig_enforce == 0 ? "N" : "unknown");
        result_evidence(r, "lockdown", "%s",
                        k->lockdown[0]                  ? k->lockdown
                        : k->lockdown_errno == -EACCES ? "unknown (needs root to read /sys/kernel/security/lockdown)"
                                                        : "unknown");
        if (x->module_loaded)
                result_evidence(r, "nvidia_taint", "%s",
                                !x->have_taint ? "unknown" : x->module_taint[0] ? x->module_taint : "none");
        if (k->secure_boot < 0) {
                if (k->secure_boot_errno == -ENOTCONN) {
                        result_status(r, STATUS_SKIP,
                                      "efivarfs is not mounted at /sys/firmware/efi/efivars: Secure Boot state unknown");
                        return;
                }
                result_status(r, STATUS_ERROR, "cannot read the Secure Boot state from %s: %s", k->secure_boot_source,
                              k->secure_boot_errno == -EBADMSG ? "unexpected size or value"
                                                               : strerror(-k->secure_boot_errno));
                result_remedy(r, "Check with `mokutil --sb-state`.");
                return;
        }
        char state[192];
        describe_state(k, state, sizeof(state));
        result_observed(r, "%s", state);
        if (k->secure_boot == 0) {
                result_expected(r, "any (unsigned modules load)");
                result_status(r, STATUS_PASS, "Secure Boot is off: the nvidia module loads signed or not");
                return;
        }
        result_expected(r, "nvidia module loaded (signed)");
        /* Taint E: the kernel loaded a module without a valid signature, which Secure Boot
         * permits only while enforcement is off (sig_enforce N, no lockdown). */
        bool unsigned_loaded = x->module_loaded && x->have_taint && strchr(x->module_taint, 'E');
        if (x->module_loaded) {
                if (unsigned_loaded)
                        result_status(r, STATUS_PASS,
                                      "Secure Boot is on and the nvidia module is loaded unsigned (taint E): only "
                                      "because signature enforcement is off");
                else
                        result_status(r, STATUS_PASS, "Secure Boot is on and the nvidia module is loaded");
                return;
        }
        /* With lockdown active the kernel verifies module signatures even when
         * sig_enforce reads N (module_sig_check() asks the lockdown LSM), so only both
         * off means unsigned modules load. */
        if (k->sig_enforce == 0 && strcmp(k->lockdown, "none") == 0) {
                result_status(r, STATUS_PASS,
                              "Secure Boot is on but module signatures are not enforced (sig_enforce N, lockdown "
                              "none): it does not keep nvidia from loading");
                return;
        }
        if (check_count_host_gpus(f) == 0) {
                result_status(r, STATUS_PASS, "Secure Boot is on; no GPU here needs the nvidia module%s",
                              f->gpus.n ? " (all bound to vfio-pci)" : "");
                return;
        }
        result_status(r, STATUS_FAIL,
                      "Secure Boot is on and the nvidia module is not loaded: an unsigned module is refused");
        result_remedy(r, "%s", secure_boot_remedy);
}

CHECK_INFO(kernel_secure_boot, "kernel", "kernel.secure_boot", LEVEL_QUICK, NEED_NVIDIA | NEED_KERNEL,
           "Secure Boot and module signing let the nvidia module load",
           run_secure_boot);
