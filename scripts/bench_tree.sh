# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Sourced by scripts/bench.sh (its variables and cluster.sh's functions), with box 1
# stopped: a two-level tree of boxes (issue 10 item 1) against one flat box, same ranks, in
# the same run. Box 2 (P-agg2, 198.18.0.2, lcore 0) is the flat box, then the tree's root
# under leaf boxes 3 and 4 (P-agg3, P-agg4, lcore 1, shouter-agg --upstream 198.18.0.2):
# ranks 0, 1 under leaf 3, ranks 2, 3 under leaf 4 (CL_TREE). All ranks on kernel UDP. Sets
#   R[tree_flat_gbps_n4]  64 MiB float32 allreduce goodput through box 2 alone
#   R[tree_gbps_n4]       the same through the tree (leaves 3, 4 under root 2)
# On these 2 cores the tree's three boxes share the CPUs with the four ranks: this measures
# what a tree costs here, not what it gives across racks (where each leaf saves the root's
# link its ranks' traffic).

bench_tree() {
    local udp_drivers=${drivers//dpdk/udp} k
    local -a tmo=(--idle-us 50)
    R[tree_flat_gbps_n4]=nan
    R[tree_gbps_n4]=nan
    say "tree: box 2 (P-agg2, 198.18.0.2) on lcore 0, flat"
    if ! CL_BOX=2 CL_AGG_LCORES=0 cl_agg_start "${tmo[@]}"; then
        say "tree: box 2 did not start"
        return 0
    fi
    say "tree: allreduce 64 MiB float32, ranks: $udp_drivers, one flat box"
    if cl_allreduce "$udp_drivers" --dtype float32 --size 64M --iters "$iters" --warmup 1 \
            "${wopts[@]}" --agg 198.18.0.2 >&2; then
        R[tree_flat_gbps_n4]=$(cl_mean goodput_gbps)
    fi
    for k in 3 4; do
        if ! CL_BOX=$k CL_AGG_LCORES=1 cl_agg_start "${tmo[@]}" --upstream 198.18.0.2 \
                --up-rank $((k - 3)) --up-world 2; then
            say "tree: leaf box $k did not start"
            # every box started so far (leaf 3 when 4 failed), not the root alone: a box left
            # running skews every figure after this one
            for ((k = k - 1; k >= 2; k--)); do CL_BOX=$k cl_agg_stop || true; done
            return 0
        fi
    done
    say "tree: the same through leaves 3, 4 under root 2"
    if CL_TREE="3 4" cl_allreduce "$udp_drivers" --dtype float32 --size 64M \
            --iters "$iters" --warmup 1 "${wopts[@]}" >&2; then
        R[tree_gbps_n4]=$(cl_mean goodput_gbps)
    fi
    for k in 4 3 2; do
        CL_BOX=$k cl_agg_stop || say "tree: box $k exit status $?"
    done
}
