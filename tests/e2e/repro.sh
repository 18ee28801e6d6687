#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Reproducible float sums end to end (issue 8 item 4): the same float32 allreduce, with
# inputs of random sign and exponent (shouter-worker --inputs random: their float32 sums
# depend on the order of the additions), run several times through one aggregator with
# loss on every worker link and mixed drivers, so that the ranks' DATA reach the box in
# other orders each run:
# - with --repro (a reproducible job: exact sums at the box, rounded once), every rank of
#   every run checks its result bit for bit against the exact sum of all ranks' inputs
#   rounded once, and every run must print the same crc= (CRC32C of every output);
# - without it (the streaming float32 sum), the same inputs, each element checked within
#   float32 summation's bound of the exact sum (no exact result to expect), must give a
#   crc= other than the reproducible one in at least one run (the order-dependent rounding
#   shows), and the crc= of those runs are reported (whether they differ from each other
#   depends on the arrival orders; not asserted).
# The box's telemetry shows the reproducible job as repro=1 while it runs.
#
#   repro.sh [--drivers dpdk,udp,udp,dpdk] [--runs N] [--loss PCT] [--size BYTES]
#
# Exit 77 (skip) when not root: namespaces need it.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
    echo "SKIP: needs root (network namespaces)"
    exit 77
fi

drivers=dpdk,udp,udp,dpdk
runs=3
loss=5
size=1M
while (($#)); do
    case $1 in
    --drivers) drivers=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --loss) loss=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    *) echo "repro.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=tests/e2e/cluster.sh
source "$(dirname "$0")/cluster.sh"
CL_PREFIX=${CL_PREFIX:-e2r$$}
cl_init
cl_traps

IFS=, read -r -a drv <<<"$drivers"
world=${#drv[@]}
cl_log "world=$world drivers=$drivers runs=$runs loss=$loss% size=$size"
cl_up "$world"
"$CL_NETNS" netem all "loss $loss%" --prefix "$CL_PREFIX"
# shellcheck disable=SC2119  # (the box on its defaults)
cl_agg_start

fail=0
common=(--dtype float32 --size "$size" --iters 2 --warmup 1 --inputs random)
repro_crcs=()
stream_crcs=()
retx_total=0
for ((k = 0; k < runs; k++)); do
    cl_log "run $k: reproducible"
    if ! cl_allreduce "${drv[*]}" "${common[@]}" --repro; then
        cl_log "FAIL: reproducible run $k"
        fail=1
        continue
    fi
    repro_crcs+=("$(cl_field "${CL_RESULTS[0]}" crc)")
    for line in "${CL_RESULTS[@]}"; do
        retx_total=$((retx_total + $(cl_field "$line" retx || echo 0)))
    done
    cl_log "run $k: streaming"
    if ! cl_allreduce "${drv[*]}" "${common[@]}"; then
        cl_log "FAIL: streaming run $k"
        fail=1
        continue
    fi
    stream_crcs+=("$(cl_field "${CL_RESULTS[0]}" crc)")
done

# the job's repro flag in /shouter/jobs: one more reproducible job, held joined (its ranks
# wait for a go file before their first allreduce) until the telemetry has been read
cl_log "telemetry of a running reproducible job"
go=$CL_DIR/repro-go
cl_start_ranks "${drv[*]}" "${common[@]}" --repro --go-file "$go"
seen=
for ((i = 0; i < 300; i++)); do
    jobs=$(cl_telemetry /shouter/jobs || true)
    seen=$(echo "$jobs" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)["/shouter/jobs"]
print(",".join(str(j.get("repro")) for j in d.values() if isinstance(j, dict) and
               j.get("active")))
' 2>/dev/null || true)
    [[ -z $seen ]] || break
    sleep 0.1	# polling for a state (the job active), bounded
done
touch "$go"
cl_wait_ranks || { cl_log "FAIL: the telemetry run failed"; fail=1; }
if [[ $seen != 1 ]]; then
    cl_log "FAIL: /shouter/jobs showed repro=[$seen] for the running reproducible job"
    fail=1
fi

cl_log "reproducible crc= per run: ${repro_crcs[*]}"
cl_log "streaming crc= per run:    ${stream_crcs[*]}"
drops=$("$CL_NETNS" drops --prefix "$CL_PREFIX" | awk '{s += $3} END {print s + 0}')
cl_log "loss $loss%: frames dropped at the bridge=$drops, retransmissions (repro runs)=$retx_total"
if ((${#repro_crcs[@]} != runs)); then
    fail=1
elif [[ $(printf '%s\n' "${repro_crcs[@]}" | sort -u | wc -l) != 1 ]]; then
    cl_log "FAIL: the reproducible runs gave different results"
    fail=1
fi
if ((${#stream_crcs[@]} == runs)); then
    differs=0
    for c in "${stream_crcs[@]}"; do
        [[ $c == "${repro_crcs[0]:-}" ]] || differs=$((differs + 1))
    done
    cl_log "streaming runs whose result differs from the exact one: $differs of $runs;" \
        "distinct streaming results: $(printf '%s\n' "${stream_crcs[@]}" | sort -u | wc -l)"
    if ((differs == 0)); then
        cl_log "FAIL: the streaming sum gave the exact result every time (inputs too tame?)"
        fail=1
    fi
fi
if ((drops == 0 || retx_total == 0)); then
    cl_log "FAIL: no loss or no retransmission (drops=$drops retx=$retx_total)"
    fail=1
fi

agg_rc=0
cl_agg_stop || agg_rc=$?
if ((agg_rc != 0)); then
    cl_log "FAIL: aggregator exit status $agg_rc after SIGINT"
    fail=1
fi
((fail == 0)) || CL_FAILED=1
if ((fail)); then
    echo "FAIL"
    exit 1
fi
echo "PASS"
