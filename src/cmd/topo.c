/* gpuvet topo: the GPU x GPU (and NIC) connection matrix, like `nvidia-smi topo -m`. */
#include "cmd/cmd.h"
#include "cmd/machine.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "report/topo_report.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const struct opt topo_options[] = {OPT_JSON("gpuvet.topo/1"), {0}};

const struct cmd_spec cmd_topo_spec = {
        .name = "topo",
        .summary = "The connection matrix of the GPUs and NICs, like `nvidia-smi topo -m`: NV# (NVLinks, from NVML), PIX, PXB, PHB, NODE, SYS (PCIe paths, from sysfs), and each GPU's CPU and NUMA affinity.",
        .opts = topo_options,
        .nvml = true,
        .color = true,
        .notes = "Under another --root NVML is used only when a library is named (--nvml-lib or $GPUVET_NVML_LIB); --no-nvml gives the PCIe matrix alone. The JSON document is described in docs/topo.md.",
        .exit_status = "0 printed, 2 usage or bad input, 3 internal error.",
        .on_option = cmd_json_option,
};

int cmd_topo(int argc, char **argv) {
        const char *json;
        struct machine m;
        int code = cmd_show_machine(&cmd_topo_spec, argc, argv, &json, &m);
        if (code >= 0)
                return code;
        code = 0;
        struct topo t;
        if (topo_build(m.facts, m.nvml.nv, &t) < 0) {
                fprintf(stderr, "gpuvet topo: out of memory\n");
                code = EXIT_INTERNAL;
        }
        if (code == 0) {
                if (json)
                        code = write_json_output("topo", json, topo_json(m.facts, &t, &m.nvml));
                if (!json || strcmp(json, "-") != 0) /* standard output holds the JSON alone */
                        topo_text(m.facts, &t, &m.nvml);
                topo_done(&t);
        }
        return machine_done(&m, code); /* _exits when an NVML call never returned */
}
