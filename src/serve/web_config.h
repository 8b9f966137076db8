/* The web configuration file of `gpuvet serve --web.config.file FILE`, in the Prometheus
 * exporter-toolkit format (docs/serve.md, "TLS and basic auth"):
 *
 *     tls_server_config:
 *       cert_file: server.crt      # relative paths: from the file's directory
 *       key_file: server.key
 *       min_version: TLS13         # optional: TLS12 (the default) or TLS13
 *     basic_auth_users:
 *       alice: $2b$12$...          # bcrypt hashes only
 *
 * The file is untrusted input (parsed with libyaml, fuzzed). */
#pragma once

#include <stddef.h>

struct web_user {
        char *name;
        char *hash; /* bcrypt: $2a$, $2b$ or $2y$ */
};

struct web_config {
        char *cert_file; /* NULL: no TLS */
        char *key_file;
        unsigned int tls_min_version; /* 12 or 13; 0: not given (TLS 1.2) */
        size_t n_users;  /* 0: no basic auth */
        struct web_user *users;
};

/* Parse len bytes; relative paths are joined to dir (NULL: kept as they are). Returns 0, or
 * -EINVAL with why in err (the key and line), -ENOMEM. */
int web_config_parse(const char *buf, size_t len, const char *dir, struct web_config *ret, char *err,
                     size_t errsize);

void web_config_done(struct web_config *c);
