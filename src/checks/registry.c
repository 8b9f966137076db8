#include "checks/check.h"
#include "core/array.h"
#include "data/gpudb.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const struct check_info *const check_registry[] = {
#define CHECK(name) &check_##name,
#include "checks/checks.def"
#undef CHECK
};

const size_t check_registry_count = ARRAY_COUNT(check_registry);

const struct check_info *check_find(const char *id) {
        for (size_t i = 0; i < check_registry_count; i++)
                if (strcmp(check_registry[i]->id, id) == 0)
                        return check_registry[i];
        return NULL;
}

const char *gpu_subject(const struct facts *f, size_t gpu_index) {
        return gpu_pci(f, gpu_index)->addr;
}

size_t check_gpus_bound_to(const struct facts *f, const char *driver) {
        size_t n = 0;
        for (size_t i = 0; i < f->gpus.n; i++)
                if (strcmp(gpu_pci(f, i)->driver, driver) == 0)
                        n++;
        return n;
}

size_t check_count_host_gpus(const struct facts *f) {
        size_t n = 0;
        for (size_t i = 0; i < f->gpus.n; i++)
                if (strcmp(gpu_pci(f, i)->driver, "vfio-pci") != 0)
                        n++;
        return n;
}

bool check_gpus_unknown(const struct facts *f) {
        /* No /sys/bus/pci at all is a machine without PCI (or a capture without it);
         * anything else that stops the listing leaves the GPUs unknown. */
        return f->gpus.n == 0 && f->pci.list_errno != 0 && f->pci.list_errno != ENOENT;
}

const char *check_no_gpu_reason(const struct facts *f) {
        return check_gpus_unknown(f) ? "the GPUs are unknown: /sys/bus/pci/devices cannot be listed (see gpu.inventory)"
                                     : "no NVIDIA GPU on the PCI bus";
}

bool check_skip_without_gpus(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (f->gpus.n > 0)
                return false;
        struct result *r = result_new(rep, self, "host");
        result_status(r, STATUS_SKIP, "%s", check_no_gpu_reason(f));
        return true;
}

struct result *check_host_result_with_gpus(const struct check_info *self, const struct facts *f, struct report *rep) {
        if (check_skip_without_gpus(self, f, rep))
                return NULL;
        return result_new(rep, self, "host");
}

const char *check_errtext(int err) {
        return err == -EINVAL || err == -ERANGE ? "malformed value" : strerror(-err);
}

bool check_judge_read_error(struct result *r, int err, const char *path, const char *absent, const char *by_hand) {
        if (err == 0)
                return false;
        if (err == -ENOENT) {
                result_status(r, STATUS_SKIP, "%s", absent);
                return true;
        }
        result_status(r, STATUS_ERROR, "cannot read %s: %s", path, check_errtext(err));
        if (by_hand)
                result_remedy(r, "%s", by_hand);
        else
                result_remedy(r, "Read the file by hand (`cat %s`).", path);
        return true;
}

const struct policy_thresholds *check_thresholds(const struct facts *f) {
        return f->policy ? &f->policy->thresholds : &policy_thresholds_default;
}

bool check_skip_capture_lacks(struct result *r, const struct facts *f, const char *path) {
        /* Deepest first: a capture with /proc but without the nvidia module's directory. */
        static const struct {
                const char *dir;
                unsigned int bit;
        } trees[] = {{"/proc/driver/nvidia", CAPTURE_NVIDIA_PROC}, {"/proc/sys", CAPTURE_PROC_SYS},
                     {"/dev", CAPTURE_DEV},
                     {"/proc", CAPTURE_PROC},
                     {"/sys", CAPTURE_SYS}};
        for (size_t i = 0; i < ARRAY_COUNT(trees); i++) {
                size_t n = strlen(trees[i].dir);
                if (strncmp(path, trees[i].dir, n) != 0 || (path[n] != '\0' && path[n] != '/'))
                        continue;
                if (!(f->capture_lacks & trees[i].bit))
                        return false;
                result_evidence(r, "source", "%s", path);
                result_observed(r, "not in the capture");
                result_status(r, STATUS_SKIP, "the capture (--root) holds no %s: %s cannot be judged from it",
                              trees[i].dir, path);
                return true;
        }
        return false;
}
