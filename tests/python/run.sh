#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# The Python tests (suite 'python'): one real box (shouter-agg on DPDK af_packet), or B with
# --boxes B, and N worker namespaces made by tests/e2e/cluster.sh, then pytest (Debian's
# python3-pytest) on the test files given (default: every tests/python/test_*.py). The tests launch their rank
# processes in the namespaces themselves (conftest.py: run_ranks()), on kernel UDP sockets.
# Everything started here is removed on exit (cl_traps), also when interrupted.
#
#   run.sh [--ranks N] [--boxes B] [--agg-opts "OPTS"] [--mac-job J] [pytest arguments or
#          test files...]
#
# --mac-job J: every box also has a static job J (2 float32 ranks, bound on JOIN) with the per-job
# MAC (mac = 1) and a secret written here (SHR_PY_MAC_JOB, SHR_PY_MAC_SECRET).
#
# What conftest.py gets (environment): SHR_PY_PREFIX (namespace prefix: the ranks run in
# $SHR_PY_PREFIX-w0 ...), SHR_PY_N (worker namespaces), SHR_PY_BOX (the box's address),
# SHR_PY_AGG_NS (the box's namespace), SHR_PY_BOXES, SHR_PY_BOX_NS, SHR_PY_BOX_PIDS (every
# box's address, namespace and pid, comma-separated: box K > 1 is P-aggK at 198.18.0.K),
# SHR_PY_TOP (source tree), SHR_BUILD (build tree), SHR_PY_DIR (the run's scratch directory),
# PYTHONPATH (<build>/lib/python: the package from the build tree). A test that kills box K
# (by its pid) first creates $SHR_PY_DIR/boxK.killed: its exit is then not an error here.
# Exit 77 (skip) when not root: namespaces need it.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
    echo "SKIP: needs root (network namespaces)"
    exit 77
fi

here=$(cd "$(dirname "$0")" && pwd)
n=4
nboxes=1
agg_opts=()
mac_job=
while (($#)); do
    case $1 in
    --ranks) n=$2; shift 2 ;;
    --boxes) nboxes=$2; shift 2 ;;
    --agg-opts) read -r -a agg_opts <<<"$2"; shift 2 ;;
    --mac-job) mac_job=$2; shift 2 ;;
    *) break ;;
    esac
done
args=("$@")
((${#args[@]})) || args=("$here")

# shellcheck source=tests/e2e/cluster.sh
source "$here/../e2e/cluster.sh"
# every box with a result group (the bridge's broadcast; box K from port 48000 + 100 (K - 1)):
# the ranks take their results there unless they decline (no_group=True)
CL_GROUP=${CL_GROUP-198.18.0.255}
cl_init
cl_traps
ext=("$SHR_BUILD"/lib/python/shouter/_shouter*.so)
[[ -f ${ext[0]} ]] || { cl_log "missing the extension in $SHR_BUILD/lib/python/shouter"; exit 1; }
cl_up "$n" "$nboxes"
if [[ -n $mac_job ]]; then
    [[ $mac_job =~ ^[1-9][0-9]{0,8}$ ]] || { cl_log "--mac-job: a job id"; exit 2; }
    (umask 077; printf 'py-mac-job-secret-0123456789abcdef\n' >"$CL_DIR/mac.key")
    printf '[job.%s]\nworld = 2\ndtype = float32\nmac = 1\nsecret_file = %s\n' "$mac_job" \
        "$CL_DIR/mac.key" >"$CL_DIR/mac.ini"
    agg_opts+=(--config "$CL_DIR/mac.ini")
    export SHR_PY_MAC_JOB=$mac_job SHR_PY_MAC_SECRET=$CL_DIR/mac.key
fi
boxes=() box_ns=() box_pids=()
for ((k = 1; k <= nboxes; k++)); do
    # box K on lcore (K - 1) % 2: two boxes busy-poll on the two cores, not one
    CL_BOX=$k CL_AGG_LCORES=$(((k - 1) % 2)) cl_agg_start "${agg_opts[@]}"
    boxes+=("$(cl_box_ip "$k")")
    box_ns+=("$(cl_box_ns "$k")")
    box_pids+=("$(cl_box_pid "$k")")
done

export SHR_PY_PREFIX=$CL_PREFIX SHR_PY_N=$n SHR_PY_BOX=198.18.0.1 SHR_PY_AGG_NS=$CL_PREFIX-agg
SHR_PY_BOXES=$(IFS=,; echo "${boxes[*]}")
SHR_PY_BOX_NS=$(IFS=,; echo "${box_ns[*]}")
SHR_PY_BOX_PIDS=$(IFS=,; echo "${box_pids[*]}")
export SHR_PY_BOXES SHR_PY_BOX_NS SHR_PY_BOX_PIDS
export SHR_PY_TOP=$cl_top SHR_BUILD SHR_PY_DIR=$CL_DIR
export PYTHONPATH=$SHR_BUILD/lib/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONDONTWRITEBYTECODE=1
rc=0
/usr/bin/python3 -m pytest -p no:cacheprovider -v -rfEs --tb=short "${args[@]}" || rc=$?
((rc == 0)) || CL_FAILED=1
for ((k = nboxes; k >= 1; k--)); do
    if [[ -f $CL_DIR/box$k.killed ]]; then
        # killed by a test (SIGKILL): reap it; any other end is an error
        st=0
        wait "${box_pids[k - 1]}" || st=$?
        ((st == 137)) || { cl_log "box $k (killed by a test) exit status $st"; rc=1; }
        cl_box_pid_set "$k" ""
        continue
    fi
    CL_BOX=$k cl_agg_stop || { cl_log "aggregator $k exit status $?"; rc=1; }
done
exit $rc
