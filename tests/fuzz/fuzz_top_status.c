/* libFuzzer target: /proc/PID/status as gpuvet top reads it (src/sys/proc.c): the
 * Name, Uid, NSpid and VmRSS lines of any text, which a process can shape (its Name is its
 * own comm) and another kernel can format differently; and the same bytes as
 * /proc/PID/stat, whose command field the process names too, and /proc/uptime. */
#include "sys/proc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct proc_status st;
        int r = proc_status_parse((const char *)data, size, &st);
        if (r != 0 && r != -22)
                abort();
        if (st.n_nspid > PROC_NSPID_MAX)
                abort();
        if (memchr(st.name, '\0', sizeof(st.name)) == NULL)
                abort(); /* the name always ends inside its buffer */
        for (const char *c = st.name; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                        abort(); /* no control byte reaches the terminal */
        if (st.n_nspid && memchr(data, 'N', size) == NULL)
                abort(); /* PIDs only from an NSpid line */
        struct proc_stat stat;
        r = proc_stat_parse((const char *)data, size, &stat);
        if (r != 0 && r != -22)
                abort();
        if (r == 0 && memchr(data, ')', size) == NULL)
                abort(); /* the fields are counted from the command's ')' */
        double up;
        r = proc_uptime_parse((const char *)data, size, &up);
        if (r != 0 && r != -22)
                abort();
        if (r == 0 && !(up >= 0))
                abort();
        return 0;
}
