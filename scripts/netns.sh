#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# A small L2 network of network namespaces on this machine, for the demo, the e2e tests and
# the benchmarks:
#
#   P-agg   (shr0, no kernel IP: the DPDK aggregator owns 198.18.0.1 via af_packet)
#   P-aggK  (the same for box K = 2 .. B with --boxes B: 198.18.0.K; a job sharded over
#            several boxes, issue 10)
#   P-wI    (shr0, 198.18.0.(10+I)/24: worker I)               I = 0 .. N-1
#   P-br    (br0 with ports agg, agg2 .. aggB, w0 .. w(N-1): the veth peers)
#
# Every veth pair is created directly inside its two namespaces, so the interface names are
# the same in every run and never collide with another run's (only the namespace names carry
# the prefix). IPv6 is disabled (no DAD / router solicitations on the wire), TX checksum
# offload is off on every veth (kernel UDP senders must put a full checksum in the frame:
# an af_packet receiver gets the bytes as they are), GRO/GSO off (one datagram per frame).
#
# Usage:
#   netns.sh up N [--boxes B] [--prefix P] [--mtu M]
#            create N workers and B boxes (default 1) (prints "prefix=P" on stdout)
#   netns.sh down [--prefix P]               remove everything of prefix P (idempotent)
#   netns.sh netem LINK|all "QDISC ARGS" [--prefix P]
#            LINK is agg, aggK or wI; "all" is every worker link; "none" removes it. "loss X%"
#            drops IPv4 frames in both directions at the bridge (nftables, in P-br); other
#            netem options go to tc netem on both ends of the link (kernels with sch_netem;
#            DPDK af_packet ports bypass the qdisc unless started with qdisc_bypass=0). The
#            nftables table goes with the last link's loss rules, so that "none" on every
#            link leaves the bridge as "up" made it (no hook): read "drops" before "none".
#   netns.sh kip I on|off [--prefix P]       give worker I's shr0 its kernel IP or take it
#            away (a DPDK worker on af_packet owns the address itself: the kernel must not
#            answer ARP for it nor send ICMP port-unreachable for its traffic)
#   netns.sh drops [--prefix P]              frames dropped by the loss rules: "port dir n"
#   netns.sh mtu M [--prefix P]              set every link's MTU (both ends, and br0) to M,
#            576..9000 (e.g. 3000 for DPDK's af_xdp, which takes frames up to a page)
#   netns.sh list [--prefix P]               the namespaces of prefix P
# The prefix defaults to $SHR_NETNS_PREFIX, else "shr<pid>" (up only); 1..24 letters, digits
# or _ (it is matched in patterns). netem, kip, drops and mtu need the network to exist; an
# interrupted up removes what it made. Exit 2 on a bad command line, 1 on other failures.
set -euo pipefail

NET_LEN=24
IFACE=shr0

die() { echo "netns: $*" >&2; exit 1; }
# a bad command line: exit 2, as every script here
bad_usage() { echo "netns: $*" >&2; exit 2; }

worker_ip() { echo "198.18.0.$((10 + $1))"; }

need_root() {
    [[ $(id -u) -eq 0 ]] || die "must run as root"
    command -v ip >/dev/null || die "ip (iproute2) not found: scripts/deps.sh"
}

# ethtool is optional: without it the offloads stay as they are (veth defaults)
offloads_off() {
    local ns=$1 dev=$2
    if command -v ethtool >/dev/null; then
        ip netns exec "$ns" ethtool -K "$dev" tx off >/dev/null 2>&1 || true
        ip netns exec "$ns" ethtool -K "$dev" gso off gro off tso off >/dev/null 2>&1 || true
    else
        echo "netns: ethtool not found (apt-get install ethtool): offloads left on" >&2
    fi
}

ns_setup() {
    local ns=$1
    ip netns add "$ns"
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
    # the boxes' ports (lanes from 47000, result groups from 48000 and 49000) are never a
    # socket's ephemeral port here: a rank's socket on 0.0.0.0:48100 made its JOIN of a
    # result group on port 48100 fail with EADDRINUSE (a rare failure of python shards)
    ip netns exec "$ns" sysctl -qw net.ipv4.ip_local_reserved_ports=47000-49999
    ip -n "$ns" link set lo up
}

# a veth pair host-ns:shr0 <-> P-br:port, enslaved to br0
link_add() {
    local ns=$1 port=$2 mtu=$3
    ip link add name "$IFACE" netns "$ns" mtu "$mtu" type veth \
        peer name "$port" netns "$PREFIX-br" mtu "$mtu"
    offloads_off "$ns" "$IFACE"
    offloads_off "$PREFIX-br" "$port"
    ip -n "$PREFIX-br" link set "$port" master br0 up
    ip -n "$ns" link set "$IFACE" up
}

cmd_up() {
    local n=$1 mtu=$2 boxes=$3 i
    # no leading 0: bash arithmetic would read 010 as octal 8
    [[ $n =~ ^[1-9][0-9]*$ ]] && ((n <= 200)) || bad_usage "up: N must be 1..200"
    [[ $boxes =~ ^[1-9]$ ]] || bad_usage "up: --boxes must be 1..9"
    [[ $mtu =~ ^[1-9][0-9]*$ ]] && ((mtu >= 576 && mtu <= 9000)) ||
        bad_usage "up: --mtu must be 576..9000"
    if ip netns list | grep "^$PREFIX-" >/dev/null; then
        die "prefix $PREFIX is in use (netns.sh down --prefix $PREFIX)"
    fi
    # anything that fails half way leaves nothing behind, also when interrupted (the EXIT
    # trap sees the signal's status, not the 0 of the last command)
    trap 'rc=$?; ((rc)) && cmd_down; exit $rc' EXIT
    trap 'exit 130' INT TERM HUP
    ns_setup "$PREFIX-br"
    ip -n "$PREFIX-br" link add br0 type bridge stp_state 0 forward_delay 0
    ip -n "$PREFIX-br" link set br0 mtu "$mtu" up 2>/dev/null || ip -n "$PREFIX-br" link set br0 up
    ns_setup "$PREFIX-agg"
    link_add "$PREFIX-agg" agg "$mtu"
    for ((i = 2; i <= boxes; i++)); do
        ns_setup "$PREFIX-agg$i"
        link_add "$PREFIX-agg$i" "agg$i" "$mtu"
    done
    for ((i = 0; i < n; i++)); do
        ns_setup "$PREFIX-w$i"
        link_add "$PREFIX-w$i" "w$i" "$mtu"
        ip -n "$PREFIX-w$i" addr add "$(worker_ip "$i")/$NET_LEN" dev "$IFACE"
    done
    trap - EXIT INT TERM HUP
    echo "prefix=$PREFIX"
}

cmd_down() {
    local ns pids
    for ns in $(ip netns list | awk '{print $1}' |
        grep -E "^$PREFIX-(agg[0-9]*|br|w[0-9]+)$" || true); do
        # processes still inside would keep the veths alive: a caller should have stopped
        # them; say so rather than kill what we did not start
        pids=$(ip netns pids "$ns" 2>/dev/null || true)
        [[ -z $pids ]] || echo "netns: $ns still has processes: $pids" >&2
        ip netns del "$ns" 2>/dev/null || true
    done
    return 0
}

link_ends() {      # LINK -> "hostns hostdev brport"
    case $1 in
    agg) echo "$PREFIX-agg $IFACE agg" ;;
    agg[2-9] | w[0-9]*) echo "$PREFIX-$1 $IFACE $1" ;;
    *) bad_usage "unknown link $1 (agg, aggK, wI, all)" ;;
    esac
}

# Loss goes into an nftables bridge table in P-br (the kernel here has no sch_netem, and a
# rule at the bridge also catches DPDK af_packet ports, whose TX bypasses the qdisc): each
# direction of the link drops IPv4 frames with the given probability. Anything else
# (delay, duplicate, reorder ...) goes to tc netem on both ends of the link, where the kernel
# has it.
NFT_TABLE=shr_loss

nft_ensure() {
    command -v nft >/dev/null || die "nft not found (apt-get install nftables)"
    ip netns exec "$PREFIX-br" nft list table bridge $NFT_TABLE >/dev/null 2>&1 && return 0
    ip netns exec "$PREFIX-br" nft -f - <<EOF
table bridge $NFT_TABLE {
    chain lossy { type filter hook forward priority 0; policy accept; }
}
EOF
}

nft_clear() {      # remove the loss rules of bridge port $1
    local port=$1 h
    command -v nft >/dev/null || return 0
    ip netns exec "$PREFIX-br" nft list table bridge $NFT_TABLE >/dev/null 2>&1 || return 0
    ip netns exec "$PREFIX-br" nft -a list chain bridge $NFT_TABLE lossy |
        awk -v p="\"$port\"" '$2 == p && /handle/ {print $NF}' |
        while read -r h; do
            ip netns exec "$PREFIX-br" nft delete rule bridge $NFT_TABLE lossy handle "$h"
        done
}

netem_one() {
    local link=$1 args=$2 ns dev port loss="" rest="" a ends
    ends=$(link_ends "$link") || exit $?	# (its usage error exits the subshell only)
    read -r ns dev port <<<"$ends"
    ip netns list | grep "^$ns\b" >/dev/null || die "no namespace $ns"
    if [[ $args != none ]]; then
        set -- $args
        while (($#)); do
            if [[ $1 == loss && ${2:-} =~ ^([0-9]+(\.[0-9]+)?)%$ ]]; then
                loss=${BASH_REMATCH[1]}
                shift 2
            else
                rest+="$1 "
                shift
            fi
        done
    fi
    if [[ -n $loss ]] && ! awk -v l="$loss" 'BEGIN {exit !(l <= 100)}'; then
        bad_usage "loss $loss% > 100%"	# before anything of the link changes
    fi
    nft_clear "$port"
    for a in "$ns $dev" "$PREFIX-br $port"; do
        set -- $a
        tc -n "$1" qdisc del dev "$2" root 2>/dev/null || true
    done
    if [[ -n $loss ]]; then
        local ppm
        ppm=$(awk -v l="$loss" 'BEGIN {printf "%d", l * 10000 + 0.5}')
        nft_ensure
        # (numgen's values are 0..999999, and nft takes no "< 1000000": 100% drops all)
        local draw=(numgen random mod 1000000 "<" "$ppm")
        ((ppm < 1000000)) || draw=()
        for a in iifname oifname; do
            ip netns exec "$PREFIX-br" nft add rule bridge $NFT_TABLE lossy $a "$port" \
                ether type ip "${draw[@]}" counter drop
        done
    fi
    if [[ -n $rest ]]; then
        for a in "$ns $dev" "$PREFIX-br $port"; do
            set -- $a
            # shellcheck disable=SC2086
            tc -n "$1" qdisc add dev "$2" root netem $rest ||
                die "tc netem $rest failed (kernel without sch_netem? only loss works then)"
        done
    fi
}

# remove the loss table once no rule is left in it: an empty base chain would still hook
# the bridge's forwarding (a run "without loss rules" would still go through it)
nft_drop_empty() {
    local rules
    command -v nft >/dev/null || return 0
    rules=$(ip netns exec "$PREFIX-br" nft list chain bridge $NFT_TABLE lossy 2>/dev/null) ||
        return 0
    # (the whole listing first: "nft ... | grep -q" under pipefail fails when grep leaves
    # before nft has written everything)
    [[ $rules == *" drop"* ]] && return 0
    ip netns exec "$PREFIX-br" nft delete table bridge $NFT_TABLE
}

cmd_netem() {
    local link=$1 args=$2 w
    command -v tc >/dev/null || die "tc (iproute2) not found"
    if [[ $link == all ]]; then
        for w in $(ip -n "$PREFIX-br" -o link show master br0 | awk -F'[ :@]+' '{print $2}'); do
            [[ $w == agg* ]] || netem_one "$w" "$args"
        done
    else
        netem_one "$link" "$args"
    fi
    nft_drop_empty
}

# dropped-frame counters of the loss rules: "port dir packets" per line
cmd_drops() {
    command -v nft >/dev/null || return 0
    ip netns exec "$PREFIX-br" nft list table bridge $NFT_TABLE >/dev/null 2>&1 || return 0
    ip netns exec "$PREFIX-br" nft list chain bridge $NFT_TABLE lossy |
        awk '/counter packets/ {for (i = 1; i <= NF; i++) if ($i == "packets") print $2, $1, $(i+1)}' |
        tr -d '"'
}

cmd_kip() {
    local i=$1 on=$2 ns=$PREFIX-w$1
    case $on in
    on) ip -n "$ns" addr replace "$(worker_ip "$i")/$NET_LEN" dev "$IFACE" ;;
    off) ip -n "$ns" addr flush dev "$IFACE" ;;
    *) bad_usage "kip: on|off" ;;
    esac
}

# every link's two ends, then the bridge (its MTU may not exceed its ports')
cmd_mtu() {
    local mtu=$1 ns port
    [[ $mtu =~ ^[0-9]+$ ]] && ((mtu >= 576 && mtu <= 9000)) || bad_usage "mtu: M must be 576..9000"
    ip netns list | grep "^$PREFIX-br" >/dev/null || die "mtu: no network of prefix $PREFIX"
    for ns in $(ip netns list | awk '{print $1}' | grep -E "^$PREFIX-(agg[0-9]*|w[0-9]+)$"); do
        port=${ns#"$PREFIX-"}
        ip -n "$ns" link set dev "$IFACE" mtu "$mtu"
        ip -n "$PREFIX-br" link set dev "$port" mtu "$mtu"
    done
    ip -n "$PREFIX-br" link set dev br0 mtu "$mtu"
}

sub=${1:-}
(($#)) && shift
PREFIX=${SHR_NETNS_PREFIX:-}
MTU=9000
BOXES=1
args=()
while (($#)); do
    case $1 in
    --prefix | --mtu | --boxes) (($# >= 2)) || bad_usage "$1: needs a value"
        case $1 in --prefix) PREFIX=$2 ;; --mtu) MTU=$2 ;; --boxes) BOXES=$2 ;; esac
        shift 2 ;;
    --prefix=*) PREFIX=${1#*=}; shift ;;
    --mtu=*) MTU=${1#*=}; shift ;;
    --boxes=*) BOXES=${1#*=}; shift ;;
    *) args+=("$1"); shift ;;
    esac
done
[[ $sub == up ]] && PREFIX=${PREFIX:-shr$$}
# letters, digits and _ only: the prefix is matched in patterns (down --prefix 'shr.*' would
# take every run's namespaces)
if [[ -n $PREFIX && ! $PREFIX =~ ^[A-Za-z0-9_]{1,24}$ ]]; then
    bad_usage "bad prefix '$PREFIX' (1..24 letters, digits or _)"
fi
# the commands on a network: it must exist (a wrong prefix applied nothing, and said 0)
have_net() {
    ip netns list | awk '{print $1}' | grep -x "$PREFIX-br" >/dev/null ||
        die "$sub: no network of prefix '$PREFIX' (netns.sh up ... --prefix $PREFIX)"
}
case $sub in
up)
    need_root
    ((${#args[@]} == 1)) || bad_usage "usage: netns.sh up N [--boxes B] [--prefix P] [--mtu M]"
    cmd_up "${args[0]}" "$MTU" "$BOXES"
    ;;
down)
    need_root
    [[ -n $PREFIX ]] || bad_usage "down: --prefix P (or SHR_NETNS_PREFIX) needed"
    cmd_down
    ;;
netem)
    need_root
    [[ -n $PREFIX ]] || bad_usage "netem: --prefix P needed"
    ((${#args[@]} == 2)) || bad_usage "usage: netns.sh netem LINK|all \"loss 1% ...\"|none --prefix P"
    have_net
    cmd_netem "${args[0]}" "${args[1]}"
    ;;
kip)
    need_root
    [[ -n $PREFIX ]] || bad_usage "kip: --prefix P needed"
    ((${#args[@]} == 2)) || bad_usage "usage: netns.sh kip I on|off --prefix P"
    [[ ${args[0]} =~ ^(0|[1-9][0-9]{0,2})$ ]] || bad_usage "kip: I must be a worker index"
    have_net
    cmd_kip "${args[0]}" "${args[1]}"
    ;;
drops)
    [[ -n $PREFIX ]] || bad_usage "drops: --prefix P needed"
    need_root
    have_net
    cmd_drops
    ;;
mtu)
    need_root
    [[ -n $PREFIX ]] || bad_usage "mtu: --prefix P needed"
    ((${#args[@]} == 1)) || bad_usage "usage: netns.sh mtu M --prefix P"
    have_net
    cmd_mtu "${args[0]}"
    ;;
list)
    [[ -n $PREFIX ]] || bad_usage "list: --prefix P needed"
    ip netns list | awk '{print $1}' | grep -E "^$PREFIX-(agg[0-9]*|br|w[0-9]+)$" || true
    ;;
*)
    sed -n '/^# Usage:/,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
