# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Sourced by scripts/bench.sh (its variables: CL_AGG, CL_PREFIX, CL_DIR, SHR_BUILD, mpps_s,
# say, R), before any namespace is up: the aggregator's own per-lcore benchmark
# (shouter-agg --bench-mpps: the real data path fed from memory on one lcore, 1 KiB and
# 8 KiB chunks, then two lanes on two lcores) and what loss costs the protocol itself
# (tests/sim_loss, fake time). Sets R[] for the figures bench.sh's header lists from
# agg_mpps_per_lcore to crc_fold_vs_hw_hot_8k (but lanes2_vs_lanes1 and
# lanes2_steered_vs_lanes1, which bench.sh derives at its end), and sim_loss1_vs_lossless,
# sim_loss2_vs_lossless.

# mpps_run LOG LCORES [shouter-agg options]: shouter-agg --bench-mpps into LOG (said if it fails)
mpps_run() {
    local log=$1 lcores=$2 rc=0
    shift 2
    say "shouter-agg --bench-mpps $mpps_s${*:+ $*} (-l $lcores)"
    "$CL_AGG" --no-pci --no-huge -m 1024 --file-prefix "$CL_PREFIX-mb" -l "$lcores" -- \
        --bench-mpps "$mpps_s" "$@" >"$log" 2>&1 || rc=$?
    rm -rf /var/run/dpdk/"$CL_PREFIX-mb"
    if ((rc != 0)); then
        say "shouter-agg --bench-mpps $* failed ($rc):"
        tail -n 10 "$log" >&2
    fi
}

bench_lcore() {
    local mb_log mb8_log mb2_log sl_out k

    mb_log=$CL_DIR/bench-mpps.log
    mpps_run "$mb_log" 0
    for k in agg_mpps_per_lcore agg_gbps_per_lcore agg_vs_roofline zc_vs_copy f32_stream_gbps \
            f32_exact_gbps repro_vs_stream mac_vs_crc agg_mpps_total crc_fold_vs_hw \
            crc_fold_vs_hw_hot; do
        # key=value anywhere on a line (the kernel figures share one line)
        R[$k]=$(grep -oE "(^| )$k=[^ ]+" "$mb_log" | tail -n 1 | sed "s/.*$k=//" || true)
        R[$k]=${R[$k]:-nan}
    done
    # the same with 8 KiB chunks (the chunk of a jumbo-frame path)
    mb8_log=$CL_DIR/bench-mpps-8k.log
    mpps_run "$mb8_log" 0 --bench-chunk 2048
    for k in agg_mpps_per_lcore agg_gbps_per_lcore agg_vs_roofline crc_fold_vs_hw \
            crc_fold_vs_hw_hot; do
        R[${k}_8k]=$(grep -oE "^$k=[^ ]+" "$mb8_log" | sed "s/.*$k=//" || true)
        R[${k}_8k]=${R[${k}_8k]:-nan}
    done
    # 1b. the same box with two lanes on two data lcores (EAL -l 0,1: both cores of this machine),
    # the frames spread over the two queues by flow, as af_packet's fanout does (about half of
    # the DATA handed to the other lcore); its total rate over the one-lcore rate just measured
    mb2_log=$CL_DIR/bench-mpps-lanes2.log
    mpps_run "$mb2_log" 0,1 --lanes 2
    R[agg_mpps_lanes1]=${R[agg_mpps_total]}
    R[agg_mpps_lanes2]=$(grep -oE "^agg_mpps_total=[^ ]+" "$mb2_log" | sed 's/.*=//' || true)
    R[agg_mpps_lanes2]=${R[agg_mpps_lanes2]:-nan}
    R[agg_mpps_lanes2_steered]=$(grep -oE "agg_mpps_steered=[^ ]+" "$mb2_log" | sed 's/.*=//' ||
        true)
    R[agg_mpps_lanes2_steered]=${R[agg_mpps_lanes2_steered]:-nan}
    R[handoff_ns_per_frame]=$(grep -oE "^handoff_ns_per_frame=[^ ]+" "$mb2_log" | sed 's/.*=//' ||
        true)
    R[handoff_ns_per_frame]=${R[handoff_ns_per_frame]:-nan}
    grep "^lanes=\|^cpu_share" "$mb2_log" | sed 's/^/bench: /' >&2 || true
    # 1c. what loss costs the protocol itself: the simulation's fake time (tests/sim_loss)
    say "tests/sim_loss (lib/agg + lib/endpoint simulated: 0, 1, 2% loss, fake time)"
    for k in sim_loss1_vs_lossless sim_loss2_vs_lossless; do R[$k]=nan; done
    if [[ -x $SHR_BUILD/tests/sim_loss ]] && sl_out=$("$SHR_BUILD/tests/sim_loss"); then
        for k in sim_loss1_vs_lossless sim_loss2_vs_lossless; do
            R[$k]=$(sed -n "s/^$k=//p" <<<"$sl_out")
        done
        say "$(tr '\n' ' ' <<<"$sl_out")"
    else
        say "tests/sim_loss missing or failed (a build without -Dtests=true?)"
    fi
}
