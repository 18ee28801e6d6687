#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Integration tests of the command lines of shouter-agg and shouter-pcapgen (suite
# 'integration'; agg_it_lib.sh runs the box: EAL with --no-huge -m 512 --no-pci, virtual
# devices only, everything it starts and writes removed on exit).
#
#   agg_cli_it.sh cli
#       bad options exit 2 naming the option; --help exits 0
#   agg_cli_it.sh pcapgen GEN
#       shouter-pcapgen as a user tool, no box: --help (exit 0), bad input (exit 2, the
#       message names the option), an unwritable file (exit 4), the INI it writes (every
#       rank's addr.R, ordered = 0, the token), --addrs against --ranks.
#
# The aggregator is $SHR_BUILD/app/shouter-agg (SHR_BUILD: the build directory).

set -u

# shellcheck source=tests/integration/agg_it_lib.sh
source "$(dirname "$0")/agg_it_lib.sh"

# expect_usage WANT_TEXT ARGS...: exit status 2 and WANT_TEXT on stderr
expect_usage() {
    local want=$1 rc=0
    shift
    # a box that takes what it should refuse runs until stopped: timeout says so (124)
    # shellcheck disable=SC2046
    timeout 30 "$AGG" $(eal) --vdev net_null0 -- "$@" >"$DIR/cli.out" 2>"$DIR/cli.err" || rc=$?
    ((rc == 2)) || fail "'$*' exited $rc, want 2 (124: it ran, taking what it should refuse)"
    grep -q -- "$want" "$DIR/cli.err" || fail "'$*': no '$want' in: $(cat "$DIR/cli.err")"
    echo "ok: $* -> exit 2: $(grep -m1 -- "$want" "$DIR/cli.err")"
}

# allow_case WANT [agg options]: the box starts and logs that it admits JOINs from WANT
allow_case() {
    local want=$1
    shift
    start_agg -- --vdev net_null0 -- "$@"
    grep -q "admission: JOINs from $want\$" "$DIR/agg.log" ||
        fail "$*: no 'admission: JOINs from $want' in: $(grep admission "$DIR/agg.log")"
    stop_agg >/dev/null
    echo "ok: $* -> JOINs from $want"
}

mode_cli() {
    local rc=0
    # shellcheck disable=SC2046
    "$AGG" $(eal) -- --help >"$DIR/help.out" 2>&1 || rc=$?
    ((rc == 0)) || fail "--help exited $rc"
    grep -q -- "--no-zerocopy" "$DIR/help.out" || fail "--help does not list the options"
    grep -q -- "Lanes and lcores" "$DIR/help.out" ||
        fail "--help does not document the lanes and data lcores"
    # -- --help / -- -h need no EAL: they work without hugepages (no --no-huge here) and
    # leave no runtime directory
    local h p=$PREFIX-noeal
    for h in --help -h; do
        rc=0
        "$AGG" --file-prefix "$p" -- "$h" >"$DIR/help2.out" 2>&1 || rc=$?
        ((rc == 0)) || fail "'-- $h' without --no-huge exited $rc: $(tail -n 3 "$DIR/help2.out")"
        grep -q -- "--no-zerocopy" "$DIR/help2.out" || fail "'-- $h' printed no usage"
        if grep -q "^EAL:" "$DIR/help2.out" || [[ -e /var/run/dpdk/$p ]]; then
            fail "'-- $h' initialised the EAL: $(head -n 3 "$DIR/help2.out")"
        fi
        echo "ok: -- $h -> exit 0 without the EAL"
    done
    # the EAL cannot start (no hugetlbfs mounted at --huge-dir): exit 1 (the host, not the
    # options: the service restarts it, RestartPreventExitStatus=2) with a hint
    rc=0
    "$AGG" --file-prefix "$p" --no-pci --huge-dir "$DIR" -- --ip 198.18.0.1 \
        >"$DIR/huge.out" 2>&1 || rc=$?
    rm -rf "/var/run/dpdk/$p"
    ((rc == 1)) || fail "EAL without hugepages: exit $rc, want 1"
    grep -q "no hugepages? mount hugetlbfs, or run with --no-huge -m 512" "$DIR/huge.out" ||
        fail "EAL without hugepages: no hint in: $(tail -n 3 "$DIR/huge.out")"
    echo "ok: no hugepages -> exit 1: $(grep -m1 'no hugepages' "$DIR/huge.out")"
    expect_usage "--ip: required" --port 47000
    expect_usage "--ip: expected an IPv4 address" --ip 198.18.0.300
    expect_usage "--ip: 224.0.0.1 is not a unicast address" --ip 224.0.0.1
    expect_usage "--ip: 255.255.255.255 is not a unicast address" --ip 255.255.255.255
    expect_usage "--lanes: expected an integer in 1..64" --ip 198.18.0.1 --lanes 0
    expect_usage "--port: expected an integer in 1..65535" --ip 198.18.0.1 --port x
    expect_usage "--idle-after-us: expected an integer in 0..60000000" --ip 198.18.0.1 \
        --idle-us 20 --idle-after-us 60000001
    printf '[agg]\nip = 198.18.0.1\nidle_after_us = -1\n' >"$DIR/bad5.ini"
    expect_usage "bad5.ini \[agg\] idle_after_us: expected an integer in 0..60000000" \
        --config "$DIR/bad5.ini"
    expect_usage "--job: expected ID:WORLD:DTYPE" --ip 198.18.0.1 --job 1:2
    # a sixth field is not ignored (what did the user mean by it?)
    expect_usage "--job: expected ID:WORLD:DTYPE\[:WINDOW\[:CHUNK\]\], got '1:2:int32:8:256:9'" \
        --ip 198.18.0.1 --job 1:2:int32:8:256:9
    expect_usage "--job DTYPE: unknown dtype 'int64'" --ip 198.18.0.1 --job 1:2:int64
    expect_usage "unknown option '--bogus'" --ip 198.18.0.1 --bogus
    expect_usage "--bench-chunk: expected an integer in 1..2048" --bench-mpps 1 --bench-chunk 0
    expect_usage "--bench-chunk: expected an integer in 1..2048" --bench-mpps 1 \
        --bench-chunk 2049
    expect_usage "--bench-chunk: only with --bench-mpps" --ip 198.18.0.1 --bench-chunk 512
    expect_usage "--bench-chunk 1024: over max_elems (512)" \
        --bench-mpps 1 --max-elems 512 --bench-chunk 1024
    expect_usage "--config: cannot open '$DIR/missing.ini': No such file" --ip 198.18.0.1 \
        --config "$DIR/missing.ini"
    # getopt_long takes --conf for --config: the file must not be skipped in silence
    expect_usage "--conf: give the option's whole name (--config)" --ip 198.18.0.1 \
        --conf "$DIR/missing.ini"
    expect_usage "--conf=x: give the option's whole name (--config)" --ip 198.18.0.1 --conf=x
    expect_usage "--config given twice" --config "$DIR/a.ini" --config "$DIR/b.ini"
    expect_usage "--bo: give the option's whole name (--box)" --ip 198.18.0.1 --bo leaf1
    # --box names a box of a topology file: without one (--ip given first or not) the box
    # must not run alone, out of its tree
    expect_usage "--box: needs --config FILE (a topology file with a \[box.leaf1\] section)" \
        --ip 198.18.0.1 --box leaf1
    expect_usage "--box: needs --config FILE" --box leaf1 --ip 198.18.0.1
    # the file's text: what rte_cfgfile would drop or misread stops the box, naming the line
    expect_usage "--config: '/dev/zero' is not a regular file" --config /dev/zero
    expect_usage "--config: '$DIR' is not a regular file" --config "$DIR"
    printf '[agg]\nip = 198.18.0.1\nport 47001\n' >"$DIR/ini1.ini"
    expect_usage "ini1.ini:3: expected KEY = VALUE or \[NAME\], got 'port 47001'" \
        --config "$DIR/ini1.ini"
    printf '[agg]\nip = 198.18.0.1\n; a comment\n\n[job.1]\nworld = 2\n[agg]\nport = 9\n' \
        >"$DIR/ini2.ini"
    expect_usage "ini2.ini:7: section \[agg\] given twice" --config "$DIR/ini2.ini"
    printf '[agg]\nip = 198.18.0.1\nport = 47001 ; a comment\nport = 47002\n' >"$DIR/ini3.ini"
    expect_usage "ini3.ini:4: key 'port' given twice in its section" --config "$DIR/ini3.ini"
    printf 'ip = 198.18.0.1\n[agg]\n' >"$DIR/ini4.ini"
    expect_usage "ini4.ini:1: 'ip' before any \[section\]" --config "$DIR/ini4.ini"
    # a value rte_cfgfile would cut at 255 characters in silence (an allow list of 20 /24s,
    # 269 characters: its last subnets would be dropped)
    local allow20=10.1.1.0/24 k
    for ((k = 2; k <= 20; k++)); do allow20+=", 10.1.$k.0/24"; done
    printf '[agg]\nip = 198.18.0.1\nallow = %s\n' "$allow20" >"$DIR/ini7.ini"
    expect_usage "ini7.ini:3: a key of 1..63 characters and a value of at most 255" \
        --config "$DIR/ini7.ini"
    printf '[agg]\nip = 198.18.0.1\n[]\n' >"$DIR/ini5.ini"
    expect_usage "ini5.ini:3: expected \[NAME\], got '\[\]'" --config "$DIR/ini5.ini"
    printf '[agg]\nip = 198.18.0.1\x00\n' >"$DIR/ini6.ini"
    expect_usage "ini6.ini:2: a NUL byte: not a text file" --config "$DIR/ini6.ini"
    # a result group: multicast, or a broadcast address of --ip's segment; ports for every job
    expect_usage "result_group 198.18.0.77: neither a multicast group" --ip 198.18.0.1 \
        --result-group 198.18.0.77
    expect_usage "result_group 10.0.0.255: neither a multicast group" --ip 198.18.0.1 \
        --result-group 10.0.0.255
    # a /31 has no broadcast address: the other host of --ip's /31 is a unicast host (the
    # results of every member would go to it alone)
    expect_usage "result_group 198.18.0.5: neither a multicast group" --ip 198.18.0.4 \
        --result-group 198.18.0.5
    # the box's own address, though it is the highest of a prefix that holds it (its /24):
    # every result would go to the box itself
    expect_usage "result_group 198.18.0.255: neither a multicast group" --ip 198.18.0.255 \
        --result-group 198.18.0.255
    expect_usage "result_group: ports 65500..65563 (one per job of max_jobs 64)" \
        --ip 198.18.0.1 --result-group 239.1.2.3:65500
    expect_usage "--result-group: expected an integer in 1..65535" --ip 198.18.0.1 \
        --result-group 239.1.2.3:0
    printf '[agg]\nip = 198.18.0.1\nresult_group = 198.18.0.1\n' >"$DIR/bad6.ini"
    expect_usage "result_group 198.18.0.1: neither a multicast group" --config "$DIR/bad6.ini"
    # a topology file: upstream by name (its ip and port), this box's place under it, and a
    # result group of its own; both boxes under root start
    printf '%s\n' '[box.root]' 'ip = 198.18.0.3' 'port = 47100' '[box.leaf1]' \
        'ip = 198.18.0.1' 'upstream = root' 'result_group = 198.18.0.255:49000' \
        '[box.leaf2]' 'ip = 198.18.0.2' 'upstream = root' >"$DIR/topo.ini"
    local b want r=0 ip port
    for b in leaf1 leaf2; do
        start_agg -- --vdev net_null0 -- --config "$DIR/topo.ini" --box "$b"
        want="upstream 198.18.0.3:47100: this box is rank $r of 2"
        r=$((r + 1))
        grep -q "$want" "$DIR/agg.log" || fail "--box $b: no '$want' in: $(cat "$DIR/agg.log")"
        if [[ $b == leaf1 ]]; then
            grep -q "result group 198.18.0.255, UDP ports 49000..49063" "$DIR/agg.log" ||
                fail "--box leaf1: no result group line in: $(cat "$DIR/agg.log")"
        fi
        stop_agg >/dev/null
        echo "ok: --config topo.ini --box $b: $want"
    done
    # a loop of upstream boxes: refused by every box of it, and by a box under it
    printf '%s\n' '[box.a]' 'ip = 198.18.0.1' 'upstream = b' '[box.b]' 'ip = 198.18.0.2' \
        'upstream = a' '[box.c]' 'ip = 198.18.0.3' 'upstream = a' >"$DIR/loop.ini"
    expect_usage "\[box.a\]: its chain of upstream boxes comes back to it" \
        --config "$DIR/loop.ini" --box a
    expect_usage "\[box.c\]: its chain of upstream boxes loops above it" \
        --config "$DIR/loop.ini" --box c
    # three levels: a box's up_rank and up_world count the boxes under its own upstream only
    # (its upstream's job has exactly that world), never the boxes under another one
    printf '%s\n' '[box.root]' 'ip = 198.18.0.3' '[box.mid1]' 'ip = 198.18.0.4' 'port = 47200' \
        'upstream = root' '[box.leaf1]' 'ip = 198.18.0.1' 'upstream = mid1' '[box.mid2]' \
        'ip = 198.18.0.5' 'upstream = root' '[box.leaf2]' 'ip = 198.18.0.2' 'upstream = mid1' \
        >"$DIR/topo3.ini"
    for b in mid2:198.18.0.3:47000:1 leaf2:198.18.0.4:47200:1; do
        IFS=: read -r b ip port r <<<"$b"
        start_agg -- --vdev net_null0 -- --config "$DIR/topo3.ini" --box "$b"
        want="upstream $ip:$port: this box is rank $r of 2 under it"
        grep -q "$want" "$DIR/agg.log" || fail "--box $b: no '$want' in: $(cat "$DIR/agg.log")"
        stop_agg >/dev/null
        echo "ok: --config topo3.ini --box $b: $want"
    done
    # a place that is no place under the upstream (rank W of W), or an upstream that is this
    # box itself (every round sent up to itself): refused at start, naming the option
    expect_usage "--up-rank R below it (this box's place), got rank 2 of 2" \
        --ip 198.18.0.1 --upstream 198.18.0.3 --up-rank 2 --up-world 2
    expect_usage "--upstream: this box's own address" --ip 198.18.0.1 --upstream 198.18.0.1 \
        --up-rank 0 --up-world 1
    printf '[agg]\nip = 198.18.0.1\nlanes = 99\n' >"$DIR/bad1.ini"
    expect_usage "bad1.ini \[agg\] lanes: expected an integer in 1..64" --config "$DIR/bad1.ini"
    printf '[agg]\nip = 198.18.0.1\n[job.3]\nworld = 2\ndtype = int32\naddr.0 = 1.2.3.4:5\n' \
        >"$DIR/bad2.ini"
    expect_usage "no address for rank 1" --config "$DIR/bad2.ini"
    # a static member's address without its port: no datagram could ever come from port 0
    printf '[agg]\nip = 198.18.0.1\n[job.3]\nworld = 2\ndtype = int32\naddrs = %s\n' \
        "1.2.3.4:5,1.2.3.5" >"$DIR/bad8.ini"
    expect_usage "bad8.ini \[job.3\] addrs: expected A.B.C.D:PORT, got '1.2.3.5'" \
        --config "$DIR/bad8.ini"
    printf '[agg]\nip = 198.18.0.1\n[job.3]\nworld = 1\ndtype = int32\naddr.0 = 1.2.3.4\n' \
        >"$DIR/bad9.ini"
    expect_usage "\[job.3\] addr.0: expected A.B.C.D:PORT, got '1.2.3.4'" --config "$DIR/bad9.ini"
    printf '[agg]\nip = 198.18.0.1\n[job.3]\nworld = 3\ndtype = int32\naddrs = %s\n' \
        "1.2.3.4:5,1.2.3.5:5,1.2.3.4:5" >"$DIR/bad7.ini"
    expect_usage "\[job.3\]: ranks 0 and 2 have the same address" --config "$DIR/bad7.ini"
    # neighbours too: ranks 0 and 1 of one address
    printf '[agg]\nip = 198.18.0.1\n[job.3]\nworld = 3\ndtype = int32\naddrs = %s\n' \
        "1.2.3.4:5,1.2.3.4:5,1.2.3.6:5" >"$DIR/bad10.ini"
    expect_usage "\[job.3\]: ranks 0 and 1 have the same address" --config "$DIR/bad10.ini"
    # a rank's address given twice (addrs and addr.R, addr.1 and addr.01): not the last one
    # taken in silence
    printf '[agg]\nip = 198.18.0.1\n[job.3]\nworld = 2\ndtype = int32\naddrs = %s\n%s\n' \
        "1.2.3.4:5,1.2.3.5:5" "addr.1 = 1.2.3.6:5" >"$DIR/bad15.ini"
    expect_usage "\[job.3\] addr.1: rank 1's address given twice" --config "$DIR/bad15.ini"
    printf '[agg]\nip = 198.18.0.1\n[job.3]\nworld = 2\ndtype = int32\n%s\n%s\n%s\n' \
        "addr.0 = 1.2.3.4:5" "addr.1 = 1.2.3.5:5" "addr.01 = 1.2.3.6:5" >"$DIR/bad16.ini"
    expect_usage "\[job.3\] addr.01: rank 1's address given twice" --config "$DIR/bad16.ini"
    # 0.0.0.0 is no member's address (nothing ever comes from it), nor an upstream box's
    printf '[agg]\nip = 198.18.0.1\n[job.3]\nworld = 2\ndtype = int32\naddrs = %s\n' \
        "0.0.0.0:5,1.2.3.5:5" >"$DIR/bad11.ini"
    expect_usage "\[job.3\] addrs: expected an IPv4 address A.B.C.D, got '0.0.0.0'" \
        --config "$DIR/bad11.ini"
    expect_usage "--upstream: expected an IPv4 address A.B.C.D, got '0.0.0.0'" \
        --ip 198.18.0.1 --upstream 0.0.0.0 --up-rank 0 --up-world 1
    # an address of 64 characters or more (a host name): refused, not copied past its buffer
    local longaddr=rank0.aggregator-rack12-node07.cluster.example.internal.corp.lan:47000
    printf '[agg]\nip = 198.18.0.1\n[job.3]\nworld = 2\ndtype = int32\naddrs = %s\n' \
        "$longaddr,1.2.3.5:5" >"$DIR/bad12.ini"
    expect_usage "\[job.3\] addrs: expected A.B.C.D:PORT, got '$longaddr'" \
        --config "$DIR/bad12.ini"
    # a token that is not in 1..2^64-1: negative, or past it (not taken as 2^64-1)
    local tok
    for tok in -1 18446744073709551616; do
        printf '[agg]\nip = 198.18.0.1\n[job.3]\nworld = 2\ndtype = int32\ntoken = %s\n' \
            "$tok" >"$DIR/bad13.ini"
        expect_usage "\[job.3\] token: expected an integer in 1..18446744073709551615, got '$tok'" \
            --config "$DIR/bad13.ini"
    done
    # 224.0.0.0 is multicast: not the box's address
    expect_usage "--ip: 224.0.0.0 is not a unicast address" --ip 224.0.0.0
    # the last lane's port past 65535 (it would be port 0)
    expect_usage "--port/--lanes: ports 65535..65536 exceed 65535" --ip 198.18.0.1 \
        --port 65535 --lanes 2
    # a section name rte_cfgfile would cut to 63 characters in silence (job 1 read as job 0)
    local longsec=job.
    for ((k = 0; k < 66; k++)); do longsec+=0; done
    longsec+=1
    printf '[agg]\nip = 198.18.0.1\n[%s]\nworld = 2\ndtype = int32\n' "$longsec" \
        >"$DIR/bad14.ini"
    expect_usage "bad14.ini:3: a section name of 1..63 characters" --config "$DIR/bad14.ini"
    # a comment line of 323 characters: rte_cfgfile reads at most 322 a line (our check said
    # 1024, then "cannot load" named no line); 322 are taken
    local longc=';'
    for ((k = 1; k < 322; k++)); do longc+=x; done
    printf '[agg]\nip = 198.18.0.1\n%sx\n' "$longc" >"$DIR/bad17.ini"
    expect_usage "bad17.ini:3: a line (comments too) longer than 322 characters" \
        --config "$DIR/bad17.ini"
    printf '[agg]\nip = 198.18.0.1\n%s\nbogus_key = 1\n' "$longc" >"$DIR/bad18.ini"
    expect_usage "bad18.ini \[agg\] bogus_key: unknown key" --config "$DIR/bad18.ini"
    printf '[agg]\nip = 198.18.0.1\n[bogus]\nx = 1\n' >"$DIR/bad3.ini"
    expect_usage "unknown section \[bogus\]" --config "$DIR/bad3.ini"
    expect_usage "not enough free pool slots" --ip 198.18.0.1 --nslots 16 --job 1:2:int32:8:256 \
        --job 2:2:int32:16:256
    expect_usage "chunk <= max-elems" --ip 198.18.0.1 --max-elems 64 --job 1:2:int32:8:256
    # an empty field is an error, not skipped (1::2:int32 was read as 1:2:int32)
    expect_usage "--job WORLD: expected an integer in 1..4096, got ''" --ip 198.18.0.1 \
        --job 1::2:int32
    expect_usage "--job WINDOW: expected an integer" --ip 198.18.0.1 --job 1:2:int32:
    expect_usage "def_window 1024: at most 512" --ip 198.18.0.1 --def-window 1024
    expect_usage "def_window 128: at most 64" --ip 198.18.0.1 --nslots 64 --def-window 128
    # admission: allowlists and secret files
    expect_usage "--allow: expected IPv4 subnets" --ip 198.18.0.1 --allow 10.0.0.0/33
    # an empty list (an unset variable) would leave the allowlist empty: every address
    expect_usage "--allow: expected IPv4 subnets" --ip 198.18.0.1 --allow " "
    expect_usage "--allow: expected IPv4 subnets" --ip 198.18.0.1 --allow -0.-0.-0.-0/0
    # the command line's --allow replaces the file's allow (a narrower list must not keep the
    # file's subnets); without --allow, the file's list is in effect
    printf '[agg]\nip = 198.18.0.1\nallow = 10.0.0.0/8, 192.0.2.7\n' >"$DIR/allow.ini"
    allow_case "10.0.0.0/8, 192.0.2.7/32" --config "$DIR/allow.ini"
    allow_case "198.18.0.0/15, 203.0.113.0/24" --config "$DIR/allow.ini" \
        --allow 198.18.0.0/15 --allow 203.0.113.0/24
    allow_case "any address" --ip 198.18.0.1
    # /shouter/jobs lists 48 jobs at most (a 16 KiB reply) and says how many it left out
    local jobs=() k
    for ((k = 1; k <= 50; k++)); do jobs+=(--job "$k:2:int32:1:64"); done
    start_agg -- --vdev net_null0 -- --ip 198.18.0.1 "${jobs[@]}"
    [[ $(tel_get /shouter/jobs truncated) == 2 ]] ||
        fail "/shouter/jobs of 50 jobs: truncated is $(tel_get /shouter/jobs truncated), want 2"
    [[ $(tel_get /shouter/jobs,50 50/world) == 2 ]] || fail "/shouter/jobs,50: no job 50"
    stop_agg >/dev/null
    echo "ok: /shouter/jobs of 50 jobs: 48 listed, truncated=2; /shouter/jobs,50 alone"
    # numbers are decimal (or hex after 0x), never octal: 047000 is port 47000, 010 job 10
    start_agg -- --vdev net_null0 -- --ip 198.18.0.1 --port 047000 --job 010:2:int32 \
        --nslots 0x100
    grep -q "lanes (UDP 47000..47000)" "$DIR/agg.log" ||
        fail "--port 047000: $(grep 'lanes (UDP' "$DIR/agg.log")"
    grep -q "static job 10: world 2 int32" "$DIR/agg.log" ||
        fail "--job 010: $(grep 'static job' "$DIR/agg.log")"
    stop_agg >/dev/null
    echo "ok: --port 047000 --job 010 read as 47000 and 10"
    # a job given again is replaced whole: the new definition has a new job's defaults
    # (ordered: stale copies dropped), none of the old one's
    printf '[agg]\nip = 198.18.0.1\n[job.1]\nworld = 2\ndtype = int32\nordered = 0\n' \
        >"$DIR/unordered.ini"
    start_agg -- --vdev net_null0 -- --config "$DIR/unordered.ini"
    grep -q "static job 1: world 2 int32 .*, unordered" "$DIR/agg.log" ||
        fail "ordered = 0 not in effect: $(grep 'static job' "$DIR/agg.log")"
    stop_agg >/dev/null
    start_agg -- --vdev net_null0 -- --config "$DIR/unordered.ini" --job 1:3:float32
    grep -q "static job 1: world 3 float32 window [0-9]* chunk [0-9]* (bind on JOIN)$" \
        "$DIR/agg.log" || fail "--job 1 over [job.1]: $(grep 'static job' "$DIR/agg.log")"
    stop_agg >/dev/null
    echo "ok: --job 1 replaces [job.1] whole (ordered again)"
    expect_usage "--secret-file: '$DIR/missing.key': No such file" --ip 198.18.0.1 \
        --secret-file "$DIR/missing.key"
    printf 'short\n' >"$DIR/short.key"
    chmod 600 "$DIR/short.key"
    expect_usage "the secret must be a regular file of 16..64 bytes" --ip 198.18.0.1 \
        --secret-file "$DIR/short.key"
    printf 'a-secret-of-32-bytes-0123456789a\n' >"$DIR/open.key"
    chmod 640 "$DIR/open.key"
    expect_usage "open to its group or others; chmod 600" --ip 198.18.0.1 \
        --secret-file "$DIR/open.key"
    printf '[agg]\nip = 198.18.0.1\n[job.3]\nworld = 2\ndtype = int32\nsecret_file = %s\n' \
        "$DIR/short.key" >"$DIR/bad4.ini"
    expect_usage "bad4.ini \[job.3\] secret_file: '$DIR/short.key': the secret must be" \
        --config "$DIR/bad4.ini"
    echo "PASS cli"
}

# gen_usage WANT_RC WANT_TEXT ARGS...: shouter-pcapgen exits WANT_RC with WANT_TEXT on stderr
gen_usage() {
    local want_rc=$1 want=$2 rc=0
    shift 2
    "$GEN" "$@" >"$DIR/gen.out" 2>"$DIR/gen.err" || rc=$?
    ((rc == want_rc)) || fail "shouter-pcapgen $*: exit $rc, want $want_rc"
    grep -q -- "$want" "$DIR/gen.err" ||
        fail "shouter-pcapgen $*: no '$want' in: $(cat "$DIR/gen.err")"
    echo "ok: shouter-pcapgen $* -> exit $rc: $(grep -m1 -- "$want" "$DIR/gen.err")"
}

mode_pcapgen() {
    GEN=$1
    local rc=0 o=$DIR/t.pcap
    "$GEN" --help >"$DIR/help.out" 2>&1 || rc=$?
    ((rc == 0)) || fail "shouter-pcapgen --help exited $rc"
    for w in --out --config --world --window --chunk --dtype --rounds --addrs --agg-ip \
        --agg-mac --token --bogus --malformed --decoys --forged-join; do
        grep -q -- "$w" "$DIR/help.out" || fail "shouter-pcapgen --help does not list $w"
    done
    gen_usage 2 "--out FILE is required"
    gen_usage 2 "--ranks: expected an integer" --out "$o" --ranks 0
    gen_usage 2 "--dtype: int32, float32" --out "$o" --dtype int64
    gen_usage 2 "--chunk: expected an integer in 1..2048" --out "$o" --chunk 4096
    gen_usage 2 "unrecognized option '--frobnicate'" --out "$o" --frobnicate
    gen_usage 2 "--agg-ip: expected A.B.C.D" --out "$o" --agg-ip 198.18.0.300
    gen_usage 2 "--agg-mac: expected a MAC" --out "$o" --agg-mac 02:00:00
    gen_usage 2 "--addrs: 2 addresses for --ranks 3" --out "$o" --ranks 3 \
        --addrs 198.18.0.2,198.18.0.3
    gen_usage 2 "--addrs: ranks 0 and 1 have the same address" --out "$o" \
        --addrs 198.18.0.2:7,198.18.0.2:7
    gen_usage 2 "--addrs port: expected an integer in 1..65535" --out "$o" \
        --addrs 198.18.0.2:0
    gen_usage 2 "--decoys: needs --ranks 2 or more" --out "$o" --ranks 1 --decoys
    gen_usage 2 "--decoys: needs --ranks 2 or more, and DATA" --out "$o" --joins-only --decoys
    gen_usage 2 "--forged-join: needs --ranks 2 or more" --out "$o" --ranks 1 --forged-join
    gen_usage 2 "--forged-join: needs --ranks 2 or more, and a job with every rank's address" \
        --out "$o" --join --forged-join
    gen_usage 2 "(not --join)" --out "$o" --joins-only --forged-join
    gen_usage 2 "--mac-move: needs --ranks 2 or more, --rounds 2 or more" --out "$o" \
        --rounds 1 --mac-move
    gen_usage 2 "--token: expected a non-zero 64-bit hex number" --out "$o" --token 0xZ
    gen_usage 2 "--token: expected a non-zero 64-bit hex number" --out "$o" --token 0
    gen_usage 2 "--window: expected an integer in 1..1048576, got '0x10'" --out "$o" \
        --window 0x10
    gen_usage 2 "--job: expected an integer in 0..4294967295, got ''" --out "$o" --job ""
    gen_usage 2 "--in, --refused and --shutdown are check_pcap's" --out "$o" --shutdown
    gen_usage 2 "--out and --config name the same file" --out "$o" --config "$o"
    : >"$o"    # another path to the same (existing) file
    gen_usage 2 "--out and --config name the same file" --out "$o" --config "$DIR/./t.pcap"
    gen_usage 2 "unexpected argument 'extra'" --out "$o" extra
    gen_usage 4 "cannot write '$DIR/no/t.pcap'" --out "$DIR/no/t.pcap"
    gen_usage 4 "cannot write '$DIR/no/t.ini'" --out "$o" --config "$DIR/no/t.ini"
    gen_usage 0 "cuts frames over 1514 bytes unless started with -j" --out "$o" --chunk 512 \
        --dtype float32
    # the INI: the box's address and lanes, the job, every rank's address, the token
    "$GEN" --out "$o" --ini "$DIR/t.ini" --world 3 --dtype bfloat16 --window 5 --chunk 7 \
        --rounds 4 --agg-ip 198.18.0.9 --port 48000 --lanes 2 --job 12 --token abc \
        --addrs 198.18.0.30:5001,198.18.0.31:5002,198.18.0.30 >"$DIR/gen.out" ||
        fail "shouter-pcapgen with --addrs"
    local want
    want=$'[agg]\nip = 198.18.0.9\nport = 48000\nlanes = 2\n\n[job.12]\nworld = 3'
    want+=$'\ndtype = bfloat16\nwindow = 5\nchunk = 7\n'
    want+=$'; a looped replay repeats its rounds, with a token fixed in advance\n'
    want+=$'ordered = 0\ntoken = 0x0000000000000abc\naddr.0 = 198.18.0.30:5001\n'
    want+=$'addr.1 = 198.18.0.31:5002\naddr.2 = 198.18.0.30:5000'
    [[ $(sed 1,2d "$DIR/t.ini") == "$want" ]] ||
        fail "the INI differs: $(cat "$DIR/t.ini")"
    grep -q '^frames=60 data=60$' "$DIR/gen.out" || fail "frame count: $(cat "$DIR/gen.out")"
    grep -q '^expect msg_data=60 msg_completed=20 ' "$DIR/gen.out" ||
        fail "expected counts: $(cat "$DIR/gen.out")"
    # --malformed: 5 broken frames first, each counted where the box drops it
    "$GEN" --out "$o" --ranks 2 --window 1 --rounds 2 --malformed >"$DIR/gen.out" ||
        fail "shouter-pcapgen --malformed"
    grep -q '^frames=9 data=4$' "$DIR/gen.out" || fail "--malformed: $(cat "$DIR/gen.out")"
    grep -q ' bad_ip=2 bad_udp=1 bad_port=1 not_ours=1$' "$DIR/gen.out" ||
        fail "--malformed: expected counts: $(cat "$DIR/gen.out")"
    # --forged-join: one frame more, after rank 0's first DATA; the box challenges it
    "$GEN" --out "$o" --ranks 2 --window 1 --rounds 2 --forged-join >"$DIR/gen.out" ||
        fail "shouter-pcapgen --forged-join"
    grep -q '^frames=5 data=4$' "$DIR/gen.out" || fail "--forged-join: $(cat "$DIR/gen.out")"
    grep -q ' msg_leaves=0 msg_challenges=1 ' "$DIR/gen.out" ||
        fail "--forged-join: expected counts: $(cat "$DIR/gen.out")"
    echo "PASS pcapgen"
}

mode=${1:-}
shift || true
case $mode in
pcapgen) mode_pcapgen "$@" ;;
cli) mode_cli ;;
*)
    echo "usage: $0 cli | pcapgen GEN" >&2
    exit 2
    ;;
esac
