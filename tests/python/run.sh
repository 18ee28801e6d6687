#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# The Python tests (suite 'python'): one real box (shouter-agg on DPDK af_packet) and N
# worker namespaces made by tests/e2e/cluster.sh, then pytest (Debian's python3-pytest) on
# the test files given (default: every tests/python/test_*.py). The tests launch their rank
# processes in the namespaces themselves (conftest.py: run_ranks()), on kernel UDP sockets.
# Everything started here is removed on exit (cl_traps), also when interrupted.
#
#   run.sh [--ranks N] [--agg-opts "OPTS"] [pytest arguments or test files...]
#
# What conftest.py gets (environment): SHR_PY_PREFIX (namespace prefix: the ranks run in
# $SHR_PY_PREFIX-w0 ...), SHR_PY_N (worker namespaces), SHR_PY_BOX (the box's address),
# SHR_PY_AGG_NS (the box's namespace), SHR_PY_TOP (source tree), SHR_BUILD (build tree),
# PYTHONPATH (<build>/lib/python: the package from the build tree). Exit 77 (skip) when not
# root: namespaces need it.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
    echo "SKIP: needs root (network namespaces)"
    exit 77
fi

here=$(cd "$(dirname "$0")" && pwd)
n=4
agg_opts=()
while (($#)); do
    case $1 in
    --ranks) n=$2; shift 2 ;;
    --agg-opts) read -r -a agg_opts <<<"$2"; shift 2 ;;
    *) break ;;
    esac
done
args=("$@")
((${#args[@]})) || args=("$here")

# shellcheck source=tests/e2e/cluster.sh
source "$here/../e2e/cluster.sh"
cl_init
cl_traps
ext=("$SHR_BUILD"/lib/python/shouter/_shouter*.so)
[[ -f ${ext[0]} ]] || { cl_log "missing the extension in $SHR_BUILD/lib/python/shouter"; exit 1; }
cl_up "$n"
cl_agg_start "${agg_opts[@]}"

export SHR_PY_PREFIX=$CL_PREFIX SHR_PY_N=$n SHR_PY_BOX=198.18.0.1 SHR_PY_AGG_NS=$CL_PREFIX-agg
export SHR_PY_TOP=$cl_top SHR_BUILD SHR_PY_DIR=$CL_DIR
export PYTHONPATH=$SHR_BUILD/lib/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONDONTWRITEBYTECODE=1
rc=0
/usr/bin/python3 -m pytest -p no:cacheprovider -v -rfEs --tb=short "${args[@]}" || rc=$?
((rc == 0)) || CL_FAILED=1
cl_agg_stop || { cl_log "aggregator exit status $?"; rc=1; }
exit $rc
