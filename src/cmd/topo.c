/* gpuvet topo: the GPU x GPU (and NIC) connection matrix, like `nvidia-smi topo -m`. */
#include "cmd/cmd.h"
#include "cmd/machine.h"
#include "cmd/options.h"
#include "report/topo_report.h"

#include <stdbool.h>
#include <stdio.h>

static const char usage[] =
        "Usage: gpuvet topo [OPTIONS]\n"
        "\n"
        "The connection matrix of the GPUs and NICs, like `nvidia-smi topo -m`: NV# (NVLinks,\n"
        "from NVML), PIX, PXB, PHB, NODE, SYS (PCIe paths, from sysfs), and each GPU's CPU\n"
        "and NUMA affinity.\n"
        "\n"
        "Options:\n"
        "      --json            print the matrix as JSON (schema gpuvet.topo/1, docs/topo.md)\n"
        "      --nvml-lib PATH   read NVLinks through this libnvidia-ml ($GPUVET_NVML_LIB)\n"
        "      --no-nvml         do not load NVML: the PCIe matrix alone\n"
        "      --nvml-call-timeout-ms MS  abandon an NVML call after MS ms (default 2000)\n"
        "      --nvml-gpu-timeout-ms MS   abandon a GPU's NVML reads after MS ms (default 20000)\n"
        "      --nvml-init-timeout-ms MS  give up on nvmlInit after MS ms (default 20000)\n"
        "      --timeout SEC     give up (exit 3) if gathering blocks this long (default 30)\n"
        "  -r, --root DIR        read /sys, /proc under DIR (a fixture or snapshot); NVML is\n"
        "                        then used only when a library is named\n"
        "      --data-dir DIR    GPU table from DIR ($GPUVET_DATA_DIR)\n"
        "  -h, --help            this help\n"
        "\n"
        "Exit status: 0 printed, 2 usage or bad input, 3 internal error.\n";

int cmd_topo(int argc, char **argv) {
        bool json;
        struct machine m;
        int code = cmd_show_machine("topo", usage, argc, argv, &json, &m);
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
                        code = write_json_output("topo", "-", topo_json(m.facts, &t, &m.nvml));
                else
                        topo_text(m.facts, &t, &m.nvml);
                topo_done(&t);
        }
        return machine_done(&m, code); /* _exits when an NVML call never returned */
}
