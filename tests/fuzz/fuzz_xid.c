/* libFuzzer target: the kernel log parser behind gpu.xid and gpu.nvswitch_sxid, over the
 * input read both as /dev/kmsg records and as syslog text, and as a Fabric Manager log. */
#include "sys/xid.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        for (int is_kmsg = 0; is_kmsg <= 1; is_kmsg++) {
                struct xid_facts x = {0};
                xid_parse_log(text, is_kmsg, &x);
                for (size_t k = 0; k < x.n_faults; k++)
                        if (strlen(x.faults[k].addr) >= sizeof(x.faults[k].addr) ||
                            strlen(x.faults[k].text) >= sizeof(x.faults[k].text))
                                abort();
                for (size_t i = 0; i < x.n; i++)
                        if (strlen(x.events[i].addr) != 12 || x.events[i].code < 0 ||
                            strlen(x.events[i].unit) >= sizeof(x.events[i].unit))
                                abort(); /* the parser promised a PCI address and a code */
                for (size_t i = 0; i < x.n_reinits; i++)
                        if (x.reinits[i].seq == 0)
                                abort(); /* a re-initialisation is a line of the log */
                if (!is_kmsg)
                        sxid_parse_fm_log(text, "fm.log", &x);
                for (size_t i = 0; i < x.n_sxids; i++)
                        if (strlen(x.sxids[i].addr) != 12 || x.sxids[i].code < 0 ||
                            strlen(x.sxids[i].text) >= sizeof(x.sxids[i].text))
                                abort();
                xid_facts_done(&x);
        }
        free(text);
        return 0;
}
