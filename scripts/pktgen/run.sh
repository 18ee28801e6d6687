#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Throughput test of a shouter-agg box with Pktgen-DPDK (root): shouter-pcapgen writes a pcap
# of valid DATA traffic of a static job and the box's INI, the box starts on that INI, and
# Pktgen replays the pcap into it (replay.lua) at --rate percent for --seconds, then prints
# one result line (offered Mpps, rounds and results per second, rejects). Two wires:
#   veth   the box and Pktgen in network namespaces of their own (shr-pg-box, shr-pg-gen),
#          joined by a veth pair; both on net_af_packet (198.18.0.0/15, nothing routed)
#   memif  the box and Pktgen connected by a memif socket (net_memif, shared memory)
# Everything it starts or creates (processes, namespaces, the work directory) is removed
# on exit, also when interrupted. Pktgen-DPDK is not part of shouter: build it yourself
# (the README, "Throughput tests with Pktgen-DPDK") and give its binary with --pktgen.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

usage() {
    cat <<EOF
usage: $0 --pktgen PATH [--wire veth|memif] [options]
  --pktgen PATH     the Pktgen-DPDK binary (or \$PKTGEN)
  --wire W          veth (default) or memif
  --rate PCT        Pktgen's tx rate, percent of the port's link speed (100)
  --seconds S       how long Pktgen sends (10)
  --ranks N, --dtype D, --chunk E, --window W, --rounds R, --lanes L
                    the job (shouter-pcapgen's options; defaults 4, int32, 256, 128, 2, 1)
  --pcapgen-args "ARGS"  more shouter-pcapgen options (word-split), e.g. "--addrs LIST"
  --build DIR       where shouter-agg and shouter-pcapgen are (\$SHR_BUILD, else ./build,
                    else \$PATH)
  --box-lcores L    the box's EAL -l (0: the core of Pktgen's main lcore; its port lcore
                    busy-polls the other core)
  --pktgen-lcores L Pktgen's EAL -l (0,1: its main lcore first, then the port's lcore)
  --pktgen-mem MB   Pktgen's memory (--no-huge -m; 3072)
  --out DIR         keep the pcap, INI and logs there (default: a temporary directory,
                    removed at the end)
  -h, --help
Prints the result line of replay.lua:
  shouter-pktgen: rate_pct=.. secs=.. offered_mpps=.. pktgen_rate_mpps=.. rx_back_mpps=..
  tx=.. box_rx=.. rounds=.. rounds_per_s=.. results_per_s=.. rejects=.. box_tx_drop=..
  box_imissed=..
Exit: 0 when the run completed with no frame rejected, 1 otherwise, 2 on usage errors.
EOF
}

die() { echo "run.sh: $*" >&2; exit 1; }
usage_err() { echo "run.sh: $*" >&2; echo "try: $0 --help" >&2; exit 2; }

PKTGEN=${PKTGEN:-}
WIRE=veth
RATE=100
SECONDS_=10
GEN_ARGS=(--dtype int32 --chunk 256 --window 128 --rounds 2)   # and 4 ranks: shouter-pcapgen's
LANES=1
EXTRA=()
BUILD=${SHR_BUILD:-$top/build}
BOX_LCORES=0
PG_LCORES=0,1
PG_MEM=3072
OUT=

need() { (($# >= 2)) || usage_err "$1 needs a value"; }
while (($#)); do
    case $1 in
    --pktgen) need "$@"; PKTGEN=$2; shift ;;
    --wire) need "$@"; WIRE=$2; shift ;;
    --rate) need "$@"; RATE=$2; shift ;;
    --seconds) need "$@"; SECONDS_=$2; shift ;;
    --ranks | --dtype | --chunk | --window | --rounds) need "$@"; GEN_ARGS+=("$1" "$2"); shift ;;
    --lanes) need "$@"; LANES=$2; shift ;;
    --pcapgen-args) need "$@"; read -r -a EXTRA <<<"$2"; shift ;;
    --build) need "$@"; BUILD=$2; shift ;;
    --box-lcores) need "$@"; BOX_LCORES=$2; shift ;;
    --pktgen-lcores) need "$@"; PG_LCORES=$2; shift ;;
    --pktgen-mem) need "$@"; PG_MEM=$2; shift ;;
    --out) need "$@"; OUT=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage_err "unknown option '$1'" ;;
    esac
    shift
done

[[ $WIRE == veth || $WIRE == memif ]] || usage_err "--wire: veth or memif, got '$WIRE'"
if ! [[ $RATE =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
    ! awk -v r="$RATE" 'BEGIN { exit !(r > 0 && r <= 100) }'; then
    usage_err "--rate: a percent in (0, 100], got '$RATE'"
fi
if ! [[ $SECONDS_ =~ ^[0-9]+$ ]] || ((SECONDS_ < 1)); then
    usage_err "--seconds: 1 or more, got '$SECONDS_'"
fi
[[ $LANES =~ ^[0-9]+$ ]] || usage_err "--lanes: a number, got '$LANES'"
[[ -n $PKTGEN ]] || usage_err "--pktgen PATH is required (Pktgen-DPDK is not part of shouter)"
[[ -x $PKTGEN ]] || die "--pktgen: '$PKTGEN' is not an executable"
((EUID == 0)) || die "must run as root (DPDK, network namespaces)"
for t in script ip /usr/bin/python3; do
    command -v "$t" >/dev/null || die "'$t' not found (util-linux, iproute2, python3)"
done

find_bin() {
    local f
    for f in "$BUILD/app/$1" "$(command -v "$1" || true)"; do
        [[ -n $f && -x $f ]] && { echo "$f"; return; }
    done
    die "$1 not found in $BUILD/app or \$PATH (build shouter, or --build DIR)"
}
AGG=$(find_bin shouter-agg)
GEN=$(find_bin shouter-pcapgen)

if [[ -n $OUT ]]; then
    mkdir -p "$OUT"
    DIR=$(cd "$OUT" && pwd)
    KEEP=1
else
    DIR=$(mktemp -d /tmp/shr-pktgen.XXXXXX)
    KEEP=0
fi
BOXP=shr-pg-box-$$
PGP=shr-pg-gen-$$
NS_BOX=
NS_GEN=
BOX_PID=
PG_PID=

cleanup() {
    local p
    for p in "$PG_PID" "$BOX_PID"; do
        [[ -n $p ]] && kill -0 "$p" 2>/dev/null && kill -TERM "$p" 2>/dev/null
    done
    for p in "$PG_PID" "$BOX_PID"; do
        [[ -n $p ]] && wait "$p" 2>/dev/null
    done
    [[ -n $NS_BOX ]] && ip netns del "$NS_BOX" 2>/dev/null
    [[ -n $NS_GEN ]] && ip netns del "$NS_GEN" 2>/dev/null
    rm -rf "/var/run/dpdk/$BOXP" "/var/run/dpdk/$PGP"
    ((KEEP)) || rm -rf "$DIR"
    return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# namespaces with IPv6 off (no router solicitations or DAD frames on the wire)
ns_add() {
    ip netns add "$1"
    ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
    ip netns exec "$1" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
}

BOX_RUN=()
PG_RUN=()
if [[ $WIRE == veth ]]; then
    NS_BOX=shr-pg-box-$$
    NS_GEN=shr-pg-gen-$$
    ns_add "$NS_BOX"
    ns_add "$NS_GEN"
    ip link add pgbox netns "$NS_BOX" type veth peer name pggen netns "$NS_GEN"
    ip -n "$NS_BOX" link set pgbox up
    ip -n "$NS_GEN" link set pggen up
    AGG_MAC=$(ip netns exec "$NS_BOX" cat /sys/class/net/pgbox/address)
    BOX_DEV=(--vdev "net_af_packet0,iface=pgbox")
    PG_DEV=(--vdev "net_af_packet0,iface=pggen")
    BOX_RUN=(ip netns exec "$NS_BOX")
    PG_RUN=(ip netns exec "$NS_GEN")
else
    AGG_MAC=02:00:00:00:00:01
    BOX_DEV=(--vdev "net_memif0,role=server,socket=$DIR/memif.sock,mac=$AGG_MAC")
    PG_DEV=(--vdev "net_memif0,role=client,socket=$DIR/memif.sock")
fi

"$GEN" --out "$DIR/traffic.pcap" --config "$DIR/box.ini" --agg-mac "$AGG_MAC" \
    --lanes "$LANES" "${GEN_ARGS[@]}" "${EXTRA[@]}" >"$DIR/pcapgen.out" ||
    die "shouter-pcapgen failed"
cat "$DIR/pcapgen.out"

box_cmd=("$AGG" -l "$BOX_LCORES" --no-huge -m 512 --no-pci --file-prefix "$BOXP" \
    "${BOX_DEV[@]}" -- --config "$DIR/box.ini")
echo "run.sh: the box: ${BOX_RUN[*]} ${box_cmd[*]}"
"${BOX_RUN[@]}" "${box_cmd[@]}" >"$DIR/box.log" 2>&1 &
BOX_PID=$!
for ((i = 0; i < 300; i++)); do
    grep -q "^shouter-agg: ready" "$DIR/box.log" && break
    kill -0 "$BOX_PID" 2>/dev/null || { cat "$DIR/box.log" >&2; die "the box exited"; }
    sleep 0.1
done
grep -q "^shouter-agg: ready" "$DIR/box.log" || die "the box is not ready after 30 s"

# Pktgen needs a terminal (script gives it one); the Lua script takes its settings from
# the environment (ip netns exec and script pass it on)
export SHR_PG_PORT=0 SHR_PG_RATE=$RATE SHR_PG_SECONDS=$SECONDS_ SHR_PG_BOX=$BOXP \
    SHR_PG_STATS=$here/box_stats.py SHR_PG_RESULT=$DIR/result SHR_PG_QUIT=1
: >"$DIR/result"
pg_cmd="$(printf '%q ' "$PKTGEN" -l "$PG_LCORES" -n 1 --no-huge -m "$PG_MEM" --no-pci \
    --file-prefix "$PGP" "${PG_DEV[@]}" -- -P -m 1.0 -s "0:$DIR/traffic.pcap" \
    -f "$here/replay.lua")"
echo "run.sh: Pktgen: ${PG_RUN[*]} script -qfec \"$pg_cmd\" /dev/null"
"${PG_RUN[@]}" timeout $((SECONDS_ + 180)) script -qfec "$pg_cmd" /dev/null \
    >"$DIR/pktgen.log" 2>&1 </dev/null &
PG_PID=$!
wait "$PG_PID" || true
PG_PID=

kill -TERM "$BOX_PID"
wait "$BOX_PID" || true
BOX_PID=
grep "^final:" "$DIR/box.log" | head -n 1 | cut -c 1-300 || true

line=$(grep -a "^shouter-pktgen:" "$DIR/result" | tail -n 1 || true)
if [[ -z $line ]]; then
    echo "run.sh: no result from Pktgen; the end of its output:" >&2
    tail -c 3000 "$DIR/pktgen.log" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' >&2
    exit 1
fi
echo "wire=$WIRE $line"
[[ $line =~ \ rejects=0\  && $line =~ \ rounds=[1-9] ]]
