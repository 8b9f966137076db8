/* Secrets out of copied configuration files: what `gpuvet snapshot` puts in an archive is
 * meant to be handed to others, and some files the checks read hold credentials
 * (containerd's registry auth, a token in /etc/environment or in gpuvet's own environment).
 *
 * The value of every key that names a secret (password, passwd, secret, token, credential,
 * api key, private or access key, auth) is replaced by REDACT_MARK; the rest of the file is
 * kept byte for byte, so the checks judge the copy as they judge the original. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#define REDACT_MARK "REDACTED-by-gpuvet"

/* Whether a key (a TOML or JSON key, an environment variable's name) names a secret. */
bool redact_key_is_secret(const char *key, size_t len);

/* Redact *text (len bytes, not necessarily NUL-terminated) in place of the file at path
 * (relative to the root, "etc/containerd/config.toml"), by the format its path says: TOML
 * (*.toml), JSON (*.json), environment assignments (etc/environment, etc/profile.d/ *,
 * proc/ * /environ). Other paths are left alone. *text is replaced (the old freed) only
 * when something was redacted; *n_redacted gets how many values. 0 or -ENOMEM. */
int redact_file(const char *path, char **text, size_t *len, unsigned *n_redacted);
