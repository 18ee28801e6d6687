#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# The worker's checker, checked (suite 'integration'; no root, no EAL): shouter-worker runs
# against stub_agg, a stand-in aggregator on 127.0.0.1 that answers every DATA at once with a
# result that is right, or wrong on purpose, and the worker must tell which:
#
#   worker_check.sh STUB CASE
#     ok_float32        right results (world 1): exit 0, ok=1, equal crc= in two runs (the
#                       congestion control at a 3 ms target, then off)
#     offby1_float32    element 12345 of every tensor plus one: exit 1, "1 of 16384 elements
#     offby1_int32      wrong, first at index 12345 (got W+1, want W)" for every iteration
#     stale_float32     each slot's previous round of the tensor (61 slots x chunk 64 = 3904
#     stale_int32       elements, a multiple of 61): exit 1, first wrong index 3904, and the
#                       same count of wrong elements as the stub says it corrupted
#     one_rank_float32  world 2, only rank 0 runs: its own data comes back as the sum: exit 1,
#                       "16384 of 16384 elements wrong, first at index 0"
#     warmup_int32      the warmup iteration alone comes back off by one (element 12345):
#                       exit 1, iteration 0 named (a warmup is untimed, not unchecked)
#     goodput_float32   right results, one timed iteration: the RESULT line's goodput_gbps is
#                       size x 8 bits over its latency (lat_us_p50), in Gbit/s
#     exit2_usage       bad options (an unknown dtype, a dtype it does not run (the RESULT
#                       line keeps float32), an op it does not run, a --cc-target-us
#                       out of range, --mac without a secret, a MAC byte with a sign; 08 read
#                       as eight, not as a bad octal number; boxes that shr_shard_create()
#                       would refuse with a bare EINVAL; a --size that is not a whole
#                       number of elements; --vlan 4095, --agg A:0 or 17 boxes, a --size
#                       with junk after its suffix, a stray argument, --root or
#                       --tree-rank equal to the world, a --step that would wrap, --slots
#                       below --window): exit 2, RESULT error=usage, the option named
#     exit2_denied      the box refuses the JOIN with EPERM (not in its allowlist): exit 2,
#                       error=denied
#     exit2_config      ... with ENOSPC (no room for the job): exit 2, error=config
#     exit2_mtu         ... with EMSGSIZE (the chunk does not fit its port): exit 2,
#                       error=mtu
#     exit4_io          the box refuses the JOIN with EIO (no class of its own): exit 4,
#                       error=io
#     exit4_nomem       the tensors cannot be allocated (ulimit -v): exit 4, error=nomem
#     no_leave_ack      the box never answers LEAVE: the results stand (exit 0, ok=1), the
#                       worker says that no LEAVE_ACK came, after asking more than once
#
# The worker is $SHR_BUILD/app/shouter-worker (SHR_BUILD: the build directory).

set -u

WORKER=${SHR_BUILD:?SHR_BUILD must name the build directory}/app/shouter-worker
STUB=${1:?usage: worker_check.sh STUB CASE}
CASE=${2:?usage: worker_check.sh STUB CASE}
DIR=$(mktemp -d /tmp/shouter-wcheck.XXXXXX)
STUB_PID=

cleanup() {
    if [[ -n $STUB_PID ]] && kill -0 "$STUB_PID" 2>/dev/null; then
        kill -KILL "$STUB_PID" 2>/dev/null
        wait "$STUB_PID" 2>/dev/null
    fi
    rm -rf "$DIR"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $CASE: $*" >&2
    for f in "$DIR"/*.out "$DIR"/*.err; do
        [[ -s $f ]] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
    done
    exit 1
}

[[ -x $WORKER ]] || fail "missing $WORKER"
[[ -x $STUB ]] || fail "missing $STUB"

# start_stub NAME [stub options]: background, sets PORT
start_stub() {
    local name=$1 i
    shift
    "$STUB" "$@" >"$DIR/$name.stub.out" 2>"$DIR/$name.stub.err" &
    STUB_PID=$!
    PORT=
    for ((i = 0; i < 100; i++)); do
        PORT=$(sed -n 's/^stub_agg: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' \
            "$DIR/$name.stub.out")
        [[ -n $PORT ]] && break
        kill -0 "$STUB_PID" 2>/dev/null || fail "stub_agg exited before listening"
        sleep 0.05
    done
    [[ -n $PORT ]] || fail "stub_agg did not listen in 5 s"
}

# run_worker NAME [worker options]: sets RC; the stub must then exit 0 (every rank left)
run_worker() {
    local name=$1 src=0
    shift
    RC=0
    timeout 60 "$WORKER" --agg 127.0.0.1 --agg-port "$PORT" --job 7 --timeout-ms 5000 "$@" \
        >"$DIR/$name.worker.out" 2>"$DIR/$name.worker.err" || RC=$?
    ((RC != 124)) || fail "$name: shouter-worker did not finish in 60 s"
    wait "$STUB_PID" || src=$?
    STUB_PID=
    ((src == 0)) || fail "$name: stub_agg exited $src (did the worker LEAVE?)"
    grep -q "^RESULT " "$DIR/$name.worker.out" || fail "$name: no RESULT line"
}

# run_alone NAME [worker options]: the worker against a stub that does not exit by itself
# (refusals, --no-leave-ack); sets RC, then stops the stub (SIGTERM: exit 0)
run_alone() {
    local name=$1 src=0
    shift
    RC=0
    timeout 60 "$WORKER" --agg 127.0.0.1 --agg-port "$PORT" --job 7 --timeout-ms 5000 "$@" \
        >"$DIR/$name.worker.out" 2>"$DIR/$name.worker.err" || RC=$?
    ((RC != 124)) || fail "$name: shouter-worker did not finish in 60 s"
    kill -TERM "$STUB_PID"
    wait "$STUB_PID" || src=$?
    STUB_PID=
    ((src == 0)) || fail "$name: stub_agg exited $src"
    grep -q "^RESULT " "$DIR/$name.worker.out" || fail "$name: no RESULT line"
}

# expect_exit NAME CODE SLUG: the exit status and the RESULT line's error
expect_exit() {
    ((RC == $2)) || fail "$1: shouter-worker exited $RC, want $2"
    grep -q "^RESULT .* ok=0 .*error=$3\( \|$\)" "$DIR/$1.worker.out" ||
        fail "$1: RESULT is not ok=0 error=$3: $(grep '^RESULT' "$DIR/$1.worker.out")"
    echo "ok: $1: exit $2, error=$3"
}

# wrong_lines FILE: the "B of N elements wrong, first at index K" parts, in order
wrong_lines() {
    sed -n 's/.*: \([0-9]* of [0-9]* elements wrong, first at index [0-9]*\).*/\1/p' "$1"
}

# expect_wrong NAME ITERS WANT: exit 1, RESULT ok=0 error=wrong_result, and one line per
# iteration equal to WANT (a regex over "B of N elements wrong, first at index K")
expect_wrong() {
    local name=$1 iters=$2 want=$3 it line
    ((RC == 1)) || fail "$name: shouter-worker exited $RC, want 1 (wrong result)"
    grep -q "^RESULT .* ok=0 .*error=wrong_result" "$DIR/$name.worker.out" ||
        fail "$name: RESULT is not ok=0 error=wrong_result"
    for ((it = 0; it < iters; it++)); do
        line=$(grep "^shouter-worker: rank [0-9]*: iteration $it: " "$DIR/$name.worker.err")
        [[ -n $line ]] || fail "$name: no wrong-result line for iteration $it"
        [[ $line =~ :\ ($want)\ \(got\ [^,]*,\ want\ [^\)]*\)$ ]] ||
            fail "$name: iteration $it: '$line' does not match '$want (got X, want Y)'"
        echo "ok: $line"
    done
    # what the worker found is exactly what the stub did, tensor by tensor
    if ! diff <(wrong_lines "$DIR/$name.worker.err") \
        <(wrong_lines "$DIR/$name.stub.out") >"$DIR/$name.diff"; then
        fail "$name: the worker's findings differ from what stub_agg corrupted:" \
            "$(cat "$DIR/$name.diff")"
    fi
}

# the common shape: 64 KiB tensors (16384 elements of 4 bytes), 2 iterations, no warmup
COMMON=(--size 64K --iters 2 --warmup 0)

case $CASE in
ok_float32)
    crcs=()
    # (the congestion control at a 3 ms target, then off: the same results either way)
    cc=(3000 off)
    for run in 1 2; do
        start_stub "ok$run" --fault none
        run_worker "ok$run" --world 1 --rank 0 --dtype float32 --window 16 --chunk 256 \
            --size 64K --iters 3 --warmup 1 --cc-target-us "${cc[run - 1]}"
        ((RC == 0)) || fail "ok$run: shouter-worker exited $RC on right results"
        grep -q "^RESULT .* ok=1 " "$DIR/ok$run.worker.out" || fail "ok$run: not ok=1"
        grep -q "elements wrong" "$DIR/ok$run.stub.out" && fail "ok$run: the stub corrupted"
        crcs+=("$(sed -n 's/^RESULT .* crc=\([0-9a-f]*\).*/\1/p' "$DIR/ok$run.worker.out")")
    done
    [[ -n ${crcs[0]} && ${crcs[0]} == "${crcs[1]}" ]] ||
        fail "the same results gave crc=${crcs[0]} and crc=${crcs[1]}"
    echo "ok: right results: exit 0, ok=1, crc=${crcs[0]} twice"
    ;;
offby1_float32 | offby1_int32)
    dtype=${CASE#offby1_}
    start_stub offby1 --fault offby1 --index 12345
    run_worker offby1 --world 1 --rank 0 --dtype "$dtype" --window 16 --chunk 256 \
        "${COMMON[@]}"
    expect_wrong offby1 2 "1 of 16384 elements wrong, first at index 12345"
    # the element is named with what came back and what was expected: one more
    line=$(grep -m1 "iteration 0: " "$DIR/offby1.worker.err")
    [[ $line =~ \(got\ (-?[0-9]+),\ want\ (-?[0-9]+)\)$ ]] ||
        fail "offby1: no integer got/want in '$line'"
    got=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
    # (int32 wraps: INT32_MAX + 1 comes back as INT32_MIN)
    (( ((got - want) & 0xffffffff) == 1 )) || fail "offby1: got $got, want $want: not off by one"
    ;;
stale_float32 | stale_int32)
    dtype=${CASE#stale_}
    start_stub stale --fault stale
    # slots x chunk = 61 x 64 = 3904: a period of 61 in the index would hide the stale copy
    # (--slots: no spare slots, so that slot k's previous round is chunk k - 61)
    run_worker stale --world 1 --rank 0 --dtype "$dtype" --window 61 --slots 61 --chunk 64 \
        --size 32K --iters 2 --warmup 0
    expect_wrong stale 2 "[0-9]+ of 8192 elements wrong, first at index 3904"
    n=$(wrong_lines "$DIR/stale.worker.err" | sed -n '1s/ of .*//p')
    ((n > 4096)) || fail "stale: only $n of the 4288 elements answered stale are wrong"
    ;;
one_rank_float32)
    start_stub one_rank --fault one-rank
    run_worker one_rank --world 2 --rank 0 --dtype float32 --window 16 --chunk 256 \
        "${COMMON[@]}"
    # the stub cannot know the sum: only the worker's lines, exactly
    ((RC == 1)) || fail "one_rank: shouter-worker exited $RC, want 1 (wrong result)"
    for it in 0 1; do
        grep -q "iteration $it: 16384 of 16384 elements wrong, first at index 0 (" \
            "$DIR/one_rank.worker.err" ||
            fail "one_rank: iteration $it: no '16384 of 16384 elements wrong, first at" \
                "index 0'"
    done
    grep "elements wrong" "$DIR/one_rank.worker.err"
    ;;
warmup_int32)
    # the first tensor with element 12345 (iteration 0, the warmup) off by one, the rest right
    start_stub warmup --fault offby1 --index 12345 --tensors 1
    run_worker warmup --world 1 --rank 0 --dtype int32 --window 16 --chunk 256 \
        --size 64K --iters 2 --warmup 1
    expect_wrong warmup 1 "1 of 16384 elements wrong, first at index 12345"
    ! grep -q "iteration [12]: " "$DIR/warmup.worker.err" ||
        fail "warmup: a right iteration called wrong: $(grep 'iteration' "$DIR/warmup.worker.err")"
    ;;
goodput_float32)
    # one timed iteration: its latency is the whole timed time (p50 = p99)
    start_stub goodput --fault none
    run_worker goodput --world 1 --rank 0 --dtype float32 --window 16 --chunk 256 \
        --size 1M --iters 1 --warmup 1
    ((RC == 0)) || fail "goodput: shouter-worker exited $RC on right results"
    res=$(grep "^RESULT " "$DIR/goodput.worker.out")
    g=$(sed -n 's/.* goodput_gbps=\([0-9.]*\) .*/\1/p' <<<"$res")
    lat=$(sed -n 's/.* lat_us_p50=\([0-9.]*\) .*/\1/p' <<<"$res")
    [[ -n $g && -n $lat ]] || fail "goodput: no goodput_gbps or lat_us_p50 in: $res"
    # 1 MiB = 8388608 bits in lat_us microseconds: bits / (lat_us x 1000) Gbit/s (within 2%:
    # both figures are rounded)
    awk -v g="$g" -v l="$lat" 'BEGIN { w = 8388608 / (l * 1000); exit !(l > 0 &&
        g > w * 0.98 && g < w * 1.02) }' ||
        fail "goodput: goodput_gbps=$g for 1 MiB in $lat us (want 8388608 bits / $lat us)"
    echo "ok: goodput_gbps=$g for 1 MiB in $lat us"
    ;;
exit2_usage)
    # 17 boxes, one more than a job may be sharded over (SHR_SHARD_MAX_BOXES)
    boxes17=$(seq -s, -f '127.0.0.%g' 1 17)
    # OPTIONS|WHAT THE MESSAGE SAYS
    for bad in "--dtype int64|--dtype" "--op prod|--op" "--world 0|--world" \
        "--cc-target-us 0|--cc-target-us" "--cc-target-us 1000001|--cc-target-us" \
        "--cc-target-us of|--cc-target-us" \
        "--world 08 --rank 8|--rank: 8 is not below --world 8" \
        "--mac|--mac: needs the job's secret" "--agg-mac 02:-1:00:00:00:01|--agg-mac" \
        "--agg 0.0.0.0|--agg" \
        "--agg 127.0.0.1,127.0.0.1:47000|--agg: boxes 1 and 2 are the same box" \
        "--agg 127.0.0.1,127.0.0.2 --driver dpdk|needs --driver udp" \
        "--agg 127.0.0.1,127.0.0.2 --local-port 65535|--local-port: 65535: box j binds" \
        "--dtype int32 --inputs random|--inputs random: float32 only" \
        "--dtype int32 --size 10|--size: 10 is not a multiple of the int32 element size" \
        "--dtype float32 --size 3|--size: 3 is not a multiple of the float32" \
        "--vlan 4095|--vlan: invalid value .4095." \
        "--agg 127.0.0.1:0|--agg: invalid value .127.0.0.1:0." \
        "--agg $boxes17|--agg: invalid value .127.0.0.1,127.0.0.2," \
        "--size 4Kx|--size: invalid value .4Kx." \
        "--size 4MiBs|--size: invalid value .4MiBs." \
        "--size 64K 8|unexpected argument .8." \
        "--world 2 --root 2|--root: 2 is not below the --world 2 " \
        "--tree-rank 4 --tree-world 4|--tree-rank and --tree-world: both" \
        "--step 4294967295 --iters 2 --warmup 0|--step: 4294967295 + --warmup + --iters" \
        "--window 16 --slots 15|--slots: 15 is fewer than --window 16"; do
        RC=0
        # (--timeout-ms: a worker that took a bad option would give up on the absent box soon)
        # shellcheck disable=SC2086
        "$WORKER" --agg 127.0.0.1 --job 7 --rank 0 --world 1 --timeout-ms 500 ${bad%%|*} \
            >"$DIR/usage.worker.out" 2>"$DIR/usage.worker.err" || RC=$?
        expect_exit usage 2 usage
        grep -q -- "${bad#*|}" "$DIR/usage.worker.err" ||
            fail "usage: '${bad%%|*}': the option is not named: $(cat "$DIR/usage.worker.err")"
    done
    # a dtype the library knows but the worker does not run: refused, and the RESULT line
    # does not name it as the run's type (it keeps the default, float32)
    RC=0
    "$WORKER" --agg 127.0.0.1 --job 7 --rank 0 --world 1 --dtype float16 \
        >"$DIR/usage.worker.out" 2>"$DIR/usage.worker.err" || RC=$?
    expect_exit usage 2 usage
    grep -q "^RESULT .* dtype=float32 " "$DIR/usage.worker.out" ||
        fail "usage: '--dtype float16': RESULT: $(grep RESULT "$DIR/usage.worker.out")"
    ;;
exit2_denied | exit2_config | exit2_mtu | exit4_io)
    # Linux errnos: EPERM 1 (classified "denied", exit 2), ENOSPC 28 (no room at the box for
    # the job: "config", exit 2), EMSGSIZE 90 (a chunk the path cannot carry: "mtu", exit 2),
    # EIO 5 (no class: "io", exit 4)
    case $CASE in
    exit2_denied) status=1 code=2 slug=denied ;;
    exit2_config) status=28 code=2 slug=config ;;
    exit2_mtu) status=90 code=2 slug=mtu ;;
    *) status=5 code=4 slug=io ;;
    esac
    start_stub refused --join-status "$status"
    run_alone refused --world 1 --rank 0 --dtype int32 --size 4K --iters 1 --warmup 0
    expect_exit refused "$code" "$slug"
    grep -q "^stub_agg: .* refused=[1-9]" "$DIR/refused.stub.out" ||
        fail "refused: the stub refused no JOIN"
    grep -q "cannot join job 7" "$DIR/refused.worker.err" ||
        fail "refused: the worker does not say that it cannot join"
    ;;
exit4_nomem)
    # 2 x 1 GiB of tensors under a 512 MiB address-space limit
    RC=0
    (ulimit -v 524288 && exec "$WORKER" --agg 127.0.0.1 --job 7 --rank 0 --world 1 \
        --size 1G) >"$DIR/nomem.worker.out" 2>"$DIR/nomem.worker.err" || RC=$?
    expect_exit nomem 4 nomem
    grep -q "cannot allocate" "$DIR/nomem.worker.err" || fail "nomem: no message"
    ;;
no_leave_ack)
    start_stub noack --fault none --no-leave-ack
    run_alone noack --world 1 --rank 0 --dtype float32 --window 16 --chunk 256 \
        --size 64K --iters 2 --warmup 0
    ((RC == 0)) || fail "noack: shouter-worker exited $RC: the results stand without a LEAVE_ACK"
    grep -q "^RESULT .* ok=1 " "$DIR/noack.worker.out" || fail "noack: not ok=1"
    grep -q "leaving: no LEAVE_ACK from the aggregator" "$DIR/noack.worker.err" ||
        fail "noack: the worker does not say that no LEAVE_ACK came"
    n=$(sed -n 's/^stub_agg: .* leave_msgs=\([0-9]*\) .*/\1/p' "$DIR/noack.stub.out")
    if [[ -z $n ]] || ((n < 2)); then
        fail "noack: '$n' LEAVE(s) at the stub, want a resend (2+)"
    fi
    echo "ok: no LEAVE_ACK: exit 0, ok=1, said so, $n LEAVEs sent"
    ;;
*)
    fail "unknown case (ok_float32, offby1_float32, offby1_int32, stale_float32," \
        "stale_int32, one_rank_float32, warmup_int32, goodput_float32, exit2_usage," \
        "exit2_denied, exit2_config, exit2_mtu, exit4_io, exit4_nomem," \
        "no_leave_ack)"
    ;;
esac
echo "PASS worker_check $CASE"
