/* memory: host memory settings for GPU work: transparent huge pages, swappiness, dirty
 * page-cache limits, swap, and host RAM against the GPUs' memory. */
#include "checks/check.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Above this swappiness the kernel swaps out anonymous memory (a trainer's pinned-adjacent
 * buffers, a data loader's prefetch queue) readily instead of dropping page cache. */
#define SWAPPINESS_MAX 10
/* Above this share of RAM in dirty pages, a checkpoint write on a host with a terabyte or
 * two builds hundreds of GiB of dirty cache and then blocks the writer for minutes while
 * storage drains it. The kernel default is 20. */
#define DIRTY_RATIO_MAX 40

#define SYSCTL_FILE "/etc/sysctl.d/90-gpu-memory.conf"

static bool swap_active(const struct memory_facts *m) {
        return (m->swaps_err == 0 && m->n_swaps > 0) || (m->swap_total_err == 0 && m->swap_total_kb > 0);
}

static void run_thp(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct memory_facts *m = &f->memory;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/sys/kernel/mm/transparent_hugepage/enabled, "
                        "/sys/kernel/mm/transparent_hugepage/defrag");
        if (check_judge_read_error(r, m->thp_enabled_err, "/sys/kernel/mm/transparent_hugepage/enabled",
                                   "the kernel has no transparent huge pages (/sys/kernel/mm/transparent_hugepage absent)",
                                   NULL))
                return;
        const char *defrag = m->thp_defrag_err == 0 ? m->thp_defrag : "unknown";
        result_evidence(r, "defrag", "%s", defrag);
        result_observed(r, "enabled=%s, defrag=%s", m->thp_enabled, defrag);
        result_expected(r, "enabled=always or enabled=madvise");
        if (strcmp(m->thp_enabled, "always") == 0 || strcmp(m->thp_enabled, "madvise") == 0) {
                result_status(r, STATUS_PASS, "transparent huge pages are available (%s)", m->thp_enabled);
                return;
        }
        if (strcmp(m->thp_enabled, "never") != 0) {
                result_status(r, STATUS_ERROR, "unexpected transparent_hugepage/enabled choice \"%s\"", m->thp_enabled);
                result_remedy(r, "Read the file by hand (`cat /sys/kernel/mm/transparent_hugepage/enabled`); it "
                              "should offer always, madvise and never.");
                return;
        }
        result_status(r, STATUS_WARN, "transparent huge pages are off: large host buffers (pinned staging, data "
                      "loader tensors) use 4 KiB pages and pay more TLB misses");
        result_remedy(r, "Run `gpuvet tune apply --set memory.thp=madvise` as root (`gpuvet tune revert` undoes "
                      "it); to keep it, add "
                      "`transparent_hugepage=madvise` to GRUB_CMDLINE_LINUX in /etc/default/grub, run `update-grub` "
                      "(or `grub2-mkconfig -o /boot/grub2/grub.cfg`) and reboot.");
}

CHECK_INFO(memory_thp, "memory", "memory.thp", LEVEL_QUICK, NEED_MEMORY,
           "Transparent huge pages are available (always or madvise)",
           run_thp);

static void run_swappiness(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct memory_facts *m = &f->memory;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/proc/sys/vm/swappiness, /proc/swaps");
        if (check_judge_read_error(r, m->swappiness_err, "/proc/sys/vm/swappiness", "/proc/sys/vm/swappiness absent",
                                   NULL))
                return;
        result_observed(r, "vm.swappiness=%" PRIu64 "%s", m->swappiness, swap_active(m) ? "" : " (no swap active)");
        result_expected(r, "vm.swappiness <= %d while swap is active", SWAPPINESS_MAX);
        if (!swap_active(m)) {
                result_status(r, STATUS_PASS, "no swap is active, so vm.swappiness=%" PRIu64 " has no effect",
                              m->swappiness);
                return;
        }
        if (m->swappiness <= SWAPPINESS_MAX) {
                result_status(r, STATUS_PASS, "vm.swappiness=%" PRIu64 " keeps anonymous memory in RAM", m->swappiness);
                return;
        }
        result_status(r, STATUS_WARN, "vm.swappiness=%" PRIu64 " with swap active: the kernel swaps out process "
                      "memory rather than page cache, stalling training and data loading", m->swappiness);
        result_remedy(r, "Run `gpuvet tune apply --set vm.swappiness=%d` (or `sysctl -w vm.swappiness=%d`), and "
                      "persist it: `echo 'vm.swappiness = %d' >> %s`.",
                      SWAPPINESS_MAX, SWAPPINESS_MAX, SWAPPINESS_MAX, SYSCTL_FILE);
}

CHECK_INFO(memory_swappiness, "memory", "memory.swappiness", LEVEL_QUICK, NEED_MEMORY,
           "vm.swappiness is low while swap is active",
           run_swappiness);

static void run_dirty(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct memory_facts *m = &f->memory;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/proc/sys/vm/{dirty_ratio,dirty_background_ratio,dirty_bytes,"
                        "dirty_background_bytes}");
        if (check_judge_read_error(r, m->dirty_ratio_err, "/proc/sys/vm/dirty_ratio", "/proc/sys/vm/dirty_ratio absent",
                                   NULL))
                return;
        /* Setting vm.dirty_bytes zeroes vm.dirty_ratio and the byte limit rules instead. */
        const bool bytes = m->dirty_bytes_err == 0 && m->dirty_bytes > 0;
        if (bytes && m->mem_total_err < 0) {
                result_status(r, STATUS_ERROR, "vm.dirty_bytes is set but /proc/meminfo MemTotal is unreadable (%s): "
                              "cannot compare it with RAM", check_errtext(m->mem_total_err));
                result_remedy(r, "Read the file by hand (`grep MemTotal /proc/meminfo`).");
                return;
        }
        const double pct = bytes ? (double)m->dirty_bytes / 1024.0 * 100.0 / (double)m->mem_total_kb
                                 : (double)m->dirty_ratio;
        char bg[64] = "unknown";
        if (m->dirty_background_bytes_err == 0 && m->dirty_background_bytes > 0)
                snprintf(bg, sizeof(bg), "vm.dirty_background_bytes=%" PRIu64, m->dirty_background_bytes);
        else if (m->dirty_background_ratio_err == 0)
                snprintf(bg, sizeof(bg), "vm.dirty_background_ratio=%" PRIu64, m->dirty_background_ratio);
        if (bytes)
                result_observed(r, "vm.dirty_bytes=%" PRIu64 " (%.0f%% of RAM), %s", m->dirty_bytes, pct, bg);
        else
                result_observed(r, "vm.dirty_ratio=%" PRIu64 ", %s", m->dirty_ratio, bg);
        result_expected(r, "dirty limit <= %d%% of RAM", DIRTY_RATIO_MAX);
        if (pct <= DIRTY_RATIO_MAX) {
                result_status(r, STATUS_PASS, "dirty page cache is limited to %.0f%% of RAM", pct);
                return;
        }
        result_status(r, STATUS_WARN, "dirty page cache may grow to %.0f%% of RAM: a large checkpoint write "
                      "then blocks for minutes while storage drains it", pct);
        result_remedy(r, "Run `gpuvet tune apply --set vm.dirty_ratio=20 --set vm.dirty_background_ratio=10` (or "
                      "`sysctl -w vm.dirty_ratio=20 vm.dirty_background_ratio=10`), and persist it: `printf "
                      "'vm.dirty_ratio = 20\\nvm.dirty_background_ratio = 10\\n' >> %s`.", SYSCTL_FILE);
}

CHECK_INFO(memory_dirty_ratio, "memory", "memory.dirty_ratio", LEVEL_QUICK, NEED_MEMORY,
           "The dirty page-cache limit is not excessive",
           run_dirty);

static void run_swap(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct memory_facts *m = &f->memory;
        struct result *r = result_new(rep, self, "host");
        result_evidence(r, "source", "/proc/swaps");
        if (check_judge_read_error(r, m->swaps_err, "/proc/swaps", "/proc/swaps absent (kernel without swap support)",
                                   NULL))
                return;
        result_expected(r, "reported only");
        if (m->n_swaps == 0) {
                result_observed(r, "no swap");
                result_status(r, STATUS_PASS, "no swap is configured");
                return;
        }
        result_observed(r, "%u area%s, %" PRIu64 " MiB, %" PRIu64 " MiB used", m->n_swaps, m->n_swaps == 1 ? "" : "s",
                        m->swaps_size_kb / 1024, m->swaps_used_kb / 1024);
        result_status(r, STATUS_PASS, "%u swap area%s with %" PRIu64 " MiB, %" PRIu64 " MiB in use", m->n_swaps,
                      m->n_swaps == 1 ? "" : "s", m->swaps_size_kb / 1024, m->swaps_used_kb / 1024);
}

CHECK_INFO(memory_swap, "memory", "memory.swap", LEVEL_QUICK, NEED_MEMORY, "Swap areas, reported", run_swap);

/* Host RAM against the GPUs' memory. NVIDIA states no ratio: its DGX systems range from
 * 0.87x (DGX B300) to over 3x (DGX H100), so the ratio is reported, and only a host well
 * below its GPUs (the policy's host_memory_min_ratio, 0.5 by default) warns. A Grace
 * superchip's GPU and CPU memory are one coherent address space over NVLink-C2C: there
 * the comparison does not apply. */
static void run_host_vs_gpu(const struct check_info *self, const struct facts *f, struct report *rep) {
        const struct memory_facts *m = &f->memory;
        struct result *r = check_host_result_with_gpus(self, f, rep);
        if (!r)
                return;
        result_evidence(r, "source", "/proc/meminfo, gpu table (%s)", f->db ? f->db->source : "built in");
        /* GPU memory_gb figures in the table are binary (an "80GB" H100 has 80 GiB). */
        double gpu_gib = 0;
        const char *c2c_model = NULL;
        for (size_t i = 0; i < f->gpus.n; i++) {
                const struct gpu_model *model = f->gpus.gpus[i].model;
                if (!model || model->memory_gb <= 0) {
                        char name[64];
                        gpu_describe(f, i, name, sizeof(name));
                        result_status(r, STATUS_SKIP, "the memory size of GPU %s (%s) is unknown: not in gpuvet's GPU "
                                      "table", gpu_subject(f, i), name);
                        return;
                }
                if (model->host_link && strcmp(model->host_link, "c2c") == 0 && !c2c_model)
                        c2c_model = model->name;
                gpu_gib += model->memory_gb;
        }
        if (check_judge_read_error(r, m->mem_total_err, "/proc/meminfo", "/proc/meminfo absent", NULL))
                return;
        double host_gib = (double)m->mem_total_kb / (1024.0 * 1024.0);
        double ratio = host_gib / gpu_gib;
        result_observed(r, "host %.1f GiB, GPUs %.0f GiB (%zu GPU%s): %.2fx", host_gib, gpu_gib, f->gpus.n,
                        f->gpus.n == 1 ? "" : "s", ratio);
        if (c2c_model) {
                result_status(r, STATUS_SKIP, "%s: CPU and GPU memory are one coherent address space over "
                                              "NVLink-C2C, so host RAM is not sized against GPU memory (%.2fx)",
                              c2c_model, ratio);
                return;
        }
        const double min_ratio = check_thresholds(f)->host_memory_min_ratio;
        result_expected(r, ">= %.2fx the GPUs' memory (NVIDIA states no ratio; its DGX systems ship 0.87x to 3.2x)",
                        min_ratio);
        if (ratio >= min_ratio) {
                result_status(r, STATUS_PASS, "host RAM is %.2fx the GPUs' total memory", ratio);
                return;
        }
        result_status(r, STATUS_WARN, "host RAM (%.1f GiB) is %.2fx the GPUs' total memory (%.0f GiB), below %.2fx: "
                      "pinned staging buffers and checkpoints that pass through host memory may not fit",
                      host_gib, ratio, gpu_gib, min_ratio);
        result_remedy(r, "Fit more RAM (at least %.0f GiB for %.2fx); until then, shard checkpoints and limit "
                      "data-loader workers and pinned memory. A site that sizes its nodes differently sets "
                      "thresholds.host_memory_min_ratio in the site policy.",
                      gpu_gib * min_ratio, min_ratio);
}

CHECK_INFO(memory_host_vs_gpu, "memory", "memory.host_vs_gpu", LEVEL_QUICK, NEED_MEMORY,
           "Host RAM against the GPUs' total memory: reported, warns only well below it",
           run_host_vs_gpu);
