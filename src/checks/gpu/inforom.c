/* gpu.inforom: the InfoROM checksum, and VBIOS/InfoROM versions alike across a model.
 * docs/checks/gpu.md documents each; the shared NVML judging is in nvml_common.c. */
#include "checks/check.h"
#include "checks/gpu/nvml_common.h"
#include "core/array.h"
#include "core/strbuf.h"
#include "core/strparse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- gpu.inforom --------------------------------------------------------------------- */

/* How many GPUs of g's model (by PCI device id) on the node report this firmware
 * version, and how many report one at all; the most common version is the node's. */
static void firmware_peers(const struct facts *f, const struct nvml_gpu *g, size_t field_offset, unsigned int *ret_same,
                           unsigned int *ret_peers, const char **ret_common) {
        const struct nv_str *mine = (const struct nv_str *)((const char *)g + field_offset);
        unsigned int same = 0, peers = 0, best = 0;
        *ret_common = NULL;
        for (unsigned int i = 0; i < f->nvml.n_gpus; i++) {
                const struct nvml_gpu *o = &f->nvml.gpus[i];
                const struct nv_str *v = (const struct nv_str *)((const char *)o + field_offset);
                if (!nv_ok(o->pci_device_id) || !nv_ok(g->pci_device_id) || o->pci_device_id.v != g->pci_device_id.v ||
                    !nv_ok(*v))
                        continue;
                peers++;
                same += strcmp(v->v, mine->v) == 0;
                unsigned int count = 0;
                for (unsigned int k = 0; k < f->nvml.n_gpus; k++) {
                        const struct nvml_gpu *q = &f->nvml.gpus[k];
                        const struct nv_str *w = (const struct nv_str *)((const char *)q + field_offset);
                        count += nv_ok(q->pci_device_id) && q->pci_device_id.v == g->pci_device_id.v && nv_ok(*w) &&
                                 strcmp(w->v, v->v) == 0;
                }
                if (count > best) {
                        best = count;
                        *ret_common = v->v;
                }
        }
        *ret_same = same;
        *ret_peers = peers;
}

static void judge_inforom(struct result *r, const struct facts *f, const struct nvml_gpu *g, const char *desc) {
        result_expected(r, "InfoROM checksum valid; VBIOS and InfoROM image as on the node's other GPUs of "
                           "the model");
        const struct nv_u32 *valid = &g->inforom_valid;
        if (valid->state == NV_ERROR && valid->rc == NV_RC_CORRUPTED_INFOROM) {
                result_evidence(r, "source", "nvmlDeviceValidateInforom");
                result_evidence(r, "nvml_return", "%s", nv_rc_name(NV_RC_CORRUPTED_INFOROM));
                result_observed(r, "InfoROM corrupted");
                result_status(r, STATUS_FAIL,
                              "the InfoROM of %s is corrupted (its checksum fails): ECC counts, retired pages "
                              "and remapped rows are kept there",
                              desc);
                result_remedy(r, "`nvidia-smi -q` exits 14 on such a board. Drain the node and contact "
                                 "NVIDIA or the system vendor: the InfoROM is reflashed in service, or the "
                                 "board replaced.");
                return;
        }
        if (nv_skip_unsupported(r, valid->state, valid->rc, "nvmlDeviceValidateInforom", "InfoROM validation", desc,
                             ""))
                return;
        if (UNUSABLE(r, f, g, "InfoROM validity", *valid))
                return;
        result_evidence(r, "source", "nvmlDeviceValidateInforom, nvmlDeviceGetVbiosVersion, "
                                     "nvmlDeviceGetInforomImageVersion");
        const struct {
                const char *what;
                size_t offset;
        } firmware[] = {
                {"VBIOS", offsetof(struct nvml_gpu, vbios)},
                {"InfoROM image", offsetof(struct nvml_gpu, inforom_image)},
        };
        /* A version NVML failed to read (the GPU lost, a hung call) is reported like
         * any reading; one the board does not give is left out. */
        bool unusable = false;
        for (size_t k = 0; k < ARRAY_COUNT(firmware) && !unusable; k++) {
                const struct nv_str *v = (const struct nv_str *)((const char *)g + firmware[k].offset);
                if (!nv_ok(*v) && !nv_not_supported(v->state, v->rc))
                        unusable = UNUSABLE(r, f, g, firmware[k].what, *v);
        }
        if (unusable)
                return;
        char observed[256] = "InfoROM valid", odd[384] = "";
        for (size_t k = 0; k < ARRAY_COUNT(firmware); k++) {
                const struct nv_str *v = (const struct nv_str *)((const char *)g + firmware[k].offset);
                if (!nv_ok(*v))
                        continue;
                strbuf_appendf(observed, sizeof(observed), "; %s %s", firmware[k].what, v->v);
                unsigned int same, peers;
                const char *common;
                firmware_peers(f, g, firmware[k].offset, &same, &peers, &common);
                /* One board differing from its siblings is the odd one out; with no
                 * majority (2 GPUs, 2 versions) both are reported. */
                if (peers > 1 && same < peers && common && (strcmp(common, v->v) != 0 || same * 2 <= peers))
                        strbuf_appendf(odd, sizeof(odd), "%s%s %s, while %u of the node's %u GPUs of this model "
                                                         "run %s",
                                       odd[0] ? "; " : "", firmware[k].what, v->v, peers - same, peers,
                                       strcmp(common, v->v) != 0 ? common : "another");
        }
        result_observed(r, "%s", observed);
        if (odd[0]) {
                result_status(r, STATUS_WARN, "%s: firmware differs from its siblings (%s)", desc, odd);
                result_remedy(r, "Bring every GPU of the node to the same firmware with the system vendor's "
                                 "firmware bundle (or NVIDIA's nvfwupd on HGX/DGX): mixed VBIOS versions "
                                 "behave differently under load and complicate support cases.");
        } else {
                result_status(r, STATUS_PASS, "InfoROM of %s valid, firmware as on its siblings", desc);
        }
}

static void run_inforom(const struct check_info *self, const struct facts *f, struct report *rep) {
        nv_each_gpu(self, f, rep, judge_inforom);
}

CHECK_INFO(gpu_inforom, "gpu", "gpu.inforom", LEVEL_QUICK, NEED_XID | NEED_NVML,
           "InfoROM valid; VBIOS and InfoROM versions alike across the node's GPUs of a model",
           run_inforom);
