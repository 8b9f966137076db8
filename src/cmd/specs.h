/* Every command's option table and help (struct cmd_spec), each defined beside its command
 * in src/cmd/<command>.c and listed by cmd/registry.c. */
#pragma once

#include "cmd/options.h"

extern const struct cmd_spec cmd_check_spec, cmd_info_spec, cmd_topo_spec, cmd_bench_spec, cmd_bench_nccl_spec,
        cmd_bench_rdma_spec, cmd_bench_train_spec, cmd_burn_spec, cmd_detect_spec, cmd_estimate_spec,
        cmd_snapshot_spec, cmd_query_spec, cmd_top_spec, cmd_policy_capture_spec, cmd_policy_validate_spec,
        cmd_fleet_spec, cmd_ngc_list_spec, cmd_ngc_pick_spec, cmd_ngc_pull_spec, cmd_ngc_test_spec,
        cmd_slurm_health_spec, cmd_report_spec, cmd_serve_spec, cmd_tune_spec;
