#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/compat.h"
#include "data/gpudb.h"
#include "tree.h"

static struct compat *c;
static struct gpudb *db;

static int load_builtin(void **state) {
        (void)state;
        char err[512];
        if (compat_load(NULL, &c, err, sizeof(err)) < 0 || gpudb_load(NULL, &db, err, sizeof(err)) < 0) {
                fprintf(stderr, "%s\n", err);
                return -1;
        }
        return 0;
}

static int free_builtin(void **state) {
        (void)state;
        c = compat_free(c);
        db = gpudb_free(db);
        return 0;
}

/* The GPU as detect describes it, from the built-in table. */
static struct compat_gpu gpu(uint32_t device) {
        const struct gpu_model *m = gpudb_find(db, 0x10de, device);
        assert_non_null(m);
        return (struct compat_gpu){.cc_major = m->cc_major, .cc_minor = m->cc_minor, .datacenter = m->datacenter,
                                   .arch = gpudb_arch(db, m->arch), .min_driver = m->min_driver};
}

#define V100 0x1db5
#define H100 0x2330
#define L40S 0x26b9
#define RTX4090 0x2684
#define RTX5090 0x2b85
#define B200 0x2901

static void test_max_cuda(void **state) {
        (void)state;
        assert_string_equal(compat_max_native(c, "550.54.15")->cuda, "12.4");
        assert_string_equal(compat_max_native(c, "535.104.05")->cuda, "12.2");
        assert_string_equal(compat_max_native(c, "580.65.06")->cuda, "13.0");
        assert_string_equal(compat_max_native(c, "525.60.13")->cuda, "12.0");
        assert_string_equal(compat_max_native(c, "570.26")->cuda, "12.8");
        assert_string_equal(compat_max_minor(c, "550.54.15")->cuda, "12.9");
        assert_string_equal(compat_max_minor(c, "580.65.06")->cuda, "13.5");
        assert_string_equal(compat_max_native(c, "595.58.03")->cuda, "13.2");
        assert_string_equal(compat_max_native(c, "610.43.02")->cuda, "13.3");
        /* CUDA 13.4 GA needs R615; 13.5 runs on R620's 620.70.06 (compat.json cites both). */
        assert_string_equal(compat_max_native(c, "615.71.09")->cuda, "13.4");
        assert_string_equal(compat_max_native(c, "620.70.06")->cuda, "13.5");
        assert_string_equal(compat_branch_of(c, "615.71.09")->id, "R615");
        assert_string_equal(compat_max_minor(c, "470.82.01")->cuda, "11.8");
        assert_null(compat_max_native(c, "440.33.01"));
        assert_null(compat_max_native(c, "garbage"));
        assert_null(compat_max_minor(c, ""));
}

static void test_lookups(void **state) {
        (void)state;
        assert_string_equal(compat_toolkit(c, "12.4.1.003")->min_driver, "550.54.14");
        assert_null(compat_toolkit(c, "12.7"));
        assert_true(compat_cuda_builds_sm(c, "11.8", 90));
        assert_false(compat_cuda_builds_sm(c, "11.7", 90));
        assert_false(compat_cuda_builds_sm(c, "12.6", 120));
        assert_true(compat_cuda_builds_sm(c, "12.8.1", 120));
        assert_false(compat_cuda_builds_sm(c, "13.0", 70));
        assert_string_equal(compat_newest_toolkit_for(c, 7, 0)->cuda, "12.9");
        assert_string_equal(compat_newest_toolkit_for(c, 7, 5)->cuda, "13.5");
        /* GA10x (sm_86) came with CUDA 11.1, not 11.0 (CUDA 11.1 release notes). */
        assert_false(compat_cuda_builds_sm(c, "11.0", 86));
        assert_true(compat_cuda_builds_sm(c, "11.1", 86));
        assert_true(compat_cuda_builds_sm(c, "12.9", 103));
        assert_false(compat_cuda_builds_sm(c, "12.8", 103));
        assert_string_equal(compat_recommendation(c, "volta")->branch->id, "R580");
        assert_int_equal(compat_recommendation(c, "volta")->last_branch, 580);
        assert_string_equal(compat_recommendation(c, "blackwell_consumer")->branch->id, "R580");
        assert_string_equal(compat_branch_of(c, "535.104.05")->eol, "2026-06");
        /* Every branch NVIDIA lists, with whether it is still supported (as of the data). */
        assert_false(compat_branch_of(c, "535.104.05")->supported);
        assert_true(compat_branch_of(c, "580.95.05")->supported);
        assert_string_equal(compat_branch_of(c, "580.95.05")->eol, "2028-06");
        assert_true(compat_branch_of(c, "595.58.03")->supported);
        assert_string_equal(compat_branch_of(c, "595.58.03")->kind, "PB");
        assert_string_equal(compat_branch_of(c, "610.43.02")->kind, "NFB");
        assert_false(compat_branch_of(c, "610.43.02")->supported);
        assert_null(compat_branch_of(c, "590.48.01")->eol);
        assert_true(compat_branch_of(c, "620.70.06")->supported);
        assert_false(compat_branch_of(c, "570.195.03")->supported);
        assert_string_equal(compat_recommendation(c, "pascal")->branch->id, "R580");
        assert_int_equal(compat_recommendation(c, "pascal")->last_branch, 580);
        assert_string_equal(compat_wheel(c, "cu132")->native_driver, "595.58.03");
        assert_null(compat_branch_of(c, "550.54.15"));
}

static void expect(struct compat_judgement *j, enum compat_verdict v, const char *reason) {
        assert_string_equal(compat_verdict_name(j->verdict), compat_verdict_name(v));
        assert_string_equal(j->reason, reason);
}

static void test_toolkits(void **state) {
        (void)state;
        struct compat_judgement j;
        struct compat_gpu h100 = gpu(H100), v100 = gpu(V100), b200 = gpu(B200);
        compat_judge_toolkit(c, compat_toolkit(c, "12.4"), &h100, "550.54.15", &j);
        expect(&j, COMPAT_NATIVE, "driver 550.54.15 >= 550.54.14, CUDA 12.4's own minimum");
        compat_judge_toolkit(c, compat_toolkit(c, "12.6"), &h100, "550.54.15", &j);
        expect(&j, COMPAT_MINOR,
               "driver 550.54.15 < 560.28.03 but >= 525.60.13: CUDA 12.x minor-version compatibility (no JIT of newer PTX)");
        compat_judge_toolkit(c, compat_toolkit(c, "13.0"), &h100, "550.54.15", &j);
        expect(&j, COMPAT_DRIVER_TOO_OLD, "CUDA 13.0 needs driver >= 580.65.06 (>= 580 with minor-version compatibility)");
        compat_judge_toolkit(c, compat_toolkit(c, "13.0"), &v100, "580.65.06", &j);
        expect(&j, COMPAT_ARCH_UNSUPPORTED, "CUDA 13.0 cannot build for sm_70");
        compat_judge_toolkit(c, compat_toolkit(c, "11.8"), &h100, "470.82.01", &j);
        expect(&j, COMPAT_GPU_UNSUPPORTED, "driver 470.82.01 predates Hopper (needs >= 520.61.05)");
        compat_judge_toolkit(c, compat_toolkit(c, "12.8"), &b200, "570.133.20", &j);
        expect(&j, COMPAT_NATIVE, "driver 570.133.20 >= 570.26, CUDA 12.8's own minimum");
        /* HGX B200 needs 570.133.20 (NVIDIA's GPU Operator); 570.26 was a CUDA GA driver. */
        compat_judge_toolkit(c, compat_toolkit(c, "12.8"), &b200, "570.124.06", &j);
        expect(&j, COMPAT_GPU_UNSUPPORTED, "driver 570.124.06 predates Blackwell (needs >= 570.133.20)");
        /* A model's own floor: GA10x (sm_86) came with the CUDA 11.1 driver. */
        struct compat_gpu a10 = gpu(0x2236);
        compat_judge_toolkit(c, compat_toolkit(c, "11.8"), &a10, "450.80.02", &j);
        expect(&j, COMPAT_GPU_UNSUPPORTED, "driver 450.80.02 predates this GPU (needs >= 455.23)");
        /* R580 is Volta's last branch. */
        compat_judge_toolkit(c, compat_toolkit(c, "12.9"), &v100, "590.44.01", &j);
        expect(&j, COMPAT_GPU_UNSUPPORTED, "driver 590.44.01 is past R580, the last branch that supports Volta");
        /* Without a driver only the architecture is judged. */
        compat_judge_toolkit(c, compat_toolkit(c, "12.9"), &v100, NULL, &j);
        expect(&j, COMPAT_NATIVE, "CUDA 12.9 has code for sm_70; needs driver >= 575.51.03");
}

static void test_wheels(void **state) {
        (void)state;
        struct compat_judgement j;
        struct compat_gpu h100 = gpu(H100), v100 = gpu(V100), l40s = gpu(L40S), rtx5090 = gpu(RTX5090);
        compat_judge_wheel(c, compat_wheel(c, "cu130"), &v100, "580.65.06", &j);
        expect(&j, COMPAT_ARCH_UNSUPPORTED,
               "cu130 has no kernels for sm_70 (ships sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 +PTX sm_120)");
        compat_judge_wheel(c, compat_wheel(c, "cu126"), &rtx5090, "575.57.08", &j);
        expect(&j, COMPAT_ARCH_UNSUPPORTED, "cu126 has no kernels for sm_120 (ships sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90)");
        compat_judge_wheel(c, compat_wheel(c, "cu121"), &h100, "525.60.13", &j);
        expect(&j, COMPAT_MINOR,
               "driver 525.60.13 < 530.30.02 but >= 525.60.13: CUDA 12.x minor-version compatibility (no JIT of newer PTX)");
        assert_string_equal(j.torch_first, "2.1");
        assert_string_equal(j.torch_last, "2.5");
        compat_judge_wheel(c, compat_wheel(c, "cu130"), &h100, "550.54.15", &j);
        expect(&j, COMPAT_DRIVER_TOO_OLD, "cu130 needs driver >= 580.65.06 (>= 580 with minor-version compatibility)");
        /* Volta is in cu128 only for torch 2.8 and 2.9. */
        compat_judge_wheel(c, compat_wheel(c, "cu128"), &v100, "570.124.06", &j);
        expect(&j, COMPAT_NATIVE, "driver 570.124.06 >= 570.26, cu128's own minimum");
        assert_string_equal(j.torch_first, "2.8");
        assert_string_equal(j.torch_last, "2.9");
        compat_judge_wheel(c, compat_wheel(c, "cu128"), &h100, "570.124.06", &j);
        assert_string_equal(j.torch_first, "2.7");
        assert_string_equal(j.torch_last, "2.11"); /* cu126, cu130 and cu132 from 2.12 */
        compat_judge_wheel(c, compat_wheel(c, "cu132"), &h100, "580.95.05", &j);
        expect(&j, COMPAT_MINOR,
               "driver 580.95.05 < 595.58.03 but >= 580: CUDA 13.x minor-version compatibility (no JIT of newer PTX)");
        assert_string_equal(j.torch_first, "2.12");
        /* No wheel ships sm_89: Ada runs the sm_86 cubins. */
        compat_judge_wheel(c, compat_wheel(c, "cu118"), &l40s, "550.54.15", &j);
        expect(&j, COMPAT_NATIVE, "driver 550.54.15 >= 520.61.05, cu118's own minimum");
        /* Blackwell needs R570 even where the wheel's minor-compat floor is lower. */
        compat_judge_wheel(c, compat_wheel(c, "cu128"), &rtx5090, "550.54.15", &j);
        expect(&j, COMPAT_GPU_UNSUPPORTED, "driver 550.54.15 predates Blackwell (RTX) (needs >= 570.26)");
}

/* A GPU of a compute capability major no cubin has (13.0), reached only through PTX. */
static void test_wheel_ptx_only(void **state) {
        (void)state;
        struct compat_judgement j;
        struct compat_gpu future = {.cc_major = 13, .cc_minor = 0, .arch = NULL};
        compat_judge_wheel(c, compat_wheel(c, "cu130"), &future, "580.95.05", &j);
        expect(&j, COMPAT_NATIVE, "driver 580.95.05 >= 580.65.06, cu130's own minimum");
        compat_judge_wheel(c, compat_wheel(c, "cu130"), &future, "580", &j);
        expect(&j, COMPAT_DRIVER_TOO_OLD,
               "cu130 reaches sm_130 only through PTX, which minor-version compatibility cannot JIT; needs driver >= 580.65.06");
}

static void test_ngc(void **state) {
        (void)state;
        struct compat_judgement j;
        struct compat_gpu h100 = gpu(H100), v100 = gpu(V100), rtx4090 = gpu(RTX4090), b200 = gpu(B200);
        compat_judge_ngc(c, compat_ngc_release(c, "25.08"), &v100, "580.65.06", &j);
        expect(&j, COMPAT_ARCH_UNSUPPORTED, "NGC 25.08 supports compute capability >= 7.5, the GPU is 7.0");
        compat_judge_ngc(c, compat_ngc_release(c, "25.06"), &v100, "575.57.08", &j);
        expect(&j, COMPAT_NATIVE, "driver 575.57.08 >= 575.57.08, the driver of NGC 25.06's CUDA 12.9.1.010");
        compat_judge_ngc(c, compat_ngc_release(c, "24.05"), &h100, "545.23.08", &j);
        expect(&j, COMPAT_MINOR, "driver 545.23.08 >= R545, the minimum NGC 24.05 states (CUDA minor-version compatibility)");
        compat_judge_ngc(c, compat_ngc_release(c, "24.05"), &h100, "535.104.05", &j);
        expect(&j, COMPAT_FORWARD,
               "datacenter GPU on R535 >= 535.86: forward compatibility through the image's cuda-compat");
        compat_judge_ngc(c, compat_ngc_release(c, "24.05"), &rtx4090, "535.104.05", &j);
        expect(&j, COMPAT_DRIVER_TOO_OLD, "NGC 24.05 needs driver >= R545 (native 550.54.15)");
        compat_judge_ngc(c, compat_ngc_release(c, "24.12"), &b200, "580.95.05", &j);
        expect(&j, COMPAT_ARCH_UNSUPPORTED, "NGC 24.12's CUDA 12.6.3 cannot build for sm_100");
        assert_true(compat_ngc_release(c, "25.10")->verified);
        assert_false(compat_ngc_release(c, "25.09")->verified);
        assert_null(compat_ngc_release(c, "25.07"));
        /* The 26.xx releases that could be sourced: 26.02 on CUDA 13.1.1, 26.03 on 13.2.0
         * (NVIDIA's CUDA DL 26.03 notes); neither verified against its PyTorch notes. */
        const struct compat_ngc *n = compat_ngc_release(c, "26.03");
        assert_non_null(n);
        assert_string_equal(n->cuda, "13.2.0");
        assert_false(n->verified);
        compat_judge_ngc(c, n, &b200, "595.45.04", &j);
        assert_int_equal(j.verdict, COMPAT_NATIVE);
        compat_judge_ngc(c, n, &b200, "580.95.05", &j);
        assert_int_equal(j.verdict, COMPAT_MINOR);
        assert_string_equal(compat_ngc_release(c, "26.02")->cuda, "13.1.1");
}

static char *dir;

static int make_dir(void **state) {
        (void)state;
        dir = tree_new("compat");
        return 0;
}

static int remove_dir(void **state) {
        (void)state;
        tree_remove(dir);
        dir = NULL;
        return 0;
}

/* A valid table with one slot (%s) where a test swaps in a broken list. */
#define HEAD "{\"schema\": \"gpuvet.compat/1\",\n" \
             "\"toolkits\": [{\"cuda\": \"12.4\", \"min_driver\": \"550.54.14\"}],\n" \
             "\"minor_compat\": [{\"cuda_major\": 12, \"min_driver\": \"525.60.13\"}],\n" \
             "\"driver_branches\": [{\"branch\": \"R580\", \"kind\": \"LTSB\", \"eol\": \"2028-08\", \"cuda_major\": 13, " \
             "\"reference_driver\": \"580.95.05\"}],\n" \
             "\"cuda_archs\": [{\"cuda_major\": 12, \"sms\": [{\"sm\": 90}]}],\n" \
             "\"pytorch_wheels\": [{\"tag\": \"cu124\", \"cuda\": \"12.4\", \"min_driver\": \"525.60.13\", " \
             "\"native_driver\": \"550.54.14\", \"builds\": [{\"torch_first\": \"2.4\", \"sm\": [90]}]}],\n"
#define RECS "\"recommendations\": [{\"arch\": \"hopper\", \"branch\": \"R580\"}],\n"
#define NGC "\"ngc\": [{\"release\": \"24.05\", \"cuda\": \"12.4.1\", \"pytorch\": \"2.4\", \"native_driver\": \"550.54.15\", " \
            "\"min_driver\": \"545\", \"min_cc\": \"6.0\", \"verified\": true}]}\n"

static void write_table(const char *text) { tree_put(dir, "compat.json", text); }

static void expect_error(const char *text, const char *message) {
        write_table(text);
        struct compat *x = NULL;
        char err[512] = "", want[640];
        assert_int_equal(compat_load(dir, &x, err, sizeof(err)), -EINVAL);
        assert_null(x);
        snprintf(want, sizeof(want), "%s/compat.json: %s", dir, message);
        assert_string_equal(err, want);
}

static void test_load_errors(void **state) {
        (void)state;
        struct compat *x = NULL;
        char err[512] = "";
        write_table(HEAD RECS NGC);
        assert_int_equal(compat_load(dir, &x, err, sizeof(err)), 0);
        assert_int_equal(x->n_ngc, 1);
        x = compat_free(x);

        expect_error(HEAD "\"recommendations\": [{\"arch\": \"hopper\", \"branch\": \"R999\"}],\n" NGC,
                     "recommendations[0] (hopper): \"branch\" must name one of \"driver_branches\"");
        expect_error(HEAD RECS "\"ngc\": [{\"release\": \"24.05\", \"cuda\": \"12.4.1\", \"pytorch\": \"2.4\", "
                               "\"native_driver\": \"R550\", \"min_driver\": \"545\", \"min_cc\": \"6.0\", \"verified\": true}]}",
                     "ngc[0] (24.05): \"native_driver\" must be a dotted version string such as \"550.54.14\"");
        expect_error(HEAD RECS "\"ngc\": [{\"release\": \"24.05\", \"cuda\": \"12.4.1\", \"pytorch\": \"2.4\", "
                               "\"native_driver\": \"550.54.15\", \"min_driver\": \"545\", \"min_cc\": \"6\", \"verified\": true}]}",
                     "ngc[0] (24.05): \"min_cc\" must look like \"7.5\"");
        expect_error(HEAD RECS "\"ngc\": []}", "\"ngc\" must be a non-empty list");
        expect_error("{\"schema\": \"gpuvet.compat/0\"}", "\"schema\" must be \"gpuvet.compat/1\"");
        expect_error("{\"schema\": \"gpuvet.compat/1\",\n\"toolkits\": [{\"cuda\": \"12\", \"min_driver\": \"1\"}]}",
                     "toolkits[0]: \"cuda\" must look like \"12.4\"");
        expect_error("{\"schema\": \"gpuvet.compat/1\",\n\n\"toolkits\": [}", "line 3: unexpected token near '}'");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_max_cuda),
                cmocka_unit_test(test_lookups),
                cmocka_unit_test(test_toolkits),
                cmocka_unit_test(test_wheels),
                cmocka_unit_test(test_wheel_ptx_only),
                cmocka_unit_test(test_ngc),
                cmocka_unit_test_setup_teardown(test_load_errors, make_dir, remove_dir),
        };
        return cmocka_run_group_tests(tests, load_builtin, free_builtin);
}
