#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# The loss emulator of scripts/netns.sh (netem LINK "loss X%" | none, drops), which every
# lossy test and bench.sh's loss figure rely on: three worker links, ROUNDS rounds of
#   - loss on w0, w1, w2 one by one: two rules per link (both directions), each counted;
#   - w1 back to none: its two rules gone, the others' still there;
#   - every link back to none: no nftables table left in the bridge's namespace (a bench run
#     "without the loss rules" goes through no hook);
# and, once, "loss 0%": the rules in place, dropping nothing while frames cross the bridge
# (ping from w0 to w1), where "loss 100%" drops them. Needs root; skips (77) without it.
#
#   netns_loss.sh [--rounds N]
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
NETNS=$top/scripts/netns.sh
rounds=20
while (($#)); do
    case $1 in
    --rounds) rounds=$2; shift 2 ;;
    *) echo "netns_loss.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ $(id -u) -eq 0 ]] || { echo "SKIP: needs root"; exit 77; }
command -v nft >/dev/null || { echo "SKIP: no nft"; exit 77; }

P=nl$$
trap '"$NETNS" down --prefix "$P" >/dev/null 2>&1 || true' EXIT
"$NETNS" up 3 --prefix "$P" --mtu 1500 >/dev/null

fail=0
bad() { echo "FAIL: $*"; fail=1; }
# rules: the "port dir" of every loss rule, sorted, on one line
rules() { "$NETNS" drops --prefix "$P" | awk '{print $1 "/" $2}' | sort | tr '\n' ' '; }
# the loss tables in the bridge namespace (nft must answer: a failure is not "no table")
table() {
    local t
    t=$(ip netns exec "$P-br" nft list tables) || { echo "nft failed"; return; }
    grep -c shr_loss <<<"$t" || true
}

for ((r = 1; r <= rounds; r++)); do
    for i in 0 1 2; do "$NETNS" netem "w$i" "loss 5%" --prefix "$P"; done
    got=$(rules)
    [[ $got == "w0/iifname w0/oifname w1/iifname w1/oifname w2/iifname w2/oifname " ]] ||
        bad "round $r: loss on w0-w2: rules '$got'"
    "$NETNS" netem w1 none --prefix "$P"
    got=$(rules)
    [[ $got == "w0/iifname w0/oifname w2/iifname w2/oifname " ]] ||
        bad "round $r: w1 at none: rules '$got'"
    "$NETNS" netem all none --prefix "$P"
    [[ $(table) == 0 ]] || bad "round $r: every link at none, the loss table is still there"
    ((fail == 0)) || break
done

# loss 0%: rules that run and drop nothing; loss 100%: the same path, everything dropped
for i in 0 1; do "$NETNS" kip "$i" on --prefix "$P"; done
w1_ip=$(ip -n "$P-w1" -4 -o addr show dev shr0 | awk '{split($4, a, "/"); print a[1]}')
sent() { ip netns exec "$P-w0" ping -c 5 -i 0.05 -W 1 "$w1_ip" >/dev/null 2>&1; }
dropped() { "$NETNS" drops --prefix "$P" | awk '{s += $3} END {print s + 0}'; }
"$NETNS" netem all "loss 0%" --prefix "$P"
sent || bad "loss 0%: ping from w0 to w1 failed"
n=$(dropped)
((n == 0)) || bad "loss 0%: $n frames dropped"
[[ $(rules) == "w0/iifname w0/oifname w1/iifname w1/oifname w2/iifname w2/oifname " ]] ||
    bad "loss 0%: rules '$(rules)'"
"$NETNS" netem all "loss 100%" --prefix "$P"
! sent || bad "loss 100%: ping from w0 to w1 got through"
n=$(dropped)
((n > 0)) || bad "loss 100%: nothing dropped"
"$NETNS" netem all none --prefix "$P"
[[ $(table) == 0 ]] || bad "after loss 100% and none: the loss table is still there"

# bad input touches nothing: a prefix that is a pattern, a network that is not there, a
# count with a leading 0 (bash reads 010 as 8)
Q=nq$$
if "$NETNS" down --prefix 'nl.*' 2>/dev/null; then bad "down --prefix 'nl.*' was taken"; fi
[[ -n $("$NETNS" list --prefix "$P") ]] || bad "down --prefix 'nl.*' took this run's network"
if "$NETNS" netem all "loss 5%" --prefix "$Q" 2>/dev/null; then
    bad "netem on a prefix with no network said nothing"
fi
if "$NETNS" drops --prefix "$Q" 2>/dev/null; then bad "drops of no network said nothing"; fi
if "$NETNS" up 010 --prefix "$Q" 2>/dev/null; then bad "up 010 was taken"; fi
[[ -z $("$NETNS" list --prefix "$Q") ]] || bad "up 010 made namespaces"
# an up interrupted half way leaves nothing behind: TERM once its third worker exists
trap '"$NETNS" down --prefix "$P" >/dev/null 2>&1 || true
      "$NETNS" down --prefix "$Q" >/dev/null 2>&1 || true' EXIT
"$NETNS" up 60 --prefix "$Q" --mtu 1500 >/dev/null 2>&1 &
upid=$!
for ((i = 0; i < 300; i++)); do
    ip netns list | awk '{print $1}' | grep -x "$Q-w2" >/dev/null && break
    kill -0 "$upid" 2>/dev/null || break
    sleep 0.05
done
kill -TERM "$upid" 2>/dev/null || true
rc=0
wait "$upid" || rc=$?
((rc != 0)) || bad "up of 60 workers ended 0 before TERM reached it (make it longer)"
[[ -z $("$NETNS" list --prefix "$Q") ]] ||
    bad "up interrupted: left $("$NETNS" list --prefix "$Q" | wc -l) namespaces"

if ((fail)); then
    exit 1
fi
echo "PASS: loss rules per link and direction, removed link by link, no table at none" \
    "($rounds rounds); loss 0% drops nothing, loss 100% everything; bad prefixes, an" \
    "interrupted up"
