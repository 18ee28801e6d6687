# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
# shellcheck shell=bash
#
# Sourced by tests/integration/agg_it.sh and agg_cli_it.sh (bash, set -u) before anything
# else: what both need to run shouter-agg under EAL with --no-huge -m 512 --no-pci, virtual
# devices only, a --file-prefix of its own per run (PREFIX), a scratch directory (DIR); a
# trap removes everything started and written on exit, whatever the script ran (the FIFO
# writer of agg_it.sh idle, the network namespaces of agg_it.sh afpacket).
#
#   fail MSG            FAIL: MSG and the tail of every $DIR/*.log, exit 1
#   eal                 the EAL arguments (-l $LCORES)
#   start_agg, stop_agg, stop_quiet   the box in the background, ready; stopped, checked
#   wait_line           a line of the box's output (a state it reached)
#   tel_get, wait_tel   its telemetry (tel.py)
#
# The aggregator is $SHR_BUILD/app/shouter-agg (SHR_BUILD: the build directory).

it_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

AGG=${SHR_BUILD:?SHR_BUILD must name the build directory}/app/shouter-agg
DIR=$(mktemp -d /tmp/shouter-it.XXXXXX)
PREFIX=shr-it-$$
AGG_PID=
WRITER_PID=

NS_A=
NS_B=

cleanup() {
    # (agg_it.sh idle's FIFO writer, blocked if the box never opened the FIFO)
    [[ -n $WRITER_PID ]] && kill "$WRITER_PID" 2>/dev/null
    if [[ -n $AGG_PID ]] && kill -0 "$AGG_PID" 2>/dev/null; then
        kill -KILL "$AGG_PID" 2>/dev/null
        wait "$AGG_PID" 2>/dev/null
    fi
    [[ -n $NS_A ]] && ip netns del "$NS_A" 2>/dev/null
    [[ -n $NS_B ]] && ip netns del "$NS_B" 2>/dev/null
    rm -rf "$DIR" "/var/run/dpdk/$PREFIX" "/var/run/dpdk/$PREFIX-noeal" \
        "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$PREFIX" "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$PREFIX-noeal"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    for f in "$DIR"/*.log; do
        [[ -f $f ]] && { echo "--- $f" >&2; tail -n 30 "$f" >&2; }
    done
    exit 1
}

LCORES=0

eal() {
    echo --no-huge -m 512 --no-pci --file-prefix "$PREFIX" -l "$LCORES" \
        --log-level=shouter.agg:info
}

[[ -x $AGG ]] || fail "missing $AGG"

# start_agg [command prefix...] -- EAL device args -- agg options: background, wait for ready
start_agg() {
    local pre=() dev=() log=$DIR/agg.log
    while [[ $1 != -- ]]; do pre+=("$1"); shift; done
    shift
    while [[ $1 != -- ]]; do dev+=("$1"); shift; done
    shift
    # emptied here, before the start: a previous run's "ready" must not be taken for this one's
    : >"$log"
    # shellcheck disable=SC2046
    "${pre[@]}" "$AGG" $(eal) "${dev[@]}" -- "$@" >"$log" 2>&1 &
    AGG_PID=$!
    wait_line "$log" "^shouter-agg: ready" 30 ready
}

# wait_line LOG REGEX SECS WHAT: until a line of LOG (shouter-agg $AGG_PID's output) matches
# REGEX; fails if shouter-agg exits first, or after SECS s (the bound for a box that never
# gets there, not a wait)
wait_line() {
    local log=$1 re=$2 secs=$3 what=$4 i
    for ((i = 0; i < secs * 10; i++)); do
        [[ -f $log ]] && grep -q "$re" "$log" && return 0
        kill -0 "$AGG_PID" 2>/dev/null || fail "shouter-agg exited before $what"
        sleep 0.1
    done
    grep -q "$re" "$log" || fail "shouter-agg: not $what after $secs s"
}

# stop_agg: SIGTERM, exit status 0, final counters printed, no destination without a MAC,
# every mbuf back in its pool at exit
stop_agg() {
    stop_quiet
    grep -q "^final:" "$DIR/agg.log" || fail "no final counters"
    # every destination's MAC was known (learned from its traffic, not evicted since)
    grep -q "^final:.* no_neigh=0 " "$DIR/agg.log" ||
        fail "destinations skipped, MAC unknown:$(grep -o ' no_neigh=[0-9]*' "$DIR/agg.log")"
    grep "^final:\|fan-out" "$DIR/agg.log"
}

# stop_quiet: SIGTERM, exit 0, every mbuf back in its pool at exit (no traffic: the shutdown
# ABORTs find no member's MAC)
stop_quiet() {
    local rc=0
    kill -TERM "$AGG_PID"
    wait "$AGG_PID" || rc=$?
    AGG_PID=
    ((rc == 0)) || fail "shouter-agg exited with $rc after SIGTERM"
    ! grep "mbufs not returned" "$DIR/agg.log" || fail "shouter-agg leaked mbufs"
}

# tel_get CMD PATH: one value of CMD's telemetry reply ('': the whole reply), None if absent
tel_get() {
    /usr/bin/python3 "$it_dir/tel.py" "$PREFIX" get "$1" "$2"
}

# wait_tel CMD COND...: wait until every COND holds in CMD's telemetry reply (tel.py; 30 s
# is the bound for a box that never gets there, not a wait)
wait_tel() {
    /usr/bin/python3 "$it_dir/tel.py" "$PREFIX" wait 30 "$@" || fail "telemetry: $1"
}
