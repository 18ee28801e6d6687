-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 The shouter authors
--
-- Wireshark / tshark dissector for the shouter wire protocol (lib/proto/shr_proto.h, the byte
-- diagram there; the admission block: lib/auth/shr_auth.h). Decodes header versions 2 (64
-- bytes, what the box speaks) and 1 (48 bytes, older captures), every field and flag, the
-- slot version bit, the round kind, root, aux (as the block scale, a destination rank or a
-- status, per type and kind), the token or nonce, the payload per dtype, the admission block
-- of a JOIN / JOIN_ACK, and checks the CRC32C. Every reason the box would refuse the frame
-- that can be seen from the frame alone (shr_proto_validate()'s checks, in its order, and the
-- box's own checks of type, op and kind) is an expert item, and the first one is the field
-- shouter.refused (the box's reason name, as in its reject_<reason> counters).
--
-- Use:  tshark -X lua_script:scripts/wireshark/shouter.lua -r capture.pcapng
--       or copy it to ~/.local/lib/wireshark/plugins/ (Wireshark: Help > About > Folders).
-- Registered on UDP ports 47000-47007 (preference shouter.ports) and, for any other port, as
-- a heuristic (magic 0x5348 and header version 1 or 2). Written for Wireshark 4.0 (Lua 5.2).

local p = Proto("shouter", "shouter in-network aggregation")

local HDR2 = 64		-- SHR_PROTO_HDR_LEN
local HDR1 = 48		-- version 1
local ADM_LEN = 48	-- SHR_PROTO_ADM_LEN
local RANK_ALL = 0xffff
local MAX_WORLD = 4096

local types = { [1] = "DATA", [2] = "RESULT", [3] = "JOIN", [4] = "JOIN_ACK", [5] = "LEAVE",
		[6] = "LEAVE_ACK", [7] = "ABORT" }
local dtypes = { [1] = "int32", [2] = "float32", [3] = "float16", [4] = "bfloat16",
		 [5] = "qint32" }
local esizes = { [1] = 4, [2] = 4, [3] = 2, [4] = 2, [5] = 4 }
local ops = { [0] = "sum", [1] = "min", [2] = "max", [3] = "prod" }
local kinds = { [0] = "allreduce", [1] = "reduce", [2] = "reduce_scatter", [3] = "broadcast",
		[4] = "allgather", [5] = "gather", [6] = "scatter", [7] = "alltoall" }
local errnos = { [0] = "ok", [1] = "EPERM", [2] = "ENOENT", [12] = "ENOMEM", [13] = "EACCES",
		 [17] = "EEXIST", [22] = "EINVAL", [28] = "ENOSPC", [71] = "EPROTO",
		 [90] = "EMSGSIZE", [98] = "EADDRINUSE", [103] = "ECONNABORTED",
		 [108] = "ESHUTDOWN", [110] = "ETIMEDOUT", [115] = "EINPROGRESS",
		 [116] = "ESTALE", [122] = "EDQUOT", [125] = "ECANCELED", [126] = "ENOKEY" }
local crc_status = { [0] = "Bad", [1] = "Good", [2] = "Unverified" }

local pf = {
	magic = ProtoField.uint16("shouter.magic", "Magic", base.HEX),
	version = ProtoField.uint8("shouter.version", "Header version", base.DEC),
	type = ProtoField.uint8("shouter.type", "Type", base.DEC, types),
	dtype = ProtoField.uint8("shouter.dtype", "Dtype", base.DEC, dtypes),
	op = ProtoField.uint8("shouter.op", "Op", base.DEC, ops),
	rank = ProtoField.uint16("shouter.rank", "Rank", base.DEC),
	job = ProtoField.uint32("shouter.job", "Job", base.DEC),
	slot_word = ProtoField.uint32("shouter.slot_word", "Slot word", base.HEX),
	ver = ProtoField.uint32("shouter.ver", "Slot version (V)", base.DEC, nil, 0x80000000),
	slot = ProtoField.uint32("shouter.slot", "Slot", base.DEC, nil, 0x7fffffff),
	count = ProtoField.uint32("shouter.count", "Element count", base.DEC),
	flags = ProtoField.uint16("shouter.flags", "Flags", base.HEX),
	f_retx = ProtoField.bool("shouter.flags.retx", "RETX (retransmission)", 16, nil, 0x0001),
	f_last = ProtoField.bool("shouter.flags.last", "LAST (last chunk of its tensor)", 16, nil,
				 0x0002),
	f_nopay = ProtoField.bool("shouter.flags.nopayload", "NOPAYLOAD (header only)", 16, nil,
				  0x0004),
	f_repro = ProtoField.bool("shouter.flags.repro", "REPRO (reproducible job)", 16, nil,
				  0x0008),
	f_group = ProtoField.bool("shouter.flags.group", "GROUP (JOIN: can take results at a "
				  .. "result group; JOIN_ACK: the job's group is in feedback, root)",
				  16, nil, 0x0040),
	f_unknown = ProtoField.uint16("shouter.flags.unknown", "Undefined flag bits", base.HEX,
				      nil, 0xfff0),
	world = ProtoField.uint16("shouter.world", "World size", base.DEC),
	tensor = ProtoField.uint32("shouter.tensor", "Tensor id", base.DEC),
	step = ProtoField.uint32("shouter.step", "Step", base.DEC),
	offset = ProtoField.uint64("shouter.offset", "Element offset", base.DEC),
	aux = ProtoField.uint32("shouter.aux", "Aux", base.DEC),
	scale = ProtoField.int32("shouter.scale", "Block scale s (qint32: value = q * 2^-s)",
				 base.DEC),
	dest = ProtoField.uint16("shouter.dest", "Destination rank", base.DEC),
	status = ProtoField.uint32("shouter.status", "Status", base.DEC, errnos),
	kind = ProtoField.uint8("shouter.kind", "Kind", base.DEC, kinds),
	reserved = ProtoField.uint8("shouter.reserved", "Reserved", base.HEX),
	root = ProtoField.uint16("shouter.root", "Root", base.DEC),
	token = ProtoField.uint64("shouter.token", "Token", base.HEX),
	nonce = ProtoField.uint64("shouter.nonce", "Nonce", base.HEX),
	feedback = ProtoField.uint32("shouter.feedback", "Feedback", base.DEC),
	crc = ProtoField.uint32("shouter.crc", "CRC32C", base.HEX),
	crc_calc = ProtoField.uint32("shouter.crc.computed", "CRC32C computed", base.HEX),
	crc_status = ProtoField.uint8("shouter.crc.status", "CRC32C status", base.DEC, crc_status),
	payload = ProtoField.bytes("shouter.payload", "Payload"),
	e_int32 = ProtoField.int32("shouter.int32", "int32", base.DEC),
	-- doubles, so that every float32 value is shown exactly (a float field shows 6 digits)
	e_float32 = ProtoField.double("shouter.float32", "float32"),
	e_float16 = ProtoField.double("shouter.float16", "float16"),
	e_bfloat16 = ProtoField.double("shouter.bfloat16", "bfloat16"),
	e_qint32 = ProtoField.int32("shouter.qint32", "qint32", base.DEC),
	e_qvalue = ProtoField.double("shouter.qvalue", "qint32 value (q * 2^-s)"),
	adm = ProtoField.bytes("shouter.adm", "Admission block"),
	adm_epoch = ProtoField.uint32("shouter.adm.epoch", "Challenge epoch", base.DEC),
	adm_mac = ProtoField.bytes("shouter.adm.mac", "Challenge MAC"),
	adm_proof = ProtoField.bytes("shouter.adm.proof", "Proof (HMAC-SHA256)"),
	refused = ProtoField.string("shouter.refused", "The box refuses it"),
}
local list = {}
for _, v in pairs(pf) do
	list[#list + 1] = v
end
p.fields = list
local f = pf

local ef = {
	short = ProtoExpert.new("shouter.short", "Shorter than the header (box: short)",
				expert.group.MALFORMED, expert.severity.ERROR),
	magic = ProtoExpert.new("shouter.bad_magic", "Magic is not 0x5348 (box: bad_magic)",
				expert.group.MALFORMED, expert.severity.ERROR),
	version = ProtoExpert.new("shouter.bad_version", "Header version the box does not speak",
				  expert.group.PROTOCOL, expert.severity.ERROR),
	type = ProtoExpert.new("shouter.bad_type", "Type, kind or reserved byte refused",
			       expert.group.PROTOCOL, expert.severity.ERROR),
	dtype = ProtoExpert.new("shouter.bad_dtype", "Unknown dtype (box: bad_dtype)",
				expert.group.PROTOCOL, expert.severity.ERROR),
	op = ProtoExpert.new("shouter.bad_op", "Op refused (box: bad_op)",
			     expert.group.PROTOCOL, expert.severity.ERROR),
	len = ProtoExpert.new("shouter.bad_len", "Payload length refused (box: bad_len)",
			      expert.group.MALFORMED, expert.severity.ERROR),
	crc = ProtoExpert.new("shouter.bad_crc", "CRC32C mismatch (box: bad_crc)",
			      expert.group.CHECKSUM, expert.severity.ERROR),
	kind = ProtoExpert.new("shouter.bad_kind", "Kind, root, destination or payload do not "
			       .. "fit together (box: bad_kind)", expert.group.PROTOCOL,
			       expert.severity.ERROR),
	rank = ProtoExpert.new("shouter.bad_rank", "Rank or world size refused (box: bad_rank)",
			       expert.group.PROTOCOL, expert.severity.ERROR),
	count = ProtoExpert.new("shouter.job_count", "Element count 0 (box: job_count)",
				expert.group.PROTOCOL, expert.severity.ERROR),
	token = ProtoExpert.new("shouter.bad_token", "JOIN without a nonce (box: bad_token)",
				expert.group.PROTOCOL, expert.severity.ERROR),
	flags = ProtoExpert.new("shouter.undefined_flags", "Undefined flag bits set",
				expert.group.PROTOCOL, expert.severity.WARN),
	unverified = ProtoExpert.new("shouter.crc_unverified", "Frame truncated: CRC32C not "
				     .. "verified", expert.group.CHECKSUM, expert.severity.NOTE),
	status = ProtoExpert.new("shouter.status_error", "The box refused or aborted",
				 expert.group.RESPONSE_CODE, expert.severity.NOTE),
}
p.experts = { ef.short, ef.magic, ef.version, ef.type, ef.dtype, ef.op, ef.len, ef.crc, ef.kind,
	      ef.rank, ef.count, ef.token, ef.flags, ef.unverified, ef.status }

p.prefs.ports = Pref.range("UDP ports", "47000-47007", "The box's UDP ports (base port and "
			   .. "its lanes)", 65535)
p.prefs.max_elems = Pref.uint("Elements shown", 64, "Payload elements decoded into the tree "
			      .. "per message (0: all)")
p.prefs.box_ports_only = Pref.bool("Types refused by direction", true, "Flag RESULT, JOIN_ACK, "
				   .. "LEAVE_ACK and ABORT sent to a box port from another port "
				   .. "(the box refuses them: bad_type)")

-- CRC32C (Castagnoli, reflected 0x82f63b78, init and final xor 0xffffffff), in Lua 5.2's bit32
local band, bxor, rshift, lshift = bit32.band, bit32.bxor, bit32.rshift, bit32.lshift
local crc_tab = {}
for i = 0, 255 do
	local c = i
	for _ = 1, 8 do
		if band(c, 1) ~= 0 then
			c = bxor(rshift(c, 1), 0x82f63b78)
		else
			c = rshift(c, 1)
		end
	end
	crc_tab[i] = c
end

local function crc32c_update(crc, s)
	local n = #s
	local i = 1
	while i <= n do
		local j = math.min(i + 255, n)
		local bytes = { string.byte(s, i, j) }
		for k = 1, #bytes do
			crc = bxor(rshift(crc, 8), crc_tab[band(bxor(crc, bytes[k]), 0xff)])
		end
		i = j + 1
	end
	return crc
end

local function half_to_number(h)
	local sign = band(h, 0x8000) ~= 0 and -1 or 1
	local e = band(rshift(h, 10), 0x1f)
	local m = band(h, 0x3ff)
	if e == 0 then
		return sign * m * 2 ^ -24
	elseif e == 31 then
		if m == 0 then
			return sign * math.huge
		end
		return 0 / 0
	end
	return sign * (1 + m / 1024) * 2 ^ (e - 15)
end

local function bf16_to_number(b)
	local sign = band(b, 0x8000) ~= 0 and -1 or 1
	local e = band(rshift(b, 7), 0xff)
	local m = band(b, 0x7f)
	if e == 0 then
		return sign * m * 2 ^ -133
	elseif e == 255 then
		if m == 0 then
			return sign * math.huge
		end
		return 0 / 0
	end
	return sign * (1 + m / 128) * 2 ^ (e - 127)
end

local function errname(v)
	return errnos[v] or tostring(v)
end

-- The static part of the box's agg_kind_ok(), with the header's world (the box refuses a
-- world other than the job's as bad_rank first).
local function kind_ok(kind, root, aux, rank, world, header_only)
	if kind == 0 then
		return root == 0 and not header_only
	end
	if root >= world then
		return false
	end
	if kind < 3 then
		return not header_only
	end
	if aux == RANK_ALL then
		if kind ~= 3 and kind ~= 4 then
			return false
		end
	elseif aux >= world or aux == root or kind == 3 or kind == 4 then
		return false
	end
	return header_only == (rank ~= root)
end

local function dissect_payload(tvb, tree, hoff, plen, dtype, kind, aux, ver2)
	local esize = esizes[dtype]
	-- a capture's snap length may have cut the payload: decode what was captured
	local avail = math.min(plen, tvb:len() - hoff)
	local pt = tree:add(f.payload, tvb(hoff, avail))
	if esize == nil then
		return
	end
	local n = math.floor(avail / esize)
	local max = p.prefs.max_elems
	local shown = n
	if max ~= 0 and n > max then
		shown = max
	end
	local scale = nil
	if dtype == 5 and (not ver2 or kind < 3) then
		scale = aux >= 0x80000000 and aux - 0x100000000 or aux
	end
	for i = 0, shown - 1 do
		local r = tvb(hoff + i * esize, esize)
		if dtype == 1 then
			pt:add_le(f.e_int32, r)
		elseif dtype == 2 then
			pt:add(f.e_float32, r, r:le_float())
		elseif dtype == 3 then
			pt:add(f.e_float16, r, half_to_number(r:le_uint()))
		elseif dtype == 4 then
			pt:add(f.e_bfloat16, r, bf16_to_number(r:le_uint()))
		else
			local q = r:le_int()
			local it = pt:add_le(f.e_qint32, r)
			if scale ~= nil then
				local v = q * 2 ^ (-scale)
				it:append_text(string.format(" (x 2^-%d = %.9g)", scale, v))
				pt:add(f.e_qvalue, r, v):set_generated()
			end
		end
	end
	if shown < n then
		pt:add(tvb(hoff + shown * esize, (n - shown) * esize),
		       string.format("[%d more elements; preference shouter.max_elems]", n - shown))
	end
	pt:append_text(string.format(" (%d x %s)", n, dtypes[dtype]))
end

local function dissect(tvb, pinfo, tree)
	local len = tvb:reported_length_remaining()
	local caplen = tvb:len()
	pinfo.cols.protocol = "SHOUTER"
	local t = tree:add(p, tvb(), "shouter")
	local refused = nil
	local function refuse(e, name, text)
		t:add_proto_expert_info(e, text .. " (box: " .. name .. ")")
		if refused == nil then
			refused = name
		end
	end
	if len < HDR1 or caplen < 4 then
		refuse(ef.short, "short", string.format("%d bytes, shorter than a header", len))
		t:add(f.refused, refused):set_generated()
		pinfo.cols.info = "shouter, short"
		return len
	end
	t:add(f.magic, tvb(0, 2))
	if tvb(0, 2):uint() ~= 0x5348 then
		refuse(ef.magic, "bad_magic", "magic is not 0x5348")
		t:add(f.refused, refused):set_generated()
		pinfo.cols.info = "shouter, bad magic"
		return len
	end
	local version = tvb(2, 1):uint()
	t:add(f.version, tvb(2, 1))
	local hlen = version == 1 and HDR1 or HDR2
	local ver2 = version ~= 1
	if version ~= 2 then
		-- the box speaks version 2 only; version 1 is decoded with its own layout
		local text = string.format("header version %d, the box speaks 2", version)
		refuse(ef.version, "bad_version", text)
		if version ~= 1 then
			t:add(f.refused, refused):set_generated()
			pinfo.cols.info = string.format("shouter, version %d", version)
			return len
		end
	end
	if len < hlen then
		refuse(ef.short, "short",
		       string.format("%d bytes, shorter than a version %d header", len,
				     version))
		t:add(f.refused, refused):set_generated()
		return len
	end
	if caplen < hlen then
		-- the capture cut the header (snap length): nothing to say about the message
		t:add_proto_expert_info(ef.unverified, string.format("capture cut the header "
								   .. "at %d bytes", caplen))
		pinfo.cols.info = "shouter, header cut by the capture's snap length"
		return len
	end
	t:set_len(hlen)

	local type = tvb(3, 1):uint()
	local dtype = tvb(4, 1):uint()
	local op = tvb(5, 1):uint()
	local rank = tvb(6, 2):uint()
	local job = tvb(8, 4):uint()
	local slotw = tvb(12, 4):uint()
	local count = tvb(16, 4):uint()
	local flags = tvb(20, 2):uint()
	local world = tvb(22, 2):uint()
	local aux = tvb(40, 4):uint()
	local kind, reserved, root = 0, 0, 0
	if ver2 then
		kind = tvb(44, 1):uint()
		reserved = tvb(45, 1):uint()
		root = tvb(46, 2):uint()
	end
	local plen = len - hlen
	local header_only = band(flags, 0x0004) ~= 0
	local tname = types[type] or string.format("type %d", type)

	local ti = t:add(f.type, tvb(3, 1))
	local dti = t:add(f.dtype, tvb(4, 1))
	local opi = t:add(f.op, tvb(5, 1))
	if type == 5 or type == 6 or type == 4 or type == 7 then
		-- control messages: dtype and op are plain fields (ABORT EPROTO: op = the open
		-- round's kind)
		if type == 7 and aux == 71 then
			opi:append_text(" (EPROTO: the open round's kind: "
					.. (kinds[op] or "?") .. ")")
		end
	end
	local ri = t:add(f.rank, tvb(6, 2))
	if rank == RANK_ALL then
		ri:append_text(" (all: SHR_PROTO_RANK_ALL)")
	end
	t:add(f.job, tvb(8, 4))
	local st = t:add(f.slot_word, tvb(12, 4))
	st:add(f.ver, tvb(12, 4))
	local si = st:add(f.slot, tvb(12, 4))
	if type == 3 then
		si:append_text(" (window asked for; 0: the box's default)")
	elseif type == 4 then
		si:append_text(" (window granted)")
	elseif type == 7 and aux == 71 then
		si:append_text(" (a member of the open round)")
	end
	local ci = t:add(f.count, tvb(16, 4))
	if type == 3 then
		ci:append_text(" (elements per chunk asked for; 0: auto)")
	elseif type == 4 then
		ci:append_text(" (elements per chunk granted)")
	end
	local ft = t:add(f.flags, tvb(20, 2))
	ft:add(f.f_retx, tvb(20, 2))
	ft:add(f.f_last, tvb(20, 2))
	ft:add(f.f_nopay, tvb(20, 2))
	ft:add(f.f_repro, tvb(20, 2))
	local unknown = band(flags, 0xfff0)
	if type == 3 or type == 4 then
		ft:add(f.f_group, tvb(20, 2))
		unknown = band(unknown, 0xffbf)
	end
	ft:add(f.f_unknown, tvb(20, 2))
	if unknown ~= 0 and not (type == 7 and aux == 71) then
		ft:add_proto_expert_info(ef.flags)
	end
	t:add(f.world, tvb(22, 2))
	local tni = t:add(f.tensor, tvb(24, 4))
	if type == 4 then
		tni:append_text(" (lanes: the box's consecutive UDP ports)")
	end
	t:add(f.step, tvb(28, 4))
	local oi = t:add(f.offset, tvb(32, 8))
	if ver2 and (type == 4 or type == 7) then
		-- JOIN_ACK, and the ABORT that answers a JOIN: the JOIN's nonce echoed
		if type == 4 then
			oi:append_text(" (the JOIN's nonce, echoed)")
			t:add(f.nonce, tvb(32, 8)):set_generated()
		end
	elseif ver2 and type == 5 and tvb(32, 8):uint64() ~= UInt64(0) then
		-- LEAVE: the nonce of the leaving process's JOIN (0: not given)
		oi:append_text(" (the leaving process's JOIN nonce)")
		t:add(f.nonce, tvb(32, 8)):set_generated()
	end

	-- aux, per type and kind
	local ai = t:add(f.aux, tvb(40, 4))
	if type == 1 or type == 2 then
		if dtype == 5 and (not ver2 or kind < 3) then
			ai:add(f.scale, tvb(40, 4)):set_generated()
		elseif ver2 and kind >= 3 and kind < 8 then
			local di = ai:add(f.dest, tvb(42, 2), band(aux, 0xffff))
			di:set_generated()
			if aux == RANK_ALL then
				di:append_text(" (every rank but the source)")
			end
		end
	elseif type == 4 or type == 6 or type == 7 then
		local s = ai:add(f.status, tvb(40, 4))
		s:set_generated()
		-- EINPROGRESS (still filling) and ENOKEY (a challenge) are steps of a JOIN
		if aux ~= 0 and not (type == 4 and (aux == 115 or aux == 126)) then
			s:add_proto_expert_info(ef.status, tname .. " " .. errname(aux))
		end
	end

	if ver2 then
		t:add(f.kind, tvb(44, 1))
		t:add(f.reserved, tvb(45, 1))
		t:add(f.root, tvb(46, 2))
		if type == 3 then
			t:add(f.nonce, tvb(48, 8))
		else
			t:add(f.token, tvb(48, 8))
		end
		local fi = t:add(f.feedback, tvb(56, 4))
		if type == 3 then
			fi:append_text(" (largest chunk the member's path carries; 0: not known)")
		elseif type == 4 and aux == 115 then
			fi:append_text(" ms (the box waits that long for the other ranks)")
		elseif type == 4 and aux == 90 then
			fi:append_text(" (largest chunk that fits)")
		end
	end
	local crcoff = hlen - 4
	local crc_item = t:add(f.crc, tvb(crcoff, 4))

	-- shr_proto_validate()'s checks, in its order; then the box's own (lib/agg)
	if type == 0 or type >= 8 then
		refuse(ef.type, "bad_type", string.format("unknown type %d", type))
	end
	if ver2 and kind >= 8 then
		refuse(ef.type, "bad_type", string.format("kind %d unknown", kind))
	end
	if ver2 and reserved ~= 0 then
		refuse(ef.type, "bad_type",
		       string.format("reserved byte 45 is %d, not 0", reserved))
	end
	if (type == 1 or type == 2 or type == 3) and esizes[dtype] == nil then
		refuse(ef.dtype, "bad_dtype", string.format("unknown dtype %d", dtype))
		dti:add_proto_expert_info(ef.dtype)
	end
	if (type == 1 or type == 2) and op >= 4 then
		refuse(ef.op, "bad_op", string.format("unknown op %d", op))
	end
	if type == 1 or type == 2 then
		local esize = esizes[dtype]
		if header_only then
			if plen ~= 0 then
				refuse(ef.len, "bad_len", string.format("header-only (NOPAYLOAD) "
								.. "with %d payload bytes", plen))
			elseif ver2 and kind == 0 then
				refuse(ef.len, "bad_len", "header-only (NOPAYLOAD) allreduce")
			end
		elseif esize ~= nil and count * esize ~= plen then
			refuse(ef.len, "bad_len",
			       string.format("%d payload bytes, count %d x %d = %d", plen, count,
					     esize, count * esize))
		end
	elseif type == 3 or type == 4 then
		if plen ~= 0 and plen ~= ADM_LEN then
			refuse(ef.len, "bad_len",
			       string.format("%d payload bytes: none or the %d of the admission "
					     .. "block", plen, ADM_LEN))
		end
	elseif type >= 5 and type <= 7 and plen ~= 0 then
		refuse(ef.len, "bad_len", string.format("%s with %d payload bytes", tname, plen))
	end

	-- CRC32C over header bytes 0..hlen-5 and the payload
	local stored = tvb(crcoff, 4):uint()
	if caplen < len then
		t:add(f.crc_status, 2):set_generated()
		crc_item:add_proto_expert_info(ef.unverified)
	else
		local c = crc32c_update(0xffffffff, tvb:raw(0, crcoff))
		if plen > 0 then
			c = crc32c_update(c, tvb:raw(hlen, plen))
		end
		c = bxor(c, 0xffffffff)
		t:add(f.crc_calc, c):set_generated()
		if c == stored then
			crc_item:append_text(" [correct]")
			t:add(f.crc_status, 1):set_generated()
		else
			crc_item:append_text(string.format(" [incorrect, should be 0x%08x]", c))
			t:add(f.crc_status, 0):set_generated()
			refuse(ef.crc, "bad_crc", string.format("CRC32C 0x%08x, computed 0x%08x",
							      stored, c))
		end
	end

	-- the box's own checks of what it receives (lib/agg): types only it sends, an op the
	-- dtype has not (qint32 PROD), rank/world and kind
	-- to the box: to one of its ports from a port that is not one (a DPDK worker sends from
	-- the base port too, so a message between two box ports has no known direction)
	local function box_port(port)
		for r in string.gmatch(tostring(p.prefs.ports), "[^,]+") do
			local lo, hi = r:match("^%s*(%d+)%s*-%s*(%d+)%s*$")
			if lo == nil then
				lo = r:match("^%s*(%d+)%s*$")
				hi = lo
			end
			if lo ~= nil and port >= tonumber(lo) and port <= tonumber(hi) then
				return true
			end
		end
		return false
	end
	local to_box = box_port(pinfo.dst_port) and not box_port(pinfo.src_port)
	if p.prefs.box_ports_only and to_box and (type == 2 or type == 4 or type == 6 or
						   type == 7) then
		refuse(ef.type, "bad_type", tname .. " sent to a box port: only the box sends it")
	end
	if (type == 1 or type == 2) and dtype == 5 and op == 3 then
		refuse(ef.op, "bad_op", "qint32 has no PROD")
	end
	if type == 1 or type == 3 or type == 5 then
		if world == 0 or world > MAX_WORLD or rank >= world then
			refuse(ef.rank, "bad_rank", string.format("rank %d, world %d", rank, world))
			ri:add_proto_expert_info(ef.rank)
		end
	end
	if type == 1 then
		if count == 0 then
			refuse(ef.count, "job_count", "DATA of 0 elements")
		end
		if ver2 and kind < 8 and rank < world and
		   not kind_ok(kind, root, aux, rank, world, header_only) then
			refuse(ef.kind, "bad_kind",
			       string.format("%s root %d aux %d from rank %d%s", kinds[kind], root,
					     aux, rank, header_only and ", header only" or ""))
		end
	end
	if type == 3 and ver2 and tvb(48, 8):uint64() == UInt64(0) then
		refuse(ef.token, "bad_token", "JOIN without a nonce")
	end

	-- payload
	if plen > 0 and caplen > hlen then
		if (type == 3 or type == 4) and plen == ADM_LEN and caplen >= hlen + ADM_LEN then
			local at = t:add(f.adm, tvb(hlen, ADM_LEN))
			at:add(f.adm_epoch, tvb(hlen, 4))
			at:add(f.adm_mac, tvb(hlen + 4, 12))
			at:add(f.adm_proof, tvb(hlen + 16, 32))
			if type == 4 then
				at:append_text(" (challenge)")
			else
				at:append_text(" (challenge and proof)")
			end
		elseif type == 1 or type == 2 then
			dissect_payload(tvb, t, hlen, plen, dtype, kind, aux, ver2)
		else
			t:add(f.payload, tvb(hlen, math.min(plen, caplen - hlen)))
		end
	end
	if refused ~= nil then
		t:add(f.refused, refused):set_generated()
	end

	-- summary
	local info = tname .. " job " .. job
	if rank == RANK_ALL then
		info = info .. " rank all"
	else
		info = info .. " rank " .. rank
	end
	if type == 1 or type == 2 then
		info = info .. string.format(" slot %d v%d off %s n %d %s %s",
					     band(slotw, 0x7fffffff), rshift(slotw, 31),
					     tostring(tvb(32, 8):uint64()), count,
					     dtypes[dtype] or "?", ops[op] or "?")
		if ver2 and kind ~= 0 then
			info = info .. " " .. (kinds[kind] or "?") .. " root " .. root
		end
		if header_only then
			info = info .. " header-only"
		end
	elseif type == 3 then
		info = info .. string.format(" world %d window %d chunk %d", world,
					     band(slotw, 0x7fffffff), count)
		if plen == ADM_LEN then
			info = info .. " +proof"
		end
	elseif type == 4 or type == 6 or type == 7 then
		info = info .. " " .. errname(aux)
		if type == 4 and plen == ADM_LEN then
			info = info .. " +challenge"
		end
	end
	if version == 1 then
		info = info .. " [v1]"
	end
	if refused ~= nil then
		info = info .. " [refused: " .. refused .. "]"
	end
	pinfo.cols.info = info
	t:append_text(string.format(", %s v%d", tname, version))
	return len
end

function p.dissector(tvb, pinfo, tree)
	return dissect(tvb, pinfo, tree)
end

local function heuristic(tvb, pinfo, tree)
	if tvb:len() < HDR1 or tvb(0, 2):uint() ~= 0x5348 then
		return false
	end
	local v = tvb(2, 1):uint()
	if v ~= 1 and v ~= 2 then
		return false
	end
	dissect(tvb, pinfo, tree)
	pinfo.conversation = p
	return true
end

local udp_port = DissectorTable.get("udp.port")
local registered = nil

local function register_ports()
	if registered ~= nil then
		udp_port:remove(registered, p)
	end
	registered = p.prefs.ports
	udp_port:add(registered, p)
end

function p.prefs_changed()
	register_ports()
end

register_ports()
p:register_heuristic("udp", heuristic)
