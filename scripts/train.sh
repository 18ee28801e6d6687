#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# A real training run (as root): installs what is missing (scripts/deps.sh: among others
# python3-torch, python3-sklearn), builds (scripts/build.sh), makes network namespaces (a box
# and 4 workers on a bridge, scripts/netns.sh through tests/e2e/cluster.sh), starts the box,
# and trains an MLP on scikit-learn's digits (scripts/train_ddp.py: fixed seeds and split,
# each rank its share of every batch) with PyTorch DDP across the 4 ranks, first through the
# box (backend "shouter", import shouter.torch), then with Gloo on the same namespaces and
# addresses (the box stopped). Every rank is one process, started in its namespace by this
# script with RANK, WORLD_SIZE, MASTER_ADDR (rank 0's address: the TCP store) and MASTER_PORT
# set, as torchrun would set them (torchrun itself cannot start a rank inside a namespace).
# Prints per backend the test accuracy, whether the parameters were bit-identical across the
# ranks after every step and the mean step time, then, as its last line:
#   train: shouter_acc=A gloo_acc=B identical=I step_vs_gloo=R
# A, B: test accuracy in percent (rank 0's); I: 1 when shouter's parameters were bit-identical
# across the ranks after every step; R: shouter's mean step time over Gloo's (lower is better).
# Exit status 1 when a rank fails, I is 0, or A is more than 1 point from B. Removes every
# namespace and process it made, also when interrupted.
#
#   scripts/train.sh [--no-deps] [--no-build] [--epochs N] [--ranks N] [--hook]
#       --hook: also train with Gloo + shouter.hook.allreduce_hook (gradients through the box)
# Environment: SHR_BUILD (build directory), TRAIN_EPOCHS (default 20), TRAIN_RANKS (default 4),
# TRAIN_OPTS (more scripts/train_ddp.py options, e.g. "--batch 128 --hidden 256"),
# TRAIN_TIMEOUT (seconds per run, default 900), TRAIN_PORT (rendezvous port, default 29500),
# TRAIN_PYTHONPATH (where the shouter package is, default the build tree's lib/python),
# CL_* (tests/e2e/cluster.sh), CL_KEEP=1 keeps the logs and the ranks' JSON results.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

usage() {
    sed -n '/^# A real training run/,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'
}
deps=1
build=1
hook=0
epochs=${TRAIN_EPOCHS:-20}
nranks=${TRAIN_RANKS:-4}
while (($#)); do
    case $1 in
    --no-deps) deps=0 ;;
    --no-build) build=0 ;;
    --hook) hook=1 ;;
    --epochs | --ranks)
        (($# >= 2)) || { echo "train.sh: $1 needs a value (--help)" >&2; exit 2; }
        if [[ $1 == --epochs ]]; then epochs=$2; else nranks=$2; fi
        shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
    shift
done
[[ $epochs =~ ^[1-9][0-9]*$ ]] || { echo "train: --epochs: a positive integer" >&2; exit 2; }
[[ $nranks =~ ^[1-9][0-9]?$ ]] || { echo "train: --ranks: 1..99" >&2; exit 2; }
if [[ $(id -u) -ne 0 ]]; then
    echo "train: run as root (network namespaces, DPDK): sudo $0" >&2
    exit 1
fi
PY=/usr/bin/python3
timeout_s=${TRAIN_TIMEOUT:-900}
port=${TRAIN_PORT:-29500}
read -r -a topts <<<"${TRAIN_OPTS:-}"

say() { echo "train: $*" >&2; }

if ((deps)); then
    say "dependencies (scripts/deps.sh)"
    scripts/deps.sh
fi
if ((build)); then
    say "build (scripts/build.sh)"
    scripts/build.sh >/tmp/shouter-train-build.log 2>&1 ||
        { tail -n 40 /tmp/shouter-train-build.log; say "build failed"; exit 1; }
fi
for m in torch sklearn numpy; do
    $PY -c "import $m" 2>/dev/null ||
        { say "$PY cannot import $m (scripts/deps.sh)"; exit 1; }
done

# shellcheck source=tests/e2e/cluster.sh
source "$top/tests/e2e/cluster.sh"
CL_PREFIX=train$$
cl_init
# the shouter package of the build tree (the extension module and the .py files)
pypath=${TRAIN_PYTHONPATH:-$SHR_BUILD/lib/python}
if ! PYTHONPATH=$pypath $PY -c 'import shouter.torch' 2>"$CL_DIR/import.log"; then
    say "cannot import shouter.torch from $pypath (scripts/build.sh):"
    cat "$CL_DIR/import.log" >&2
    rm -rf "$CL_DIR"
    exit 1
fi
cl_traps

say "network: namespaces $CL_PREFIX-{agg,br,w0..w$((nranks - 1))}, box 198.18.0.1, ranks" \
    "198.18.0.10-$((10 + nranks - 1)) on kernel UDP"
cl_up "$nranks"
for ((i = 0; i < nranks; i++)); do
    "$CL_NETNS" kip "$i" on --prefix "$CL_PREFIX"
done
res=$CL_DIR/results
mkdir -p "$res"

# run_ranks BACKEND [ENV=VALUE...]: one process per rank, each in its namespace; waits
run_ranks() {
    local be=$1 i rc=0 st
    local -a pids=()
    shift
    port=$((port + 1))
    say "$be: training $epochs epochs on $nranks ranks"
    for ((i = 0; i < nranks; i++)); do
        timeout -k 5 "$timeout_s" ip netns exec "$CL_PREFIX-w$i" env \
            RANK="$i" WORLD_SIZE="$nranks" MASTER_ADDR="$(cl_worker_ip 0)" MASTER_PORT="$port" \
            GLOO_SOCKET_IFNAME=shr0 PYTHONPATH="$pypath" "$@" \
            $PY "$top/scripts/train_ddp.py" --backend "$be" --epochs "$epochs" \
            --out "$res/$be-r$i.json" ${topts[@]+"${topts[@]}"} \
            >"$CL_DIR/$be-r$i.log" 2>&1 &
        pids+=($!)
        CL_PIDS+=($!)
    done
    for i in "${!pids[@]}"; do
        st=0
        wait "${pids[$i]}" || st=$?
        if ((st != 0)); then
            rc=1
            say "$be: rank $i failed (exit status $st):"
            tail -n 15 "$CL_DIR/$be-r$i.log" | sed 's/^/    /' >&2
        fi
    done
    grep -h '^train_ddp:' "$CL_DIR/$be"-r*.log | sed 's/^/  /' >&2 || true
    return $rc
}

fail=0
# shellcheck disable=SC2119  # (the box on its defaults)
cl_agg_start
run_ranks shouter SHOUTER_BOX=198.18.0.1 || fail=1
if ((hook)); then
    run_ranks hook SHOUTER_BOX=198.18.0.1 || fail=1
fi
cl_agg_stop || { say "aggregator exit status $?"; fail=1; }
run_ranks gloo || fail=1

rc=0
$PY "$top/scripts/train_ddp.py" --summary "$res" || rc=$?
if ((fail || rc)); then
    CL_FAILED=1   # cl_cleanup shows the box's log
    exit 1
fi
