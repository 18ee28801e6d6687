#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Trees of boxes (issue 10 item 1). Two levels (default): leaf boxes 1 and 2 (P-agg,
# 198.18.0.1; P-agg2, 198.18.0.2), each with two kernel-UDP ranks of the job, under the root
# box 3 (P-agg3, 198.18.0.3: shouter-agg --upstream on the leaves). Three levels (--levels 3):
# leaf 1 goes up through a mid box 2 (which has no ranks of its own) to the root 3, leaf 4
# (198.18.0.4) straight to the root. A tree of shards (--shards): the job sharded over two
# such two-level trees, leaves 1, 2 under root 3 and leaves 4, 5 under root 6; ranks 0, 1
# list leaves 1 and 4 (--agg 198.18.0.1,198.18.0.4), ranks 2, 3 leaves 2 and 5: each tree
# sums its share of every call. 5% loss on the root's link (every inter-box message crosses
# it; with --shards, root 3's) and on worker 1's link.
#
# 1. int32 allreduce: every rank checks its output against the sum of all four ranks' inputs
#    (shouter-worker --tree-rank/--tree-world), every box completed rounds of the job and the
#    non-root boxes passed their upstream results down (/shouter/stats msg_up_results grew);
# 2. float32 allreduce: bit-identical at every rank (the same crc= at the four ranks);
#    then each other collective (broadcast, reduce, reduce_scatter, allgather, gather,
#    scatter, alltoall; int32) in tree ranks, with roots under either leaf: every rank checks
#    its output against all four ranks' inputs;
# 3. a leaf box (2 levels: box 2; 3 levels: box 4) is killed (SIGKILL) mid-job: every rank
#    exits 3 and its error names that box's address: the leaf's own ranks because their box
#    is silent, the others because the root blamed that leaf ("on behalf of its upstream
#    box ...: the upstream job's member R (198.18.0.K ..."); the job is gone from every box
#    left. "Mid-job": 100000 iterations asked, the kill comes once the box completed a round.
#    With --shards (leaf 5 killed): ranks 0, 1, not under it, name its tree (see below).
#
#   tree.sh [--levels 2|3 | --shards]
set -euo pipefail

levels=2
shards=0
while (($#)); do
    case $1 in
    --levels) levels=$2; shift 2 ;;
    --shards) shards=1; shift ;;
    *) echo "tree.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ $levels == 2 || $levels == 3 ]] || { echo "tree.sh: --levels 2 or 3" >&2; exit 2; }

# shellcheck source=tests/e2e/faults_lib.sh
source "$(dirname "$0")/faults_lib.sh"
fl_init tr

n=4
tmo=(--job-timeout-ms 2000)
if ((shards)); then
    # leaves[] entries: the boxes a rank lists (its leaf in each tree)
    nbox=6 root=3 leaves=("1,4" "2,5") victim=5
    cl_up "$n" "$nbox"
    for r in 3 6; do CL_BOX=$r cl_agg_start "${tmo[@]}"; done
    for k in 1 2 4 5; do
        up=$((k < 3 ? 3 : 6))
        CL_BOX=$k cl_agg_start "${tmo[@]}" --upstream "198.18.0.$up" \
            --up-rank $(((k - 1) % 3)) --up-world 2
    done
elif ((levels == 2)); then
    nbox=3 root=3 leaves=(1 2) victim=2
    cl_up "$n" "$nbox"
    CL_BOX=$root cl_agg_start "${tmo[@]}"
    CL_BOX=1 cl_agg_start "${tmo[@]}" --upstream 198.18.0.3 --up-rank 0 --up-world 2
    CL_BOX=2 cl_agg_start "${tmo[@]}" --upstream 198.18.0.3 --up-rank 1 --up-world 2
else
    nbox=4 root=3 leaves=(1 4) victim=4
    cl_up "$n" "$nbox"
    CL_BOX=$root cl_agg_start "${tmo[@]}"
    CL_BOX=2 cl_agg_start "${tmo[@]}" --upstream 198.18.0.3 --up-rank 0 --up-world 2
    CL_BOX=4 cl_agg_start "${tmo[@]}" --upstream 198.18.0.3 --up-rank 1 --up-world 2
    CL_BOX=1 cl_agg_start "${tmo[@]}" --upstream 198.18.0.2 --up-rank 0 --up-world 1
fi
"$CL_NETNS" netem "agg$root" "loss 5%" --prefix "$CL_PREFIX"
"$CL_NETNS" netem w1 "loss 5%" --prefix "$CL_PREFIX"

now() { date +%s.%N; }
since() { awk -v t0="$1" -v t1="$(now)" 'BEGIN {printf "%.2f", t1 - t0}'; }
stat() { CL_BOX=$1 fl_json "$(CL_BOX=$1 fl_tel /shouter/stats)" "$2"; }

# tree_job GROUP JOB [worker options]: the 4 ranks, two under each leaf (ranks 0, 1 of the
# leaf's job; tree ranks 0..3), in P-w0..3; group G gets every rank
tree_job() {
    local g=$1 job=$2 l r t=0
    shift 2
    eval "FL_${g}_PIDS=(); FL_${g}_LOGS=(); FL_${g}_DRV=()"
    for l in "${leaves[@]}"; do
        for r in 0 1; do
            fl_start_rank "$g" "$t" "$job" "$r" 2 udp --agg "198.18.0.${l//,/,198.18.0.}" \
                --tree-rank "$t" --tree-world "$n" --chunk 256 "$@" || return
            t=$((t + 1))
        done
    done
}

# --- 1. int32 allreduce, exact; every box sums ---
J=31
declare -A before
for ((k = 1; k <= nbox; k++)); do before[$k]=$(stat "$k" rounds_allreduce); done
up0=$(stat 1 msg_up_results)
cl_log "job $J: int32 allreduce, $n ranks under a $levels-level tree (sharded over two" \
    "trees: $shards), 5% loss on agg$root and w1"
tree_job I $J --dtype int32 --size 1M --iters 3 --warmup 1
fl_wait_job I || fl_fail "job $J (int32 allreduce over a $levels-level tree)"
for ((k = 1; k <= nbox; k++)); do
    d=$(($(stat "$k" rounds_allreduce) - before[$k]))
    cl_log "box $k: +$d rounds"
    ((d > 0)) || fl_fail "box $k summed nothing of job $J"
done
d=$(($(stat 1 msg_up_results) - up0))
((d > 0)) || fl_fail "leaf 1 passed no upstream result down"
cl_log "leaf 1: +$d upstream results passed down; stats: up_resent=$(stat 1 msg_up_resent)"

# --- 2. float32 allreduce, bit-identical at every rank ---
J=32
tree_job F $J --dtype float32 --size 1M --iters 3 --warmup 1
fl_wait_job F || fl_fail "job $J (float32 allreduce over the tree: not bit-identical or failed)"

# --- 2b. every other collective, in tree ranks, roots under different leaves ---
J=33
for c in broadcast:2 reduce:1 reduce_scatter:0 allgather:0 gather:3 scatter:0 alltoall:0; do
    kind=${c%:*} root=${c#*:}
    cl_log "job $J: int32 $kind (root: tree rank $root) over the tree"
    tree_job C $J --coll "$kind" --root "$root" --dtype int32 --size 64K --iters 2 --warmup 1
    fl_wait_job C || fl_fail "job $J ($kind, root $root, over the tree)"
    J=$((J + 1))
done

# --- 3. a leaf box dies mid-job ---
J=40
cl_log "job $J: leaf box $victim is killed mid-run"
tree_job K $J --dtype int32 --size 1M --iters 100000 --warmup 1 --timeout-ms 3000
CL_BOX=$victim fl_wait_json /shouter/jobs "$J/active" 1 30 ||
    fl_fail "job $J never active at box $victim"
CL_BOX=$victim fl_wait_grow /shouter/stats msg_completed 30 ||
    fl_fail "box $victim completes no round"
t0=$(now)
kill -KILL "${CL_BOX_PIDS[$victim]}"
wait "${CL_BOX_PIDS[$victim]}" 2>/dev/null || true
cl_box_pid_set "$victim" ""
for r in "${!FL_K_PIDS[@]}"; do
    rc=0
    wait "${FL_K_PIDS[$r]}" || rc=$?
    echo "  tree rank $r: exit $rc after $(since "$t0") s"
    grep -h 'aborted\|no result' "${FL_K_LOGS[$r]}" | head -n 1 | sed 's/^/    /' || true
    ((rc == 3)) || fl_fail "tree rank $r exit $rc (want 3)"
    if ((shards)) && ((r < 2)); then
        # Ranks 0, 1 are not under the dead leaf 5, and its death stalls ranks 2, 3 in both
        # trees (a sharded call waits for every box): the first tree's root then times out
        # leaf 2 as the second's times out leaf 5, a race between equal bounds. Either way
        # their error names the second tree (its root's ABORT naming 5, or its leaf 4
        # silent), where the fault is.
        grep -Eq "198\.18\.0\.[456]:" "${FL_K_LOGS[$r]}" ||
            fl_fail "tree rank $r does not name the dead box's tree (198.18.0.4-6)"
        continue
    fi
    grep -q "198.18.0.$victim" "${FL_K_LOGS[$r]}" ||
        fl_fail "tree rank $r does not name the dead box 198.18.0.$victim"
done
# results the boxes resent unasked (see shr_agg_nudge.c): a rank that lost one as the tree
# stalled still sends its next round, so only the dead box is blamed
for ((k = 1; k <= nbox; k++)); do
    ((k == victim)) || cl_log "box $k: msg_nudges=$(stat "$k" msg_nudges)"
done
for ((k = 1; k <= nbox; k++)); do
    ((k == victim)) && continue
    CL_BOX=$k fl_wait_json /shouter/jobs "$J" none 30 ||
        fl_fail "box $k still lists job $J: $FL_LAST"
done
fl_finish
