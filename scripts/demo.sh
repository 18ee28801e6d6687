#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# The demo (as root, on a fresh machine): installs what is missing, builds, makes five
# network namespaces (an aggregation box and four workers on a bridge), starts the DPDK
# aggregator, runs verified allreduces with four ranks (two on DPDK, two on kernel UDP),
# reads the aggregator's counters through dpdk-telemetry.py while it runs, prints a summary,
# stops the aggregator with SIGINT and removes everything. Exit status non-zero if any
# result was wrong.
#
# With --shards K (1..9; 1 is the default, one box), the job is sharded over K boxes (issue 10: namespaces P-agg,
# P-agg2.. at 198.18.0.1..K, every rank on kernel UDP with --agg listing them all): each box
# sums a share of every allreduce, and each box's counters are shown.
# With --tree, the four ranks (kernel UDP) are under a two-level tree of boxes (issue 10):
# leaf boxes 198.18.0.1 (ranks 0, 1) and 198.18.0.2 (ranks 2, 3) under the root 198.18.0.3,
# all three started from one topology file (shouter-agg --config tree.ini --box NAME, shown).
#
#   scripts/demo.sh [--no-deps] [--no-build] [--shards K | --tree]
# Environment: SHR_BUILD (build directory), DEMO_SIZE (default 4M), DEMO_ITERS (default 5),
# DEMO_CHUNK (elements per chunk, default 2048: one 8 KiB jumbo frame of int32/float32).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

if [[ $(id -u) -ne 0 ]]; then
    echo "demo: run as root (network namespaces, DPDK): sudo $0" >&2
    exit 1
fi
deps=1
build=1
shards=1
tree=0
# usage [STATUS]: on stdout for --help (0), else on stderr (2)
usage() {
    local rc=${1:-2}
    if ((rc == 0)); then
        echo "usage: $0 [--no-deps] [--no-build] [--shards K | --tree]"
    else
        echo "usage: $0 [--no-deps] [--no-build] [--shards K | --tree]" >&2
    fi
    exit "$rc"
}
while (($#)); do
    case $1 in
    --no-deps) deps=0; shift ;;
    --no-build) build=0; shift ;;
    --shards) (($# >= 2)) || usage; shards=$2; shift 2 ;;
    --shards=*) shards=${1#*=}; shift ;;
    --tree) tree=1; shift ;;
    -h | --help) usage 0 ;;
    *) usage ;;
    esac
done
[[ $shards =~ ^[1-9]$ ]] || { echo "demo: --shards: 1..9 boxes, got '$shards'" >&2; exit 2; }
((tree == 0 || shards == 1)) || { echo "demo: --tree or --shards, not both" >&2; exit 2; }
size=${DEMO_SIZE:-4M}
iters=${DEMO_ITERS:-5}
chunk=${DEMO_CHUNK:-2048}

say() { printf '\n== %s\n' "$*"; }

if ((deps)); then
    say "dependencies (scripts/deps.sh)"
    scripts/deps.sh
fi
if ((build)); then
    say "build (scripts/build.sh)"
    scripts/build.sh >/tmp/shouter-demo-build.log 2>&1 ||
        { tail -n 40 /tmp/shouter-demo-build.log; exit 1; }
    echo "built in ${SHR_BUILD:-$top/build}"
fi

# shellcheck source=tests/e2e/cluster.sh
source "$top/tests/e2e/cluster.sh"
CL_PREFIX=demo$$
cl_init
cl_traps

drivers="dpdk dpdk udp udp"
boxes=()
nbox=$shards
if ((tree)); then
    nbox=3
    drivers="udp udp udp udp"
    say "network: namespaces $CL_PREFIX-{agg,agg2,agg3,br,w0..w3}, leaf boxes 198.18.0.1-2," \
        "root 198.18.0.3, workers 198.18.0.10-13"
elif ((shards == 1)); then
    say "network: namespaces $CL_PREFIX-{agg,br,w0..w3}, box 198.18.0.1, workers 198.18.0.10-13"
else
    drivers="udp udp udp udp"	# a DPDK port belongs to one communicator: shards need udp
    say "network: namespaces $CL_PREFIX-{agg,agg2..agg$shards,br,w0..w3}, boxes" \
        "198.18.0.1-$shards, workers 198.18.0.10-13"
fi
cl_up 4 "$nbox"
ncpu=$(nproc)
topo=()
if ((tree)); then
    # one file describes the whole tree; each box picks its own section
    cat >"$CL_DIR/tree.ini" <<'INI'
; a two-level tree of boxes: leaf1 and leaf2 send their rounds up to root
[box.root]
ip = 198.18.0.3
[box.leaf1]
ip = 198.18.0.1
upstream = root
[box.leaf2]
ip = 198.18.0.2
upstream = root
INI
    say "topology file ($CL_DIR/tree.ini):"
    sed 's/^/  /' "$CL_DIR/tree.ini"
fi
for k in $(if ((tree)); then echo 3 1 2; else seq 1 "$nbox"; fi); do
    ((tree)) && topo=(--config "$CL_DIR/tree.ini" --box "$(case $k in 3) echo root ;;
        *) echo "leaf$k" ;; esac)")
    say "aggregator $k: DPDK on af_packet in $(cl_box_ns "$k"), lcore $(((k - 1) % ncpu))" \
        "${topo[*]}"
    CL_BOX=$k CL_AGG_LCORES=$(((k - 1) % ncpu)) cl_agg_start "${topo[@]}"
    boxes+=("$(cl_box_ip "$k")")
done
agg_list=$(IFS=,; echo "${boxes[*]}")
export CL_TREE=
if ((tree)); then
    agg_list=198.18.0.1	# each rank's leaf comes from CL_TREE
    CL_TREE="1 2"
    echo "shouter-agg: a tree of 3 boxes ready (pids $CL_AGG_PID ${CL_BOX_PIDS[*]})"
elif ((shards == 1)); then
    echo "shouter-agg: ready (pid $CL_AGG_PID)"
else
    echo "shouter-agg: $shards boxes ready (pids $CL_AGG_PID ${CL_BOX_PIDS[*]})"
fi

declare -A sum_lines
fail=0
run=0
for dtype in int32 float32; do
    run=$((run + 1))
    say "allreduce $dtype, $size per rank, $iters iterations, chunk $chunk, ranks on: $drivers"
    cl_start_ranks "$drivers" --dtype "$dtype" --size "$size" --iters "$iters" --chunk "$chunk" \
        --agg "$agg_list"
    # read the counters while the ranks run
    sleep 1
    if kill -0 "${CL_RPIDS[0]}" 2>/dev/null; then
        echo "dpdk-telemetry.py /shouter/stats, while the ranks run:"
        cl_telemetry_kv /shouter/stats rx_pkts tx_pkts msg_data msg_completed msg_resent \
            msg_duplicates msg_bytes_summed results_zc rejects idle_sleeps msg_joins | sed 's/^/  /'
    fi
    if ! cl_wait_ranks; then
        fail=1
    fi
    for i in "${!CL_RESULTS[@]}"; do
        sum_lines[$run,$i]="${CL_RDRV[$i]} ${CL_RESULTS[$i]}"
        echo "  ${CL_RDRV[$i]}: ${CL_RESULTS[$i]}"
    done
done

for ((k = 1; k <= nbox; k++)); do
    say "aggregator $k counters (dpdk-telemetry.py /shouter/stats, /shouter/jobs)"
    CL_BOX=$k cl_telemetry_kv /shouter/stats | head -n 5 | sed 's/^/  /'
    CL_BOX=$k cl_telemetry /shouter/jobs | sed 's/^/  /'
done

for ((k = nbox; k >= 1; k--)); do
    say "stopping aggregator $k (SIGINT)"
    agg_rc=0
    CL_BOX=$k cl_agg_stop || agg_rc=$?
    grep '^final:' "$(cl_box_log "$k")" | fold -s -w 96 | head -n 8 | sed 's/^/  agg /'
    ((agg_rc == 0)) || { echo "aggregator $k exit status $agg_rc"; fail=1; }
done

say "summary"
printf '  %-7s %-4s %-6s %-8s %6s %12s %11s %11s %6s %3s %s\n' \
    dtype rank driver size iters goodput_gbps lat_us_p50 lat_us_p99 retx ok crc
r=0
for dtype in int32 float32; do
    r=$((r + 1))
    for ((i = 0; i < 4; i++)); do
        set -- ${sum_lines[$r,$i]}
        drv=$1
        shift
        line="$*"
        f() { cl_field "$line" "$1" || echo -; }
        printf '  %-7s %-4s %-6s %-8s %6s %12s %11s %11s %6s %3s %s\n' "$dtype" "$i" "$drv" \
            "$(f size)" "$(f iters)" "$(f goodput_gbps)" "$(f lat_us_p50)" "$(f lat_us_p99)" \
            "$(f retx)" "$(f ok)" "$(f crc)"
    done
done
if ((fail)); then
    CL_FAILED=1
    echo "demo: FAILED (see above)"
    exit 1
fi
echo "demo: all results verified, bit-identical at every rank"
