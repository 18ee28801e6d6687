# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Sourced by scripts/bench.sh (its variables and cluster.sh's functions), with every box
# stopped: the box's DPDK port on net_af_xdp against net_af_packet on the same veth (issue 16
# item 3). DPDK 22.11's af_xdp holds a frame in one umem chunk of a page: it refuses an MTU
# over 3542, so the default 8 KiB chunks in 9000-byte frames do not fit it. Both are measured
# where both work: every link at MTU BENCH_PMD_MTU (default 3000, scripts/netns.sh mtu),
# chunk BENCH_PMD_CHUNK (default 512 elements: 2 KiB of float32), 64 MiB float32 allreduce
# of the kernel-UDP ranks, the two alternated BENCH_PMD_REPS times (default 3; 0 skips
# this); the links go back to BENCH_MTU afterwards. Sets (medians over the repetitions)
#   R[pmd_afp_gbps]  goodput with the box on net_af_packet
#   R[pmd_xdp_gbps]  the same on net_af_xdp (nan where the PMD is missing or refuses)

# pmd_median X...: the median of the numbers
pmd_median() {
    printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {
        if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

bench_pmd() {
    local udp_drivers=${drivers//dpdk/udp} reps=${BENCH_PMD_REPS:-3}
    local mtu=${BENCH_PMD_MTU:-3000} pchunk=${BENCH_PMD_CHUNK:-512} rep pmd vdev
    local -A got=([afp]="" [xdp]="")
    R[pmd_afp_gbps]=nan
    R[pmd_xdp_gbps]=nan
    ((reps > 0)) || return 0
    if ! "$CL_NETNS" mtu "$mtu" --prefix "$CL_PREFIX"; then
        say "pmd: could not set the links' MTU to $mtu"
        return 0
    fi
    for ((rep = 1; rep <= reps; rep++)); do
        for pmd in afp xdp; do
            vdev=
            [[ $pmd == xdp ]] && vdev=net_af_xdp0,iface=shr0
            if ! CL_AGG_VDEV=$vdev cl_agg_start; then
                say "pmd: the box did not start on ${vdev:-net_af_packet}"
                continue
            fi
            say "pmd: $pmd, rep $rep: allreduce 64 MiB float32, chunk $pchunk, MTU $mtu"
            if cl_allreduce "$udp_drivers" --dtype float32 --size 64M --iters "$iters" \
                    --warmup 1 "${wopts[@]}" --chunk "$pchunk" >&2; then
                got[$pmd]+=" $(cl_mean goodput_gbps)"
            fi
            cl_agg_stop || say "pmd: box exit status $?"
        done
    done
    "$CL_NETNS" mtu "${BENCH_MTU:-9000}" --prefix "$CL_PREFIX" ||
        say "pmd: could not set the links' MTU back to ${BENCH_MTU:-9000}"
    for pmd in afp xdp; do
        say "pmd: $pmd goodputs:${got[$pmd]:- none}"
        [[ -n ${got[$pmd]} ]] || continue
        R[pmd_${pmd}_gbps]=$(pmd_median ${got[$pmd]})
    done
}
