/* libFuzzer target: serve's --web.config.file reader (src/serve/web_config.c), any bytes
 * as the YAML file, relative paths joined to a fixed directory. */
#include "serve/web_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct web_config c;
        char err[256] = "";
        if (web_config_parse((const char *)data, size, "/etc/gpuvet", &c, err, sizeof(err)) != 0) {
                if (!err[0])
                        abort(); /* a refusal always says why */
                return 0;
        }
        if (!!c.cert_file != !!c.key_file)
                abort(); /* both or neither */
        if (c.cert_file && (c.cert_file[0] != '/' || c.key_file[0] != '/'))
                abort(); /* relative paths were joined */
        for (size_t i = 0; i < c.n_users; i++)
                if (!c.users[i].name[0] || strlen(c.users[i].hash) != 60 || strchr(c.users[i].name, ':'))
                        abort();
        web_config_done(&c);
        return 0;
}
