/* gpuvet info: the inventory of the host and its GPUs, what deviceQuery, `nvidia-smi -q`
 * and lspci tell, from sysfs and (when it describes this machine) NVML. */
#include "cmd/cmd.h"
#include "cmd/machine.h"
#include "cmd/options.h"
#include "report/info_report.h"

#include <stdbool.h>

static const char usage[] =
        "Usage: gpuvet info [OPTIONS]\n"
        "\n"
        "Inventory of the host and its GPUs: host, driver, and per GPU its identity, PCIe link,\n"
        "NUMA and IOMMU placement, modes, limits and clocks (sysfs, and NVML when available).\n"
        "\n"
        "Options:\n"
        "      --json            print JSON (schema gpuvet.info/1, docs/info.md)\n"
        "      --nvml-lib PATH   read GPUs through this libnvidia-ml ($GPUVET_NVML_LIB)\n"
        "      --no-nvml         do not load NVML: what sysfs knows alone\n"
        "      --nvml-call-timeout-ms MS  abandon an NVML call after MS ms (default 2000)\n"
        "      --nvml-gpu-timeout-ms MS   abandon a GPU's NVML reads after MS ms (default 20000)\n"
        "      --nvml-init-timeout-ms MS  give up on nvmlInit after MS ms (default 20000)\n"
        "      --timeout SEC     give up (exit 3) if gathering blocks this long (default 30)\n"
        "  -r, --root DIR        read /sys, /proc, /etc under DIR (a fixture or snapshot); NVML\n"
        "                        is then used only when a library is named\n"
        "      --data-dir DIR    GPU table from DIR ($GPUVET_DATA_DIR)\n"
        "  -h, --help            this help\n"
        "\n"
        "Exit status: 0 printed, 2 usage or bad input, 3 internal error.\n";

int cmd_info(int argc, char **argv) {
        bool json;
        struct machine m;
        int code = cmd_show_machine("info", usage, argc, argv, &json, &m);
        if (code >= 0)
                return code;
        code = 0;
        if (json) {
                int r = write_json_output("info", "-", info_json(m.facts, &m.nvml));
                if (r != EXIT_PASS)
                        code = r;
        } else {
                info_text(m.facts, &m.nvml);
        }
        return machine_done(&m, code); /* _exits when an NVML call never returned */
}
