/* libFuzzer target: /proc/PID/status as gpuvet top reads it (src/top/top_proc.c): the
 * Name, Uid and NSpid lines of any text, which a process can shape (its Name is its
 * own comm) and another kernel can format differently. */
#include "top/top_proc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct top_status st;
        int r = top_status_parse((const char *)data, size, &st);
        if (r != 0 && r != -22)
                abort();
        if (st.n_nspid > TOP_NSPID_MAX)
                abort();
        if (memchr(st.name, '\0', sizeof(st.name)) == NULL)
                abort(); /* the name always ends inside its buffer */
        for (const char *c = st.name; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                        abort(); /* no control byte reaches the terminal */
        if (st.n_nspid && memchr(data, 'N', size) == NULL)
                abort(); /* PIDs only from an NSpid line */
        return 0;
}
