#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Self-test of cluster.sh's aggregator start and stop, without namespaces or DPDK: `ip netns
# exec NS CMD` is replaced by a shell function that runs CMD here, and SHR_BUILD points at a
# stand-in shouter-agg that behaves like a slow start: its log (agg.log, where cl_agg_start
# looks for "shouter-agg: ready") is not there for its first 0.5 s, then says ready; SIGINT
# makes it exit 0.
#
# cl_agg_start must wait for it quietly (no "No such file" from grep while agg.log is
# missing), return 0 once it is ready, and cl_agg_stop must see the clean exit (0). Each run
# starts a new stand-in on the same agg.log, which still says ready from the previous one:
# cl_agg_start must return only once the new one is ready (its ready line carries its pid).
#
#   cluster_selftest.sh
set -euo pipefail

# shellcheck source=tests/e2e/cluster.sh
source "$(dirname "$0")/cluster.sh"

fake=$(mktemp -d /tmp/shouter-clself.XXXXXX)
# shellcheck disable=SC2034 # read by cluster.sh
CL_PREFIX=clself$$
trap 'rm -rf "$fake"; [[ -n ${CL_DIR:-} ]] && rm -rf "$CL_DIR"' EXIT
mkdir -p "$fake/app"
# (python: a background job of a script starts with SIGINT ignored, which bash cannot trap)
cat >"$fake/app/shouter-agg" <<'EOF'
#!/usr/bin/env python3
# a stand-in aggregator: no log for 0.5 s (as if the shell had not opened it yet), then ready
import os, signal, sys, time
log = os.environ["FAKE_LOG"]
os.unlink(log)
signal.signal(signal.SIGINT, lambda *a: sys.exit(0))
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
time.sleep(0.5)
with open(log, "a") as f:
    f.write(f"shouter-agg: ready {os.getpid()}\n")
while True:
    time.sleep(0.05)
EOF
printf '#!/bin/sh\nexit 0\n' >"$fake/app/shouter-worker"
chmod +x "$fake/app/shouter-agg" "$fake/app/shouter-worker"

# shellcheck disable=SC2034 # read by cluster.sh (cl_init)
SHR_BUILD=$fake
cl_init
export FAKE_LOG=$CL_DIR/agg.log

# `ip netns exec NS CMD...` runs CMD here, in place of the (background) shell, as ip does
ip() {
    if [[ $1 == netns && $2 == exec ]]; then
        shift 3
        exec "$@"
    else
        command ip "$@"
    fi
}

fail=0
for run in 1 2 3; do
    rc=0
    cl_agg_start --stats 1 2>"$fake/start.err" || rc=$?
    if ((rc != 0)); then
        echo "FAIL: run $run: cl_agg_start returned $rc"
        fail=1
    fi
    if ! grep -q "^shouter-agg: ready $CL_AGG_PID\$" "$FAKE_LOG"; then
        echo "FAIL: run $run: cl_agg_start returned before box $CL_AGG_PID was ready:" \
            "$(cat "$FAKE_LOG" 2>/dev/null)"
        fail=1
    fi
    if [[ -s $fake/start.err ]]; then
        echo "FAIL: run $run: cl_agg_start wrote to stderr while agg.log was missing:"
        sed 's/^/    /' "$fake/start.err"
        fail=1
    fi
    rc=0
    cl_agg_stop || rc=$?
    if ((rc != 0)); then
        echo "FAIL: run $run: cl_agg_stop returned $rc (the stand-in exits 0 on SIGINT)"
        fail=1
    fi
done
if ((fail)); then
    exit 1
fi
echo "PASS: cl_agg_start waits quietly for a log that is not there yet, and for the new box" \
    "when the log says the previous one was ready (3 runs)"
