-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 The shouter authors
--
-- Helpers of the Pktgen-DPDK script replay.lua (it loads this file with dofile): the box's
-- counters through box_stats.py, wall-clock time, differences of counters, and the result
-- line. Plain Lua 5.3: nothing here calls Pktgen, so it also runs under lua5.3.

local M = {}

-- the directory of this file, with its trailing '/'
M.dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"

local function quote(s)
	return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- Parse "k=v k=v ..." into a table of numbers.
function M.parse(line)
	local t = {}

	for k, v in line:gmatch("([%w_]+)=([%d%.]+)") do
		t[k] = tonumber(v)
	end
	return t
end

-- The box's counters (/shouter/stats) and the time they were read (field t, seconds), or
-- nil and the reason.
function M.box_counters(helper, prefix)
	local p = io.popen("/usr/bin/python3 " .. quote(helper) .. " " .. quote(prefix) .. " 2>&1")
	local line = p:read("*l") or ""

	p:close()
	local t = M.parse(line)
	if t.t == nil or t.rx_pkts == nil then
		return nil, "no counters from the box '" .. prefix .. "': " .. line
	end
	return t
end

-- Seconds since boot (/proc/uptime: monotonic, 10 ms steps), without a process.
function M.now()
	local f = assert(io.open("/proc/uptime", "r"))
	local v = f:read("*n")

	f:close()
	return v
end

-- The box's counters once its rx count stops moving: two reads 200 ms apart that agree
-- (at most 25 reads), or nil when the box cannot be read.
function M.box_settle(helper, prefix)
	local prev = M.box_counters(helper, prefix)

	for _ = 1, 25 do
		if prev == nil then
			return nil
		end
		os.execute("sleep 0.2")
		local cur = M.box_counters(helper, prefix)
		if cur ~= nil and cur.rx_pkts == prev.rx_pkts and cur.tx_pkts == prev.tx_pkts then
			return cur
		end
		prev = cur
	end
	return prev
end

-- b - a for every counter of b (a counter missing from a counts from 0).
function M.delta(a, b)
	local d = {}

	for k, v in pairs(b) do
		d[k] = v - (a[k] or 0)
	end
	setmetatable(d, { __index = function() return 0 end })
	return d
end

-- Print the line (flushed, on a line of its own among Pktgen's output) and, when path is
-- given, write it to that file too.
function M.emit(line, path)
	io.write("\n" .. line .. "\n")
	io.flush()
	if path ~= nil and path ~= "" then
		local f = io.open(path, "a")
		if f ~= nil then
			f:write(line .. "\n")
			f:close()
		end
	end
end

return M
