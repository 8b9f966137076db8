/* gpuvet info: the inventory of the host and its GPUs, what deviceQuery, `nvidia-smi -q`
 * and lspci tell, from sysfs and (when it describes this machine) NVML. */
#include "cmd/cmd.h"
#include "cmd/machine.h"
#include "cmd/options.h"
#include "cmd/specs.h"
#include "report/info_report.h"

#include <stdbool.h>
#include <string.h>

static const struct opt info_options[] = {OPT_JSON("gpuvet.info/1"), {0}};

const struct cmd_spec cmd_info_spec = {
        .name = "info",
        .summary = "Inventory of the host and its GPUs: host, driver, and per GPU its identity, PCIe link, NUMA and IOMMU placement, modes, limits and clocks (sysfs, and NVML when available).",
        .opts = info_options,
        .nvml = true,
        .notes = "Under another --root NVML is used only when a library is named (--nvml-lib or $GPUVET_NVML_LIB); --no-nvml shows what sysfs knows alone. The JSON document is described in docs/info.md.",
        .exit_status = "0 printed, 2 usage or bad input, 3 internal error.",
        .on_option = cmd_json_option,
};

int cmd_info(int argc, char **argv) {
        const char *json;
        struct machine m;
        int code = cmd_show_machine(&cmd_info_spec, argc, argv, &json, &m);
        if (code >= 0)
                return code;
        code = 0;
        if (json) {
                int r = write_json_output("info", json, info_json(m.facts, &m.nvml));
                if (r != EXIT_PASS)
                        code = r;
        }
        if (!json || strcmp(json, "-") != 0) /* standard output holds the JSON alone */
                info_text(m.facts, &m.nvml);
        return machine_done(&m, code); /* _exits when an NVML call never returned */
}
