-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 The shouter authors
--
-- Pktgen-DPDK script: replay a shouter-pcapgen pcap into a shouter-agg box at a set rate for
-- a set time, read Pktgen's port counters and rates and the box's counters (its telemetry
-- socket, through box_stats.py), and print ONE result line:
--
--   shouter-pktgen: rate_pct=100 secs=10.00 offered_mpps=.. pktgen_rate_mpps=..
--     rx_back_mpps=.. box_rx=.. rounds=.. rounds_per_s=.. results_per_s=.. rejects=..
--     box_tx_drop=.. box_imissed=..
--
-- (on one line). offered_mpps: frames Pktgen sent over the wall time between start and stop;
-- pktgen_rate_mpps: the mean of Pktgen's own per-second tx rate ("rate" stats) after the
-- first second; rx_back_mpps: what came back (the box's RESULTs); rounds: rounds the box
-- completed (msg_completed); results_per_s: frames the box sent a second; rejects: frames
-- the box refused (0 for valid traffic).
--
-- Pktgen loads the pcap itself (`-s 0:FILE`); this script is `-f replay.lua`. Settings come
-- from the environment (Pktgen passes no arguments to a script):
--   SHR_PG_PORT     Pktgen port list to send on (default "0")
--   SHR_PG_RATE     tx rate, percent of the port's link speed (default 100)
--   SHR_PG_SECONDS  how long to send (default 10)
--   SHR_PG_BOX      the box's EAL --file-prefix (required: its telemetry socket)
--   SHR_PG_STATS    the helper that prints the box's counters (default: box_stats.py next
--                   to this script)
--   SHR_PG_RESULT   also write the result line to this file (Pktgen's terminal output is
--                   mixed with escape codes)
--   SHR_PG_QUIT     1 (default): quit Pktgen when done; 0: stay at its prompt
-- scripts/pktgen/run.sh sets them all.

local shr = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "shouter.lua")

local port = os.getenv("SHR_PG_PORT") or "0"
local rate = tonumber(os.getenv("SHR_PG_RATE") or "100")
local secs = tonumber(os.getenv("SHR_PG_SECONDS") or "10")
local box = os.getenv("SHR_PG_BOX")
local stats = os.getenv("SHR_PG_STATS") or shr.dir .. "box_stats.py"
local result = os.getenv("SHR_PG_RESULT")
local pid = tonumber(port:match("^(%d+)"))

local function fail(msg)
	shr.emit("shouter-pktgen: error: " .. msg, result)
	if os.getenv("SHR_PG_QUIT") ~= "0" then
		pktgen.quit()
	end
	error(msg)
end

if rate == nil or rate <= 0 or rate > 100 then
	fail("SHR_PG_RATE must be a percent in (0, 100], got " .. tostring(os.getenv("SHR_PG_RATE")))
end
if secs == nil or secs < 1 then
	fail("SHR_PG_SECONDS must be 1 or more, got " .. tostring(os.getenv("SHR_PG_SECONDS")))
end
if box == nil or box == "" then
	fail("SHR_PG_BOX must name the box's --file-prefix")
end
if pid == nil then
	fail("SHR_PG_PORT must be a port number, got " .. port)
end

pktgen.screen("off")
pktgen.stop(port)
pktgen.pcap(port, "on")
pktgen.set(port, "rate", rate)
pktgen.set(port, "count", 0)
pktgen.clr()

local b0, err = shr.box_counters(stats, box)
if b0 == nil then
	fail(err)
end
local p0 = pktgen.portStats(port, "port")[pid]
local t0 = shr.now()
pktgen.start(port)
-- send for secs of wall time (a delay can last longer than asked on a busy machine),
-- sampling Pktgen's own per-second rate after each second but the first (the ramp-up)
local sum, samples, i = 0, 0, 0
while shr.now() - t0 < secs do
	pktgen.delay(math.max(10, math.min(1000, math.floor((secs - (shr.now() - t0)) * 1000))))
	i = i + 1
	local r = pktgen.portStats(port, "rate")[pid]
	if i > 1 then
		sum = sum + r.pkts_tx
		samples = samples + 1
	end
end
pktgen.stop(port)
local t1 = shr.now()
-- the frames in flight are counted once the box's rx count stops moving (bounded: a box
-- that is gone ends it); Pktgen's counters are read after that, its last burst in them
local b1 = shr.box_settle(stats, box)
if b1 == nil then
	fail("the box's counters are gone after the run")
end
local p1 = pktgen.portStats(port, "port")[pid]

local dt = t1 - t0
local tx = p1.opackets - p0.opackets
local rx = p1.ipackets - p0.ipackets
local d = shr.delta(b0, b1)
shr.emit(string.format("shouter-pktgen: rate_pct=%g secs=%.2f offered_mpps=%.4f "
	.. "pktgen_rate_mpps=%.4f rx_back_mpps=%.4f tx=%d box_rx=%d rounds=%d rounds_per_s=%.0f "
	.. "results_per_s=%.0f rejects=%d box_tx_drop=%d box_imissed=%d",
	rate, dt, tx / dt / 1e6, samples > 0 and sum / samples / 1e6 or 0, rx / dt / 1e6, tx,
	d.rx_pkts, d.msg_completed, d.msg_completed / dt, d.tx_pkts / dt, d.rejects, d.tx_drop,
	d.port_imissed), result)
if os.getenv("SHR_PG_QUIT") ~= "0" then
	pktgen.quit()
end
