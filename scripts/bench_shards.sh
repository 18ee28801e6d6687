# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Sourced by scripts/bench.sh (its variables and cluster.sh's functions): a job sharded over
# two boxes (issue 10 item 2, lib/shard), against one box, in the same run. Box 1 (P-agg) is
# running on its one lcore (-l 0); box 2 starts in P-agg2 on the other core (-l 1). The ranks
# are all kernel UDP (a DPDK port belongs to one communicator). Sets
#   R[shards1_gbps_n4]  64 MiB float32 allreduce goodput through box 1 alone
#   R[shards2_gbps_n4]  the same sharded over boxes 1 and 2 (--agg 198.18.0.1,198.18.0.2)

bench_shards() {
    local udp_drivers=${drivers//dpdk/udp}
    R[shards1_gbps_n4]=nan
    R[shards2_gbps_n4]=nan
    say "shards: box 2 on lcore 1 (P-agg2, 198.18.0.2)"
    if ! CL_BOX=2 CL_AGG_LCORES=1 cl_agg_start; then
        say "shards: box 2 did not start"
        return 0
    fi
    say "shards: allreduce 64 MiB float32, ranks: $udp_drivers, one box"
    if cl_allreduce "$udp_drivers" --dtype float32 --size 64M --iters "$iters" --warmup 1 \
            "${wopts[@]}" --agg 198.18.0.1 >&2; then
        R[shards1_gbps_n4]=$(cl_mean goodput_gbps)
    fi
    say "shards: the same, sharded over two boxes"
    if cl_allreduce "$udp_drivers" --dtype float32 --size 64M --iters "$iters" --warmup 1 \
            "${wopts[@]}" --agg 198.18.0.1,198.18.0.2 >&2; then
        R[shards2_gbps_n4]=$(cl_mean goodput_gbps)
    fi
    CL_BOX=2 cl_agg_stop || say "shards: box 2 exit status $?"
}
