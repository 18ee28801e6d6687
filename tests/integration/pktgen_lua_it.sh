#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# scripts/pktgen/replay.lua without Pktgen-DPDK (suite 'integration', no root): lua5.3 runs
# it against a stand-in of Pktgen's Lua API (only the calls and fields Pktgen 23.06 has:
# app/lpktgenlib.c; any other call is an error) and a stand-in of box_stats.py (a box whose
# counters grow while "Pktgen" sends), and the one result line must hold the figures the
# stand-ins imply: frames sent, rounds completed, rejects, and the port set up as asked.
#
#   pktgen_lua_it.sh LUA SCRIPTS_DIR
set -euo pipefail

LUA=$1
SRC=$2
DIR=$(mktemp -d /tmp/shr-pglua.XXXXXX)
trap 'rm -rf "$DIR"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# the box: it has received 500 frames, then one for every 250 "Pktgen" sent (the file
# 'sent'); a round per 4 frames, one RESULT frame per round; 7 frames refused before the run
cat >"$DIR/box.py" <<'PY'
import os, sys, time
d = os.path.dirname(os.path.abspath(__file__))
assert sys.argv[1] == "fakebox", sys.argv
sent = int(open(d + "/sent").read()) if os.path.exists(d + "/sent") else 0
rx = 500 + sent // 250
print("t=%.6f lcores=1 rx_pkts=%d tx_pkts=%d tx_drop=0 msg_completed=%d rejects=%d "
      "port_imissed=0" % (time.monotonic(), rx, rx // 4, rx // 4, 7))
PY

cat >"$DIR/pktgen.lua" <<'LUA'
-- Pktgen 23.06's Lua API as replay.lua may use it; any other name is an error
local dir = os.getenv("SHR_T_DIR")
local sent, sending, calls = 0, false, {}
local function portlist(p)
	assert(type(p) == "string" and p:match("^%d+$"), "a port list is a string: " .. tostring(p))
end
local function put(name, v)
	local f = assert(io.open(dir .. "/" .. name, "w"))
	f:write(tostring(v))
	f:close()
end
local api = {
	screen = function(s) assert(s == "off" or s == "on") end,
	pcap = function(p, s) portlist(p); assert(s == "on"); calls.pcap = true end,
	set = function(p, what, v)
		portlist(p)
		assert(({ rate = 1, count = 1, size = 1, burst = 1 })[what], "set " .. what)
		calls[what] = v
	end,
	clr = function() end,
	start = function(p) portlist(p); sending = true end,
	stop = function(p) portlist(p); sending = false end,
	delay = function(ms)
		os.execute("sleep " .. ms / 1000)
		if sending then
			sent = sent + 250 * ms
			put("sent", sent)
		end
	end,
	quit = function() calls.quit = true end,
	portStats = function(p, kind)
		portlist(p)
		local t = { ipackets = sent // 4, opackets = sent, ibytes = 0, obytes = 0,
			ierrors = 0, oerrors = 0, rx_nombuf = 0, imissed = 0 }
		if kind == "rate" then
			t.pkts_tx, t.pkts_rx = 250000, 62500
			t.mbits_tx, t.mbits_rx = 0, 0
		else
			assert(kind == "port", "portStats " .. tostring(kind))
		end
		return { [tonumber(p)] = t, n = 1 }
	end,
}
pktgen = setmetatable({}, { __index = function(_, k)
	return api[k] or error("pktgen." .. k .. " is not in Pktgen 23.06's Lua API")
end })
dofile(os.getenv("SHR_T_SCRIPT"))
assert(calls.pcap and calls.rate == 37 and calls.count == 0 and calls.quit,
	"the port was not set up as asked")
LUA

export SHR_T_DIR=$DIR SHR_T_SCRIPT=$SRC/replay.lua SHR_PG_PORT=0 SHR_PG_RATE=37 \
    SHR_PG_SECONDS=3 SHR_PG_BOX=fakebox SHR_PG_STATS=$DIR/box.py SHR_PG_RESULT=$DIR/result
"$LUA" "$DIR/pktgen.lua" >"$DIR/out" 2>&1 || fail "replay.lua: $(cat "$DIR/out")"
line=$(cat "$DIR/result")
echo "$line"
[[ $(wc -l <"$DIR/result") == 1 ]] || fail "not one result line"
# "Pktgen" sent 250 frames a ms of delay asked for, the box received one in 250 of them
# (a round per 4), its rejects counter unchanged (7 before and after); the script sent for
# at least the 3 s asked (wall time), and every rate is its count over that time. Nothing
# here depends on how long a delay really lasts.
for want in "rate_pct=37 " " rejects=0 " " pktgen_rate_mpps=0.2500 " " box_tx_drop=0 " \
    " box_imissed=0"; do
    [[ $line == *"$want"* ]] || fail "no '$want' in: $line"
done
val() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$line"; }
tx=$(val tx)
rx=$(val box_rx)
rounds=$(val rounds)
[[ -n $tx && -n $rx && -n $rounds ]] || fail "missing figures in: $line"
((tx > 0 && tx % 250 == 0)) || fail "tx=$tx, want a multiple of 250: $line"
((rx == tx / 250)) || fail "box_rx=$rx, want tx/250 = $((tx / 250)): $line"
((rounds == (500 + rx) / 4 - 125)) || fail "rounds=$rounds, want $(((500 + rx) / 4 - 125))"
awk -v secs="$(val secs)" -v tx="$tx" -v r="$rounds" -v o="$(val offered_mpps)" \
    -v rps="$(val rounds_per_s)" -v res="$(val results_per_s)" 'BEGIN {
        exit !(secs >= 3 && (o - tx / secs / 1e6) ^ 2 < 1e-8 &&
               (rps - r / secs) ^ 2 <= 1 && (res - r / secs) ^ 2 <= 1) }' ||
    fail "rates are not the counts over secs: $line"
grep -q "^shouter-pktgen: rate_pct=" "$DIR/out" || fail "the line is not on stdout"

# a box that cannot be read: one error line, Pktgen told to quit, exit non-zero
export SHR_PG_BOX=nobox SHR_PG_RESULT=$DIR/result2
if "$LUA" "$DIR/pktgen.lua" >"$DIR/out2" 2>&1; then
    fail "a box that cannot be read did not fail the script"
fi
grep -q "^shouter-pktgen: error: no counters from the box 'nobox'" "$DIR/result2" ||
    fail "no error line: $(cat "$DIR/out2")"
echo "PASS pktgen_lua"
