#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Soak (issue 7 item 5; not part of CI): one shouter-agg serves jobs that start and end
# continuously for a given time, with loss on every worker link and members SIGKILLed and
# restarted in the middle of their job. Root (network namespaces). Run it under the e2e
# lock: flock /tmp/shr-e2e.lock scripts/soak.sh --minutes 30
#
#   scripts/soak.sh [--minutes N] [--lanes L] [--loss PCT] [--seed S] [--rss-tol-kib K]
#
# Set-up: scripts/netns.sh namespaces (tests/e2e/cluster.sh, faults_lib.sh), 3 worker
# namespaces per lane, "loss PCT%" (default 5) on every worker link (nftables at the bridge),
# the box on its defaults (job timeout 5 s, idle 60 s).
# Lanes run side by side, each one job at a time on its own namespaces, until the time is up:
#   - a job: 2 or 3 ranks, each on DPDK (af_packet) or kernel UDP at random, int32 or
#     float32, 4 B to 4 MiB, 1 KiB to 8 KiB chunks, 1 to 8 allreduces, job ids reused (4
#     per lane). shouter-worker checks every element itself: all ranks exit 0 with one crc=
#     (exact), or the job is classified: exit 1 wrong, killed by its timeout hung, exit 3
#     (aborted) unexpected, anything else error.
#   - one job in three is killed: once all ranks have joined (--ready-file) and a random
#     0-2 s later, one rank is SIGKILLed and started again at once (same job, rank and
#     namespace, a new process: a new incarnation; the box ends the old one, ESTALE). The
#     other ranks of the killed run must exit 3 (aborted) or 0; then they are started again
#     too and the new incarnation must be exact.
# Warm-up: the first sixth of the time (20 s to 5 min); the box's VmRSS is read when it ends
# (start) and after the last job (end). The mempools are allocated at start, but their pages
# are touched as mbufs first cycle through them (the ring hands them out in FIFO order), so
# RSS grows during the warm-up; after it only a leak outside the pools (malloc per job,
# telemetry) can grow it. --rss-tol-kib (default 1024) is the growth allowed: glibc's arenas
# and a telemetry thread's stack are a few pages, while a leak of 1 KiB per job over the
# hundreds of jobs of a 30-minute soak exceeds it. Afterwards /shouter/pool must be back
# at its idle level, as faults_resources.sh has it (slots_used 0, header mbufs as before any
# job, packet mbufs at most one spare per data lcore above that), /shouter/jobs empty, and
# the box must exit 0 on SIGINT.
#
# Exit: 0 pass, 1 fail, 2 usage or not root. Logs: the directory printed at the start (kept;
# the logs of exact jobs are removed as they go).
set -euo pipefail

usage() { sed -n '4,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

minutes=30
lanes=3
loss=5
seed=$$
rss_tol_kib=1024
while (($#)); do
    case $1 in
    --minutes | --lanes | --loss | --seed | --rss-tol-kib)
        (($# >= 2)) || { echo "soak.sh: $1 needs a value (--help)" >&2; exit 2; } ;;
    esac
    case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --lanes) lanes=$2; shift 2 ;;
    --loss) loss=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --rss-tol-kib) rss_tol_kib=$2; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "soak.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done
[[ $minutes =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "soak.sh: --minutes N" >&2; exit 2; }
[[ $lanes =~ ^[1-9]$ ]] || { echo "soak.sh: --lanes 1..9" >&2; exit 2; }
[[ $loss =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "soak.sh: --loss PCT" >&2; exit 2; }
[[ $seed =~ ^[0-9]+$ && $rss_tol_kib =~ ^[0-9]+$ ]] || { echo "soak.sh: bad number" >&2; exit 2; }
if [[ $(id -u) -ne 0 ]]; then
    echo "soak.sh: must run as root (network namespaces, DPDK on af_packet)" >&2
    exit 2
fi
duration=$(awk -v m="$minutes" 'BEGIN {printf "%d", m * 60}')
((duration >= 30)) || { echo "soak.sh: --minutes: at least 0.5" >&2; exit 2; }
warm=$((duration / 6))
((warm >= 20)) || warm=20
((warm <= 300)) || warm=300

top=$(cd "$(dirname "$0")/.." && pwd)
export SHR_BUILD=${SHR_BUILD:-$top/build}
export CL_KEEP=1
export CL_RUN_TIMEOUT=${CL_RUN_TIMEOUT:-180}
# shellcheck source=tests/e2e/faults_lib.sh
source "$top/tests/e2e/faults_lib.sh"
fl_init soak
# (fl_init's EXIT trap, cl_cleanup, kills what this script started, by PID, and removes the
# namespaces; the lanes below are added to CL_PIDS and stop their own workers on TERM)

REC=$CL_DIR/records
: >"$REC"
cl_log "soak: ${minutes} min (warm-up $warm s), $lanes lanes, loss $loss% on worker links," \
    "seed $seed; logs in $CL_DIR"

cl_up $((3 * lanes))
# shellcheck disable=SC2119  # (the box on its defaults)
cl_agg_start
agg_pid=$CL_AGG_PID
[[ $(readlink "/proc/$agg_pid/exe") == */shouter-agg ]] ||
    { fl_fail "pid $agg_pid is not shouter-agg: $(readlink "/proc/$agg_pid/exe")"; fl_finish; }

# tel CMD: one telemetry reply, as fl_tel, but a slow answer is waited for (60 s) and a
# missing one retried (3 times), then empty: under the soak's load (and any other load on
# the machine) the box's telemetry thread, which shares a core with the DPDK ranks, and
# dpdk-telemetry.py can take longer than fl_tel's 10 s, and a reading must not end the soak
tel() {
    local i out
    for i in 1 2 3; do
        out=$(printf '%s\n' "$1" |
            timeout 60 ip netns exec "$CL_PREFIX-agg" dpdk-telemetry.py -f "$CL_PREFIX-agg" 2>&1 |
            sed -n 's/^--> *//; /^{/p' | awk 'NR == 1') || out=
        [[ -z $out ]] || { echo "$out"; return 0; }
        cl_log "telemetry: no answer to $1 (try $i)"
    done
    echo ""
}

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$agg_pid/status" 2>/dev/null || echo 0; }
rss_detail() {
    awk '/^(VmRSS|RssAnon|RssFile|RssShmem):/ {printf "%s%s kB ", $1, $2}' \
        "/proc/$agg_pid/status" 2>/dev/null || true
}
pool_kv() {
    echo "slots_used=$(fl_json "$1" slots_used) hdr_mbufs_in_use=$(fl_json "$1" hdr_mbufs_in_use)" \
        "pkt_mbufs_in_use=$(fl_json "$1" pkt_mbufs_in_use)"
}

# the idle level, as faults_resources.sh: header mbufs as before any job, packet mbufs at
# most one per data lcore above that (zero-copy: each data lcore may keep a spare payload
# mbuf for its next message; whether it holds one depends on the last frame it handled)
# pool_at P: whether pool reply P is at the idle level
pool_at() {
    local pkt hdr
    pkt=$(fl_json "$1" pkt_mbufs_in_use)
    hdr=$(fl_json "$1" hdr_mbufs_in_use)
    [[ $pkt =~ ^[0-9]+$ && $hdr =~ ^[0-9]+$ ]] && ((pkt <= idle_pkt_max && hdr == idle_hdr)) &&
        [[ $(fl_json "$1" slots_used) == 0 ]]
}
# wait_pool: until the pool is at the idle level (30 s); the last reading in FL_LAST
wait_pool() {
    local end=$((SECONDS + 30))
    while ((SECONDS < end)); do
        FL_LAST=$(tel /shouter/pool)
        pool_at "$FL_LAST" && return 0
        sleep 0.1
    done
    return 1
}
idle0=$(tel /shouter/pool)
lcores=$(fl_json "$(tel /shouter/stats)" lcores)
idle_hdr=$(fl_json "$idle0" hdr_mbufs_in_use)
idle_pkt_max=$(($(fl_json "$idle0" pkt_mbufs_in_use) + lcores))
fl_start_job W 9 "udp udp" 0 --dtype int32 --size 4 --iters 1 --warmup 0
fl_wait_job W >/dev/null || fl_fail "the tiny job before the soak"
wait_pool || fl_fail "not at the idle level after one tiny job: $(pool_kv "$FL_LAST")"
idle=$FL_LAST
idle_kv="slots_used=0 hdr_mbufs_in_use=$idle_hdr pkt_mbufs_in_use<=$idle_pkt_max"
cl_log "idle: $(pool_kv "$idle") (before any job: $(pool_kv "$idle0"); idle level: $idle_kv)"
stats0=$(tel /shouter/stats)

for ((i = 0; i < 3 * lanes; i++)); do
    "$CL_NETNS" netem "w$i" "loss $loss%" --prefix "$CL_PREFIX"
done

T_START=$(date +%s)
T_END=$((T_START + duration))

# --- a lane: one job at a time on namespaces 3L .. 3L+2 ---

# record OUTCOME KIND JOB DESCRIPTION...: one line of the records file
record() { echo "$*" >>"$REC"; }

# outcome: classify a group's exit statuses and RESULT lines (FL_RCS, FL_RESULTS of
# fl_wait_job): exact only if every rank exited 0 with ok=1 and the same crc=
outcome() {
    local rc line crc0='' wrong=0 hung=0 aborted=0 other=0
    for rc in "${FL_RCS[@]}"; do
        case $rc in
        0) ;;
        1) wrong=1 ;;
        3) aborted=1 ;;
        124 | 137) hung=1 ;;
        *) other=1 ;;
        esac
    done
    if ((wrong)); then echo wrong; return; fi
    if ((hung)); then echo hung; return; fi
    if ((other)); then echo error; return; fi
    if ((aborted)); then echo unexpected_abort; return; fi
    for line in "${FL_RESULTS[@]}"; do
        [[ $(cl_field "$line" ok || echo 0) == 1 ]] || { echo wrong; return; }
        if [[ -z $crc0 ]]; then
            crc0=$(cl_field "$line" crc || echo none)
        elif [[ $(cl_field "$line" crc || echo none) != "$crc0" ]]; then
            echo wrong
            return
        fi
    done
    echo exact
}

# errors: the error= of each RESULT line (- for none), comma-separated
errors() {
    local line out=''
    for line in "${FL_RESULTS[@]}"; do out+="$(cl_field "$line" error || echo -),"; done
    echo "${out%,}"
}

lane_logs() { local g=$1; eval "echo \"\${FL_${g}_LOGS[*]}\""; }
lane_pids() { local g=$1; eval "echo \"\${FL_${g}_PIDS[*]}\""; }

# shellcheck disable=SC2317  # (a trap)
lane_stop() {
    local p
    for p in $(lane_pids J) $(lane_pids N); do kill -TERM "$p" 2>/dev/null || true; done
    exit 143
}

# keep the logs of a job that is not exact, drop the others
lane_tidy() {
    local oc=$1 g f
    shift
    [[ $oc == exact ]] || return 0
    for g in "$@"; do
        for f in $(lane_logs "$g"); do rm -f "$f"; done
    done
}

lane() {
    local L=$1 n=0 first job world r drivers dtype size chunk iters s kill_it
    local victim victim_rc=0 pid oc oc_old desc ready i alive
    local -a dl sizes=(4 4K 64K 256K 1M 4M) chunks=(256 1024 2048) files
    first=$((3 * L))
    RANDOM=$((seed + 7919 * L))
    trap lane_stop TERM INT
    while (($(date +%s) < T_END)); do
        n=$((n + 1))
        job=$((100 * (L + 1) + n % 4))
        world=$((2 + RANDOM % 2))
        dl=()
        for ((r = 0; r < world; r++)); do
            if ((RANDOM % 3 == 0)); then dl+=(dpdk); else dl+=(udp); fi
        done
        drivers="${dl[*]}"
        if ((RANDOM % 2)); then dtype=int32; else dtype=float32; fi
        chunk=${chunks[$((RANDOM % 3))]}
        s=$((RANDOM % 1000000))
        kill_it=$((RANDOM % 3 == 0))
        if ((kill_it)); then
            size=${sizes[$((2 + RANDOM % 3))]}
            iters=100000
        else
            size=${sizes[$((RANDOM % 6))]}
            iters=$((1 + RANDOM % 8))
            [[ $size != 4M ]] || iters=$((1 + iters % 3))
        fi
        desc="lane=$L job=$job world=$world drivers=${drivers// /,} dtype=$dtype size=$size chunk=$chunk"
        if ((!kill_it)); then
            fl_start_job J "$job" "$drivers" "$first" --dtype "$dtype" --size "$size" \
                --chunk "$chunk" --iters "$iters" --warmup 0 --seed "$s" || true
            fl_wait_job J || true
            oc=$(outcome)
            record "$oc" normal "$desc iters=$iters rcs=${FL_RCS[*]} errors=$(errors)" \
                "logs=$(lane_logs J | tr ' ' ,)"
            lane_tidy "$oc" J
            continue
        fi
        # a killed run, then the restarted one
        ready=$CL_DIR/ready-L$L-n$n
        fl_start_job J "$job" "$drivers" "$first" --dtype "$dtype" --size "$size" \
            --chunk "$chunk" --iters "$iters" --warmup 0 --seed "$s" \
            --ready-file "$ready-@RANK@" || true
        files=()
        for ((r = 0; r < world; r++)); do files+=("$ready-$r"); done
        victim=-1
        if fl_wait_ready 90 J "${files[@]}"; then
            sleep "$(awk -v r=$((RANDOM % 2000)) 'BEGIN {printf "%.3f", r / 1000}')"
            alive=1
            for pid in $(lane_pids J); do kill -0 "$pid" 2>/dev/null || alive=0; done
            if ((alive)); then
                victim=$((RANDOM % world))
                pid=$(fl_rank_pid J "$victim" || true)
                if [[ -n $pid ]]; then
                    kill -KILL "$pid"
                    # the restart comes once the killed process is gone (its `timeout`
                    # has reaped it): a DPDK rank's EAL lock on its runtime directory is
                    # held until then, and a restart that came first failed to start
                    # ("Cannot create lock ... Is another primary process running?")
                    victim_rc=0
                    wait "${FL_J_PIDS[$victim]}" || victim_rc=$?
                else
                    victim=-1
                fi
            fi
        fi
        rm -f "${files[@]}"
        if ((victim < 0)); then
            # (no kill: a rank ended before all had joined, or the ranks did not get there)
            for pid in $(lane_pids J); do kill -TERM "$pid" 2>/dev/null || true; done
            fl_wait_job J || true
            record error kill "$desc: not all ranks joined and alive to be killed" \
                "rcs=${FL_RCS[*]} logs=$(lane_logs J | tr ' ' ,)"
            continue
        fi
        s=$((RANDOM % 1000000))
        iters=$((1 + RANDOM % 5))
        eval "FL_N_PIDS=(); FL_N_LOGS=(); FL_N_DRV=()"
        fl_start_rank N $((first + victim)) "$job" "$victim" "$world" "${dl[$victim]}" \
            --dtype "$dtype" --size "$size" --chunk "$chunk" --iters "$iters" --warmup 0 \
            --seed "$s" || true
        # the killed run: the victim's status is SIGKILL's (reaped above: fl_wait_job's
        # second wait finds no such child), the others' must be 3 or 0
        fl_wait_job J 2>/dev/null || true
        FL_RCS[victim]=$victim_rc
        oc_old=killed
        for i in "${!FL_RCS[@]}"; do
            ((i == victim)) && continue
            case ${FL_RCS[$i]} in
            0 | 3) ;;
            1) oc_old=wrong ;;
            124 | 137) [[ $oc_old == wrong ]] || oc_old=hung ;;
            *) [[ $oc_old != killed ]] || oc_old=error ;;
            esac
        done
        record "$oc_old" kill "$desc victim=$victim/${dl[$victim]} rcs=${FL_RCS[*]}" \
            "logs=$(lane_logs J | tr ' ' ,)"
        [[ $oc_old == killed ]] && lane_tidy exact J
        for ((r = 0; r < world; r++)); do
            ((r == victim)) && continue
            fl_start_rank N $((first + r)) "$job" "$r" "$world" "${dl[$r]}" \
                --dtype "$dtype" --size "$size" --chunk "$chunk" --iters "$iters" \
                --warmup 0 --seed "$s" || true
        done
        fl_wait_job N || true
        oc=$(outcome)
        record "$oc" restart "$desc victim=$victim/${dl[$victim]} iters=$iters" \
            "rcs=${FL_RCS[*]} errors=$(errors) logs=$(lane_logs N | tr ' ' ,)"
        lane_tidy "$oc" N
    done
}

declare -a lane_pid=()
for ((L = 0; L < lanes; L++)); do
    lane "$L" >"$CL_DIR/lane$L.log" 2>&1 &
    lane_pid+=($!)
    CL_PIDS+=($!)
done

count() { grep -c "^$1 ${2:-}" "$REC" || true; }
progress() {
    local p
    p=$(tel /shouter/pool)
    cl_log "t=$(($(date +%s) - T_START))s records: exact=$(count exact) killed=$(count killed)" \
        "wrong=$(count wrong) hung=$(count hung) unexpected_abort=$(count unexpected_abort)" \
        "error=$(count error) | $(pool_kv "$p") | $(rss_detail)"
}

rss_start=
next_report=$((T_START + 60))
grace=$((2 * CL_RUN_TIMEOUT + 60))
while :; do
    alive=0
    for p in "${lane_pid[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    ((alive)) || break
    # (alive: not gone, not a zombie waiting to be reaped)
    if ! grep -qs '^State:[[:space:]]*[^Z[:space:]]' "/proc/$agg_pid/status"; then
        fl_fail "shouter-agg (pid $agg_pid) died during the soak: $CL_DIR/agg.log"
        for p in "${lane_pid[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        break
    fi
    now=$(date +%s)
    if [[ -z $rss_start ]] && ((now >= T_START + warm)); then
        rss_start=$(rss_kib)
        cl_log "warm-up over: VmRSS $rss_start kB ($(rss_detail))"
    fi
    if ((now >= next_report)); then
        progress
        next_report=$((now + 60))
    fi
    if ((now > T_END + grace)); then
        fl_fail "lanes still running $grace s after the end: hung"
        for p in "${lane_pid[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        record hung lane "a lane did not finish its last job within $grace s"
        break
    fi
    sleep 1
done
for p in "${lane_pid[@]}"; do
    rc=0
    wait "$p" || rc=$?
    ((rc == 0)) || fl_fail "lane pid $p exited $rc (its log: $CL_DIR/lane*.log)"
done
t_run=$(($(date +%s) - T_START))
[[ -n $rss_start ]] || { rss_start=$(rss_kib); fl_fail "the soak ended before its warm-up"; }

drops=$("$CL_NETNS" drops --prefix "$CL_PREFIX" | awk '{s += $3} END {print s + 0}')
"$CL_NETNS" netem all none --prefix "$CL_PREFIX"

# the box after the soak: no job left (a member whose LEAVE_ACK was lost is reclaimed at the
# idle bound, 60 s), slots and mbufs at the idle level (a TX buffer may hold a few frames
# until its next flush: polled)
jobs_left=unknown
t_wait=$((SECONDS + 90))
while ((SECONDS < t_wait)); do
    jobs=$(tel /shouter/jobs)
    jobs_left=$(python3 -c 'import json, sys
try:
    print(len(next(iter(json.loads(sys.argv[1]).values()))))
except Exception:
    print("unknown")' "$jobs")
    [[ $jobs_left == 0 ]] && break
    sleep 0.1
done
[[ $jobs_left == 0 ]] || fl_fail "jobs still listed 90 s after the soak: $jobs"
wait_pool || fl_fail "pool not back at the idle level ($idle_kv): $(pool_kv "$FL_LAST")"
end=$FL_LAST
rss_end=$(rss_kib)
rss_end_detail=$(rss_detail)
growth=$((rss_end - rss_start))
((growth <= rss_tol_kib)) ||
    fl_fail "shouter-agg VmRSS grew by $growth kB after the warm-up (tolerance $rss_tol_kib kB)"
fl_deltas "$stats0" "$(tel /shouter/stats)"

n_exact=$(count exact)
n_killed=$(count killed)
n_wrong=$(count wrong)
n_hung=$(count hung)
n_unexp=$(count unexpected_abort)
n_error=$(count error)
n_jobs=$(grep -c -v ' lane ' "$REC" || true)
n_restarts=$(count '[a-z_]*' restart)
n_leave=$(grep -l 'leaving: no LEAVE_ACK' "$CL_DIR"/*.log 2>/dev/null | wc -l || true)
((n_wrong == 0)) || fl_fail "$n_wrong job(s) with a wrong result"
((n_hung == 0)) || fl_fail "$n_hung job(s) hung"
((n_unexp == 0)) || fl_fail "$n_unexp job(s) aborted without a kill"
((n_error == 0)) || fl_fail "$n_error job(s) with another error"
((drops > 0)) || fl_fail "the loss rules dropped nothing"
((n_exact > 0)) || fl_fail "no job ran to an exact result"
grep -v '^exact \|^killed ' "$REC" | sed 's/^/  not exact: /' >&2 || true

echo "=== soak summary ($t_run s of jobs, $lanes lanes, loss $loss%, seed $seed) ==="
echo "jobs run:                 $n_jobs (incarnations: normal $(count '[a-z_]*' normal)," \
    "killed $(count '[a-z_]*' kill), restarted $n_restarts)"
echo "exact:                    $n_exact"
echo "aborted by kill (expected): $n_killed"
echo "wrong (must be 0):        $n_wrong"
echo "hung (must be 0):         $n_hung"
echo "aborted, no kill (must be 0): $n_unexp"
echo "other errors (must be 0): $n_error"
echo "restarts (SIGKILL + new incarnation): $n_restarts (victims on DPDK" \
    "$(grep -c ' restart .*victim=[0-9]*/dpdk' "$REC" || true), on kernel UDP" \
    "$(grep -c ' restart .*victim=[0-9]*/udp' "$REC" || true))"
echo "jobs with a DPDK rank:    $(grep -v ' lane ' "$REC" | grep -c 'drivers=[a-z,]*dpdk' || true)"
echo "loss injected:            $drops frames dropped by the nft rules"
echo "no LEAVE_ACK at exit:     $n_leave rank(s) (job reclaimed by the box when idle)"
echo "box counters (soak):      jobs_created=${FL_D[msg_jobs_created]:-?}" \
    "jobs_freed=${FL_D[msg_jobs_freed]:-?} incarnations=${FL_D[msg_incarnations]:-?}" \
    "aborts=${FL_D[msg_aborts]:-?} reaborts=${FL_D[msg_reaborts]:-?}" \
    "idle_reclaims=${FL_D[msg_idle_reclaims]:-?} resent=${FL_D[msg_resent]:-?}" \
    "duplicates=${FL_D[msg_duplicates]:-?} stale=${FL_D[msg_stale]:-?}"
echo "box rejects (soak):       $(fl_nonzero reject_)"
echo "RSS shouter-agg:          start $rss_start kB (after $warm s warm-up), end $rss_end kB," \
    "growth $growth kB (tolerance $rss_tol_kib kB); end: $rss_end_detail"
echo "pool at the end:          $(pool_kv "$end") (idle level: $idle_kv); jobs listed: $jobs_left"
echo "records:                  $REC"
fl_finish
