#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# shouter-udpping, the bench's bare UDP floor, checked on 127.0.0.1 (suite 'integration'; no
# root, no EAL). What scripts/bench.sh relies on:
#   - a plain echo (--ranks 1) answers one ping: exit 0, every round done (udp_rtt_n= and
#     udp_rtt_lost=, the rounds sent again, add up to the count), a p50 and a p99;
#   - an echo of --ranks 2 answers only once both sources sent: one ping alone gets no answer
#     (exit 1 after its 10 timeouts, "no answer"), two pings together both finish every round,
#     so the bench's figure is a gather and fan-out of N ranks;
#   - the echo holds one request per source: a copy sent again replaces the first (a source
#     that sent twice is still one of the N, and is answered once);
#   - a round ends on its own answer only: a late copy of an earlier round's answer (what a
#     request sent again after a timeout brings) is not taken for it, nor timed;
#   - bad options exit 2, naming the option; the echo ends on SIGTERM with exit 0.
#
#   udpping_it.sh      (SHR_BUILD: the build directory)

set -u

UP=${SHR_BUILD:?SHR_BUILD must name the build directory}/app/shouter-udpping
DIR=$(mktemp -d /tmp/shouter-udpping.XXXXXX)
ECHO_PID=
fails=0

cleanup() {
    [[ -n $ECHO_PID ]] && kill "$ECHO_PID" 2>/dev/null
    [[ -n $ECHO_PID ]] && wait "$ECHO_PID" 2>/dev/null
    rm -rf "$DIR"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# echo_start RANKS: an echo on 127.0.0.1, any free port; sets PORT once it is bound
echo_start() {
    local i
    rm -f "$DIR/ready"
    "$UP" echo --bind 127.0.0.1:0 --ranks "$1" --ready-file "$DIR/ready" 2>"$DIR/echo.err" &
    ECHO_PID=$!
    for ((i = 0; i < 300; i++)); do
        [[ -s $DIR/ready ]] && break
        kill -0 "$ECHO_PID" 2>/dev/null || break
        sleep 0.1
    done
    PORT=$(cat "$DIR/ready" 2>/dev/null)
    if [[ ! $PORT =~ ^[0-9]+$ ]]; then
        fail "echo --ranks $1 not ready"
        cat "$DIR/echo.err" >&2
        exit 1
    fi
}

echo_stop() {
    local rc
    kill -TERM "$ECHO_PID"
    wait "$ECHO_PID"
    rc=$?
    ECHO_PID=
    ((rc == 0)) || fail "echo exit $rc on SIGTERM, want 0"
}

# field FILE NAME: NAME=value from a ping's output
field() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"; }

# check_ping OUT RC COUNT: exit 0, COUNT rounds finished (timed, or sent again: lost), a p50
# and a p99
check_ping() {
    local out=$1 rc=$2 count=$3 n lost
    ((rc == 0)) || { fail "ping exit $rc, want 0"; return; }
    n=$(field "$out" udp_rtt_n)
    lost=$(field "$out" udp_rtt_lost)
    [[ $n =~ ^[0-9]+$ && $lost =~ ^[0-9]+$ ]] && ((n + lost == count && n > 0)) ||
        fail "udp_rtt_n $n udp_rtt_lost $lost: want $count rounds"
    for k in udp_rtt_us_p50 udp_rtt_us_p99; do
        [[ $(field "$out" $k) =~ ^[0-9]+\.[0-9]$ ]] || fail "no $k in $(cat "$out")"
    done
}

# a plain echo
echo_start 1
"$UP" ping --to "127.0.0.1:$PORT" --size 4096 --count 300 >"$DIR/p1" 2>"$DIR/p1.err"
check_ping "$DIR/p1" $? 300
echo_stop

# a gather of 2: one ping alone is never answered
echo_start 2
"$UP" ping --to "127.0.0.1:$PORT" --count 3 --warmup 0 --timeout-ms 20 >"$DIR/a" 2>"$DIR/a.err"
rc=$?
((rc == 1)) || fail "a lone ping to an echo of --ranks 2: exit $rc, want 1"
grep -q "no answer" "$DIR/a.err" || fail "a lone ping: no 'no answer' in $(cat "$DIR/a.err")"
echo_stop

# ... two together both finish every round, whichever starts first (one that waits long for
# the other sends its request again: that round counts in udp_rtt_lost, not udp_rtt_n)
echo_start 2
"$UP" ping --to "127.0.0.1:$PORT" --count 300 >"$DIR/b1" 2>"$DIR/b1.err" &
b1=$!
"$UP" ping --to "127.0.0.1:$PORT" --count 300 >"$DIR/b2" 2>"$DIR/b2.err"
rc2=$?
wait "$b1"
rc1=$?
check_ping "$DIR/b1" $rc1 300
check_ping "$DIR/b2" $rc2 300
echo_stop

# a request sent again replaces its first copy: a source that sent twice is one of the 2, so
# the echo answers it once, and only when the second source sends. The checks that nothing
# (more) came wait 300 ms: a slow host can only hide a wrong answer there, not invent one; the
# answers that must come are waited for up to 30 s.
echo_start 2
/usr/bin/python3 - "$PORT" <<'PY' || fail "an echo of --ranks 2 and a request sent again"
import socket, sys
port = int(sys.argv[1])
a, b = (socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(2))
for s in (a, b):
    s.connect(("127.0.0.1", port))
def answers(s, first_s):
    """The first answer within first_s seconds (if any), then any more within 300 ms."""
    got, wait = [], first_s
    try:
        while True:
            s.settimeout(wait)
            got.append(s.recv(65536))
            wait = 0.3
    except socket.timeout:
        return got
a.send(b"A" * 8 + b"first")
a.send(b"A" * 8 + b"again")
if answers(a, 0.3):
    sys.exit("answered with one source of 2 (its request sent twice)")
b.send(b"B" * 16)
ga, gb = answers(a, 30), answers(b, 30)
if ga != [b"A" * 8 + b"again"] or gb != [b"B" * 16]:
    sys.exit(f"answers {ga} and {gb}: want the later copy of A's once, and B's")
PY
echo_stop

# a round ends on its own answer: an echo (here the test's own) that answers round 0 twice,
# as when the first copy's answer comes late after a resend, then holds round 1's answer 300
# ms. A ping that took the copy for round 1's answer sends round 2's request meanwhile (a
# slow host can only hide that, not invent it); one that waits times round 1 at 300 ms or
# more (its p99 of 3 rounds).
/usr/bin/python3 - "$UP" <<'PY' || fail "a late copy of round 0's answer taken for round 1's"
import socket, subprocess, sys
e = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
e.bind(("127.0.0.1", 0))
e.settimeout(30)
ping = subprocess.Popen([sys.argv[1], "ping", "--to", "127.0.0.1:%d" % e.getsockname()[1],
                         "--size", "64", "--count", "3", "--warmup", "0", "--timeout-ms",
                         "10000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
def request(want):
    req, src = e.recvfrom(65536)
    seq = int.from_bytes(req[:8], "little")
    if seq != want:
        ping.kill()
        sys.exit(f"request of round {seq}, want round {want}")
    return req, src
req, src = request(0)
e.sendto(req, src)
e.sendto(req, src)          # the late copy
req, src = request(1)
e.settimeout(0.3)
try:
    extra = e.recvfrom(65536)[0]
    ping.kill()
    sys.exit("round %d's request came before round 1 was answered: the ping took round 0's "
             "late answer for round 1's" % int.from_bytes(extra[:8], "little"))
except socket.timeout:
    pass
e.settimeout(30)
e.sendto(req, src)
req, src = request(2)
e.sendto(req, src)
out, err = ping.communicate(timeout=30)
f = dict(kv.split("=", 1) for kv in out.split())
if ping.returncode != 0 or f.get("udp_rtt_n") != "3" or f.get("udp_rtt_lost") != "0":
    sys.exit(f"ping exit {ping.returncode}: {out} {err}")
if float(f["udp_rtt_us_p99"]) < 300000:
    sys.exit(f"round 1 timed at {f['udp_rtt_us_p99']} us, held 300 ms by the echo")
PY

# bad options
for bad in "ping --to 127.0.0.1:1 --ranks 2|--ranks" "echo --bind 127.0.0.1:0 --size 9|--size" \
        "ping --to 127.0.0.1:1 --size 7|--size" "ping --to 127.0.0.1:0|--to" \
        "echo --bind 300.0.0.1:9|--bind" "ping --to 127.0.0.1:1 --count 0|--count" \
        "ping|--to" "bounce --to 127.0.0.1:1|usage"; do
    "$UP" ${bad%%|*} >/dev/null 2>"$DIR/bad.err"
    rc=$?
    ((rc == 2)) || fail "'${bad%%|*}': exit $rc, want 2"
    grep -q -- "${bad##*|}" "$DIR/bad.err" || fail "'${bad%%|*}': $(cat "$DIR/bad.err")"
done

((fails == 0)) && echo "udpping: all checks passed"
((fails == 0))
