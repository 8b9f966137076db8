/* core/redact: secrets out of the files `gpuvet snapshot` copies (reliability review N13). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/redact.h"

#define M "\"" REDACT_MARK "\""

static char *run(const char *path, const char *in, size_t len, unsigned *n) {
        char *text = malloc(len + 1);
        assert_non_null(text);
        memcpy(text, in, len + 1);
        size_t out_len = len;
        assert_int_equal(redact_file(path, &text, &out_len, n), 0);
        return text;
}

static void expect(const char *path, const char *in, const char *want, unsigned want_n) {
        unsigned n;
        char *out = run(path, in, strlen(in), &n);
        assert_string_equal(out, want);
        assert_int_equal(n, want_n);
        free(out);
}

static void test_keys(void **state) {
        (void)state;
        static const char *const secret[] = {"password", "Password", "auth", "identitytoken", "registry_auth",
                                             "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "api_key", "db_passwd"};
        static const char *const plain[] = {"username", "author", "authority", "path", "BinaryName", "CUDA_VISIBLE_DEVICES",
                                            "endpoint", ""};
        for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++)
                assert_true(redact_key_is_secret(secret[i], strlen(secret[i])));
        for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
                assert_false(redact_key_is_secret(plain[i], strlen(plain[i])));
}

static void test_toml(void **state) {
        (void)state;
        expect("etc/containerd/config.toml",
               "[plugins.\"io.containerd.grpc.v1.cri\".registry.configs.\"r\".auth]\n"
               "  username = \"bob\"\n  password = \"hun\\\"ter2\" # the key\n  auth = 'Ym9i'\n"
               "  identitytoken = \"\"\"multi\nline\"\"\"\n",
               "[plugins.\"io.containerd.grpc.v1.cri\".registry.configs.\"r\".auth]\n"
               "  username = \"bob\"\n  password = " M " # the key\n  auth = " M "\n"
               "  identitytoken = " M "\n",
               3);
        /* dotted keys, inline tables, a bare value; a secret word as a value or in a comment stays */
        expect("etc/containerd/conf.d/99.toml",
               "a.b.\"password\" = \"x\"\nr = { user = \"u\", password = \"p\" }\ntoken = 1234\n"
               "mode = \"password\" # token = \"c\"\n",
               "a.b.\"password\" = " M "\nr = { user = \"u\", password = " M " }\ntoken = " M "\n"
               "mode = \"password\" # token = \"c\"\n",
               3);
}

static void test_json(void **state) {
        (void)state;
        expect("etc/docker/daemon.json",
               "{\"runtimes\": {\"nvidia\": {\"path\": \"nvidia-container-runtime\"}},\n"
               " \"auths\": {\"r\": {\"auth\"\n   : \"Ym9i\", \"email\": \"a@b\"}}, \"token\": 5, \"password\": null}",
               "{\"runtimes\": {\"nvidia\": {\"path\": \"nvidia-container-runtime\"}},\n"
               " \"auths\": {\"r\": {\"auth\"\n   : " M ", \"email\": \"a@b\"}}, \"token\": " M ", \"password\": " M "}",
               3);
}

static void test_env(void **state) {
        (void)state;
        expect("etc/environment", "PATH=\"/usr/bin\"\nexport HF_TOKEN=\"abc\"\nDB_PASSWORD=x y\n",
               "PATH=\"/usr/bin\"\nexport HF_TOKEN=" REDACT_MARK "\nDB_PASSWORD=" REDACT_MARK "\n", 2);
        static const char environ_in[] = "A=1\0GITHUB_TOKEN=ghp\0B=2";
        unsigned n;
        char *out = run("proc/self/environ", environ_in, sizeof(environ_in) - 1, &n);
        static const char environ_want[] = "A=1\0GITHUB_TOKEN=" REDACT_MARK "\0B=2";
        assert_int_equal(n, 1);
        assert_memory_equal(out, environ_want, sizeof(environ_want) - 1);
        free(out);
}

/* Files of no known format, and files with nothing secret, are left as they are. */
static void test_untouched(void **state) {
        (void)state;
        expect("proc/cpuinfo", "password = \"x\"\n", "password = \"x\"\n", 0);
        expect("etc/containerd/config.toml", "version = 2\n[plugins]\n", "version = 2\n[plugins]\n", 0);
        expect("etc/containerd/config.toml", "password = \"unterminated\n", "password = " M "\n", 1);
}

/* Malformed files found by fuzz_redact: the line after one that breaks off must still be
 * judged on its own. */
static void test_broken_lines(void **state) {
        (void)state;
        /* A one-line string ending in a backslash does not run on into the next line. */
        expect("etc/docker/daemon.json", "{\"x\": \"a\\\n\"password\": \"hunter2\"\n",
               "{\"x\": \"a\\\n\"password\": " M "\n", 1);
        expect("etc/containerd/config.toml", "x = \"a\\\npassword = \"hunter2\"\n",
               "x = \"a\\\npassword = " M "\n", 1);
        /* `auth:` with its value missing, then a key: that key's value is judged by it. */
        expect("etc/docker/daemon.json", "auth:\n\"password\": \"hunter2\"\n", "auth:\n" M ": " M "\n", 2);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_keys), cmocka_unit_test(test_toml),      cmocka_unit_test(test_json),
                cmocka_unit_test(test_env),  cmocka_unit_test(test_untouched),
                cmocka_unit_test(test_broken_lines),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
