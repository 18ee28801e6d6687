#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# An on-path attacker against the per-job MAC (issue 15 item 2). replay_tool.py runs in the
# bridge namespace: it captures on the box's bridge port, where every frame of the job passes,
# and sends out of the bridge ports themselves (to the box, to each rank), so it sees every
# frame and can send anything on the segment. While a job runs it replays captured DATA (to
# the box) and RESULTs (to the ranks) of the same incarnation, and sends copies altered in a
# payload byte, the step, the offset, the slot, the rank (with that rank's address), the
# token, the MAC trailer's counter, without the trailer, and LEAVEs and ABORTs (aux
# ECONNRESET) made of captured DATA and RESULTs, all with the CRC32C and the IP/UDP
# checksums recomputed: only the MAC can refuse them (replay_tool.py says exactly what).
#
#   1. control: the same attack on a job without the MAC (box and ranks with the same secret,
#      no --mac) must break it: the box takes a forged LEAVE or aborts the job, or a rank
#      takes a forged ABORT or ends wrong. Asserted, so that this test cannot pass if the MAC
#      is what did nothing.
#   2. the box with `mac = 1` in its INI ([agg], with its secret_file), the ranks with --mac:
#      int32 on DRIVERS (default udp,udp,dpdk) and float32 on FDRIVERS (default udp,dpdk)
#      under the attack: the job stays active with every member (no LEAVE taken, no abort),
#      the box's counters (/shouter/stats reject_mac_*) went up by exactly what was sent to it
#      (mac_replay: the replays; mac_missing: the frames without the trailer; mac_bad: every
#      altered copy and forged LEAVE, with reject_bad_token for the altered token if the box
#      checks that first), each
#      rank's mac_replay / mac_missing / mac_bad are exactly what was sent to it, and the job
#      ends exact (int32: the worker checks every element; every rank the same crc).
#
# Ordering by construction: the ranks join and hold (--go-file) until the attacker is
# capturing; the attacker attacks only once it has captured a DATA from every rank and a
# RESULT to every rank (the job's rounds are flowing); the ranks hold before their second
# allreduce (--mid-file) until the attacker has sent its first round (--first-file), so that
# round comes while no rank has finished (rounds_mid; a job shorter than the attacker's
# start once ended before it); the ranks hold at the end (--end-file, still members) until
# the attacker has stopped and the box's counters are read.
#
#   mac_replay.sh [--drivers udp,udp,dpdk] [--fdrivers udp,dpdk] [--size 2M] [--iters 8]
#                 [--no-control | --control-only] [--classes C1,C2 (replay_tool.py's)]
set -euo pipefail

drivers=udp,udp,dpdk
fdrivers=udp,dpdk
size=2M
iters=8
control=1
classes=
while (($#)); do
    case $1 in
    --drivers) drivers=$2; shift 2 ;;
    --fdrivers) fdrivers=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --no-control) control=0; shift ;;
    --control-only) control=2; shift ;;
    --classes) classes=$2; shift 2 ;;
    *) echo "mac_replay.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init mr
py=/usr/bin/python3
tool=$(dirname "$0")/replay_tool.py
[[ -x $py ]] || { cl_log "missing $py"; exit 1; }

IFS=, read -r -a dl <<<"$drivers"
IFS=, read -r -a fdl <<<"$fdrivers"
n=${#dl[@]}
((${#fdl[@]} > n)) && n=${#fdl[@]}
cl_up "$n"
secret=$CL_DIR/secret
(umask 077; printf 'the-secret-of-the-mac-replay-test\n' >"$secret")
ini=$CL_DIR/agg-mac.ini
printf '[agg]\nip = 198.18.0.1\nsecret_file = %s\nmac = 1\njob_timeout_ms = 3000\n' \
    "$secret" >"$ini"

# alive PID: the process exists and is not a zombie (a rank's `timeout` not yet waited for)
alive() {
    local st
    st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
    [[ $st != Z ]]
}

# jget JSON PATH: a value of the attacker's report (keys joined by '/'), 0 if absent
jget() {
    "$py" -c '
import json, sys
d = json.loads(sys.argv[1])
for k in sys.argv[2].split("/"):
    d = d.get(k, 0) if isinstance(d, dict) else 0
print(int(d) if isinstance(d, (bool, int)) else d)
' "$1" "$2"
}

# rank_ctr LOG KEY: KEY=N from a rank's counters line (empty if none)
rank_ctr() {
    grep -E "rank [0-9]+: tx_data=" "$1" | tail -n 1 | sed -n "s/.* $2=\([0-9]*\).*/\1/p"
}

# attack G J MAC DTYPE "DRIVERS": run job J under the attack; ATTACK gets the attacker's report,
# BEFORE / AFTER the box's /shouter/stats around it, JOBS /shouter/jobs at its end (ranks held)
attack() {
    local g=$1 J=$2 mac=$3 dtype=$4 drivers=$5 r prog pid stop done_all dead
    local -a opts=(--dtype "$dtype" --size "$size" --iters "$iters" --warmup 0 --chunk 512
        --secret-file "$secret" --ready-file "$CL_DIR/ready$J.@RANK@" --go-file "$CL_DIR/go$J"
        --mid-file "$CL_DIR/mid$J" --end-file "$CL_DIR/end$J.@RANK@")
    local -a ready=() ends=() rif=()
    ((mac)) && opts+=(--mac)
    fl_start_job "$g" "$J" "$drivers" 0 "${opts[@]}"
    WORLD=0
    eval "WORLD=\${#FL_${g}_PIDS[@]}"
    for ((r = 0; r < WORLD; r++)); do
        ready+=("$CL_DIR/ready$J.$r")
        ends+=("$CL_DIR/end$J.$r")
        rif+=(--rank-if "$r=w$r")
    done
    fl_wait_ready 90 "$g" "${ready[@]}" || { fl_fail "job $J: the ranks did not join"; return 1; }
    JOBS=$(fl_tel /shouter/jobs)
    [[ $(fl_json "$JOBS" "$J/active") == 1 ]] || { fl_fail "job $J not active: $JOBS"; return 1; }
    BEFORE=$(fl_tel /shouter/stats)
    prog=$CL_DIR/attack$J
    stop=$CL_DIR/stop$J
    ip netns exec "$CL_PREFIX-br" "$py" "$tool" --job "$J" --box-if agg "${rif[@]}" \
        --interval 0.1 --classes "$classes" --stop-file "$stop" --progress-file "$prog" \
        --first-file "$CL_DIR/mid$J" \
        --end-files "$(IFS=,; echo "${ends[*]}")" >"$prog.out" 2>"$prog.err" &
    pid=$!
    CL_PIDS+=("$pid")
    while [[ ! -s $prog ]]; do
        alive "$pid" || { fl_fail "job $J: the attacker died: $(cat "$prog.err")"; return 1; }
        sleep 0.05
    done
    cl_log "job $J ($dtype, $drivers, mac=$mac): the attacker is capturing; go"
    touch "$CL_DIR/go$J"
    # until every rank is done (held, still a member) or one has ended
    while :; do
        done_all=1
        dead=0
        for r in "${!ends[@]}"; do
            [[ -e ${ends[$r]} ]] || done_all=0
            eval "alive \${FL_${g}_PIDS[$r]}" || dead=1
        done
        ((done_all || dead)) && break
        alive "$pid" || { fl_fail "job $J: the attacker died: $(cat "$prog.err")"; break; }
        sleep 0.05
    done
    touch "$stop"
    wait "$pid" || fl_fail "job $J: replay_tool.py failed: $(cat "$prog.err")"
    ATTACK=$(tail -n 1 "$prog.out")
    JOBS=$(fl_tel /shouter/jobs)
    AFTER=$(fl_tel /shouter/stats)
    cl_log "attacker: $ATTACK"
    rm -f "${ends[@]}"
}

# --- 1. control: no MAC ---
if ((control)); then
    cl_agg_start --secret-file "$secret" --job-timeout-ms 3000
    attack C 81 0 int32 "${dl[*]}" || true
    fl_deltas "$BEFORE" "$AFTER"
    took="msg_leaves=+${FL_D[msg_leaves]:-0} msg_aborts=+${FL_D[msg_aborts]:-0}"
    [[ $(jget "$ATTACK" mac) == 0 ]] || fl_fail "control: the job's frames carry a MAC"
    (($(jget "$ATTACK" rounds) >= 1)) || fl_fail "control: no attack round was sent"
    if fl_wait_job C; then
        fl_fail "control: job 81 ended exact under the attack ($took)"
    else
        cl_log "control: the attack broke job 81 without the MAC ($took; rank exits" \
            "${FL_RCS[*]})"
    fi
    ((FL_D[msg_leaves] > 0 || FL_D[msg_aborts] > 0)) ||
        cl_log "control: (the box took no LEAVE and aborted nothing: the ranks' ABORTs did it)"
    cl_agg_stop || fl_fail "control box: exit status $? after SIGINT"
fi

((control == 2)) && fl_finish

# --- 2. the MAC on ---
cl_agg_start --config "$ini"

# check_mac G J: the job survived the attack and every refused frame was counted
check_mac() {
    local g=$1 J=$2 r k log want got
    local -a logs
    (($(jget "$ATTACK" rounds_mid) >= 1)) ||
        fl_fail "job $J: no attack round while the allreduces ran ($ATTACK)"
    [[ $(jget "$ATTACK" mac) == 1 ]] || fl_fail "job $J: the job's frames carry no MAC"
    [[ $(fl_json "$JOBS" "$J/active") == 1 && $(fl_json "$JOBS" "$J/joined") == "$WORLD" ]] ||
        fl_fail "job $J lost members to the attack: $JOBS"
    fl_deltas "$BEFORE" "$AFTER"
    ((FL_D[msg_aborts] == 0)) || fl_fail "job $J: the box aborted (+${FL_D[msg_aborts]})"
    ((FL_D[msg_leaves] == 0)) || fl_fail "job $J: the box took a LEAVE (+${FL_D[msg_leaves]})"
    want=$(($(jget "$ATTACK" box/replay_last) + $(jget "$ATTACK" box/replay_first)))
    ((FL_D[reject_mac_replay] == want)) ||
        fl_fail "job $J: box mac_replay +${FL_D[reject_mac_replay]}, replayed $want"
    want=$(jget "$ATTACK" box/strip_mac)
    ((FL_D[reject_mac_missing] == want)) ||
        fl_fail "job $J: box mac_missing +${FL_D[reject_mac_missing]}, sent without the MAC $want"
    want=0
    for k in alt_payload alt_step alt_offset alt_slot alt_rank alt_counter forge_leave alt_token
    do
        want=$((want + $(jget "$ATTACK" "box/$k")))
    done
    got=$((FL_D[reject_mac_bad] + FL_D[reject_bad_token]))
    ((got == want)) ||
        fl_fail "job $J: box mac_bad +${FL_D[reject_mac_bad]} reject_bad_token" \
            "+${FL_D[reject_bad_token]}, altered or forged $want"
    cl_log "job $J box: mac_bad=+${FL_D[reject_mac_bad]} mac_replay=+${FL_D[reject_mac_replay]}" \
        "mac_missing=+${FL_D[reject_mac_missing]} reject_bad_token=+${FL_D[reject_bad_token]}" \
        "(other rejects: $(fl_nonzero reject_)) completed=+${FL_D[msg_completed]}"
    fl_wait_job "$g" || fl_fail "job $J: not exact under the attack"
    eval "logs=(\"\${FL_${g}_LOGS[@]}\")"
    for r in "${!logs[@]}"; do
        log=${logs[$r]}
        for k in mac_bad:alt_result+forge_abort mac_replay:replay_result mac_missing:strip_result
        do
            want=0
            IFS=+ read -r -a cls <<<"${k#*:}"
            for c in "${cls[@]}"; do want=$((want + $(jget "$ATTACK" "rank/$r/$c"))); done
            got=$(rank_ctr "$log" "${k%%:*}")
            if [[ -z $got ]]; then
                fl_fail "job $J rank $r: no ${k%%:*} on its counters line"
                continue
            fi
            ((got == want)) || fl_fail "job $J rank $r: ${k%%:*}=$got, sent $want (${k#*:})"
        done
        cl_log "job $J rank $r: mac_bad=$(rank_ctr "$log" mac_bad)" \
            "mac_replay=$(rank_ctr "$log" mac_replay) mac_missing=$(rank_ctr "$log" mac_missing)"
    done
}

attack M 82 1 int32 "${dl[*]}" && check_mac M 82
attack F 83 1 float32 "${fdl[*]}" && check_mac F 83
fl_finish
