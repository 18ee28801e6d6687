#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Static jobs under loss and duplication, each run twice in a row with other data (issue 18):
# a clean re-run of a static job is a new incarnation that never gets the previous run's
# sums, and a late or duplicated copy never opens a phantom round in it.
#
# One box with two static jobs, both configured before any worker exists:
#   job 61  --job 61:3:int32:64:128   ranks bind on JOIN: w0 (DPDK), w1 (UDP), w3 (UDP)
#   job 62  [job.62] addrs = ...      fixed addresses: w2 (DPDK, port 47000),
#           float32, window 32,       w3 (UDP, --local-port 47103), w1 (UDP, 47101)
#           chunk 256
# Every worker link loses --loss PCT% of its IPv4 frames in each direction (nftables at the
# bridge, as allreduce.sh --loss does; one value per link w0..w3) and duplicates --dup PCT%
# of its UDP frames in each direction (fl_dup: the copy arrives first); --late PCT% more are
# duplicated with the copy held back (late_dup: behind a slow HTB class, so it arrives up to
# some milliseconds after the original, often after its slot's next round has begun: the
# copy a static job must drop as stale instead of opening a phantom round with it).
#
# Each run starts the six ranks of both jobs, which join and hold (--ready-file, --go-file)
# until all six have joined: both jobs are active at once, as /shouter/jobs must show. Then
# they run --iters allreduces each; every rank checks every element of every result and
# exits 0 only if all were exact; the crc= of a job's ranks must agree. Run 2 starts only
# once every rank of run 1 has exited (after its LEAVE_ACK), with another --seed, so its
# sums differ from run 1's (crc= must differ too). The box must show that run 2 is a new
# incarnation of each job, not the old one carried on: between the runs job 61 is listed
# with nobody joined and inactive (its incarnation ended when its last member left), every
# rank of run 1 was counted leaving (msg_leaves +6) and every rank of run 2 joining afresh
# (msg_joins +6: a fixed member's JOIN counts only in an incarnation it has not joined yet),
# with no abort and no incarnation ended by a restart (msg_aborts, msg_incarnations +0).
# The jobs' slots stay reserved throughout (/shouter/pool: 64 + 32) and nothing is freed.
#
#   faults_static.sh [--loss 1,5,3,2] [--dup 5] [--late 2] [--iters 4] [--size-int32 256K]
#                    [--size-float32 192K]
set -euo pipefail

loss=1,5,3,2
dup=5
late=0
iters=4
size_a=256K
size_b=192K
while (($#)); do
    case $1 in
    --loss) loss=$2; shift 2 ;;
    --dup) dup=$2; shift 2 ;;
    --late) late=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --size-int32) size_a=$2; shift 2 ;;
    --size-float32) size_b=$2; shift 2 ;;
    *) echo "faults_static.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# the system python3 for the JSON helpers and dpdk-telemetry.py (#!/usr/bin/env python3): an
# interpreter shim earlier in PATH (pyenv) can cost a second or more per call
PATH=/usr/bin:$PATH

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init fst

IFS=, read -r -a losses <<<"$loss"
((${#losses[@]} == 4)) || { echo "faults_static.sh: --loss needs 4 values (w0..w3)" >&2; exit 2; }

# late_dup I PCT: duplicate PCT% of the UDP frames in each direction of worker link I, the
# copy put in the slow class (1:20) of the HTB qdisc on the port it leaves by (the original
# goes back to the fast class before it is forwarded)
late_dup() {
    local i=$1 ppm
    ppm=$(fl_ppm "$2")
    fl_chain "w$i"
    fl_chain agg
    fl_reorder_qdisc agg 5mbit 32
    fl_reorder_qdisc "w$i" 5mbit 32
    fl_nft add rule netdev $FL_NFT "in_w$i" ip daddr 198.18.0.1 udp dport != 0 \
        numgen random mod 1000000 "<" "$ppm" counter meta priority set 1:20 dup to agg \
        meta priority set 1:10
    fl_nft add rule netdev $FL_NFT in_agg ip daddr "$(cl_worker_ip "$i")" udp dport != 0 \
        numgen random mod 1000000 "<" "$ppm" counter meta priority set 1:20 dup to "w$i" \
        meta priority set 1:10
}

cl_up 4
for i in 0 1 2 3; do
    "$CL_NETNS" netem "w$i" "loss ${losses[$i]}%" --prefix "$CL_PREFIX"
    fl_dup "$i" "$dup"
    [[ $late == 0 ]] || late_dup "$i" "$late"
done

# the two jobs: id, dtype, window, chunk, size, and per rank "namespace driver port" (port
# "-": any, the rank binds on JOIN)
ja=61
jb=62
win_a=64
chunk_a=128
win_b=32
chunk_b=256
ranks_a=("0 dpdk -" "1 udp -" "3 udp -")
ranks_b=("2 dpdk 47000" "3 udp 47103" "1 udp 47101")

ini=$CL_DIR/static.ini
{
    echo "; written by faults_static.sh"
    echo "[agg]"
    echo "ip = 198.18.0.1"
    echo "[job.$jb]"
    echo "world = ${#ranks_b[@]}"
    echo "dtype = float32"
    echo "window = $win_b"
    echo "chunk = $chunk_b"
    addrs=
    for spec in "${ranks_b[@]}"; do
        read -r i _ port <<<"$spec"
        addrs+="${addrs:+, }$(cl_worker_ip "$i"):$port"
    done
    echo "addrs = $addrs"
} >"$ini"

# tel_all: TEL_STATS, TEL_JOBS and TEL_POOL from one telemetry session (each client start
# costs a second or two of this small machine)
tel_all() {
    local out
    out=$(cl_telemetry /shouter/stats /shouter/jobs /shouter/pool)
    TEL_STATS=$(grep -m1 '^{"/shouter/stats"' <<<"$out" || true)
    TEL_JOBS=$(grep -m1 '^{"/shouter/jobs"' <<<"$out" || true)
    TEL_POOL=$(grep -m1 '^{"/shouter/pool"' <<<"$out" || true)
    [[ -n $TEL_STATS && -n $TEL_JOBS && -n $TEL_POOL ]] ||
        fl_fail "telemetry did not answer: $out"
}

cl_agg_start --config "$ini" --job "$ja:${#ranks_a[@]}:int32:$win_a:$chunk_a" \
    --job-timeout-ms 5000

# the box lists both static jobs before any worker exists (the fixed one active already)
tel_all
jobs=$TEL_JOBS
[[ $(fl_json "$jobs" "$ja/static") == 1 && $(fl_json "$jobs" "$ja/active") == 0 &&
    $(fl_json "$jobs" "$jb/static") == 1 && $(fl_json "$jobs" "$jb/active") == 1 &&
    $(fl_json "$jobs" "$jb/joined") == "${#ranks_b[@]}" ]] ||
    fl_fail "the static jobs are not listed as configured: $jobs"
slots=$((win_a + win_b))
pool=$TEL_POOL
[[ $(fl_json "$pool" slots_used) == "$slots" ]] || fl_fail "slots used: $pool (want $slots)"

# start_job GROUP JOB DTYPE CHUNK SIZE SEED RUN SPEC...: one rank per "ns driver port"
start_job() {
    local g=$1 job=$2 dt=$3 chunk=$4 size=$5 seed=$6 run=$7 r=0 spec i drv port
    local -a pa
    shift 7
    eval "FL_${g}_PIDS=(); FL_${g}_LOGS=(); FL_${g}_DRV=()"
    for spec in "$@"; do
        read -r i drv port <<<"$spec"
        pa=()
        [[ $port == - ]] || pa=(--local-port "$port")
        fl_start_rank "$g" "$i" "$job" "$r" "$#" "$drv" "${pa[@]}" --dtype "$dt" \
            --chunk "$chunk" --size "$size" --iters "$iters" --warmup 0 --seed "$seed" \
            --ready-file "$CL_DIR/ready-$run-$job-$r" --go-file "$CL_DIR/go-$run" || return
        r=$((r + 1))
    done
}

declare -A crc_prev
for run in 1 2; do
    seed_a=$((run * 100 + 1))
    seed_b=$((run * 100 + 2))
    cl_log "run $run: job $ja (int32, --job, seed $seed_a), job $jb (float32, addrs, seed" \
        "$seed_b); loss ${loss}% on w0..w3, $dup% duplicated"
    before=$TEL_STATS
    start_job A $ja int32 $chunk_a "$size_a" $seed_a $run "${ranks_a[@]}"
    start_job B $jb float32 $chunk_b "$size_b" $seed_b $run "${ranks_b[@]}"
    ready=()
    for ((r = 0; r < ${#ranks_a[@]}; r++)); do ready+=("$CL_DIR/ready-$run-$ja-$r"); done
    for ((r = 0; r < ${#ranks_b[@]}; r++)); do ready+=("$CL_DIR/ready-$run-$jb-$r"); done
    # (a rank has its ready file once it has its JOIN_ACK: its job is active at the box)
    fl_wait_ready 60 "A B" "${ready[@]}" || fl_fail "run $run: not every rank joined"
    jobs=$(fl_tel /shouter/jobs)
    for j in $ja $jb; do
        [[ $(fl_json "$jobs" "$j/active") == 1 && $(fl_json "$jobs" "$j/joined") == 3 ]] ||
            fl_fail "run $run: job $j not listed active with 3 joined while its ranks hold: $jobs"
    done
    touch "$CL_DIR/go-$run"
    for g in A B; do
        if [[ $g == A ]]; then j=$ja; else j=$jb; fi
        fl_wait_job $g || fl_fail "run $run: job $j is not exact at every rank"
        crc=$(cl_field "${FL_RESULTS[0]}" crc || echo none)
        cl_log "run $run: job $j crc=$crc retx=$(fl_sum_field retx)"
        if ((run == 2)) && [[ $crc == "${crc_prev[$j]}" ]]; then
            fl_fail "run 2: job $j has run 1's crc $crc (other seeds: other sums)"
        fi
        crc_prev[$j]=$crc
    done
    # every rank of both jobs has exited after its LEAVE: both incarnations have ended
    tel_all
    fl_deltas "$before" "$TEL_STATS"
    cl_log "run $run: joins=+${FL_D[msg_joins]} leaves=+${FL_D[msg_leaves]}" \
        "incarnations=+${FL_D[msg_incarnations]} aborts=+${FL_D[msg_aborts]}" \
        "completed=+${FL_D[msg_completed]} resent=+${FL_D[msg_resent]}" \
        "duplicates=+${FL_D[msg_duplicates]} stale=+${FL_D[msg_stale]}" \
        "rejects: $(fl_nonzero reject_)"
    want=$((${#ranks_a[@]} + ${#ranks_b[@]}))
    ((FL_D[msg_joins] == want)) ||
        fl_fail "run $run: msg_joins +${FL_D[msg_joins]}, want +$want (a fresh JOIN per rank)"
    ((FL_D[msg_leaves] == want)) ||
        fl_fail "run $run: msg_leaves +${FL_D[msg_leaves]}, want +$want"
    ((FL_D[msg_incarnations] == 0 && FL_D[msg_aborts] == 0)) ||
        fl_fail "run $run: the box aborted (a clean run, no restart)"
    ((FL_D[msg_jobs_created] == 0 && FL_D[msg_jobs_freed] == 0)) ||
        fl_fail "run $run: a job was created or freed (both are static)"
    jobs=$TEL_JOBS
    [[ $(fl_json "$jobs" "$ja/joined") == 0 && $(fl_json "$jobs" "$ja/active") == 0 &&
        $(fl_json "$jobs" "$jb/active") == 1 ]] ||
        fl_fail "run $run: after every member left, job $ja still joined or $jb inactive: $jobs"
    pool=$TEL_POOL
    [[ $(fl_json "$pool" slots_used) == "$slots" ]] ||
        fl_fail "run $run: slots used: $pool (want $slots)"
done

drops=$("$CL_NETNS" drops --prefix "$CL_PREFIX")
cl_log "frames dropped at the bridge (port dir n):" "$(tr "\n" " " <<<"$drops")"
awk '{s += $3} END {exit !(s > 0)}' <<<"$drops" || fl_fail "the loss rules dropped nothing"
hits=$(fl_rule_hits)
cl_log "frames duplicated at the bridge: $hits"
((hits > 0)) || fl_fail "the duplication rules copied nothing"
if [[ $late != 0 ]]; then
    read -r sent over dropped <<<"$(fl_slow_stats)"
    cl_log "late copies: $sent sent through the slow classes (waited $over times)," \
        "$dropped dropped"
    ((sent > 0)) || fl_fail "no late copy was sent"
fi
fl_finish
