# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Sourced by the e2e tests, scripts/demo.sh and scripts/bench.sh (bash): drives a shouter
# cluster in network namespaces made by scripts/netns.sh. The aggregator runs in P-agg on DPDK
# (net_af_packet on the veth, which has no kernel address: DPDK answers ARP for 198.18.0.1);
# rank I runs in P-wI, on DPDK (af_packet on its veth, kernel address taken away) or on a
# kernel UDP socket (kernel address 198.18.0.(10+I)).
#
# Knobs (environment, read by cl_init):
#   SHR_BUILD          build directory (default <top>/build)
#   CL_PREFIX          namespace prefix (default shr<pid>)
#   CL_AGG_LCORES      EAL -l of the aggregator (default 0)
#   CL_WORKER_LCORE    EAL -l of DPDK workers (default 1)
#   CL_WORKER_EAL      extra EAL arguments of DPDK workers (default none: e.g.
#                      "--force-max-simd-bitwidth=256")
#   CL_IDLE_US         aggregator --idle-us (default 20: two cores are shared by everyone)
#   CL_AGG_MEM         the aggregator's EAL memory options (default "--no-huge -m 512"; a
#                      capture with dpdk-dumpcap needs hugepages: "--huge-dir DIR -m 512")
#   CL_AFP_RING        net_af_packet PACKET_MMAP devargs (default ",blocksz=258048,
#                      framesz=9216,framecnt=1008"): 9216-byte frame slots carry the veths'
#                      9000-byte MTU (DPDK 22.11's default, 2048, caps frames at 1982 bytes).
#                      The PMD lays frames out back to back, so blocksz must be a multiple of
#                      framesz (and of the page size): 28 frames = 63 pages (the kernel
#                      allocates 64); framecnt a multiple of 28
#   CL_AFP_ARGS        extra net_af_packet devargs (e.g. ",qdisc_bypass=0")
#   CL_AFP_QPAIRS      the aggregator's net_af_packet qpairs (default 1; 2 with
#                      CL_AGG_LCORES=0,1 and --lanes 2: two data lcores, tests/e2e/lanes2.sh)
#   CL_AGG_VDEV        the aggregator's --vdev instead of the net_af_packet one the three knobs
#                      above make (e.g. "net_af_xdp0,iface=shr0": DPDK 22.11's af_xdp takes
#                      frames up to a page, an MTU of at most 3542 on a veth: netns.sh mtu M)
#   CL_BOX             the box cl_agg_start, cl_agg_stop and cl_telemetry act on (default 1):
#                      box K > 1 (cl_up N B) is P-aggK at 198.18.0.K, pid CL_BOX_PIDS[K]
#   CL_GROUP           the aggregator's --result-group (default: none): e.g. 198.18.0.255, the
#                      bridge's broadcast, where the kernel UDP ranks receive the results for
#                      every rank once sent (the bridge copies them); without :PORT, box K
#                      uses ports from 48000 + 100 (K - 1)
#   CL_RUN_TIMEOUT     seconds after which a worker is killed (default 300)
#   CL_KEEP            1: keep the log directory
#
# Typical use:
#   source tests/e2e/cluster.sh
#   cl_init; cl_traps; cl_up 4; cl_agg_start
#   cl_allreduce "dpdk udp udp dpdk" --dtype int32 --size 4M --iters 3 || fail
#   cl_agg_stop

cl_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

cl_log() { echo "[$(date +%T)] $*" >&2; }

cl_init() {
    SHR_BUILD=${SHR_BUILD:-$cl_top/build}
    CL_AGG=$SHR_BUILD/app/shouter-agg
    CL_WORKER=$SHR_BUILD/app/shouter-worker
    CL_NETNS=$cl_top/scripts/netns.sh
    CL_PREFIX=${CL_PREFIX:-shr$$}
    CL_AGG_LCORES=${CL_AGG_LCORES:-0}
    CL_WORKER_LCORE=${CL_WORKER_LCORE:-1}
    CL_IDLE_US=${CL_IDLE_US:-20}
    CL_AGG_MEM=${CL_AGG_MEM:---no-huge -m 512}
    CL_AFP_RING=${CL_AFP_RING-,blocksz=258048,framesz=9216,framecnt=1008}
    CL_AFP_ARGS=${CL_AFP_ARGS:-}
    CL_AFP_QPAIRS=${CL_AFP_QPAIRS:-1}
    CL_RUN_TIMEOUT=${CL_RUN_TIMEOUT:-300}
    CL_GROUP=${CL_GROUP:-}
    CL_DIR=$(mktemp -d "/tmp/shouter-$CL_PREFIX.XXXXXX")
    CL_PIDS=()
    CL_OWNS_NET=0   # 1 once cl_up made the network: cleanup takes down only what it made
    CL_AGG_PID=
    CL_BOX_PIDS=()
    CL_N=0
    CL_RUN=0
    CL_JOB=0
    CL_RESULTS=()
    CL_FAILED=0
    local b
    for b in "$CL_AGG" "$CL_WORKER"; do
        [[ -x $b ]] || { cl_log "missing $b (scripts/build.sh)"; return 1; }
    done
}

# the EXIT trap cleans up; INT/TERM exit through it
cl_traps() {
    trap cl_cleanup EXIT
    trap 'cl_log "interrupted"; exit 130' INT TERM
}

# cl_up N [B [netns.sh up options...]]: N worker namespaces and B boxes (default 1). If the
# prefix is in use (another run's, CL_PREFIX given twice), netns.sh refuses and this run's
# cleanup leaves that network alone.
cl_up() {
    local boxes=${2:-1}
    CL_N=$1
    shift
    (($#)) && shift
    "$CL_NETNS" up "$CL_N" --boxes "$boxes" --prefix "$CL_PREFIX" "$@" >/dev/null
    CL_OWNS_NET=1
}

cl_worker_ip() { echo "198.18.0.$((10 + $1))"; }

# cl_box_ns [K], cl_box_ip [K], cl_box_log [K]: box K's (default CL_BOX) namespace, address, log
# shellcheck disable=SC2120
cl_box_ns() {
    local k=${1:-${CL_BOX:-1}}
    if ((k == 1)); then echo "$CL_PREFIX-agg"; else echo "$CL_PREFIX-agg$k"; fi
}
# shellcheck disable=SC2120
cl_box_ip() { echo "198.18.0.${1:-${CL_BOX:-1}}"; }
# shellcheck disable=SC2120
cl_box_log() {
    local k=${1:-${CL_BOX:-1}}
    if ((k == 1)); then echo "$CL_DIR/agg.log"; else echo "$CL_DIR/agg$k.log"; fi
}

# cl_box_pid_set K PID: box K's pid, "" once it is gone (CL_AGG_PID for box 1, else
# CL_BOX_PIDS[K]); cl_box_pid K prints it ("" when it is not running)
cl_box_pid_set() {
    if (($1 == 1)); then CL_AGG_PID=$2; else CL_BOX_PIDS[$1]=$2; fi
}
cl_box_pid() {
    if (($1 == 1)); then echo "$CL_AGG_PID"; else echo "${CL_BOX_PIDS[$1]:-}"; fi
}

# cl_agg_start [aggregator options]: start it, wait for "shouter-agg: ready"
cl_agg_start() {
    local log ns k=${CL_BOX:-1} pid i mem vdev grp=()
    log=$(cl_box_log)
    if [[ -n $CL_GROUP ]]; then
        # box K's jobs from port 48000 + 100 (K - 1): the boxes of one segment apart
        grp=(--result-group "$CL_GROUP")
        [[ $CL_GROUP == *:* ]] || grp=(--result-group "$CL_GROUP:$((48000 + 100 * (k - 1)))")
    fi
    ns=$(cl_box_ns)
    read -r -a mem <<<"$CL_AGG_MEM"
    vdev=${CL_AGG_VDEV:-net_af_packet0,iface=shr0,qpairs=$CL_AFP_QPAIRS$CL_AFP_RING$CL_AFP_ARGS}
    # emptied here, not by the background redirection: a box started again on the same log
    # must not be found "ready" by the previous one's line before the shell truncates it
    : >"$log"
    ip netns exec "$ns" "$CL_AGG" --no-pci "${mem[@]}" \
        --file-prefix "$ns" -l "$CL_AGG_LCORES" \
        --vdev "$vdev" -- --ip "$(cl_box_ip)" --idle-us "$CL_IDLE_US" "${grp[@]}" "$@" >"$log" 2>&1 &
    pid=$!
    cl_box_pid_set "$k" "$pid"
    CL_PIDS+=("$pid")
    for ((i = 0; i < 300; i++)); do
        # -s: the background shell may not have created the log yet
        if grep -qs "shouter-agg: ready" "$log"; then
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            cl_log "aggregator exited before ready:"
            tail -n 30 "$log" >&2
            cl_box_pid_set "$k" ""
            return 1
        fi
        sleep 0.1
    done
    cl_log "aggregator not ready after 30 s: stopped"
    tail -n 30 "$log" >&2
    # stopped here: left running it held its EAL lock and skewed whatever ran next
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    cl_box_pid_set "$k" ""
    return 1
}

# cl_agg_stop: SIGINT, wait for a clean exit (its status; 3 if it exited 0 but logged mbufs
# not back in its pools at exit: a leak)
cl_agg_stop() {
    local k=${CL_BOX:-1} pid rc i
    pid=$(cl_box_pid "$k")
    [[ -n $pid ]] || return 0
    kill -INT "$pid" 2>/dev/null || true
    for ((i = 0; i < 150; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        cl_log "aggregator ignored SIGINT for 15 s: killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rc=0
    wait "$pid" || rc=$?
    cl_box_pid_set "$k" ""
    if ((rc == 0)) && grep -q "mbufs not returned" "$(cl_box_log "$k")" 2>/dev/null; then
        cl_log "aggregator: $(grep "mbufs not returned" "$(cl_box_log "$k")")"
        rc=3
    fi
    return $rc
}

# cl_telemetry CMD...: query the aggregator through DPDK's own client; prints the JSON replies
cl_telemetry() {
    local c input=
    for c in "$@"; do input+="$c"$'\n'; done
    printf '%s' "$input" |
        ip netns exec "$(cl_box_ns)" dpdk-telemetry.py -f "$(cl_box_ns)" 2>&1 |
        sed -n 's/^--> *//; /^{/p'
}

# cl_telemetry_kv CMD [KEY...]: one telemetry reply as "key=value" lines (6 per line); with
# KEYs, only those
cl_telemetry_kv() {
    local cmd=$1
    shift
    cl_telemetry "$cmd" | python3 -c '
import json, sys
keys = sys.argv[1:]
for line in sys.stdin:
    for cmd, d in json.loads(line).items():
        if not isinstance(d, dict):
            print(f"{cmd}: {d}")
            continue
        kv = [f"{k}={v}" for k, v in d.items() if not keys or k in keys]
        for i in range(0, len(kv), 6):
            print(" ".join(kv[i:i + 6]))
' "$@"
}

# cl_start_ranks "DRIVERS" [worker options]: start one rank per driver word (dpdk|udp), all
# in one new job; pids in CL_RPIDS, logs in CL_RLOGS. With CL_TREE="K1 K2 ..." (a tree of
# boxes, issue 10), the ranks are spread in order over those leaf boxes (198.18.0.K), the
# same number under each: rank i joins its leaf's job (--agg, --rank, --world of the leaf)
# as rank i of the whole tree (--tree-rank i --tree-world N)
cl_start_ranks() {
    local -a dl=($1) leaves tree=()
    local world i drv ns log ip per
    read -r -a leaves <<<"${CL_TREE:-}"
    shift
    world=${#dl[@]}
    if ((${#leaves[@]})); then
        per=$((world / ${#leaves[@]}))
        ((per * ${#leaves[@]} == world)) ||
            { cl_log "CL_TREE: $world ranks do not split over ${#leaves[@]} leaves"; return 2; }
    fi
    ((world <= CL_N)) || { cl_log "world $world > $CL_N namespaces"; return 2; }
    CL_RUN=$((CL_RUN + 1))
    CL_JOB=$((CL_JOB + 1))
    CL_RPIDS=()
    CL_RLOGS=()
    CL_RDRV=("${dl[@]}")
    for ((i = 0; i < world; i++)); do
        drv=${dl[$i]}
        ns=$CL_PREFIX-w$i
        ip=$(cl_worker_ip "$i")
        log=$CL_DIR/run$CL_RUN-w$i.log
        CL_RLOGS+=("$log")
        ((${#leaves[@]})) && tree=(--agg "198.18.0.${leaves[i / per]}" --rank $((i % per))
            --world "$per" --tree-rank "$i" --tree-world "$world")
        case $drv in
        dpdk)
            "$CL_NETNS" kip "$i" off --prefix "$CL_PREFIX"
            timeout -k 5 "$CL_RUN_TIMEOUT" ip netns exec "$ns" "$CL_WORKER" \
                --no-pci --no-huge -m 256 --file-prefix "$ns" -l "$CL_WORKER_LCORE" \
                ${CL_WORKER_EAL:+$CL_WORKER_EAL} \
                --vdev "net_af_packet0,iface=shr0$CL_AFP_RING$CL_AFP_ARGS" -- \
                --driver dpdk --local "$ip" --agg 198.18.0.1 \
                --job "$CL_JOB" --rank "$i" --world "$world" "$@" "${tree[@]}" >"$log" 2>&1 &
            ;;
        udp)
            "$CL_NETNS" kip "$i" on --prefix "$CL_PREFIX"
            timeout -k 5 "$CL_RUN_TIMEOUT" ip netns exec "$ns" "$CL_WORKER" \
                --driver udp --local "$ip" --agg 198.18.0.1 \
                --job "$CL_JOB" --rank "$i" --world "$world" "$@" "${tree[@]}" >"$log" 2>&1 &
            ;;
        *)
            cl_log "unknown driver $drv"
            return 2
            ;;
        esac
        CL_RPIDS+=($!)
        CL_PIDS+=($!)
    done
}

# cl_field LINE KEY: the value of KEY=... in a RESULT line
cl_field() {
    local w
    for w in $1; do
        [[ $w == "$2="* ]] && { echo "${w#*=}"; return 0; }
    done
    return 1
}

# cl_wait_ranks: wait for the ranks; CL_RESULTS gets each rank's RESULT line (or a
# synthesised failure); returns 0 only if every rank exited 0 with ok=1 and all crc= agree
# (unless CL_SAME_CRC=0: collectives whose output differs per rank, e.g. reduce_scatter)
cl_wait_ranks() {
    local i rc line crc0= bad=0
    CL_RESULTS=()
    CL_RRCS=()
    for i in "${!CL_RPIDS[@]}"; do
        rc=0
        wait "${CL_RPIDS[$i]}" || rc=$?
        CL_RRCS+=("$rc")
        line=$(grep '^RESULT ' "${CL_RLOGS[$i]}" | tail -n 1 || true)
        [[ -n $line ]] || line="RESULT rank=$i ok=0 error=no-result-line(exit=$rc)"
        CL_RESULTS+=("$line")
        if ((rc != 0)) || [[ $(cl_field "$line" ok) != 1 ]]; then
            cl_log "rank $i (${CL_RDRV[$i]}) failed, exit $rc: $line"
            tail -n 15 "${CL_RLOGS[$i]}" | sed 's/^/    /' >&2
            bad=1
        fi
        if [[ ${CL_SAME_CRC:-1} == 0 ]]; then
            :
        elif [[ -z $crc0 ]]; then
            crc0=$(cl_field "$line" crc || echo none)
        elif [[ $(cl_field "$line" crc || echo none) != "$crc0" ]]; then
            cl_log "rank $i crc differs from rank 0: $line"
            bad=1
        fi
    done
    CL_PIDS=($(for p in "${CL_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && echo "$p"; done))
    ((bad == 0))
}

# cl_allreduce "DRIVERS" [worker options]: one job, run to the end, checked; prints RESULTs
# and also checks that each RESULT echoes the world, and the dtype/size asked for (if any)
cl_allreduce() {
    local dlist=$1 want_dtype= want_size= a prev= i line rc=0
    shift
    for a in "$@"; do
        [[ $prev == --dtype ]] && want_dtype=$a
        [[ $prev == --size ]] && want_size=$a
        prev=$a
    done
    cl_start_ranks "$dlist" "$@" || return $?
    cl_wait_ranks || rc=1
    for i in "${!CL_RESULTS[@]}"; do
        line=${CL_RESULTS[$i]}
        echo "  ${CL_RDRV[$i]}: $line"
        # (a tree: each rank's world is its leaf's job)
        [[ -n ${CL_TREE:-} || $(cl_field "$line" world) == "${#CL_RESULTS[@]}" ]] || rc=1
        [[ -z $want_dtype || $(cl_field "$line" dtype) == "$want_dtype" ]] || rc=1
        if [[ -n $want_size ]] && [[ $(cl_field "$line" size) != "$(cl_bytes "$want_size")" ]]; then
            cl_log "rank $i: size $(cl_field "$line" size) != $(cl_bytes "$want_size")"
            rc=1
        fi
    done
    ((rc == 0)) || CL_FAILED=1
    return $rc
}

# cl_bytes 4M -> 4194304
cl_bytes() {
    local s=${1^^}
    case $s in
    *K) echo $((${s%K} << 10)) ;;
    *M) echo $((${s%M} << 20)) ;;
    *G) echo $((${s%G} << 30)) ;;
    *) echo "$s" ;;
    esac
}

# cl_mean KEY: mean of KEY over CL_RESULTS
cl_mean() {
    local line
    for line in "${CL_RESULTS[@]}"; do cl_field "$line" "$1" || true; done |
        awk '{s += $1; n++} END {if (n) printf "%.3f\n", s / n; else print "nan"}'
}

cl_cleanup() {
    local rc=$? p ns i
    trap - EXIT INT TERM
    for p in "${CL_PIDS[@]}"; do
        kill -TERM "$p" 2>/dev/null || true
    done
    for ((i = 0; i < 50; i++)); do
        local alive=0
        for p in "${CL_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        ((alive)) || break
        sleep 0.1
    done
    for p in "${CL_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    # anything else still inside our own namespaces was started by us too (only if they are
    # ours: a prefix in use when cl_up ran is another run's)
    if ((${CL_OWNS_NET:-0})) && [[ -n ${CL_PREFIX:-} && -n ${CL_NETNS:-} ]]; then
        for ns in $("$CL_NETNS" list --prefix "$CL_PREFIX"); do
            for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
        done
        sleep 0.2
        "$CL_NETNS" down --prefix "$CL_PREFIX" 2>/dev/null || true
        rm -rf /var/run/dpdk/"$CL_PREFIX"-* 2>/dev/null || true
    fi
    if [[ -n ${CL_DIR:-} && -d $CL_DIR ]]; then
        if ((rc != 0 || CL_FAILED)) && [[ -f $CL_DIR/agg.log ]]; then
            cl_log "aggregator log (last 20 lines):"
            tail -n 20 "$CL_DIR/agg.log" | sed 's/^/    /' >&2
        fi
        if [[ ${CL_KEEP:-0} == 1 ]]; then
            cl_log "logs kept in $CL_DIR"
        else
            rm -rf "$CL_DIR"
        fi
    fi
    exit $rc
}
