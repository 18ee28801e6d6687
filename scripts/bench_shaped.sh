#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# The shaped-link benchmark (issue 16 item 2), as root: the network, not the CPU, limits.
# Every worker's link (its veth, both ends: the worker's egress and the bridge's egress to it)
# is capped with "tc qdisc replace ... root tbf rate R burst 256kb latency 50ms"; the box's
# link is not (a switch port). Kernel-UDP ranks (shouter-worker), SIZE float32 allreduce,
# chunk 2048, window 128, then PyTorch Gloo (scripts/gloo_bench.py) on the same namespaces
# and caps in the same run. A ring allreduce moves 2(N-1)/N of the tensor over each worker
# link and direction, the box one tensor: at most 2(N-1)/N times faster, less headers.
# Goodput is what scripts/bench.sh's e2e_gbps_n4 is: tensor bytes per rank * 8 / the time of
# one allreduce (shouter-worker's goodput_gbps, mean over the ranks; Gloo: rank 0's median).
# Prints one name=value per line; X_vs_Y is X / Y:
#   uncapped_gbps_n<N>        shouter goodput with no cap, same N, same run
#   cpu_bound_<R>_n<N>        1 if uncapped_gbps_n<N> < 1.1 * R: the 2 cores, not the link,
#                             are the limit at that rate (then link_util says little)
#   shaped_gbps_<R>_n<N>      shouter goodput, links capped at R (500mbit, 1gbit, 2gbit)
#   shaped_gloo_gbps_<R>_n<N> Gloo goodput, same caps
#   link_util_<R>_n<N>        shaped_gbps / R
#   shaped_vs_gloo_<R>_n<N>   shaped_gbps / shaped_gloo_gbps
#   limit_n<N>                2(N-1)/N, the most shaped_vs_gloo can be
# Then one shared bottleneck: the box's own link capped at SHARE_RATE instead (both ends; the
# box's af_packet port with qdisc_bypass=0 so that its transmissions pass the tbf too), the
# worker links uncapped. Ranks here are scripts/shaped_tool.py rank (the Python binding, kernel
# UDP, --share-size float32 allreduces, chunk 2048, window 128) which log a timestamp after
# every allreduce; a flow's goodput is the bytes it completed within the interval in which
# every flow was running (the latest start to the earliest end, interpolated between log
# lines), over that interval: overlap by construction, both started by one go file after all
# have joined.
#   fairness_jain     two jobs of 2 ranks (w0-w1, w2-w3, job ids 61 and 62): Jain's index
#                     (x1 + x2)^2 / (2 (x1^2 + x2^2)) of their goodputs
#   fairness_gbps_a, fairness_gbps_b   the two goodputs (per rank)
#   fairness_alone_gbps  the goodput of one such job alone on that link, just before: whether
#                     the two jobs had to share it at all (their sum near the link or not)
#   tcp_share         one job of 2 ranks (w0-w1) beside one TCP stream (shaped_tool.py,
#                     from w2 to a kernel address of the box's namespace, 198.18.0.254: the
#                     same direction as the ranks' DATA), the stream flowing before the job
#                     starts and stopped after it ends: the job's bytes on the bottleneck
#                     (goodput * 2 ranks) over the job's plus the stream's
#   tcp_share_gbps_job, tcp_share_gbps_tcp   those two rates
#   tcp_share_per_rank  one rank's bytes over one rank's plus the stream's (the job is two
#                     flows, each with its own window, beside one: 0.5 is per-flow fairness,
#                     where tcp_share reads 2/3)
#   share_rate        SHARE_RATE
# Last (unless --no-sweep), the sweep: allreduce goodput (float32, chunk 2048, window 128) of
# shouter and Gloo at each of --sweep-sizes (per rank) and --sweep-worlds, worker links
# uncapped and then capped at --sweep-rate (as above), printed after the name=value lines as
# a table of comment lines ("# | link | N | size | shouter Gb/s | Gloo Gb/s | shouter/Gloo |");
# iterations per point: 256 MiB / size, 2 to 20.
#
#   scripts/bench_shaped.sh [--rates R[,R...]] [--worlds N[,N...]] [--size S] [--iters K]
#       [--no-gloo] [--no-links] [--no-uncapped] [--no-fairness] [--no-tcp] [--no-sweep]
#       [--share-rate R] [--share-size S] [--share-iters K] [--sweep-sizes S[,S...]]
#       [--sweep-worlds N[,N...]] [--sweep-rate R] [--lock FILE] [-h|--help]
# Defaults: --rates 500mbit,1gbit,2gbit --worlds 4,8 --size 64M --iters 3 --share-rate 1gbit
# --share-size 4M --share-iters 60 --sweep-sizes 4K,64K,1M,16M,64M --sweep-worlds 2,4,8
# --sweep-rate 1gbit. --lock FILE: each piece (one world uncapped, one rate and world,
# fairness, tcp_share, one link and world of the sweep; each starts and stops its own box)
# runs under flock FILE, which
# is released between pieces (e.g. --lock /tmp/shr-e2e.lock); without it the caller holds
# whatever lock it needs (scripts/bench.sh). Environment: SHR_BUILD (default <top>/build),
# BENCH_MTU (default 9000), BENCH_GROUP (the box's --result-group in the one-job pieces,
# uncapped, link_util and shaped_vs_gloo: default 198.18.0.255, the bridge's broadcast; ""
# for none; never in the fairness and tcp_share pieces, where a broadcast would load the
# other job's, or the stream's, capped links). Exit 2 on bad usage; the figures of a failed
# piece read nan.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

# usage STATUS: the usage text, on stdout for --help (0), else on stderr
usage() {
    if (($1 == 0)); then
        sed -n '/^#   scripts\/bench_shaped.sh/,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'
    else
        sed -n '/^#   scripts\/bench_shaped.sh/,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//' >&2
    fi
    exit "$1"
}
die2() { echo "bench_shaped: $*" >&2; exit 2; }

rates=500mbit,1gbit,2gbit
worlds=4,8
size=64M
iters=3
gloo=1
links=1
uncapped=1
fair=1
tcp=1
share_rate=1gbit
share_size=4M
share_iters=60
sweep=1
sweep_sizes=4K,64K,1M,16M,64M
sweep_worlds=2,4,8
sweep_rate=1gbit
lock=
while (($#)); do
    case $1 in
    -h | --help) usage 0 ;;
    --no-gloo) gloo=0 ;;
    --no-links) links=0 ;;
    --no-uncapped) uncapped=0 ;;
    --no-fairness) fair=0 ;;
    --no-tcp) tcp=0 ;;
    --no-sweep) sweep=0 ;;
    --rates | --worlds | --size | --iters | --share-rate | --share-size | --share-iters | \
        --sweep-sizes | --sweep-worlds | --sweep-rate | --lock)
        (($# >= 2)) || die2 "$1: needs a value"
        case $1 in
        --rates) rates=$2 ;;
        --worlds) worlds=$2 ;;
        --size) size=$2 ;;
        --iters) iters=$2 ;;
        --share-rate) share_rate=$2 ;;
        --share-size) share_size=$2 ;;
        --share-iters) share_iters=$2 ;;
        --sweep-sizes) sweep_sizes=$2 ;;
        --sweep-worlds) sweep_worlds=$2 ;;
        --sweep-rate) sweep_rate=$2 ;;
        --lock) lock=$2 ;;
        esac
        shift
        ;;
    *) echo "bench_shaped: unknown argument '$1'" >&2; usage 2 ;;
    esac
    shift
done

# a tc rate (500mbit, 1gbit, 2.5gbit, 800kbit) in Gbit/s, or nothing if it is not one
rate_gbps() {
    # above 0 (tc takes 0kbit; the figures would divide by it); the last match is the one
    # BASH_REMATCH keeps
    [[ ! $1 =~ ^0+(\.0+)?[kmg] ]] || return 1
    [[ $1 =~ ^([0-9]+(\.[0-9]+)?)(kbit|mbit|gbit)$ ]] || return 1
    awk -v v="${BASH_REMATCH[1]}" -v u="${BASH_REMATCH[3]}" \
        'BEGIN {printf "%.6g\n", v * (u == "gbit" ? 1 : u == "mbit" ? 1e-3 : 1e-6)}'
}
IFS=, read -r -a rate_l <<<"$rates"
IFS=, read -r -a world_l <<<"$worlds"
IFS=, read -r -a sweep_size_l <<<"$sweep_sizes"
IFS=, read -r -a sweep_world_l <<<"$sweep_worlds"
((${#rate_l[@]} > 0 && ${#world_l[@]} > 0)) || die2 "--rates and --worlds: at least one each"
((${#sweep_size_l[@]} > 0 && ${#sweep_world_l[@]} > 0)) ||
    die2 "--sweep-sizes and --sweep-worlds: at least one each"
for r in "${rate_l[@]}" "$share_rate" "$sweep_rate"; do
    rate_gbps "$r" >/dev/null || die2 "bad rate '$r' (NUMBER kbit|mbit|gbit, e.g. 500mbit)"
done
for n in "${world_l[@]}" "${sweep_world_l[@]}"; do
    # no leading 0: bash arithmetic reads 08 as a bad octal number, 010 as 8
    if ! [[ $n =~ ^[1-9][0-9]*$ ]] || ((n < 2 || n > 64)); then die2 "bad world '$n' (2..64)"; fi
done
for z in "${sweep_size_l[@]}"; do
    [[ $z =~ ^[1-9][0-9]*[KMG]?$ ]] || die2 "bad --sweep-sizes '$z' (e.g. 4K,64M; not 0)"
done
[[ $size =~ ^[0-9]+[KMG]?$ ]] || die2 "bad --size '$size' (e.g. 64M)"
[[ $share_size =~ ^[0-9]+[KMG]?$ ]] || die2 "bad --share-size '$share_size' (e.g. 4M)"
if ! [[ $iters =~ ^[0-9]+$ ]] || ((iters < 1)); then die2 "bad --iters '$iters'"; fi
if ! [[ $share_iters =~ ^[0-9]+$ ]] || ((share_iters < 2)); then
    die2 "bad --share-iters '$share_iters'"
fi
[[ $(id -u) -eq 0 ]] || { echo "bench_shaped: run as root" >&2; exit 1; }

PY=/usr/bin/python3
TOOL=$top/scripts/shaped_tool.py
say() { echo "bench_shaped: $*" >&2; }
indent() { sed 's/^/  /' >&2; }
ratio() {
    awk -v a="$1" -v b="$2" \
        'BEGIN {if (b + 0 > 0 && a != "nan") printf "%.3f\n", a / b; else print "nan"}'
}

if ((gloo)) && ! $PY -c 'import torch.distributed' 2>/dev/null; then
    say "no PyTorch at $PY (scripts/deps.sh): skipping Gloo"
    gloo=0
fi

# shellcheck source=tests/e2e/cluster.sh
source "$top/tests/e2e/cluster.sh"
CL_PREFIX=shp$$
# The result group only where one job runs (shouter_run): a broadcast reaches every worker's
# capped link, so two jobs on one bottleneck (fairness_jain) would each load the other's.
shaped_group=${BENCH_GROUP-198.18.0.255}
CL_GROUP=
cl_init
cl_traps
maxn=4
for n in "${world_l[@]}"; do ((n > maxn)) && maxn=$n; done
if ((sweep)); then
    for n in "${sweep_world_l[@]}"; do ((n > maxn)) && maxn=$n; done
fi
cl_up "$maxn" 1 --mtu "${BENCH_MTU:-9000}"
# shellcheck disable=SC2034  # (cluster.sh's)
CL_N=$maxn
BOX_KIP=198.18.0.254
declare -A R

# locked PIECE...: PIECE under flock $lock (when given), released after it; the caps PIECE put
# in place are removed after it however it ended (uncap_all; an interrupt's are removed with
# the namespaces, by cl_cleanup)
locked() {
    local fd rc=0
    if [[ -z $lock ]]; then
        "$@" || rc=$?
        uncap_all
        return $rc
    fi
    exec {fd}>>"$lock"
    flock "$fd"
    "$@" || rc=$?
    uncap_all
    flock -u "$fd"
    exec {fd}>&-
    return $rc
}

# cap NS DEV RATE|none; NS:DEV noted in caps_set (before tc: a cap tc failed on may be half
# there), whose caps uncap_all removes
caps_set=()
cap() {
    if [[ $3 == none ]]; then
        tc -n "$1" qdisc del dev "$2" root 2>/dev/null || true
    else
        caps_set+=("$1:$2")
        tc -n "$1" qdisc replace dev "$2" root tbf rate "$3" burst 256kb latency 50ms
    fi
}
uncap_all() {
    local a
    for a in "${caps_set[@]}"; do cap "${a%%:*}" "${a#*:}" none; done
    caps_set=()
}
# cap_workers N RATE|none: both ends of workers 0..N-1's links; fails (said) if a cap is not
# in place. Each piece runs under locked(), where errexit is off: a tc that failed (a kernel
# without sch_tbf, a rate tc refuses) would otherwise measure an uncapped link as capped.
cap_workers() {
    local i
    for ((i = 0; i < $1; i++)); do
        cap "$CL_PREFIX-w$i" shr0 "$2" && cap "$CL_PREFIX-br" "w$i" "$2" ||
            { say "tc: cannot cap worker $i's link at $2"; return 1; }
    done
}
# tbf_drops NS:DEV...: frames the tbfs dropped
tbf_drops() {
    local a
    for a in "$@"; do
        tc -s -n "${a%%:*}" qdisc show dev "${a#*:}" 2>/dev/null |
            sed -n 's/.*(dropped \([0-9]*\),.*/\1/p'
    done | awk '{s += $1} END {print s + 0}'
}
# tbf_sent NS:DEV: "NS:DEV sent=BYTES dropped=N" of its tbf (what passed the cap)
tbf_sent() {
    tc -s -n "${1%%:*}" qdisc show dev "${1#*:}" 2>/dev/null |
        sed -n "s/^ *Sent \([0-9]*\) bytes .*(dropped \([0-9]*\),.*/${1##*-} sent=\1 dropped=\2/p"
}
drivers_n() { local i s=; for ((i = 0; i < $1; i++)); do s+="udp "; done; echo "${s% }"; }
# the ranks' own counters (shouter-worker's stderr line) summed: "retx=X timer=Y"
retx_sum() {
    grep -h ' tx_data=.* retx=' "${CL_RLOGS[@]}" 2>/dev/null |
        awk '{for (i = 1; i <= NF; i++) {split($i, kv, "="); if (kv[1] == "retx") r += kv[2];
            if (kv[1] == "timer") t += kv[2]}} END {printf "retx=%d timer=%d\n", r, t}'
}

# shouter_run N KEY: SIZE allreduce at N ranks into R[KEY] (box started and stopped here)
shouter_run() {
    local n=$1 key=$2
    R[$key]=nan
    # shellcheck disable=SC2119  # (the box on its defaults)
    CL_GROUP=$shaped_group cl_agg_start || return 0
    if cl_allreduce "$(drivers_n "$n")" --dtype float32 --size "$size" --iters "$iters" \
            --warmup 1 --chunk 2048 --window 128 >&2; then
        R[$key]=$(cl_mean goodput_gbps)
    fi
    say "$key=${R[$key]} ($(retx_sum))"
    cl_agg_stop || say "aggregator exit status $?"
}

gloo_port=29540
# gloo_run N KEY: Gloo allreduce of SIZE at N ranks into R[KEY]
gloo_run() {
    local n=$1 key=$2 i p grc=0 gpids=()
    R[$key]=nan
    gloo_port=$((gloo_port + 1))
    for ((i = 0; i < n; i++)); do
        timeout -k 5 900 ip netns exec "$CL_PREFIX-w$i" $PY "$top/scripts/gloo_bench.py" \
            --rank "$i" --world "$n" --master "$(cl_worker_ip 0)" --iface shr0 \
            --port "$gloo_port" --size "$size" --iters "$iters" --warmup 1 --verify-last \
            --lat-size 4K --lat-iters 1 >"$CL_DIR/gloo-$key-$i.log" 2>&1 &
        gpids+=($!)
        CL_PIDS+=($!)
    done
    for p in "${gpids[@]}"; do wait "$p" || grc=1; done
    if ((grc)) || ! grep -q '^gloo_ok=1' "$CL_DIR/gloo-$key-0.log"; then
        say "gloo failed ($key):"
        tail -n 5 "$CL_DIR/gloo-$key-"*.log >&2
    else
        R[$key]=$(sed -n 's/^gloo_gbps=//p' "$CL_DIR/gloo-$key-0.log")
    fi
    say "$key=${R[$key]}"
}

piece_uncapped() {
    say "N=$1 uncapped: shouter $size float32"
    shouter_run "$1" "uncapped_gbps_n$1"
}

piece_rate() {
    local r=$1 n=$2 i ends=()
    say "N=$n, worker links capped at $r: shouter $size float32, then Gloo"
    R[shaped_gbps_${r}_n$n]=nan
    R[shaped_gloo_gbps_${r}_n$n]=nan
    cap_workers "$n" "$r" || return 0   # the figures of this (rate, N) read nan
    for ((i = 0; i < n; i++)); do ends+=("$CL_PREFIX-w$i:shr0" "$CL_PREFIX-br:w$i"); done
    shouter_run "$n" "shaped_gbps_${r}_n$n"
    say "frames the tbfs dropped during shouter's run: $(tbf_drops "${ends[@]}")"
    R[shaped_gloo_gbps_${r}_n$n]=nan
    ((gloo == 0)) || gloo_run "$n" "shaped_gloo_gbps_${r}_n$n"
}

# share_run NAME NRANKS_JOBS...: jobs of 2 ranks from w0 up, through the capped box link,
# started together; their logs in $CL_DIR/NAME-jJ-rI.log; returns once they end. With
# EXTRA_BEFORE_GO set, that function runs after every rank joined and before the go.
share_jobs() {
    local name=$1 njobs=$2 j i w=0 p rc=0 pids=() ready=()
    rm -f "$CL_DIR/$name.go"
    for ((j = 0; j < njobs; j++)); do
        for i in 0 1; do
            ready+=("$CL_DIR/$name-j$j-r$i.ready")
            PYTHONPATH=$SHR_BUILD/lib/python timeout -k 5 600 \
                ip netns exec "$CL_PREFIX-w$w" $PY "$TOOL" rank --box 198.18.0.1 \
                --job $((61 + j)) --rank "$i" --world 2 --size "$share_size" \
                --iters "$share_iters" --window 128 --chunk 2048 \
                --ready-file "${ready[-1]}" --go-file "$CL_DIR/$name.go" \
                --log "$CL_DIR/$name-j$j-r$i.log" >"$CL_DIR/$name-j$j-r$i.out" 2>&1 &
            pids+=($!)
            CL_PIDS+=($!)
            w=$((w + 1))
        done
    done
    for p in "${ready[@]}"; do
        for ((i = 0; i < 1200; i++)); do
            [[ -e $p ]] && break
            sleep 0.1
        done
    done
    touch "$CL_DIR/$name.go"
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    cat "$CL_DIR/$name"-j*-r*.out >&2
    return $rc
}

# the box's link capped (both ends), the box transmitting through its qdisc
share_box_start() {
    if ! cap "$CL_PREFIX-agg" shr0 "$share_rate" || ! cap "$CL_PREFIX-br" agg "$share_rate"; then
        say "tc: cannot cap the box's link at $share_rate"
        return 1
    fi
    # shellcheck disable=SC2119  # (the box on its defaults)
    CL_AFP_ARGS="$CL_AFP_ARGS,qdisc_bypass=0" cl_agg_start
}
share_box_stop() {
    say "tbf on the box's link: $(tbf_sent "$CL_PREFIX-agg:shr0"), $(tbf_sent "$CL_PREFIX-br:agg")"
    cl_agg_stop || say "aggregator exit status $?"
}

piece_fairness() {
    local out i
    R[fairness_jain]=nan
    R[fairness_gbps_a]=nan
    R[fairness_gbps_b]=nan
    R[fairness_alone_gbps]=nan
    say "fairness: 2 jobs of 2 ranks, the box's link capped at $share_rate"
    for i in 0 1 2 3; do "$CL_NETNS" kip "$i" on --prefix "$CL_PREFIX"; done
    share_box_start || return 0
    if share_jobs alone 1 &&
            out=$($PY "$TOOL" window "a=$CL_DIR/alone-j0-r0.log,$CL_DIR/alone-j0-r1.log"); then
        R[fairness_alone_gbps]=$(sed -n 's/^gbps_a=//p' <<<"$out")
        say "one job alone on that link: ${R[fairness_alone_gbps]} Gbit/s per rank"
    fi
    if share_jobs fair 2 &&
            out=$($PY "$TOOL" window "a=$CL_DIR/fair-j0-r0.log,$CL_DIR/fair-j0-r1.log" \
                "b=$CL_DIR/fair-j1-r0.log,$CL_DIR/fair-j1-r1.log"); then
        indent <<<"$out"
        R[fairness_jain]=$(sed -n 's/^jain=//p' <<<"$out")
        R[fairness_gbps_a]=$(sed -n 's/^gbps_a=//p' <<<"$out")
        R[fairness_gbps_b]=$(sed -n 's/^gbps_b=//p' <<<"$out")
    fi
    share_box_stop
}

piece_tcp() {
    local out i spid kpid
    R[tcp_share]=nan
    R[tcp_share_gbps_job]=nan
    R[tcp_share_gbps_tcp]=nan
    say "tcp_share: a job of 2 ranks beside a TCP stream, the box's link capped at $share_rate"
    for i in 0 1 2; do "$CL_NETNS" kip "$i" on --prefix "$CL_PREFIX"; done
    ip -n "$CL_PREFIX-agg" addr add "$BOX_KIP/24" dev shr0
    rm -f "$CL_DIR/tcp.ready" "$CL_DIR/tcp.flowing" "$CL_DIR/tcp.stop"
    ip netns exec "$CL_PREFIX-agg" $PY "$TOOL" tcp-sink --bind "$BOX_KIP:5201" \
        --log "$CL_DIR/tcp-sink.log" --ready-file "$CL_DIR/tcp.ready" \
        --flowing-file "$CL_DIR/tcp.flowing" &
    kpid=$!
    CL_PIDS+=($!)
    if share_box_start; then
        for ((i = 0; i < 300; i++)); do [[ -e $CL_DIR/tcp.ready ]] && break; sleep 0.1; done
        ip netns exec "$CL_PREFIX-w2" $PY "$TOOL" tcp-source --to "$BOX_KIP:5201" \
            --stop-file "$CL_DIR/tcp.stop" >&2 &
        spid=$!
        CL_PIDS+=($!)
        for ((i = 0; i < 300; i++)); do [[ -e $CL_DIR/tcp.flowing ]] && break; sleep 0.1; done
        if [[ -e $CL_DIR/tcp.flowing ]] && share_jobs tcp 1; then
            touch "$CL_DIR/tcp.stop"
            wait "$spid" || true
            wait "$kpid" || true
            if out=$($PY "$TOOL" window --scale-first 2 \
                    "job=$CL_DIR/tcp-j0-r0.log,$CL_DIR/tcp-j0-r1.log" \
                    "tcp=$CL_DIR/tcp-sink.log"); then
                indent <<<"$out"
                R[tcp_share]=$(sed -n 's/^share_job=//p' <<<"$out")
                R[tcp_share_gbps_job]=$(awk '/^gbps_job=/ {split($0, a, "=");
                    printf "%.3f\n", a[2] * 2}' <<<"$out")
                R[tcp_share_gbps_tcp]=$(sed -n 's/^gbps_tcp=//p' <<<"$out")
            fi
        else
            say "tcp_share: the stream did not flow, or the job failed"
        fi
        touch "$CL_DIR/tcp.stop"
        share_box_stop
    fi
    kill "$kpid" 2>/dev/null || true
    wait "$kpid" 2>/dev/null || true
    ip -n "$CL_PREFIX-agg" addr del "$BOX_KIP/24" dev shr0 2>/dev/null || true
}

# piece_sweep CAP N: the sweep's points at N ranks, worker links capped at CAP (or none)
piece_sweep() {
    local c=$1 n=$2 z b it pts=() i p grc=0 gpids=() l
    say "sweep: N=$n, worker links ${c/none/uncapped}: shouter, then Gloo"
    for z in "${sweep_size_l[@]}"; do
        b=$(cl_bytes "$z")
        it=$(((256 << 20) / b))
        ((it < 2)) && it=2
        ((it > 20)) && it=20
        pts+=("$b:$it")
        R[sweep_${c}_n${n}_$z]=nan
        R[sweep_gloo_${c}_n${n}_$z]=nan
    done
    cap_workers "$n" "$c" || return 0   # its points read nan (set just above)
    for ((i = 0; i < n; i++)); do "$CL_NETNS" kip "$i" on --prefix "$CL_PREFIX"; done
    # shellcheck disable=SC2119  # (the box on its defaults)
    if cl_agg_start; then
        for ((i = 0; i < ${#pts[@]}; i++)); do
            z=${sweep_size_l[$i]}
            p=${pts[$i]}
            if cl_allreduce "$(drivers_n "$n")" --dtype float32 --size "${p%%:*}" \
                    --iters "${p##*:}" --warmup 1 --chunk 2048 --window 128 >&2; then
                R[sweep_${c}_n${n}_$z]=$(cl_mean goodput_gbps)
            fi
        done
        cl_agg_stop || say "aggregator exit status $?"
    fi
    if ((gloo)); then
        gloo_port=$((gloo_port + 1))
        for ((i = 0; i < n; i++)); do
            timeout -k 5 1800 ip netns exec "$CL_PREFIX-w$i" $PY "$top/scripts/gloo_bench.py" \
                --rank "$i" --world "$n" --master "$(cl_worker_ip 0)" --iface shr0 \
                --port "$gloo_port" --coll allreduce --warmup 1 \
                --sweep "$(IFS=,; echo "${pts[*]}")" >"$CL_DIR/gloo-sweep-$c-$n-$i.log" 2>&1 &
            gpids+=($!)
            CL_PIDS+=($!)
        done
        for p in "${gpids[@]}"; do wait "$p" || grc=1; done
        if ((grc)); then
            say "gloo sweep failed:"
            tail -n 5 "$CL_DIR/gloo-sweep-$c-$n-"*.log >&2
        fi
        for ((i = 0; i < ${#pts[@]}; i++)); do
            l=$(grep -E "^gloo_sweep coll=allreduce world=$n size=${pts[$i]%%:*} .* ok=1$" \
                "$CL_DIR/gloo-sweep-$c-$n-0.log" || true)
            [[ -z $l ]] && continue
            l=${l##* gbps=}
            R[sweep_gloo_${c}_n${n}_${sweep_size_l[$i]}]=${l%% *}
        done
    fi
}

t0=$SECONDS
if ((links)); then
    for n in "${world_l[@]}"; do
        for ((i = 0; i < n; i++)); do "$CL_NETNS" kip "$i" on --prefix "$CL_PREFIX"; done
        R[uncapped_gbps_n$n]=nan
        ((uncapped == 0)) || locked piece_uncapped "$n"
        for r in "${rate_l[@]}"; do
            locked piece_rate "$r" "$n"
        done
    done
fi
if ((fair || tcp)) && ! PYTHONPATH=$SHR_BUILD/lib/python $PY -c 'import shouter' 2>/dev/null
then
    say "no Python binding in $SHR_BUILD/lib/python (meson -Dpython=true): no fairness_jain," \
        "tcp_share"
    fair=0
    tcp=0
    R[fairness_jain]=nan
    R[tcp_share]=nan
fi
((fair == 0)) || locked piece_fairness
((tcp == 0)) || locked piece_tcp
if ((sweep)); then
    for c in none "$sweep_rate"; do
        for n in "${sweep_world_l[@]}"; do locked piece_sweep "$c" "$n"; done
    done
fi
say "$((SECONDS - t0)) s"

echo "# shouter bench_shaped: $(date -u +%FT%TZ), $(nproc) cores, kernel-UDP ranks, $size" \
    "float32, chunk 2048, window 128, tbf burst 256kb latency 50ms"
if ((links)); then
    for n in "${world_l[@]}"; do
        echo "limit_n$n=$(awk -v n="$n" 'BEGIN {printf "%.3f\n", 2 * (n - 1) / n}')"
        echo "uncapped_gbps_n$n=${R[uncapped_gbps_n$n]}"
        for r in "${rate_l[@]}"; do
            g=$(rate_gbps "$r")
            s=${R[shaped_gbps_${r}_n$n]}
            echo "shaped_gbps_${r}_n$n=$s"
            echo "shaped_gloo_gbps_${r}_n$n=${R[shaped_gloo_gbps_${r}_n$n]}"
            echo "link_util_${r}_n$n=$(ratio "$s" "$g")"
            echo "shaped_vs_gloo_${r}_n$n=$(ratio "$s" "${R[shaped_gloo_gbps_${r}_n$n]}")"
            echo "cpu_bound_${r}_n$n=$(awk -v u="${R[uncapped_gbps_n$n]}" -v g="$g" \
                'BEGIN {if (u == "nan") print "nan"; else print (u < 1.1 * g) ? 1 : 0}')"
        done
    done
fi
if ((fair || tcp)); then
    echo "share_rate=$share_rate"
fi
if ((fair)); then
    for k in fairness_jain fairness_gbps_a fairness_gbps_b fairness_alone_gbps; do
        echo "$k=${R[$k]}"
    done
fi
if ((tcp)); then
    for k in tcp_share tcp_share_gbps_job tcp_share_gbps_tcp; do echo "$k=${R[$k]}"; done
    awk -v j="${R[tcp_share_gbps_job]}" -v t="${R[tcp_share_gbps_tcp]}" 'BEGIN {
        r = j / 2
        if (j != "nan" && t != "nan" && r + t > 0) printf "tcp_share_per_rank=%.3f\n", r / (r + t)
        else print "tcp_share_per_rank=nan" }'
fi
if ((sweep)); then
    echo "# sweep: allreduce goodput per rank (Gb/s), float32, chunk 2048, window 128"
    echo "# | link | N | size | shouter Gb/s | Gloo Gb/s | shouter/Gloo |"
    echo "# |---|---|---|---|---|---|"
    for c in none "$sweep_rate"; do
        for n in "${sweep_world_l[@]}"; do
            for z in "${sweep_size_l[@]}"; do
                a=${R[sweep_${c}_n${n}_$z]}
                g=${R[sweep_gloo_${c}_n${n}_$z]}
                echo "# | ${c/none/uncapped} | $n | $z | $a | $g | $(ratio "$a" "$g") |"
            done
        done
    done
fi
