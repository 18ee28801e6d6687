#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# A randomized campaign of the lib/agg + lib/endpoint simulation (issue 18; its own script,
# CI does not run it): RUNS runs of tests/unit/sim_campaign.c, each drawing from its seed a
# world of 1-8, jobs made by JOIN or static (with fixed addresses or bound on JOIN), window,
# chunk, tensor lengths, loss, duplication, copies held back 0.3-5 ms, members paused up to
# 1.5 s, and sometimes a held-back copy delivered after its slot's next round. Prints every
# failed run (replay one with: sim_campaign --seed SEED --first I --runs 1 --verbose, plus
# --restart 100 if its name says restart), then the totals: runs, wrong results, hangs, runs
# in which a member never got its LEAVE_ACK, and runs that restarted.
# With SHR_RESTART=PCT, that percentage of the runs also restart (issue 14): in each job a
# member crashes partway through an allreduce and the job runs again with new processes and
# new inputs while the old run's messages are still about (sim_engine.h).
#
#   scripts/sim_campaign.sh [RUNS [SEED]]     (default 2000 runs, seed 1)
#   SHR_BUILD=dir   build directory (default ./build; configured if missing)
#   SHR_JOBS=N      processes in parallel, at nice 10 (default 2)
#   SHR_RESTART=PCT percentage of runs with a restart (default 0)
#
# Exit 0 if no run was wrong or hung, 1 otherwise (also when a process died), 2 on usage.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${SHR_BUILD:-$top/build}
runs=${1:-2000}
seed=${2:-1}
jobs=${SHR_JOBS:-2}
restart=${SHR_RESTART:-0}
# checked before anything is built (SHR_JOBS=0 divided by zero after the build)
[[ $runs =~ ^[1-9][0-9]{0,8}$ ]] || { echo "sim_campaign: RUNS: 1..999999999, not '$runs'" >&2; exit 2; }
[[ $seed =~ ^[0-9]{1,9}$ ]] || { echo "sim_campaign: SEED: 0..999999999, not '$seed'" >&2; exit 2; }
[[ $jobs =~ ^[1-9][0-9]?$ ]] || { echo "sim_campaign: SHR_JOBS: 1..99, not '$jobs'" >&2; exit 2; }
[[ $restart =~ ^([0-9]|[1-9][0-9]|100)$ ]] ||
    { echo "sim_campaign: SHR_RESTART: 0..100, not '$restart'" >&2; exit 2; }

if [[ ! -f $build/build.ninja ]]; then
    meson setup "$build" "$top" >/dev/null
fi
ninja -C "$build" tests/sim_campaign >/dev/null
out=$(mktemp -d /tmp/sim_campaign.XXXXXX)
trap 'rm -rf "$out"' EXIT

start=$SECONDS
per=$(((runs + jobs - 1) / jobs))
pids=()
for ((j = 0; j < jobs; j++)); do
    first=$((j * per))
    n=$((runs - first < per ? runs - first : per))
    ((n > 0)) || break
    nice -n 10 "$build/tests/sim_campaign" --runs "$n" --first "$first" --seed "$seed" \
        --restart "$restart" >"$out/part.$j" &
    pids+=($!)
done
# a process that died (a crash, killed) lost its buffered WRONG/HANG lines and its totals:
# a failure, not a shorter campaign
crashed=0
for p in "${pids[@]}"; do
    wait "$p" || { echo "campaign: a sim_campaign process exited $?" >&2; crashed=1; }
done

grep -hv -e '^ok ' -e '^runs ' "$out"/part.* || true
awk '/^runs / { r += $2; ok += $4; w += $6; h += $8; u += $10; x += $12 }
     END { printf "campaign: runs %d ok %d wrong %d hangs %d leave_unacked %d restarted %d\n",
                  r, ok, w, h, u, x }' "$out"/part.*
echo "campaign: seed $seed, restarts in $restart% of the runs, $((SECONDS - start)) s"
if ((crashed)) || grep -q -e '^WRONG' -e '^HANG' "$out"/part.*; then
    exit 1
fi
