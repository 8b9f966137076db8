#!/usr/bin/env bash
# The seed's driver installer, now setup_gpu_baseline.yml run on this machine: gpuvet detect
# chooses branch and CUDA, gpuvet detect --for-driver vets the choice before anything changes.
#
#   install_gpu_driver.sh --method native|driver-container|precompiled [--auto-detect]
#                         [--driver BRANCH|VERSION] [--cuda X-Y] [--check] [-- ANSIBLE-PLAYBOOK ARGS...]
#
# --auto-detect    fill the driver and CUDA from gpuvet detect (auto_detect_cuda_version=true);
#                  without it, inventory/group_vars/gpu_nodes.yml decides (on by default)
# --driver, --cuda nvidia_driver_version / cuda_version for this run
# --check          show what would change (ansible-playbook --check --diff); nothing is changed
# Everything after -- goes to ansible-playbook (e.g. -e gpu_power_limit=600).
# Needs ansible-playbook (ansible-core) and gpuvet in PATH; run as root. Exit status is
# ansible-playbook's (0 done, 2 a task failed, e.g. a variable the role refused).
set -euo pipefail
usage() { sed -n '2,14s/^# \{0,1\}//p' "$0"; }
here=$(cd "$(dirname "$0")" && pwd)
ansible_dir=$(cd "$here/../../ansible" && pwd)
method="" ; extra=()
while [ $# -gt 0 ]; do
    case $1 in
    --method) [ $# -ge 2 ] || { echo "install_gpu_driver.sh: --method needs a value" >&2; exit 2; }
              method=$2; shift 2 ;;
    --method=*) method=${1#*=}; shift ;;
    --auto-detect) extra+=(-e auto_detect_cuda_version=true); shift ;;
    --driver) [ $# -ge 2 ] || { echo "install_gpu_driver.sh: --driver needs a value" >&2; exit 2; }
              extra+=(-e "nvidia_driver_version=$2"); shift 2 ;;
    --cuda) [ $# -ge 2 ] || { echo "install_gpu_driver.sh: --cuda needs a value" >&2; exit 2; }
            extra+=(-e "cuda_version=$2"); shift 2 ;;
    --check) extra+=(--check --diff); shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra+=("$@"); break ;;
    *) echo "install_gpu_driver.sh: unknown argument \"$1\" (see --help)" >&2; exit 2 ;;
    esac
done
case $method in
native|driver-container|precompiled) ;;
"") echo "install_gpu_driver.sh: --method is required: native, driver-container or precompiled" >&2; exit 2 ;;
*) echo "install_gpu_driver.sh: --method \"$method\": expected native, driver-container or precompiled" >&2; exit 2 ;;
esac
command -v ansible-playbook >/dev/null ||
    { echo "install_gpu_driver.sh: ansible-playbook not found: install ansible-core (pip install ansible-core)" >&2; exit 2; }
cd "$ansible_dir"
exec ansible-playbook -i inventory/local.yml playbooks/setup_gpu_baseline.yml \
    -e "driver_installation_method=$method" "${extra[@]}"
