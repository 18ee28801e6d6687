#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# The Python binding's per-call overhead (as root; run it under the e2e lock on a shared
# machine): a box and 2 worker namespaces (tests/e2e/cluster.sh), then 2 ranks of
# scripts/py_call_bench.py (4-byte allreduces from Python and from a C loop, alternating
# blocks, same process, same communicator). Prints rank 0's lines, the last one
#   py_call_us_4b=X        (Python per call - C per call, microseconds)
#
#   scripts/py_call_bench.sh [--iters N] [--blocks B]     (py_call_bench.py's options)
# Environment: SHR_BUILD (default ./build), PY_BENCH_RANKS (default 2).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
[[ $(id -u) -eq 0 ]] || { echo "py_call_bench: run as root" >&2; exit 1; }
n=${PY_BENCH_RANKS:-2}

# shellcheck source=tests/e2e/cluster.sh
source "$top/tests/e2e/cluster.sh"
cl_init
cl_traps
cl_up "$n"
# shellcheck disable=SC2119  # (the box on its defaults)
cl_agg_start
pids=()
for ((i = 0; i < n; i++)); do
    PYTHONPATH=$SHR_BUILD/lib/python timeout -k 5 600 ip netns exec "$CL_PREFIX-w$i" \
        /usr/bin/python3 "$top/scripts/py_call_bench.py" --box 198.18.0.1 --job 1 --rank "$i" \
        --world "$n" "$@" >"$CL_DIR/py$i.log" 2>&1 &
    pids+=($!)
    CL_PIDS+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
if ((rc)); then
    cl_log "a rank failed:"
    tail -n 5 "$CL_DIR"/py*.log >&2
    exit 1
fi
cat "$CL_DIR/py0.log"
cl_agg_stop
