#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Ranks that call different collectives (issue 8 item 3): for each collective kind, one job
# of 3 ranks (kernel UDP and DPDK mixed) in which one rank (rank i mod 3 for the i-th kind)
# calls with another step, another tensor id, another kind or another root than the other
# two (shouter-worker --step / --tensor / --coll / --root; the others --step 5 --tensor 3).
# The box must abort the job (ABORT EPROTO, naming both sides), so:
#   - every rank exits 3 with error=mismatch (not a wrong result, not a timeout of its own,
#     not the box's job timeout, which would say error=aborted), and its stderr has the line
#     "job J aborted by the aggregator ...: ranks called different collectives: rank A
#     called K(...) where rank B called K'(...)" with the odd rank named with its own call
#     and another rank with the others' call (step, tensor, kind or root as each side gave);
#   - the box counted msg_mismatches +1 for the job, and no round of the collective
#     completed (rounds_<kind> +0 for the kinds involved; rounds_allreduce +1: the barrier
#     before the collective, the one round every rank agreed on), and no rank says that an
#     element was wrong.
# No timing is asserted: the ranks' own --timeout-ms (30 s) and the box's job timeout (5 s)
# only bound a run that would fail anyway (their messages are not the mismatch's). One box
# serves every kind in turn.
#
#   coll_mismatch.sh [--drivers udp,dpdk,udp] [--kinds allreduce,reduce,...] [--size 64K]
set -euo pipefail

drivers=udp,dpdk,udp
kinds=allreduce,reduce,reduce_scatter,broadcast,allgather,gather,scatter,alltoall
size=64K
while (($#)); do
    case $1 in
    --drivers) drivers=$2; shift 2 ;;
    --kinds) kinds=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    *) echo "coll_mismatch.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init cm
# the system python3 for the telemetry client and the JSON helpers: an interpreter shim
# earlier in PATH (pyenv) can cost a second or more per call
PATH=/usr/bin:$PATH

IFS=, read -r -a drv <<<"$drivers"
world=${#drv[@]}
((world == 3)) || { echo "coll_mismatch.sh: --drivers: three ranks" >&2; exit 2; }
cl_up "$world"
cl_agg_start --job-timeout-ms 5000

# Per kind: how the odd rank differs (variant), and its option. The others call KIND with
# root 0, --step 5 --tensor 3.
declare -A variant=(
    [allreduce]=step [reduce]=root [reduce_scatter]=tensor [broadcast]=kind
    [allgather]=step [gather]=tensor [scatter]=root [alltoall]=kind
)
declare -A other_kind=([broadcast]=allgather [alltoall]=allgather)
declare -A other_root=([reduce]=2 [scatter]=1)

# one_case I KIND: job 100 + I, rank I % 3 odd
one_case() {
    local i=$1 k=$2 job=$((100 + $1)) odd=$(($1 % 3)) v r rc line errline
    local k2=$k root2=0 step2=5 tensor2=3 same odd_re other_re line_re before after d kk
    local -a base odd_opts
    v=${variant[$k]}
    case $v in
    step) step2=9 ;;
    tensor) tensor2=4 ;;
    kind) k2=${other_kind[$k]} ;;
    root) root2=${other_root[$k]} ;;
    esac
    base=(--dtype int32 --size "$size" --warmup 0 --iters 1 --timeout-ms 30000)
    odd_opts=(--coll "$k2" --root "$root2" --step "$step2" --tensor "$tensor2")
    cl_log "job $job: $k, rank $odd (${drv[$odd]}) calls with another $v:" \
        "${odd_opts[*]} (the others: --coll $k --root 0 --step 5 --tensor 3)"

    # What each side called, as the line must say it: the odd rank's call and the others'
    # (a root is printed for reduce, broadcast and scatter: the others' rounds are of blocks)
    if [[ $v == root ]]; then
        same="$k\\(root 0, tensor 3, step 5,"
        odd_re="$k2\\(root $root2, tensor $tensor2, step $step2,"
    else
        same="$k\\([^)]*tensor 3, step 5,"
        odd_re="$k2\\([^)]*tensor $tensor2, step $step2,"
    fi
    other_re="rank [0-9]+ called $same"
    odd_re="rank $odd called $odd_re"
    line_re="job $job aborted by the aggregator 198\.18\.0\.1: ranks called different"
    line_re+=" collectives: rank [0-9]+ called .+ where rank [0-9]+ called .+"

    before=$(fl_tel /shouter/stats)
    eval "FL_M${i}_PIDS=(); FL_M${i}_LOGS=(); FL_M${i}_DRV=()"
    for ((r = 0; r < world; r++)); do
        if ((r == odd)); then
            fl_start_rank "M$i" "$r" "$job" "$r" "$world" "${drv[$r]}" "${base[@]}" \
                "${odd_opts[@]}"
        else
            fl_start_rank "M$i" "$r" "$job" "$r" "$world" "${drv[$r]}" "${base[@]}" \
                --coll "$k" --root 0 --step 5 --tensor 3
        fi
    done
    local -a pids logs
    eval "pids=(\"\${FL_M${i}_PIDS[@]}\"); logs=(\"\${FL_M${i}_LOGS[@]}\")"
    for r in "${!pids[@]}"; do
        rc=0
        wait "${pids[$r]}" || rc=$?
        line=$(grep -h '^RESULT ' "${logs[$r]}" | tail -n 1 || true)
        errline=$(grep -h 'ranks called different collectives' "${logs[$r]}" | tail -n 1 || true)
        echo "  rank $r (${drv[$r]}): exit $rc: ${line:-no RESULT line}"
        echo "    ${errline:-(no mismatch line)}"
        if ((rc != 3)) || [[ $(cl_field "$line" error || true) != mismatch ]]; then
            fl_fail "job $job ($k, $v): rank $r exit $rc, want 3 with error=mismatch"
            tail -n 6 "${logs[$r]}" | sed 's/^/      /' >&2
        fi
        if [[ -z $errline ]]; then
            fl_fail "job $job ($k, $v): rank $r does not say that the ranks called different" \
                "collectives"
        elif ! grep -qE "$line_re" <<<"$errline"; then
            fl_fail "job $job ($k, $v): rank $r: the line does not name both sides"
        elif ! grep -qE "$odd_re" <<<"$errline" || ! grep -qE "$other_re" <<<"$errline"; then
            fl_fail "job $job ($k, $v): rank $r: the line does not name rank $odd with" \
                "/$odd_re/ and another rank with /$other_re/"
        fi
        if grep -q 'elements wrong' "${logs[$r]}"; then
            fl_fail "job $job ($k, $v): rank $r got a wrong result"
        fi
    done
    after=$(fl_tel /shouter/stats)
    fl_deltas "$before" "$after"
    d=${FL_D[msg_mismatches]:-0}
    ((d == 1)) || fl_fail "job $job ($k, $v): msg_mismatches +$d, want +1"
    for kk in $(printf '%s\n' "$k" "$k2" allreduce | sort -u); do
        d=${FL_D[rounds_$kk]:-0}
        if [[ $kk == allreduce ]]; then
            # the barrier before the collective; for allreduce, the collective itself none
            ((d == 1)) || fl_fail "job $job ($k, $v): rounds_allreduce +$d, want +1 (the" \
                "barrier)"
        else
            ((d == 0)) || fl_fail "job $job ($k, $v): rounds_$kk +$d: a round completed"
        fi
    done
}

IFS=, read -r -a klist <<<"$kinds"
for i in "${!klist[@]}"; do
    [[ -n ${variant[${klist[$i]}]:-} ]] || { echo "unknown kind ${klist[$i]}" >&2; exit 2; }
    one_case "$i" "${klist[$i]}"
done
stats=$(fl_tel /shouter/stats)
cl_log "box: msg_mismatches=$(fl_json "$stats" msg_mismatches)" \
    "msg_aborts=$(fl_json "$stats" msg_aborts)" \
    "reject_out_of_step=$(fl_json "$stats" reject_out_of_step)"
fl_finish
