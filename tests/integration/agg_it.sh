#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Integration tests of shouter-agg (suite 'integration'): EAL with --no-huge -m 512 --no-pci,
# virtual devices only, a --file-prefix of its own per run; everything it starts and writes
# is removed on exit (agg_it_lib.sh, which agg_cli_it.sh, the checks of the command lines of
# shouter-agg and shouter-pcapgen, sources too).
#
#   agg_it.sh pcap GEN CHECK [shouter-pcapgen options] [-- shouter-agg options]
#       shouter-pcapgen writes IN (and a matching INI, unless --join), shouter-agg replays it
#       through --vdev net_pcap0,rx_pcap=IN,tx_pcap=OUT; once every frame is in,
#       /shouter/stats must show the counts shouter-pcapgen expects (msg_data, msg_completed,
#       rounds_<kind> for the traffic's --kind and 0 for the others, ...), and check_pcap
#       checks OUT.
#   agg_it.sh pcap2 GEN CHECK [shouter-pcapgen options] [-- shouter-agg options]
#       as pcap, on two data lcores (EAL -l 0-1; give --lanes 2 or more): net_pcap with two
#       queues, every frame of IN on queue 0 (queue 1's rx pcap has no frame), so that lcore 0
#       hands the DATA of lcore 1's lanes to lcore 1; /shouter/stats must also show DATA
#       handed over (lane_fwd), none dropped, and none taken by an lcore that does not own
#       its lane's port (lane_foreign 0), and /shouter/lcores both lcores having summed DATA,
#       their counters adding up to /shouter/stats' (tel.py lcores); the two tx pcaps are
#       merged in time order for check_pcap.
#   agg_it.sh pcap-secret GEN CHECK [shouter-pcapgen options] [-- shouter-agg options]
#       as pcap, the box requiring an admission secret (--secret-file of a 32-byte file, mode
#       0600, written here): every JOIN is challenged (for --forged-join).
#   agg_it.sh afpacket GEN CHECK [shouter-pcapgen options] [-- shouter-agg options]
#       the same over a real kernel path: shouter-agg on net_af_packet on one end of a veth
#       pair (its own network namespace), afp_replay.py sending IN and capturing OUT on the
#       other end. Needs root (skips with 77 otherwise). Zero-copy fan-out is exercised here:
#       af_packet accepts multi-segment tx, net_pcap does not.
#   agg_it.sh lossy GEN CHECK [shouter-pcapgen options] [-- shouter-agg options]
#       as pcap, for traffic with --lossy --leave (duplicates, late copies, DATA retransmitted
#       after its round completed, every rank's LEAVE at the end): once every frame of IN is
#       in, /shouter/stats must show the counts shouter-pcapgen expects (resent, duplicates, stale,
#       rounds_<kind>, ...; nothing refused), /shouter/jobs the job with nobody joined, and
#       /shouter/pool the idle level (no header mbuf in use, at most one payload mbuf per data
#       lcore: the spare zero-copy keeps for the next result, the job's slots only);
#       check_pcap then requires the one resend to the rank that asked, with the exact result
#       (header-only to a rank that is not the round's destination, with --kind), a LEAVE_ACK
#       to every rank, and no ABORT at shutdown (nobody is left to tell). Runs without root.
#   agg_it.sh idle GEN
#       traffic ends an idle spell (--idle-us 50 --idle-after-us 2000000, two data lcores):
#       net_pcap's queue 0 reads a FIFO, whose frames the test writes only once data lcore 1
#       (queue 1: an empty capture) has been idle long enough to sleep; lcore 0 hands lane
#       1's DATA to it, and from then on lcore 1 must not sleep for 2 s (its sleeps, read
#       once every DATA is summed and again, do not grow; a host so slow that 2 s passed
#       meanwhile hides a fault, it cannot make one up).
#   agg_it.sh config GEN CHECK
#       the shipped config/shouter-agg.ini, as shipped but for its commented `token =` line
#       (a replay cannot learn a token): job 1's four ranks (the `addrs =` list) replayed
#       through net_pcap get exact results (check_pcap); /shouter/jobs has both jobs as the
#       INI says, /shouter/lcores agrees with /shouter/stats, idle_us = 0 never sleeps; then
#       idle_us = 50 (and --idle-us 50 on the command line) sleeps once idle (idle_sleeps)
#       with the same exact results, its lcore's timer slack 1 us; --idle-after-us 60000000
#       has not slept by the time every frame is handled; and on net_ring (multi-segment tx)
#       `zerocopy = 1` fans out by chaining, `zerocopy = 0` by copying (/shouter/stats
#       zerocopy).
#   agg_it.sh limits GEN CHECK
#       --max-world and --max-jobs at the JOIN: a JOIN of world 4 under --max-world 3 is
#       refused (JOIN_ACK EINVAL to each rank, reject_bad_rank, no job), under --max-world 4
#       makes the job; with --max-jobs 1 taken by a static job, a new job's JOINs are refused
#       (JOIN_ACK ENOSPC, reject_jobs_full), with --max-jobs 2 the job is made.
#   agg_it.sh upstream
#       a tree box (--upstream) on net_pcap, hearing nothing: all it sends are ARP requests
#       (broadcast, from its MAC and address) for its upstream's address, without which the
#       tree never forms; never for its own.
#   agg_it.sh bench [LANES [CHUNK]]  --bench-mpps 1 runs, checks itself, prints its figures
#   agg_it.sh bench_signal  SIGTERM in --bench-mpps's kernels ends it at once, exit 1, no figures
#   agg_it.sh simd      the CRC32C the box names at start: the best this CPU has (/proc/cpuinfo)
#       without EAL's --force-max-simd-bitwidth and with 512; with 256 no AVX-512 folding, with
#       64 not the three streams either (their combine is 128-bit PCLMULQDQ)
#
# The aggregator is $SHR_BUILD/app/shouter-agg (SHR_BUILD: the build directory).

set -u

# shellcheck source=tests/integration/agg_it_lib.sh
source "$(dirname "$0")/agg_it_lib.sh"

QUEUES=1
SECRET=0

# prepare GEN [gen options...]: writes $DIR/in.pcap and $DIR/agg.ini; sets FRAMES, CFG
prepare() {
    local gen=$1
    shift
    GEN_ARGS=("$@")
    local ini=$DIR/agg.ini
    "$gen" --out "$DIR/in.pcap" --config "$ini" --arp --icmp "${GEN_ARGS[@]}" >"$DIR/gen.out" ||
        fail "shouter-pcapgen ${GEN_ARGS[*]}"
    FRAMES=$(sed -n 's/^frames=\([0-9]*\) .*/\1/p' "$DIR/gen.out")
    [[ -n $FRAMES ]] || fail "shouter-pcapgen printed no frame count"
    echo "shouter-pcapgen ${GEN_ARGS[*]}: $FRAMES frames"
    CFG=(--config "$ini")
    # with --join, the INI's [job.N] has no addresses (ranks bind on JOIN) and configures
    # the incarnation token the replayed DATA carries (a replay cannot learn it)
}

# merge_pcap OUT IN...: the frames of every IN (the tx pcaps of one net_pcap device: one
# clock) in time order, as one wire would have carried them
merge_pcap() {
    /usr/bin/python3 - "$@" <<'EOF' || fail "merge_pcap $*"
import struct
import sys

out, frames, head = sys.argv[1], [], None
for n, path in enumerate(sys.argv[2:]):
    data = open(path, "rb").read()
    if len(data) < 24 or (head is not None and data[:24] != head):
        sys.exit("%s: not a pcap like the others" % path)
    head, off = data[:24], 24
    end = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    while off < len(data):
        sec, frac, cap, _ = struct.unpack(end + "IIII", data[off:off + 16])
        frames.append(((sec, frac, n, off), data[off:off + 16 + cap]))
        off += 16 + cap
with open(out, "wb") as f:
    f.write(head)
    for _, rec in sorted(frames, key=lambda x: x[0]):
        f.write(rec)
EOF
}

mode_pcap() {
    local gen=$1 check=$2 gargs=() aargs=() expect i dev
    shift 2
    while (($#)); do
        if [[ $1 == -- ]]; then shift; aargs=("$@"); break; fi
        gargs+=("$1")
        shift
    done
    prepare "$gen" "${gargs[@]}"
    read -r -a expect < <(sed -n 's/^expect //p' "$DIR/gen.out")
    ((${#expect[@]} != 0)) || fail "shouter-pcapgen printed no expected counts"
    if ((SECRET)); then
        # the box requires it of every job (a regular file of 16..64 bytes, its owner's only)
        (umask 077 && printf 'the-admission-secret-0123456789\n' >"$DIR/agg.key") ||
            fail "cannot write $DIR/agg.key"
        aargs=(--secret-file "$DIR/agg.key" "${aargs[@]}")
    fi
    dev=net_pcap0,rx_pcap=$DIR/in.pcap,tx_pcap=$DIR/out.pcap
    if ((QUEUES == 2)); then
        # queue 1 receives nothing (a pcap of no frame): lcore 0 takes every frame and hands
        # the DATA of lcore 1's lanes to it; each queue sends into a pcap of its own
        head -c 24 "$DIR/in.pcap" >"$DIR/none.pcap"
        dev=net_pcap0,rx_pcap=$DIR/in.pcap,rx_pcap=$DIR/none.pcap
        dev+=,tx_pcap=$DIR/out0.pcap,tx_pcap=$DIR/out1.pcap
        # two data lcores; DATA handed over, each to the lcore that owns its lane's port
        expect+=(lcores=2 "lane_fwd>=1" lane_drop=0 lane_foreign=0)
    fi
    start_agg -- --vdev "$dev" -- "${CFG[@]}" --stats 1 "${aargs[@]}"
    # wait until every frame of IN has been received (the stats line counts them)
    for ((i = 0; i < 300; i++)); do
        grep -q "^stats: rx=$FRAMES " "$DIR/agg.log" && break
        sleep 0.1
    done
    grep -q "^stats: rx=$FRAMES " "$DIR/agg.log" ||
        fail "shouter-agg did not receive $FRAMES frames"
    # counted as shouter-pcapgen says: DATA, rounds completed, and rounds per kind (rounds_<kind>,
    # every round of the traffic's --kind, none of another)
    # (port_ipackets: the device's own count of frames in: every one of IN, those the box
    # drops unanswered too; not its count of frames out, which is fewer where it drops some)
    wait_tel /shouter/stats "rx_pkts=$FRAMES" "port_ipackets=$FRAMES" "${expect[@]}"
    if ((QUEUES == 2)); then
        # each lcore summed DATA of its own lanes (lcore 1 those handed over by lcore 0), and
        # every counter of /shouter/stats is the sum of the lcores'
        for i in 0 1; do
            [[ $(tel_get /shouter/lcores "$i/msg_data") =~ ^[1-9][0-9]*$ ]] ||
                fail "lcore $i summed no DATA: $(tel_get /shouter/lcores "$i")"
        done
        /usr/bin/python3 "$(dirname "$0")/tel.py" "$PREFIX" lcores || fail "/shouter/lcores"
    fi
    stop_agg
    grep -q "^final:.*rx_pkts=$FRAMES " "$DIR/agg.log" || fail "final rx_pkts is not $FRAMES"
    ((QUEUES == 1)) || merge_pcap "$DIR/out.pcap" "$DIR/out0.pcap" "$DIR/out1.pcap"
    # stopped with SIGTERM: the members were told (an ABORT each, the last frames)
    "$check" --in "$DIR/out.pcap" "${gargs[@]}" --arp --icmp --shutdown ||
        fail "check_pcap ${gargs[*]}"
    echo "PASS pcap ${gargs[*]} ${aargs[*]}"
}

# idle GEN: traffic ends an idle spell (see the header)
mode_idle() {
    local gen=$1 after=2000000 rc=0 wpid
    prepare "$gen" --ranks 2 --dtype int32 --window 8 --rounds 2 --lanes 2
    /usr/bin/python3 -c 'import struct, sys; open(sys.argv[1], "wb").write(struct.pack(
        "<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))' "$DIR/empty.pcap" ||
        fail "cannot write $DIR/empty.pcap"
    mkfifo "$DIR/in.fifo" || fail "mkfifo"
    # the writer: the capture's header at once (net_pcap reads it at start), its frames once
    # lcore 1 sleeps; then lcore 1's sleeps, read before and after, from one connection
    /usr/bin/python3 - "$(dirname "$0")" "$PREFIX" "$DIR/in.fifo" "$DIR/in.pcap" "$after" \
        "$(sed -n 's/^expect msg_data=\([0-9]*\) .*/\1/p' "$DIR/gen.out")" \
        >"$DIR/writer.log" 2>&1 <<'PY' &
import sys, time
sys.path.insert(0, sys.argv[1])
import tel
prefix, fifo, pcap, after_s, data = sys.argv[2], sys.argv[3], sys.argv[4], \
    int(sys.argv[5]) / 1e6, int(sys.argv[6])
frames = open(pcap, "rb").read()
with open(fifo, "wb", buffering=0) as f:
    f.write(frames[:24])
    end = time.monotonic() + 30
    while True:
        try:
            sock, maxlen = tel.connect(prefix)
            lc = tel.query(sock, maxlen, "/shouter/lcores")
            if lc and lc["1"]["idle_sleeps"] >= 1:
                break
            sock.close()
        except (OSError, ValueError, KeyError, TypeError):
            pass
        if time.monotonic() > end:
            sys.exit("lcore 1 never slept")
        time.sleep(0.1)
    print("lcore 1 idle: %d sleeps" % lc["1"]["idle_sleeps"])
    t_write = time.monotonic()
    f.write(frames[24:])
# every DATA summed, lcore 1's handed to it: its sleeps then
while True:
    lc = tel.query(sock, maxlen, "/shouter/lcores")
    if lc["0"]["msg_data"] + lc["1"]["msg_data"] == data:
        break
    if time.monotonic() > t_write + 30:
        sys.exit("the DATA were not all summed: %s" % lc)
    time.sleep(0.01)
s1 = lc["1"]["idle_sleeps"]
time.sleep(0.2)     # well within the 2 s: an lcore that sleeps at once has slept by then
lc = tel.query(sock, maxlen, "/shouter/lcores")
t2, s2 = time.monotonic(), lc["1"]["idle_sleeps"]
print("lcore 1: msg_data %d, idle_sleeps %d then %d, %.3f s after the traffic"
      % (lc["1"]["msg_data"], s1, s2, t2 - t_write))
if lc["1"]["msg_data"] == 0:
    sys.exit("lcore 1 summed no DATA")
if t2 - t_write >= after_s:
    print("(slow host: %.1f s since the traffic, no conclusion)" % (t2 - t_write))
elif s2 != s1:
    sys.exit("lcore 1 slept %d times within %.3f s of its traffic (--idle-after-us %.0f s)"
             % (s2 - s1, t2 - t_write, after_s))
PY
    wpid=$!
    WRITER_PID=$wpid
    LCORES=0-1
    start_agg -- --vdev "net_pcap0,rx_pcap=$DIR/in.fifo,rx_pcap=$DIR/empty.pcap,\
tx_pcap=$DIR/out0.pcap,tx_pcap=$DIR/out1.pcap" -- "${CFG[@]}" --idle-us 50 \
        --idle-after-us "$after"
    wait "$wpid" || rc=$?
    WRITER_PID=
    cat "$DIR/writer.log"
    ((rc == 0)) || fail "idle: $(tail -n 1 "$DIR/writer.log")"
    stop_agg
    echo "PASS idle"
}

mode_lossy() {
    local gen=$1 check=$2 gargs=() aargs=() expect window job lcores
    shift 2
    while (($#)); do
        if [[ $1 == -- ]]; then shift; aargs=("$@"); break; fi
        gargs+=("$1")
        shift
    done
    prepare "$gen" "${gargs[@]}"
    read -r -a expect < <(sed -n 's/^expect //p' "$DIR/gen.out")
    ((${#expect[@]} != 0)) || fail "shouter-pcapgen printed no expected counts"
    window=$(sed -n 's/^window = //p' "$DIR/agg.ini")
    job=$(sed -n 's/^\[job\.\([0-9]*\)\]$/\1/p' "$DIR/agg.ini")
    [[ -n $window && -n $job ]] || fail "no job in $DIR/agg.ini"
    start_agg -- --vdev "net_pcap0,rx_pcap=$DIR/in.pcap,tx_pcap=$DIR/out.pcap" -- \
        "${CFG[@]}" "${aargs[@]}"
    # every frame in and counted as shouter-pcapgen says (the counters only grow: once they all
    # hold, every frame has been handled), nothing refused
    wait_tel /shouter/stats "rx_pkts=$FRAMES" "${expect[@]}" rejects=0 msg_aborts=0 tx_drop=0
    lcores=$(/usr/bin/python3 "$(dirname "$0")/tel.py" "$PREFIX" get /shouter/stats lcores)
    [[ $lcores =~ ^[0-9]+$ ]] || fail "/shouter/stats has no lcores: $lcores"
    # every rank left: the job is still there (static), with nobody joined
    wait_tel /shouter/jobs "$job/joined=0" "$job/active=0"
    # back to idle: what the box holds with no traffic
    wait_tel /shouter/pool "slots_used=$window" hdr_mbufs_in_use=0 "pkt_mbufs_in_use<=$lcores"
    stop_agg
    grep -q "^final:.*rx_pkts=$FRAMES " "$DIR/agg.log" || fail "final rx_pkts is not $FRAMES"
    # no --shutdown: every rank left, so nobody is told of the shutdown
    "$check" --in "$DIR/out.pcap" "${gargs[@]}" --arp --icmp || fail "check_pcap ${gargs[*]}"
    echo "PASS lossy ${gargs[*]} ${aargs[*]}"
}

mode_afpacket() {
    local gen=$1 check=$2 gargs=() aargs=()
    shift 2
    while (($#)); do
        if [[ $1 == -- ]]; then shift; aargs=("$@"); break; fi
        gargs+=("$1")
        shift
    done
    if ((EUID != 0)); then
        echo "SKIP: needs root for network namespaces"
        exit 77
    fi
    local ifa=shrita$$ ifb=shritb$$ mac
    NS_A=shrit$$a
    NS_B=shrit$$b
    # as root, namespaces must work (the e2e suite needs them too): a failure is a failure
    { ip netns add "$NS_A" && ip netns add "$NS_B"; } || fail "ip netns add failed (as root)"

    ip link add "$ifa" netns "$NS_A" type veth peer name "$ifb" netns "$NS_B" ||
        fail "veth pair"
    local ns
    for ns in "$NS_A" "$NS_B"; do
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
    done
    ip -n "$NS_A" link set "$ifa" up || fail "link up"
    ip -n "$NS_B" link set "$ifb" up || fail "link up"
    mac=$(ip netns exec "$NS_A" cat "/sys/class/net/$ifa/address")
    prepare "$gen" --agg-mac "$mac" "${gargs[@]}"
    start_agg ip netns exec "$NS_A" -- --vdev "net_af_packet0,iface=$ifa" -- \
        "${CFG[@]}" "${aargs[@]}"
    ip netns exec "$NS_B" /usr/bin/python3 "$(dirname "$0")/afp_replay.py" "$ifb" \
        "$DIR/in.pcap" "$DIR/out.pcap" --from "$mac" || fail "afp_replay.py"
    stop_agg
    "$check" --in "$DIR/out.pcap" --agg-mac "$mac" "${gargs[@]}" --arp --icmp ||
        fail "check_pcap ${gargs[*]}"
    echo "PASS afpacket ${gargs[*]} ${aargs[*]}"
}

# shipped_ini OUT [sed expressions...]: config/shouter-agg.ini with its token line on, edited
shipped_ini() {
    local out=$1 src
    shift
    src=$(dirname "$0")/../../config/shouter-agg.ini
    [[ -f $src ]] || fail "no $src"
    sed -e 's/^;token = /token = /' "$@" "$src" >"$out"
    grep -q '^token = 0x7368725f72706c79$' "$out" || fail "the shipped INI has no token line"
}

# config_run NAME INI [agg options]: job 1's traffic through net_pcap, exact results
config_run() {
    local name=$1 ini=$2
    shift 2
    start_agg -- --vdev "net_pcap0,rx_pcap=$DIR/in.pcap,tx_pcap=$DIR/$name.pcap" -- \
        --config "$ini" "$@"
    wait_tel /shouter/stats "rx_pkts=$FRAMES" msg_completed=256 rejects=0 tx_drop=0
    # the INI's jobs: 1 static on its addrs list, active at once; 2 waits for JOINs
    wait_tel /shouter/jobs 1/world=4 1/dtype=int32 1/window=128 1/chunk_elems=256 1/static=1 \
        1/active=1 2/world=2 2/dtype=float32 2/window=64 2/active=0
    # a job id as the parameter: that job alone; no such job, or not an id: an error (null)
    [[ $(tel_get /shouter/jobs,2 2/world) == 2 && $(tel_get /shouter/jobs,2 1/world) == None ]] ||
        fail "/shouter/jobs,2: not job 2 alone: $(tel_get /shouter/jobs,2 '')"
    # (a sign or a blank before the number is not a number: strtoull would take them)
    [[ $(tel_get /shouter/jobs,7 '') == None && $(tel_get /shouter/jobs,x '') == None &&
        $(tel_get /shouter/jobs,+2 '') == None && $(tel_get '/shouter/jobs, 2' '') == None &&
        $(tel_get /shouter/stats,1 '') == None && $(tel_get /shouter/pool,1 '') == None &&
        $(tel_get /shouter/pool slots_total) =~ ^[1-9][0-9]*$ ]] ||
        fail "telemetry: a bad parameter answered"
    echo "ok: /shouter/jobs,2 is job 2 alone; /shouter/jobs,7, ,x, ,+2 and ', 2'," \
        "/shouter/stats,1 and /shouter/pool,1: null"
    local lc0=${LCORES%%[-,]*}
    [[ $(tel_get "/shouter/lcores,$lc0" "$lc0/control") == 1 &&
        $(tel_get /shouter/lcores,127 '') == None ]] ||
        fail "/shouter/lcores,$lc0: $(tel_get "/shouter/lcores,$lc0" '' | head -c 200)"
    echo "ok: /shouter/lcores,$lc0 is the control lcore; /shouter/lcores,127 (not one): null"
    /usr/bin/python3 "$(dirname "$0")/tel.py" "$PREFIX" lcores || fail "/shouter/lcores"
}

mode_config() {
    local gen=$1 check=$2 traffic slack
    traffic=(--ranks 4 --dtype int32 --window 128 --chunk 256 --rounds 2)
    "$gen" --out "$DIR/in.pcap" --arp --icmp "${traffic[@]}" >"$DIR/gen.out" ||
        fail "shouter-pcapgen"
    FRAMES=$(sed -n 's/^frames=\([0-9]*\) .*/\1/p' "$DIR/gen.out")
    # as shipped (idle_us = 0: busy polling, never a sleep)
    shipped_ini "$DIR/shipped.ini"
    config_run shipped "$DIR/shipped.ini"
    wait_tel /shouter/stats idle_sleeps=0
    stop_agg
    "$check" --in "$DIR/shipped.pcap" "${traffic[@]}" --arp --icmp --shutdown ||
        fail "check_pcap: the shipped INI"
    # idle_us = 50 from the INI: the box sleeps once it has nothing to do
    shipped_ini "$DIR/idle.ini" -e 's/^idle_us = 0$/idle_us = 50/'
    grep -q '^idle_us = 50$' "$DIR/idle.ini" || fail "no idle_us line in the shipped INI"
    config_run idle "$DIR/idle.ini"
    wait_tel /shouter/stats "idle_sleeps>=1"
    # the lcore that sleeps (the main thread here) asked for a 1 us timer slack, not 50 us:
    # as it read it back (its log), and as /proc shows it (another process's timer slack is
    # readable only with CAP_SYS_NICE: as root)
    grep -q "lcore 0: idle sleeps of 50 us, timer slack 1000 ns$" "$DIR/agg.log" ||
        fail "idle_us = 50: no 'timer slack 1000 ns' line: $(grep 'timer slack' "$DIR/agg.log")"
    if slack=$(cat "/proc/$AGG_PID/timerslack_ns" 2>/dev/null); then
        [[ $slack == 1000 ]] || fail "idle_us = 50: timer slack $slack ns in /proc, not 1000"
    elif ((EUID == 0)); then
        fail "idle_us = 50: /proc/$AGG_PID/timerslack_ns not readable as root"
    fi
    stop_agg
    "$check" --in "$DIR/idle.pcap" "${traffic[@]}" --arp --icmp --shutdown ||
        fail "check_pcap: idle_us = 50"
    # --idle-us 50 on the command line, over the shipped idle_us = 0
    config_run idle_cli "$DIR/shipped.ini" --idle-us 50
    wait_tel /shouter/stats "idle_sleeps>=1"
    stop_agg
    "$check" --in "$DIR/idle_cli.pcap" "${traffic[@]}" --arp --icmp --shutdown ||
        fail "check_pcap: --idle-us 50"
    # idle_after_us: no sleep until that long after the last traffic, here 60 s: telemetry
    # read once every frame is handled finds none (a box that ignored it sleeps at once)
    config_run idle_after "$DIR/idle.ini" --idle-after-us 60000000
    wait_tel /shouter/stats idle_sleeps=0
    stop_agg
    "$check" --in "$DIR/idle_after.pcap" "${traffic[@]}" --arp --icmp --shutdown ||
        fail "check_pcap: --idle-after-us"
    # zerocopy = on a device with multi-segment tx (net_ring; no traffic needed)
    start_agg -- --vdev net_ring0 -- --config "$DIR/shipped.ini"
    wait_tel /shouter/stats zerocopy=1
    stop_quiet
    shipped_ini "$DIR/copy.ini" -e 's/^zerocopy = 1$/zerocopy = 0/'
    grep -q '^zerocopy = 0$' "$DIR/copy.ini" || fail "no zerocopy line in the shipped INI"
    start_agg -- --vdev net_ring0 -- --config "$DIR/copy.ini"
    wait_tel /shouter/stats zerocopy=0
    stop_quiet
    # zerocopy = 1 on a device without multi-segment tx (net_pcap): copy mode, said so
    start_agg -- --vdev "net_pcap0,rx_pcap=$DIR/in.pcap,tx_pcap=$DIR/zc.pcap" -- \
        --config "$DIR/shipped.ini"
    wait_tel /shouter/stats zerocopy=0
    grep -q "does not accept multi-segment tx: results to several members are copied" \
        "$DIR/agg.log" || fail "net_pcap: no copy-mode warning in: $(cat "$DIR/agg.log")"
    stop_agg
    echo "PASS config"
}

# limit_run NAME GEN_ARGS... -- AGG_ARGS...: JOINs only, through net_pcap; waits until all in
limit_run() {
    local name=$1 gargs=()
    shift
    while [[ $1 != -- ]]; do gargs+=("$1"); shift; done
    shift
    "$GEN" --out "$DIR/$name.in.pcap" "${gargs[@]}" >"$DIR/$name.gen.out" || fail "shouter-pcapgen"
    FRAMES=$(sed -n 's/^frames=\([0-9]*\) .*/\1/p' "$DIR/$name.gen.out")
    start_agg -- --vdev "net_pcap0,rx_pcap=$DIR/$name.in.pcap,tx_pcap=$DIR/$name.pcap" -- \
        --ip 198.18.0.1 "$@"
    wait_tel /shouter/stats "rx_pkts=$FRAMES"
}

mode_limits() {
    GEN=$1
    local check=$2 j9=(--job 9 --ranks 4 --join --joins-only)
    # EINVAL 22, ENOSPC 28 (Linux)
    limit_run world3 "${j9[@]}" -- --max-world 3
    wait_tel /shouter/stats reject_bad_rank=4 rejects=4 msg_jobs_created=0
    stop_agg
    "$check" --in "$DIR/world3.pcap" "${j9[@]}" --refused 22 || fail "check_pcap: --max-world 3"
    limit_run world4 "${j9[@]}" -- --max-world 4
    wait_tel /shouter/stats rejects=0 msg_jobs_created=1 msg_joins=4
    wait_tel /shouter/jobs 9/world=4 9/joined=4 9/active=1
    stop_agg
    # the one job entry held by a static job: a new job is refused
    limit_run jobs1 "${j9[@]}" -- --max-jobs 1 --job 1:2:int32
    wait_tel /shouter/stats reject_jobs_full=4 rejects=4 msg_jobs_created=0
    stop_agg
    "$check" --in "$DIR/jobs1.pcap" "${j9[@]}" --refused 28 || fail "check_pcap: --max-jobs 1"
    limit_run jobs2 "${j9[@]}" -- --max-jobs 2 --job 1:2:int32
    wait_tel /shouter/stats rejects=0 msg_jobs_created=1 msg_joins=4
    # a static job of the default window holds what lib/comm asks for by default: 128
    # chunks in flight and their spare slots (shr_endpoint_slots(128) = 256)
    wait_tel /shouter/jobs 9/joined=4 1/world=2 1/window=256
    stop_agg
    echo "PASS limits"
}

# bench [LANES [CHUNK]]: with 2 lanes, two data lcores (the multi-queue path: slot ownership
# by lane, the control lcore parking the other for its ticks); CHUNK: --bench-chunk (int32
# elements per chunk; the results are checked at that size)
mode_bench() {
    local log=$DIR/bench.log lanes=${1:-1} chunk=${2:-} rc=0
    ((lanes > 1)) && LCORES=0-$((lanes - 1))
    # 120 s: a guard against a hang (it runs about 10 s, loaded or not: its phases are timed;
    # each wait of its feeder for the data lcores fails by itself after 30 s, naming it)
    # shellcheck disable=SC2046
    timeout 120 "$AGG" $(eal) -- --bench-mpps 1 --lanes "$lanes" \
        ${chunk:+--bench-chunk "$chunk"} >"$log" 2>&1 || rc=$?
    ((rc != 124)) || fail "--bench-mpps had not finished after 120 s (a hang?)"
    ((rc == 0)) || fail "--bench-mpps exited $rc"
    cat "$log"
    grep -q "^bench: job world=4 int32 chunk=${chunk:-256} elems" "$log" ||
        fail "--bench-mpps did not run ${chunk:-256}-element chunks"
    local k v
    # (a figure below 0.1 has 3 significant digits: a positive one never reads 0, however
    # much slower a loaded machine made the data path's phases than the kernels')
    for k in agg_mpps_per_lcore agg_gbps_per_lcore kernel_mpps agg_vs_roofline zc_vs_copy \
        repro_vs_stream crc_fold_vs_hw crc_fold_vs_hw_hot; do
        v=$(sed -n "s/^$k=\([0-9.]*\)$/\1/p" "$log")
        [[ -n $v ]] || fail "--bench-mpps printed no $k"
        awk -v v="$v" 'BEGIN { exit !(v > 0) }' || fail "$k=$v is not positive"
    done
    if ((lanes > 1)); then
        # spread by flow (queue rank mod lanes), some DATA were handed to the lcore owning
        # their slot (half of them with 2 lanes); spread by lane (steered), none
        local a b re="^lanes=$lanes: queues spread by flow, \\([0-9.]*\\) of the DATA"
        a=$(sed -n "s/$re.*/\\1/p" "$log")
        b=$(sed -n "s/^lanes=.*steered=[0-9.]* (\\([0-9.]*\\) handed)$/\\1/p" "$log")
        awk -v a="${a:-0}" -v b="${b:-1}" 'BEGIN { exit !(a > 0 && b == 0) }' ||
            fail "handoff: ${a:-none} handed when spread by flow, ${b:-none} by lane"
    fi
    echo "PASS bench lanes=$lanes chunk=${chunk:-256}"
}

# bench_signal: SIGTERM while --bench-mpps runs its one-thread kernels stops it at once: exit
# 1, said, no figures (before, each kernel ran its whole phase: 36 s of them here)
mode_bench_signal() {
    local log=$DIR/bench.log i rc=0
    # shellcheck disable=SC2046
    "$AGG" $(eal) -- --bench-mpps 8 >"$log" 2>&1 &
    AGG_PID=$!
    # the state: the kernels have begun (the line comes right before the first, after the
    # data path's two 8 s phases)
    wait_line "$log" "^shouter-agg: bench: the one-thread kernels" 120 "in its kernels"
    kill -TERM "$AGG_PID"
    # 20 s: a bound far below the 36 s the kernels would run on (their phases are timed by
    # the clock, loaded or not), far above the moment a stopped kernel takes
    for ((i = 0; i < 200; i++)); do
        kill -0 "$AGG_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$AGG_PID" 2>/dev/null && fail "--bench-mpps still ran 20 s after SIGTERM"
    wait "$AGG_PID" || rc=$?
    AGG_PID=
    cat "$log"
    ((rc == 1)) || fail "--bench-mpps exited $rc after SIGTERM, not 1"
    grep -q "^shouter-agg: bench: interrupted (a signal): no figures" "$log" ||
        fail "--bench-mpps did not say it was interrupted"
    ! grep -q "^agg_mpps_per_lcore=" "$log" || fail "--bench-mpps printed figures, interrupted"
    echo "PASS bench_signal"
}

# upstream: a leaf box asks ARP for its upstream box's address (what it sends, checked)
mode_upstream() {
    # a pcap of no frame (its file header only): the box hears nothing
    printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00%s\xff\xff\x00\x00\x01\x00\x00\x00' \
        '\x00\x00\x00\x00\x00\x00\x00\x00' >"$DIR/none.pcap"
    start_agg -- --vdev "net_pcap0,rx_pcap=$DIR/none.pcap,tx_pcap=$DIR/up.pcap" -- \
        --ip 198.18.0.1 --upstream 198.18.0.3 --up-rank 0 --up-world 2
    wait_tel /shouter/stats "arp_request>=2"
    stop_quiet
    /usr/bin/python3 - "$DIR/up.pcap" <<'PY' || fail "what the leaf box sent"
import socket
import struct
import sys

data = open(sys.argv[1], 'rb').read()
end = '<' if struct.unpack('<I', data[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d) else '>'
off, n = 24, 0
while off < len(data):
    caplen = struct.unpack(end + 'I', data[off + 8:off + 12])[0]
    f = data[off + 16:off + 16 + caplen]
    off += 16 + caplen
    n += 1
    if len(f) < 42 or f[12:14] != b'\x08\x06':
        sys.exit(f'frame {n}: not ARP: {f[:42].hex()}')
    op, sha, sip, tip = struct.unpack('>H6s4s6x4s', f[20:42])
    sip, tip = socket.inet_ntoa(sip), socket.inet_ntoa(tip)
    if op != 1 or f[:6] != b'\xff' * 6 or sha != f[6:12] or sip != '198.18.0.1':
        sys.exit(f'frame {n}: not a broadcast ARP request from the box: {f[:42].hex()}')
    if tip != '198.18.0.3':
        sys.exit(f'frame {n}: an ARP request for {tip}, not the upstream 198.18.0.3')
if n == 0:
    sys.exit('no frame sent')
print(f'ok: {n} ARP requests, each for the upstream 198.18.0.3 from 198.18.0.1')
PY
    echo "PASS upstream"
}

# simd: the CRC32C version the box runs follows EAL's --force-max-simd-bitwidth
mode_simd() {
    local flags sse=0 clmul=0 fold=0 bits want got
    flags=" $(grep -m 1 '^flags' /proc/cpuinfo | cut -d: -f2) "
    has() { [[ $flags == *" $1 "* ]]; }
    has sse4_2 && sse=1
    ((sse)) && has pclmulqdq && clmul=1
    ((clmul)) && has avx512f && has vpclmulqdq && fold=1
    for bits in none 512 256 128 64; do
        want=sw
        if ((fold)) && [[ $bits == none || $bits == 512 ]]; then
            want=avx512-vpclmulqdq
        elif ((clmul)) && [[ $bits != 64 ]]; then
            want=sse4.2x3
        elif ((sse)); then
            want=sse4.2
        fi
        if [[ $bits == none ]]; then
            start_agg -- --vdev net_ring0 -- --ip 198.18.0.1
        else
            start_agg -- "--force-max-simd-bitwidth=$bits" --vdev net_ring0 -- --ip 198.18.0.1
        fi
        got=$(sed -n 's/^shouter-agg: port 0: .*, CRC32C \([^ ]*\)$/\1/p' "$DIR/agg.log")
        [[ $got == "$want" ]] ||
            fail "--force-max-simd-bitwidth $bits: the box runs CRC32C '$got', not $want"
        echo "ok: --force-max-simd-bitwidth $bits -> CRC32C $got"
        stop_quiet
    done
}

mode=${1:-}
shift || true
case $mode in
pcap) mode_pcap "$@" ;;
pcap2) QUEUES=2 LCORES=0-1 mode_pcap "$@" ;;
pcap-secret) SECRET=1 mode_pcap "$@" ;;
lossy) mode_lossy "$@" ;;
idle) mode_idle "$@" ;;
afpacket) mode_afpacket "$@" ;;
bench) mode_bench "$@" ;;
bench_signal) mode_bench_signal ;;
config) mode_config "$@" ;;
limits) mode_limits "$@" ;;
upstream) mode_upstream ;;
simd) mode_simd ;;
*)
    echo "usage: $0 pcap|pcap2|pcap-secret|lossy|afpacket GEN CHECK [gen options]" \
        "[-- agg options] | idle GEN | config|limits GEN CHECK |" \
        "bench [LANES [CHUNK]] | bench_signal | simd | upstream" >&2
    exit 2
    ;;
esac
