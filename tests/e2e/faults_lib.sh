# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
# shellcheck shell=bash
#
# Sourced by the tests/e2e/faults_*.sh tests (bash), on top of tests/e2e/cluster.sh and
# scripts/netns.sh: ranks started in any worker namespace under any job id, results checked
# per job, telemetry read as numbers, and the faults this kernel can inject without netem
# (CONFIG_NET_SCH_NETEM is off here):
#
#   loss         scripts/netns.sh netem LINK "loss X%" (nftables drop in a bridge chain)
#   duplication  fl_dup: an nftables netdev ingress chain on the bridge port where the frame
#                enters P-br copies X% of the frames with `dup to "<egress port>"`: the copy
#                leaves straight through the port towards the destination, the original
#                goes through the bridge as usual (so the copy arrives first)
#   reordering   fl_reorder: an HTB qdisc on the bridge port towards the destination with a
#                slow class (rate-limited, short FIFO); an nftables netdev ingress rule puts
#                X% of the frames in it (`meta priority set 1:20`; HTB takes a class from
#                skb->priority). Those wait behind the rate limit while the rest overtake
#                them; a full slow FIFO drops (some loss comes with the reordering).
#
# Faults are applied to both directions of a worker link: worker -> box (rules on the
# ingress of port wI, towards port agg) and box -> worker (rules on the ingress of port agg,
# for frames to 198.18.0.(10+I), towards wI). Only UDP frames are touched (ARP is left alone).

fl_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# fl_init PREFIX: skip (77) unless root; cluster.sh with the namespace prefix; traps
fl_init() {
    if [[ $(id -u) -ne 0 ]]; then
        echo "SKIP: needs root (network namespaces)"
        exit 77
    fi
    # shellcheck source=tests/e2e/cluster.sh
    source "$fl_dir/cluster.sh"
    CL_PREFIX=${CL_PREFIX:-$1$$}
    cl_init || exit 1
    cl_traps
    FL_T0=$(date +%s.%N)
    FL_FAIL=0
}

fl_fail() {
    cl_log "FAIL: $*"
    FL_FAIL=1
    CL_FAILED=1
}

fl_elapsed() { awk -v t0="$FL_T0" -v t1="$(date +%s.%N)" 'BEGIN {printf "%.1f", t1 - t0}'; }

# fl_finish: stop the aggregator (must exit 0), print PASS/FAIL and the runtime, exit
fl_finish() {
    local rc=0
    if [[ -n ${CL_AGG_PID:-} ]]; then
        cl_agg_stop || rc=$?
        ((rc == 0)) || fl_fail "aggregator exit status $rc after SIGINT"
    fi
    if ((FL_FAIL)); then
        echo "FAIL ($(fl_elapsed) s)"
        exit 1
    fi
    echo "PASS ($(fl_elapsed) s)"
    exit 0
}

# --- ranks ---

# fl_start_rank GROUP NSIDX JOB RANK WORLD DRIVER [worker options]: one rank in P-wNSIDX,
# with a timeout of CL_RUN_TIMEOUT; pid/log appended to the group's lists (FL_<GROUP>_*)
fl_start_rank() {
    local g=$1 i=$2 job=$3 rank=$4 world=$5 drv=$6 ns ip log pid
    shift 6
    ns=$CL_PREFIX-w$i
    ip=$(cl_worker_ip "$i")
    CL_RUN=$((CL_RUN + 1))
    log=$CL_DIR/$g-job$job-r$rank-$CL_RUN.log
    case $drv in
    dpdk)
        "$CL_NETNS" kip "$i" off --prefix "$CL_PREFIX"
        timeout -k 5 "$CL_RUN_TIMEOUT" ip netns exec "$ns" "$CL_WORKER" \
            --no-pci --no-huge -m 256 --file-prefix "$ns" -l "$CL_WORKER_LCORE" \
            --vdev "net_af_packet0,iface=shr0${CL_AFP_RING:-}$CL_AFP_ARGS" -- \
            --driver dpdk --local "$ip" --agg 198.18.0.1 \
            --job "$job" --rank "$rank" --world "$world" "$@" >"$log" 2>&1 &
        ;;
    udp)
        "$CL_NETNS" kip "$i" on --prefix "$CL_PREFIX"
        timeout -k 5 "$CL_RUN_TIMEOUT" ip netns exec "$ns" "$CL_WORKER" \
            --driver udp --local "$ip" --agg 198.18.0.1 \
            --job "$job" --rank "$rank" --world "$world" "$@" >"$log" 2>&1 &
        ;;
    *) cl_log "unknown driver $drv"; return 2 ;;
    esac
    pid=$!
    CL_PIDS+=("$pid")
    eval "FL_${g}_PIDS+=($pid); FL_${g}_LOGS+=(\"$log\"); FL_${g}_DRV+=($drv)"
}

# fl_start_job GROUP JOB "DRIVERS" FIRST_NS [worker options]: world = number of drivers,
# rank r in P-w(FIRST_NS + r); @RANK@ in an option is replaced by the rank
fl_start_job() {
    local g=$1 job=$2 first=$4 r
    local -a dl
    read -r -a dl <<<"$3"
    shift 4
    eval "FL_${g}_PIDS=(); FL_${g}_LOGS=(); FL_${g}_DRV=()"
    for r in "${!dl[@]}"; do
        fl_start_rank "$g" $((first + r)) "$job" "$r" "${#dl[@]}" "${dl[$r]}" \
            "${@//@RANK@/$r}" || return
    done
}

# fl_wait_ready SECONDS "GROUP..." FILE...: wait until every FILE exists (shouter-worker
# --ready-file); 1 if one is missing after SECONDS or a rank of the GROUPs exited meanwhile
fl_wait_ready() {
    local end=$((SECONDS + $1)) f g missing pid
    local -a pids=()
    for g in $2; do eval "pids+=(\"\${FL_${g}_PIDS[@]}\")"; done
    shift 2
    while ((SECONDS < end)); do
        missing=0
        for f in "$@"; do [[ -e $f ]] || missing=1; done
        ((missing)) || return 0
        for pid in "${pids[@]}"; do
            kill -0 "$pid" 2>/dev/null || { cl_log "a rank exited before all joined"; return 1; }
        done
        sleep 0.05
    done
    return 1
}

# fl_rank_pid GROUP R: the shouter-worker process of rank R (the child of its `timeout`)
fl_rank_pid() {
    local tp
    eval "tp=\${FL_$1_PIDS[$2]}"
    pgrep -P "$tp" | awk 'NR == 1'
}

# fl_wait_job GROUP: wait for the group's ranks; FL_RESULTS / FL_RCS / FL_SECS get each
# rank's RESULT line, exit status and seconds waited. Returns 0 only if all exited 0 with
# ok=1 and all crc= agree (allreduce, allgather, broadcast: the same output at every rank).
fl_wait_job() {
    local g=$1 i rc line crc0='' bad=0 t0 pid log drv
    local -a pids logs drvs
    eval "pids=(\"\${FL_${g}_PIDS[@]}\"); logs=(\"\${FL_${g}_LOGS[@]}\");"
    eval "drvs=(\"\${FL_${g}_DRV[@]}\")"
    FL_RESULTS=()
    FL_RCS=()
    FL_SECS=()
    t0=$(date +%s.%N)
    for i in "${!pids[@]}"; do
        pid=${pids[$i]}
        log=${logs[$i]}
        drv=${drvs[$i]}
        rc=0
        wait "$pid" || rc=$?
        FL_RCS+=("$rc")
        FL_SECS+=("$(awk -v t0="$t0" -v t1="$(date +%s.%N)" 'BEGIN {printf "%.2f", t1 - t0}')")
        line=$(grep '^RESULT ' "$log" | tail -n 1 || true)
        [[ -n $line ]] || line="RESULT rank=$i ok=0 error=no-result-line(exit=$rc)"
        FL_RESULTS+=("$line")
        echo "  $g $drv: $line"
        if ((rc != 0)) || [[ $(cl_field "$line" ok) != 1 ]]; then
            cl_log "$g rank $i ($drv) failed, exit $rc"
            tail -n 8 "$log" | sed 's/^/    /' >&2
            bad=1
        fi
        # every rank's output is the same only for these (the others: each its own block)
        case $(cl_field "$line" coll || echo allreduce) in
        allreduce | allgather | broadcast) ;;
        *) continue ;;
        esac
        if [[ -z $crc0 ]]; then
            crc0=$(cl_field "$line" crc || echo none)
        elif [[ $(cl_field "$line" crc || echo none) != "$crc0" ]]; then
            cl_log "$g rank $i: crc differs from rank 0"
            bad=1
        fi
    done
    ((bad == 0))
}

# fl_sum_field KEY: sum of KEY over FL_RESULTS
fl_sum_field() {
    local line
    for line in "${FL_RESULTS[@]}"; do cl_field "$line" "$1" || true; done |
        awk '{s += $1} END {print s + 0}'
}

# --- telemetry ---

# fl_tel CMD: one telemetry reply (JSON, one line) of box CL_BOX (default 1); empty if the
# aggregator does not answer
fl_tel() {
    printf '%s\n' "$1" |
        timeout 10 ip netns exec "$(cl_box_ns)" dpdk-telemetry.py -f "$(cl_box_ns)" 2>&1 |
        sed -n 's/^--> *//; /^{/p' | awk 'NR == 1'
}

# fl_json JSON PATH: a value from a telemetry reply; PATH is keys joined by '/', after the
# command (e.g. "rejects", "7/active"); prints "none" if absent
fl_json() {
    python3 -c '
import json, sys
try:
    d = next(iter(json.loads(sys.argv[1]).values()))
    for k in sys.argv[2].split("/"):
        d = d[k]
    print(d)
except Exception:
    print("none")
' "$1" "$2"
}

# fl_wait_json CMD PATH VALUE SECONDS: poll until the value at PATH is VALUE; the last
# reply is left in FL_LAST
fl_wait_json() {
    local end=$((SECONDS + $4))
    while ((SECONDS < end)); do
        FL_LAST=$(fl_tel "$1")
        [[ $(fl_json "$FL_LAST" "$2") == "$3" ]] && return 0
        sleep 0.1
    done
    return 1
}

# fl_deltas BEFORE AFTER: fill the associative array FL_D with AFTER - BEFORE of every
# number in two replies of the same telemetry command (both must hold it). A reply that is
# not such a dict of numbers fails the test: FL_D empty would read as 0 in every check of
# "nothing happened".
declare -gA FL_D
fl_deltas() {
    local k v out
    FL_D=()
    if ! out=$(python3 -c '
import json, sys
b = next(iter(json.loads(sys.argv[1]).values()))
a = next(iter(json.loads(sys.argv[2]).values()))
n = 0
for k, v in a.items():
    if isinstance(v, int) and isinstance(b.get(k), int):
        print(k, v - b[k])
        n += 1
sys.exit(0 if n > 0 else 1)
' "$1" "$2"); then
        fl_fail "telemetry replies without counters: ${1:0:120} / ${2:0:120}"
        return 0	# recorded: fl_finish fails the test
    fi
    while read -r k v; do
        FL_D[$k]=$v
    done <<<"$out"
}

# fl_nonzero PREFIX: "key=value" of the FL_D entries starting with PREFIX that are not 0
fl_nonzero() {
    local k out=
    for k in "${!FL_D[@]}"; do
        [[ $k == "$1"* && ${FL_D[$k]} != 0 ]] && out+="$k=${FL_D[$k]} "
    done
    echo "${out:-none}"
}

# --- faults ---

FL_NFT=shr_faults

fl_nft() { ip netns exec "$CL_PREFIX-br" nft "$@"; }

# the netdev ingress chain of bridge port $1 (created once)
fl_chain() {
    local port=$1
    fl_nft list table netdev $FL_NFT >/dev/null 2>&1 || fl_nft add table netdev $FL_NFT
    fl_nft list chain netdev $FL_NFT "in_$port" >/dev/null 2>&1 && return 0
    fl_nft add chain netdev $FL_NFT "in_$port" \
        "{ type filter hook ingress device \"$port\" priority 0; policy accept; }"
}

fl_ppm() { awk -v p="$1" 'BEGIN {printf "%d", p * 10000 + 0.5}'; }

# fl_dup I PCT: duplicate PCT% of the UDP frames in each direction of worker link I
fl_dup() {
    local i=$1 ppm
    ppm=$(fl_ppm "$2")
    fl_chain "w$i"
    fl_chain agg
    fl_nft add rule netdev $FL_NFT "in_w$i" ip daddr 198.18.0.1 udp dport != 0 \
        numgen random mod 1000000 "<" "$ppm" counter dup to agg
    fl_nft add rule netdev $FL_NFT in_agg ip daddr "$(cl_worker_ip "$i")" udp dport != 0 \
        numgen random mod 1000000 "<" "$ppm" counter dup to "w$i"
}

# fl_reorder_qdisc PORT RATE LIMIT: HTB on bridge port PORT: 1:10 unlimited (default),
# 1:20 at RATE with a LIMIT-frame FIFO
fl_reorder_qdisc() {
    local port=$1 rate=$2 limit=$3 ns=$CL_PREFIX-br
    local cur
    # (not `tc | grep -q`: under pipefail, grep's early exit can fail the pipe with SIGPIPE)
    cur=$(tc -n "$ns" qdisc show dev "$port")
    [[ $cur == *"qdisc htb 1: root"* ]] && return 0
    tc -n "$ns" qdisc add dev "$port" root handle 1: htb default 10
    tc -n "$ns" class add dev "$port" parent 1: classid 1:10 htb rate 10gbit quantum 60000
    tc -n "$ns" class add dev "$port" parent 1: classid 1:20 htb rate "$rate" \
        ceil "$rate" burst 2k cburst 2k quantum 9100
    tc -n "$ns" qdisc add dev "$port" parent 1:20 handle 20: pfifo limit "$limit"
}

# fl_reorder I PCT [RATE] [LIMIT]: delay PCT% of the UDP frames in each direction of worker
# link I behind a RATE (default 20mbit) class with a LIMIT-frame (default 16) FIFO
fl_reorder() {
    local i=$1 ppm rate=${3:-20mbit} limit=${4:-16}
    ppm=$(fl_ppm "$2")
    fl_chain "w$i"
    fl_chain agg
    fl_reorder_qdisc agg "$rate" "$limit"
    fl_reorder_qdisc "w$i" "$rate" "$limit"
    fl_nft add rule netdev $FL_NFT "in_w$i" ip daddr 198.18.0.1 udp dport != 0 \
        numgen random mod 1000000 "<" "$ppm" counter meta priority set 1:20
    fl_nft add rule netdev $FL_NFT in_agg ip daddr "$(cl_worker_ip "$i")" udp dport != 0 \
        numgen random mod 1000000 "<" "$ppm" counter meta priority set 1:20
}

# fl_faults_clear: remove every dup/reorder rule and qdisc (the loss rules are netns.sh's)
fl_faults_clear() {
    local port
    fl_nft delete table netdev $FL_NFT 2>/dev/null || true
    for port in $(ip -n "$CL_PREFIX-br" -o link show master br0 | awk -F'[ :@]+' '{print $2}'); do
        tc -n "$CL_PREFIX-br" qdisc del dev "$port" root 2>/dev/null || true
    done
}

# fl_rule_hits: frames the dup/reorder rules matched so far (all chains)
fl_rule_hits() {
    fl_nft list table netdev $FL_NFT 2>/dev/null |
        awk '{for (i = 1; i < NF; i++) if ($i == "packets") s += $(i + 1)} END {print s + 0}'
}

# fl_slow_stats: "sent overlimits dropped" of the slow (1:20) classes of every bridge port,
# summed: sent frames were held back behind the rate limit (overlimits counts the times the
# class had to wait) while the fast class overtook them; dropped ones overflowed its FIFO
fl_slow_stats() {
    local port
    for port in $(ip -n "$CL_PREFIX-br" -o link show master br0 | awk -F'[ :@]+' '{print $2}'); do
        tc -n "$CL_PREFIX-br" -s class show dev "$port" classid 1:20 2>/dev/null |
            awk '/Sent/ {gsub(/[,()]/, ""); print $4, $9, $7}'
    done | awk '{s += $1; o += $2; d += $3} END {print s + 0, o + 0, d + 0}'
}

# fl_wait_min CMD PATH MIN SECONDS: poll until the value at PATH is a number >= MIN (a
# counter reached a state); the last reply is left in FL_LAST. SECONDS is only a generous
# limit for a state that never comes (the test fails then), not a measure of anything.
fl_wait_min() {
    local end=$((SECONDS + $4)) v
    while ((SECONDS < end)); do
        FL_LAST=$(fl_tel "$1")
        v=$(fl_json "$FL_LAST" "$2")
        [[ $v =~ ^[0-9]+$ ]] && ((v >= $3)) && return 0
        sleep 0.1
    done
    return 1
}

# fl_wait_grow CMD PATH SECONDS: read the counter at PATH once, then wait (fl_wait_min) until
# it has grown past that reading: e.g. /shouter/stats msg_completed, to know a job's rounds
# are completing at this very moment (it is mid-run) rather than sleeping and hoping
fl_wait_grow() {
    local v
    v=$(fl_json "$(fl_tel "$1")" "$2")
    [[ $v =~ ^[0-9]+$ ]] || { cl_log "no counter $2 in $1"; return 1; }
    fl_wait_min "$1" "$2" $((v + 1)) "$3"
}
