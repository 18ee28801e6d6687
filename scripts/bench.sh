#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# The benchmark, in one run (as root): builds; the aggregator's own per-lcore micro-benchmark
# (shouter-agg --bench-mpps); then, across network namespaces (scripts/netns.sh), shouter
# allreduce with 4 ranks: 64 MiB float32 goodput and 4 KiB latency; the same 64 MiB with 1%
# of the frames lost in each direction of every worker link; and the PyTorch Gloo baseline
# (scripts/gloo_bench.py) on the same namespaces and addresses. Ends with one name=value per
# line; X_vs_Y is always X / Y:
#   agg_mpps_per_lcore agg_gbps_per_lcore agg_vs_roofline zc_vs_copy   (from shouter-agg,
#                        1 KiB int32 chunks)
#   agg_mpps_per_lcore_8k agg_gbps_per_lcore_8k agg_vs_roofline_8k   the same with 8 KiB chunks
#                        (--bench-chunk 2048: the chunk of a jumbo-frame path, chunk auto)
#   agg_mpps_lanes1      shouter-agg --bench-mpps, one lane on one lcore (-l 0): DATA Mpps
#   agg_mpps_lanes2      the same with --lanes 2 on two data lcores (-l 0,1, the machine's
#                        two cores), frames spread over the 2 queues by flow as af_packet
#                        qpairs=2 does: about half handed to the other lcore in software
#   agg_mpps_lanes2_steered  the same, frames spread by lane (rte_flow steering: no handoff)
#   lanes2_vs_lanes1     agg_mpps_lanes2 / agg_mpps_lanes1, same run (by flow: the handoff, and the
#                        harness feeds a slot's next round only once the previous round's DATA
#                        are taken, which drains both lcores twice per pass)
#   lanes2_steered_vs_lanes1  agg_mpps_lanes2_steered / agg_mpps_lanes1 (no handoff, no drain)
#   handoff_ns_per_frame CPU time an lcore adds per DATA it hands to another (measured on one
#                        thread by shouter-agg --bench-mpps --lanes 2: a lower bound)
#   f32_stream_gbps f32_exact_gbps repro_vs_stream   (shouter-agg: the float32 SUM kernel of a
#                        job's streaming slots and of a reproducible job's exact slots, side
#                        by side; repro_vs_stream = exact / streaming)
#   mac_vs_crc           (shouter-agg) the per-job MAC's cost: the roofline kernel with the
#                        AES-128-GMAC verify (and a signed RESULT per round) over CRC32C alone
#   crc_fold_vs_hw crc_fold_vs_hw_8k  (shouter-agg) CPU time of a DATA's CRC32C (1 KiB, 8 KiB)
#                        with the crc32 instruction's three streams over that with AVX-512
#                        folding (> 1: folding faster; 1 where the CPU cannot fold), over the
#                        benchmark's frames in turn (read from memory, as the data path does)
#   crc_fold_vs_hw_hot crc_fold_vs_hw_hot_8k  the same over one DATA in L1: the CPU's own rate
#   e2e_gbps_n4          shouter 64 MiB float32 goodput, mean over the 4 ranks; with Gloo, the
#                        median of BENCH_GLOO_PAIRS runs, each right before a Gloo run
#   gloo_gbps_n4         Gloo, same tensor: the median of those Gloo runs
#   e2e_vs_gloo_n4       the median of the pairs' ratios, shouter over Gloo (> 1: shouter
#                        faster); without Gloo, nan
#   lat_us_p50_4k        shouter 4 KiB float32 allreduce latency p50, mean over ranks: a
#                        run with --no-verify whose crc= must be that of a checked run of
#                        the same iterations just before it
#   gloo_lat_us_p50_4k   Gloo, same
#   lat_vs_gloo_4k       lat_us_p50_4k / gloo_lat_us_p50_4k (< 1: shouter faster)
#   udp_rtt_us_p50       a bare 4 KiB UDP request and reply between the namespaces of rank 0
#                        and of the box (scripts/shaped_tool.py udp-echo on a kernel address
#                        of the box's veth, 198.18.0.254, udp-ping in P-w0), BENCH_LAT_ITERS
#                        of them, measured right after the latency runs with the box running;
#                        the median of BENCH_FLOOR_REPS (5) such runs (one run reads 10-18 or
#                        70-89 us here, by how the 2 vCPUs are scheduled)
#   lat_vs_udp_rtt_4k    lat_us_p50_4k / udp_rtt_us_p50
#   lat_us_p50_4k_n1     lat_us_p50_4k of rank 0 alone (a job of one: rank 0's namespace to
#                        the box, the path udp_rtt_us_p50 takes, no other rank on the cores)
#   lat_vs_udp_rtt_4k_n1 lat_us_p50_4k_n1 / udp_rtt_us_p50
#   udp_gather_us_p50_4k the bare kernel-UDP floor of lat_us_p50_4k: every rank's namespace
#                        sends 4 KiB to an echo on the box's veth (198.18.0.254) that answers
#                        all once it holds one from each (app/udpping: shouter-udpping echo
#                        --ranks N), nothing summed, no box in the path; the mean over the
#                        ranks of their p50, BENCH_LAT_ITERS rounds, the box running (idle);
#                        the median of BENCH_FLOOR_REPS (5) such runs: on these 2 vCPUs one
#                        run reads anywhere from 44 to 180 us, by where the scheduler puts
#                        the five processes (with no box running, 100 us every time)
#   udp_gather_us_p50_4k_n1  the same, one rank: a bare round trip from C
#   udp_gather_vs_rtt_4k udp_gather_us_p50_4k / udp_gather_us_p50_4k_n1: what N ranks on these
#                        cores cost a bare exchange (lat_vs_udp_rtt_4k's floor, near enough)
#   lat_vs_udp_gather_4k lat_us_p50_4k / udp_gather_us_p50_4k: shouter over that floor
#   e2e_loss1_gbps_n4    e2e_gbps_n4 with 1% loss per direction on every worker link: the
#                        median of BENCH_LOSS_PAIRS runs, each right after a lossless one
#   e2e_loss1_lossless_gbps_n4  the median of those lossless runs: the loss rules in place
#                        at 0% (scripts/netns.sh netem all "loss 0%"), so that the pair
#                        differs only in the drops (the rules cost CPU here by themselves)
#   e2e_loss1_vs_lossless  the median of the pairs' ratios (lossy over the lossless run
#                        just before it)
#   e2e_loss0_norules_gbps_n4  the median of runs without the rules, each right before a
#                        lossless one; e2e_loss0_vs_norules: the median of those pairs'
#                        ratios (rules at 0% over none: what the loss emulator costs)
#   e2e_gso_gbps_n4 e2e_nogso_gbps_n4  e2e_gbps_n4 with the kernel UDP driver's GSO (the
#                        default) and without (shouter-worker --no-gso): medians of
#                        BENCH_GSO_PAIRS pairs back to back, in turn one first and the other
#   gso_vs_nogso         the median of the pairs' ratios (udp ranks only, else nan)
#   e2e_group_gbps_n4 e2e_unicast_gbps_n4  e2e_gbps_n4 with the box's result group (the
#                        bench's default, BENCH_GROUP) and with every result sent to each rank
#                        (shouter-worker --no-group): medians of BENCH_GROUP_PAIRS pairs back
#                        to back, in turn one first and the other
#   group_vs_unicast     the median of the pairs' ratios (with a group only, else nan)
#   sim_loss1_vs_lossless sim_loss2_vs_lossless  (tests/sim_loss) what 1% and 2% loss per
#                        direction cost the protocol itself: the simulation of lib/agg and
#                        lib/endpoint (2 jobs of 4 ranks, window 16, four 1 Mi-element
#                        allreduces, 3 seeds), lossless fake time over lossy fake time: no
#                        CPU to share, so no scheduling in it (which e2e_loss1 measures too)
#   shards1_gbps_n4      64 MiB float32 goodput, kernel UDP ranks, one box on one lcore
#   shards2_gbps_n4      the same sharded over two boxes (lib/shard), one lcore each
#   shards2_vs_shards1   shards2_gbps_n4 / shards1_gbps_n4 (scripts/bench_shards.sh)
#   tree_flat_gbps_n4    64 MiB float32 goodput, kernel UDP ranks, one flat box (box 2)
#   tree_gbps_n4         the same through a two-level tree: leaves 3, 4 under root 2
#   tree_vs_flat         tree_gbps_n4 / tree_flat_gbps_n4 (scripts/bench_tree.sh)
#   pmd_afp_gbps pmd_xdp_gbps xdp_vs_afp  (scripts/bench_pmd.sh) the box on net_af_packet and on
#                        net_af_xdp, every link at MTU 3000 (af_xdp's limit is 3542), chunk 512,
#                        medians of BENCH_PMD_REPS alternations; xdp_vs_afp = xdp / afp
# then every collective at N = 4 (shouter-worker --coll NAME, root 0, 4 MiB float32 per-rank
# block, same ranks' drivers; then scripts/gloo_bench.py --coll on the same namespaces), for
# NAME in allreduce reduce reduce_scatter broadcast allgather gather scatter alltoall:
#   coll_NAME_gbps_n4       shouter goodput: per-rank block bytes per collective / mean time
#                           of one, mean over the 4 ranks (shouter-worker's goodput_gbps)
#   gloo_coll_NAME_gbps_n4  Gloo, the same definition, or "unsupported": PyTorch 1.13's Gloo
#                           process group has no reduce_scatter (nor all_to_all of tensor
#                           lists, so alltoall is all_to_all_single)
#   coll_NAME_vs_gloo       coll_NAME_gbps_n4 / gloo_coll_NAME_gbps_n4 (> 1: shouter faster;
#                           nan where Gloo lacks it, or without Gloo)
#   gloo_unsupported        the collectives Gloo refused in this run, comma-separated, or none
#   py_call_us_4b        the Python binding's cost per call: a 4-byte allreduce from Python
#                        (numpy) minus the same from a C loop, same process and communicator,
#                        2 ranks (scripts/py_call_bench.py), microseconds; the call's own
#                        jitter on a loaded machine (tens of us) hides the binding's cost
#   py_call_dry_us_0b    the binding alone: the same with calls of 0 elements (nothing sent)
# then a real training run (scripts/train.sh --epochs BENCH_TRAIN_EPOCHS: DDP on the digits,
# 4 ranks in their own namespaces, through the box, then with Gloo):
#   train_step_vs_gloo      mean DDP step time through the box / Gloo's (< 1: shouter faster)
# then (unless --no-shaped) the shaped-link benchmark, scripts/bench_shaped.sh (its own
# namespaces; see its header for each figure's definition): every worker link capped with tbf
# at 500mbit, 1gbit, 2gbit, N = 4 and 8, shouter then Gloo (64 MiB float32); per rate R and N:
#   shaped_gbps_<R>_n<N> shaped_gloo_gbps_<R>_n<N>  goodput (as e2e_gbps_n4: tensor bytes per
#                        rank / time of one allreduce) through the box and through Gloo
#   link_util_<R>_n<N>   shaped_gbps / R       shaped_vs_gloo_<R>_n<N>  shaped_gbps / Gloo's
#   limit_n<N>           2(N-1)/N, the most shaped_vs_gloo can be
#   uncapped_gbps_n<N>, cpu_bound_<R>_n<N>  the goodput without caps; 1 if it is below 1.1 R
#                        (the 2 cores, not the link, limit at that rate)
#   fairness_jain        two 2-rank jobs through one capped link (the box's, share_rate):
#                        Jain's index of their goodputs over the interval both ran
#   tcp_share            a 2-rank job beside a TCP stream on that link: the job's share of
#                        the two flows' bytes over the interval both ran
# Numbers drift from run to run on a shared 2-core machine: compare the ratios of one run.
# Then (unless --no-plot) a sweep of tensor sizes on the same namespaces: each of
# BENCH_PLOT_COLLS at each of BENCH_PLOT_SIZES (per-rank block, float32) with N = each of
# BENCH_PLOT_WORLDS (the first N ranks), through the box (shouter-worker --coll) and through
# Gloo (scripts/gloo_bench.py --coll --sweep), the same goodput definition as the
# per-collective part; its figures go to BENCH_PLOT_DIR/latest.csv and the picture of them to
# BENCH_PLOT_DIR/latest.png (scripts/plot_bench.gp, gnuplot), not to the name=value lines.
#
#   scripts/bench.sh [--no-build] [--no-gloo] [--no-plot] [--no-shaped]
#   e2e_gbps_n4_c<C>_w<W> with BENCH_SWEEP: the 64 MiB goodput at chunk C, window W
# Environment: SHR_BUILD; BENCH_DRIVERS (ranks' drivers, default "udp udp udp udp");
# BENCH_ITERS (64 MiB iterations, default 3); BENCH_LAT_ITERS (default 300); BENCH_FLOOR_REPS
# (runs of each bare-UDP figure, udp_rtt and udp_gather, default 5);
# BENCH_GLOO_PAIRS (shouter and Gloo 64 MiB runs back to back, default 3);
# BENCH_LOSS_PAIRS (runs without the loss rules, with them at 0% and at 1%, back to back,
# default 3); BENCH_GSO_PAIRS (runs with and without UDP GSO back to back, default 3; 0 skips
# them); BENCH_GROUP (the box's
# --result-group, default 198.18.0.255: the bridge's broadcast; "" for none); BENCH_GROUP_PAIRS
# (runs with and without it back to back, default 3; 0 skips them);
# BENCH_MPPS_SECONDS (default 3); BENCH_CHUNK (elements per chunk, default 2048: 8 KiB of
# float32, one jumbo frame); BENCH_WINDOW (default 128); BENCH_SWEEP (e.g. "256:128 2048:32
# 2048:64 2048:128": also measure the 64 MiB goodput at each chunk:window);
# BENCH_COLLS (collectives of the per-collective part, default all eight; "" skips it);
# BENCH_COLL_SIZE (per-rank block, default 4M); BENCH_COLL_ITERS (default 5);
# BENCH_COLL_ROOT (default 0); BENCH_TRAIN_EPOCHS (default 5; 0 skips the training run);
# BENCH_PLOT_SIZES (default "64K 256K 1M 4M 16M"; each size's iterations: 8M / size, 2 to 8,
# or SIZE:ITERS); BENCH_PLOT_COLLS (default "allreduce broadcast allgather reduce_scatter");
# BENCH_PLOT_WORLDS (default "2 4"); BENCH_PLOT_DIR (default <top>/bench);
# BENCH_WORKER_OPTS (extra shouter-worker options); BENCH_MTU (veth MTU, default 9000: the
# af_packet frame slots of tests/e2e/cluster.sh carry it); CL_IDLE_US (aggregator --idle-us,
# default 20); CL_AFP_RING, CL_AFP_ARGS (af_packet devargs, see tests/e2e/cluster.sh);
# BENCH_PMD_REPS (default 3; 0 skips the af_xdp comparison), BENCH_PMD_MTU (3000),
# BENCH_PMD_CHUNK (512);
# BENCH_SHAPED_ARGS (options of scripts/bench_shaped.sh, e.g. "--rates 1gbit --worlds 4";
# bench.sh's --no-gloo is passed on).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

build=1
gloo=1
plot=1
shaped=1
for a in "$@"; do
    case $a in
    --no-build) build=0 ;;
    --no-gloo) gloo=0 ;;
    --no-plot) plot=0 ;;
    --no-shaped) shaped=0 ;;
    -h | --help) sed -n '4,/^set -euo/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--no-build] [--no-gloo] [--no-plot] [--no-shaped]" >&2; exit 2 ;;
    esac
done
# root after the arguments: --help and a bad option need none
[[ $(id -u) -eq 0 ]] || { echo "bench: run as root" >&2; exit 1; }
drivers=${BENCH_DRIVERS:-udp udp udp udp}
iters=${BENCH_ITERS:-3}
lat_iters=${BENCH_LAT_ITERS:-300}
floor_reps=${BENCH_FLOOR_REPS:-5}
[[ $floor_reps =~ ^[1-9][0-9]?$ ]] ||
    { echo "bench: BENCH_FLOOR_REPS must be 1..99, not '$floor_reps'" >&2; exit 2; }
loss_pairs=${BENCH_LOSS_PAIRS:-3}
[[ $loss_pairs =~ ^[1-9][0-9]?$ ]] ||
    { echo "bench: BENCH_LOSS_PAIRS must be 1..99, not '$loss_pairs'" >&2; exit 2; }
gso_pairs=${BENCH_GSO_PAIRS:-3}
[[ $gso_pairs =~ ^[0-9][0-9]?$ ]] ||
    { echo "bench: BENCH_GSO_PAIRS must be 0..99, not '$gso_pairs'" >&2; exit 2; }
gloo_pairs=${BENCH_GLOO_PAIRS:-3}
[[ $gloo_pairs =~ ^[1-9][0-9]?$ ]] ||
    { echo "bench: BENCH_GLOO_PAIRS must be 1..99, not '$gloo_pairs'" >&2; exit 2; }
group_pairs=${BENCH_GROUP_PAIRS:-3}
[[ $group_pairs =~ ^[0-9][0-9]?$ ]] ||
    { echo "bench: BENCH_GROUP_PAIRS must be 0..99, not '$group_pairs'" >&2; exit 2; }
export CL_GROUP=${BENCH_GROUP-198.18.0.255}
mpps_s=${BENCH_MPPS_SECONDS:-3}
chunk=${BENCH_CHUNK:-2048}
window=${BENCH_WINDOW:-128}
sweep=${BENCH_SWEEP:-}
colls=${BENCH_COLLS-allreduce reduce reduce_scatter broadcast allgather gather scatter alltoall}
coll_size=${BENCH_COLL_SIZE:-4M}
coll_iters=${BENCH_COLL_ITERS:-5}
coll_root=${BENCH_COLL_ROOT:-0}
train_epochs=${BENCH_TRAIN_EPOCHS:-5}
plot_sizes=${BENCH_PLOT_SIZES:-64K 256K 1M 4M 16M}
plot_colls=${BENCH_PLOT_COLLS:-allreduce broadcast allgather reduce_scatter}
plot_worlds=${BENCH_PLOT_WORLDS:-2 4}
plot_dir=${BENCH_PLOT_DIR:-$top/bench}
[[ $train_epochs =~ ^[0-9]+$ ]] || { echo "bench: BENCH_TRAIN_EPOCHS: a number" >&2; exit 2; }
# the rest of the settings, checked before anything runs (a bad one found at step 4b, an
# hour in, ended the run with nothing printed; others made every figure nan, exit 0)
for kv in "BENCH_ITERS=$iters" "BENCH_LAT_ITERS=$lat_iters" "BENCH_CHUNK=$chunk" \
        "BENCH_WINDOW=$window" "BENCH_COLL_ITERS=$coll_iters"; do
    [[ ${kv#*=} =~ ^[1-9][0-9]{0,6}$ ]] ||
        { echo "bench: ${kv%%=*}: a positive number, not '${kv#*=}'" >&2; exit 2; }
done
[[ ${BENCH_PMD_REPS:-3} =~ ^[0-9]{1,2}$ ]] ||
    { echo "bench: BENCH_PMD_REPS: 0..99, not '${BENCH_PMD_REPS}'" >&2; exit 2; }
[[ $coll_size =~ ^[1-9][0-9]*[KMG]?$ ]] ||
    { echo "bench: BENCH_COLL_SIZE: a size (4M), not '$coll_size'" >&2; exit 2; }
for sz in $plot_sizes; do
    [[ $sz =~ ^[1-9][0-9]*[KMG]?(:[1-9][0-9]*)?$ && ! $sz =~ ^[1-3](:|$) ]] ||
        { echo "bench: BENCH_PLOT_SIZES: SIZE[:ITERS] of 4 bytes or more (64K, 1M:4), not" \
            "'$sz'" >&2; exit 2; }
done
nranks=$(wc -w <<<"$drivers")
for w in $plot_worlds; do
    [[ $w =~ ^[1-9]$ ]] || { echo "bench: BENCH_PLOT_WORLDS: 1..9 ranks, not '$w'" >&2; exit 2; }
    ((!plot || w <= nranks)) ||
        { echo "bench: BENCH_PLOT_WORLDS: $w > $nranks ranks (BENCH_DRIVERS)" >&2; exit 2; }
done
read -r -a wopts <<<"--chunk $chunk --window $window ${BENCH_WORKER_OPTS:-}"
read -r -a shaped_args <<<"${BENCH_SHAPED_ARGS:-}"
udp_echo_ip=198.18.0.254   # a kernel address on the box's veth, for udp_rtt_us_p50 only
PY=/usr/bin/python3

say() { echo "bench: $*" >&2; }

if ((build)); then
    say "dependencies (scripts/deps.sh --with-bench: adds python3-torch for the Gloo baseline)"
    if ((gloo)); then scripts/deps.sh --with-bench; else scripts/deps.sh; fi
    say "building"
    scripts/build.sh >/tmp/shouter-bench-build.log 2>&1 ||
        { tail -n 40 /tmp/shouter-bench-build.log; exit 1; }
fi
if ((gloo)) && ! $PY -c 'import torch.distributed' 2>/dev/null; then
    say "no PyTorch at $PY (scripts/deps.sh --with-bench): skipping Gloo"
    gloo=0
fi

# shellcheck source=tests/e2e/cluster.sh
source "$top/tests/e2e/cluster.sh"
CL_PREFIX=bench$$
cl_init
cl_traps

declare -A R

# 1. the aggregator's own per-lcore benchmark, and the loss simulation
# shellcheck source=scripts/bench_lcore.sh
source "$top/scripts/bench_lcore.sh"
bench_lcore

# 2. shouter across namespaces
ratio() {
    awk -v a="$1" -v b="$2" \
        'BEGIN {if (b + 0 > 0 && a != "nan") printf "%.3f\n", a / b; else print "nan"}'
}
# median X...: the median of the numbers X, one decimal
median() {
    printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1}
        END {printf "%.1f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}
# e2e64 VAR [worker options]: VAR = the 64 MiB float32 allreduce goodput of the ranks (their
# mean), or nan if the run failed (cl_allreduce in this shell: it counts runs and jobs)
# shellcheck disable=SC2034  # (e2e64_out: a nameref to the caller's VAR)
e2e64() {
    local -n e2e64_out=$1
    shift
    e2e64_out=nan
    if cl_allreduce "$drivers" --dtype float32 --size 64M --iters "$iters" --warmup 1 \
            "${wopts[@]}" "$@" >&2; then
        e2e64_out=$(cl_mean goodput_gbps)
    fi
}
# pair_medians KA KB KR "A B" ...: R[KA], R[KB], R[KR] = over the pairs where both ran, the
# medians of A, of B and of B / A (nan where none did)
pair_medians() {
    local ka=$1 kb=$2 kr=$3
    shift 3
    read -r "R[$ka]" "R[$kb]" "R[$kr]" < <(printf '%s\n' "$@" | awk '
        function med(a, n,   i, j, t) {
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        $1 != "nan" && $2 != "nan" && $1 > 0 { n++; l[n] = $1; y[n] = $2; r[n] = $2 / $1 }
        END {
            if (n == 0) { print "nan nan nan"; exit }
            printf "%.3f %.3f %.3f\n", med(l, n), med(y, n), med(r, n)
        }')
}
cl_up "$nranks" 4 --mtu "${BENCH_MTU:-9000}"
CL_N=$nranks
# shellcheck disable=SC2119  # (the box on its defaults)
cl_agg_start

say "shouter allreduce 64 MiB float32, ranks: $drivers"
e2e64 g0
R[e2e_gbps_n4]=$g0
sweep_keys=()
for cw in $sweep; do
    c=${cw%%:*}
    w=${cw##*:}
    k=e2e_gbps_n4_c${c}_w${w}
    sweep_keys+=("$k")
    say "shouter allreduce 64 MiB float32, chunk $c, window $w"
    R[$k]=nan
    if cl_allreduce "$drivers" --dtype float32 --size 64M --iters "$iters" --warmup 1 \
            "${wopts[@]}" --chunk "$c" --window "$w" >&2; then
        R[$k]=$(cl_mean goodput_gbps)
    fi
done
# lat4k KEY "DRIVERS": R[KEY], the 4 KiB float32 allreduce latency p50 (mean over the ranks)
# of the ranks DRIVERS. The timed run does not check its results element by element: on these
# shared cores a rank's check runs while another rank waits for its result, and counted in
# that rank's latency (a rank with a host of its own never pays for the others' checks). The
# checked run of the same iterations goes first; the timed run's crc= (every output of every
# iteration, in order; exact sums, so the same bits in any order) must be the checked run's.
lat4k() {
    local key=$1 dl=$2 crc
    local -a args=(--dtype float32 --size 4K --iters "$lat_iters" --warmup 20 "${wopts[@]}")
    R[$key]=nan
    cl_allreduce "$dl" "${args[@]}" >&2 || return 0
    crc=$(cl_field "${CL_RESULTS[0]}" crc)
    cl_allreduce "$dl" "${args[@]}" --no-verify >&2 || return 0
    if [[ $(cl_field "${CL_RESULTS[0]}" crc) == "$crc" ]]; then
        R[$key]=$(cl_mean lat_us_p50)
    else
        say "the timed 4 KiB run's crc is not the checked run's ($crc): no $key"
    fi
}
say "shouter allreduce 4 KiB float32 latency: a checked run, then the timed run (same crc)"
lat4k lat_us_p50_4k "$drivers"
say "the same, rank 0 alone (the path of udp_rtt_us_p50, no other rank on the cores)"
lat4k lat_us_p50_4k_n1 "${drivers%% *}"
# the bare kernel-UDP floor of the 4 KiB latency
# shellcheck source=scripts/bench_floor.sh
source "$top/scripts/bench_floor.sh"
bench_floor
say "Python binding: 4-byte allreduces from Python and from a C loop (2 ranks, same process)"
R[py_call_us_4b]=nan
R[py_call_dry_us_0b]=nan
py_pids=()
for i in 0 1; do
    "$CL_NETNS" kip "$i" on --prefix "$CL_PREFIX"
    PYTHONPATH=$SHR_BUILD/lib/python timeout -k 5 600 ip netns exec "$CL_PREFIX-w$i" $PY \
        "$top/scripts/py_call_bench.py" --box 198.18.0.1 --job 9000 --rank "$i" --world 2 \
        >"$CL_DIR/pycall$i.log" 2>&1 &
    py_pids+=($!)
    CL_PIDS+=($!)
done
prc=0
for p in "${py_pids[@]}"; do wait "$p" || prc=1; done
if ((prc == 0)) && grep -q '^py_call_us_4b=' "$CL_DIR/pycall0.log"; then
    sed 's/^/  /' "$CL_DIR/pycall0.log" >&2
    R[py_call_us_4b]=$(sed -n 's/^py_call_us_4b=//p' "$CL_DIR/pycall0.log")
    R[py_call_dry_us_0b]=$(sed -n 's/^py_call_dry_us_0b=//p' "$CL_DIR/pycall0.log")
else
    say "py_call_bench.py failed:"
    tail -n 5 "$CL_DIR"/pycall*.log >&2
fi
# The loss figure: $loss_pairs pairs of runs back to back, lossless then 1% loss; the ratio is
# the median of the pairs' ratios (one pair reads 0.7-1.1 here: the 2 cores' load drifts between
# runs). The loss is drawn by nftables rules at the bridge (scripts/netns.sh), and on these 2
# cores the rules cost CPU by themselves: 2-9% of the goodput, dropping nothing (2026-11-29:
# 0.952-0.984 in three alternated pairs, 0.908-0.954 in four bench runs), which a lossy link
# does not cost its hosts. So the lossless run of a pair has the same rules in place at 0%
# (everything but the drops), and a run before it without them measures what the rules cost
# (e2e_loss0_vs_norules).
say "shouter allreduce 64 MiB float32, without the loss rules, with them at 0%, then at 1%," \
    "on every worker link, $loss_pairs times"
loss_rows=()
emu_rows=()
gn=nan
g0=nan
g1=nan
for ((i = 0; i < loss_pairs; i++)); do
    e2e64 gn
    "$CL_NETNS" netem all "loss 0%" --prefix "$CL_PREFIX"
    e2e64 g0
    "$CL_NETNS" netem all "loss 1%" --prefix "$CL_PREFIX"
    e2e64 g1
    say "dropped at the bridge: $("$CL_NETNS" drops --prefix "$CL_PREFIX" |
        awk '{s += $3} END {print s + 0}') frames"
    "$CL_NETNS" netem all none --prefix "$CL_PREFIX"
    say "pair $((i + 1)): no rules $gn, loss 0% $g0, loss 1% $g1 Gbit/s"
    loss_rows+=("$g0 $g1")
    emu_rows+=("$gn $g0")
done
pair_medians e2e_loss0_norules_gbps_n4 e2e_loss0_gbps_n4 e2e_loss0_vs_norules "${emu_rows[@]}"
pair_medians e2e_loss1_lossless_gbps_n4 e2e_loss1_gbps_n4 e2e_loss1_vs_lossless "${loss_rows[@]}"
# ab_pairs KA KB KR N OPT "LABEL A" "LABEL B": N pairs of 64 MiB runs back to back, one with
# the worker option OPT (A) and one without (B), which goes first alternating (a pair's second
# run is not favoured); R[KA], R[KB], R[KR] as pair_medians sets them
ab_pairs() {
    local ka=$1 kb=$2 kr=$3 n=$4 opt=$5 la=$6 lb=$7 i
    local -a rows=()
    for ((i = 0; i < n; i++)); do
        if ((i % 2 == 0)); then
            e2e64 g0 "$opt"
            e2e64 g1
        else
            e2e64 g1
            e2e64 g0 "$opt"
        fi
        say "pair $((i + 1)): $la $g0, $lb $g1 Gbit/s"
        rows+=("$g0 $g1")
    done
    pair_medians "$ka" "$kb" "$kr" "${rows[@]}"
}
# The kernel UDP driver's GSO (the default) against one send per datagram.
pair_medians e2e_nogso_gbps_n4 e2e_gso_gbps_n4 gso_vs_nogso	# nan until measured
if ((gso_pairs > 0)) && [[ " $drivers " != *" dpdk "* ]]; then
    say "shouter allreduce 64 MiB float32 with and without UDP GSO, $gso_pairs pairs"
    ab_pairs e2e_nogso_gbps_n4 e2e_gso_gbps_n4 gso_vs_nogso "$gso_pairs" --no-gso \
        "without GSO" "with"
fi
# The result group (the box's --result-group, which every rank offers) against every result
# sent to each rank (--no-group).
pair_medians e2e_unicast_gbps_n4 e2e_group_gbps_n4 group_vs_unicast	# nan until measured
if ((group_pairs > 0)) && [[ -n $CL_GROUP ]]; then
    say "shouter allreduce 64 MiB float32 with and without the result group, $group_pairs pairs"
    ab_pairs e2e_unicast_gbps_n4 e2e_group_gbps_n4 group_vs_unicast "$group_pairs" \
        --no-group "each rank" "the group"
fi
# shellcheck source=scripts/bench_shards.sh
source "$top/scripts/bench_shards.sh"
bench_shards
cl_agg_stop || say "aggregator exit status $?"
# shellcheck source=scripts/bench_tree.sh
source "$top/scripts/bench_tree.sh"
bench_tree
# shellcheck source=scripts/bench_pmd.sh
source "$top/scripts/bench_pmd.sh"
bench_pmd

# 3. Gloo on the same namespaces, in pairs: a shouter run (its box started for it) then a Gloo
# run (no box: it would only take CPU), $gloo_pairs times back to back. One run of each reads
# 0.6-0.9 of the other here as the 2 cores' load drifts: the ratio is the median of the pairs'.
# The first Gloo run also measures Gloo's 4 KiB latency.
R[gloo_gbps_n4]=nan
R[gloo_lat_us_p50_4k]=nan
R[e2e_vs_gloo_n4]=nan
# gloo_once VAR LAT_ITERS: VAR = Gloo's 64 MiB goodput (rank 0's), nan if it failed; with
# LAT_ITERS > 1, R[gloo_lat_us_p50_4k] too
# shellcheck disable=SC2034  # (gloo_out: a nameref to the caller's VAR)
gloo_once() {
    local -n gloo_out=$1
    local lat=$2 i p grc=0
    local -a gpids=()
    gloo_out=nan
    for ((i = 0; i < nranks; i++)); do
        "$CL_NETNS" kip "$i" on --prefix "$CL_PREFIX"
    done
    for ((i = 0; i < nranks; i++)); do
        timeout -k 5 600 ip netns exec "$CL_PREFIX-w$i" $PY "$top/scripts/gloo_bench.py" \
            --rank "$i" --world "$nranks" --master "$(cl_worker_ip 0)" --iface shr0 \
            --size 64M --iters "$iters" --lat-size 4K --lat-iters "$lat" \
            >"$CL_DIR/gloo$i.log" 2>&1 &
        gpids+=($!)
        CL_PIDS+=($!)
    done
    for p in "${gpids[@]}"; do wait "$p" || grc=1; done
    if ((grc)) || ! grep -q '^gloo_ok=1' "$CL_DIR/gloo0.log"; then
        say "gloo failed:"
        tail -n 5 "$CL_DIR"/gloo*.log >&2
        return 0
    fi
    gloo_out=$(sed -n 's/^gloo_gbps=//p' "$CL_DIR/gloo0.log")
    if ((lat > 1)); then
        R[gloo_lat_us_p50_4k]=$(sed -n 's/^gloo_lat_us_p50=//p' "$CL_DIR/gloo0.log")
    fi
}
if ((gloo)); then
    say "shouter then gloo allreduce (PyTorch) 64 MiB float32, $nranks ranks, $gloo_pairs pairs"
    gloo_rows=()
    for ((i = 0; i < gloo_pairs; i++)); do
        # shellcheck disable=SC2119  # (the box on its defaults)
        cl_agg_start
        e2e64 g0
        cl_agg_stop || say "aggregator exit status $?"
        gloo_once g1 $((i == 0 ? lat_iters : 1))
        say "pair $((i + 1)): shouter $g0, gloo $g1 Gbit/s"
        gloo_rows+=("$g1 $g0")
    done
    # e2e_gbps_n4 becomes the paired runs' median (the first run above stays without Gloo)
    pair_medians gloo_gbps_n4 e2e_gbps_n4 e2e_vs_gloo_n4 "${gloo_rows[@]}"
fi

# 4. every collective at N = 4: shouter, then Gloo (same namespaces, block, definition)
R[gloo_unsupported]=nan
if [[ -n $colls ]]; then
    # shellcheck disable=SC2119  # (the box on its defaults)
    cl_agg_start
    for c in $colls; do
        say "shouter $c, $coll_size float32 per-rank block, root $coll_root"
        R[coll_${c}_gbps_n4]=nan
        R[gloo_coll_${c}_gbps_n4]=nan
        case $c in
        allreduce | broadcast | allgather) CL_SAME_CRC=1 ;;
        *) CL_SAME_CRC=0 ;;   # each rank gets its own block, or nothing
        esac
        if cl_allreduce "$drivers" --coll "$c" --root "$coll_root" --dtype float32 \
                --size "$coll_size" --iters "$coll_iters" --warmup 1 "${wopts[@]}" >&2; then
            R[coll_${c}_gbps_n4]=$(cl_mean goodput_gbps)
        fi
    done
    CL_SAME_CRC=1
    cl_agg_stop || say "aggregator exit status $?"
fi
if [[ -n $colls ]] && ((gloo)); then
    say "gloo $colls (PyTorch), $nranks ranks, $coll_size per-rank block, root $coll_root"
    gpids=()
    for ((i = 0; i < nranks; i++)); do
        "$CL_NETNS" kip "$i" on --prefix "$CL_PREFIX"
    done
    for ((i = 0; i < nranks; i++)); do
        timeout -k 5 600 ip netns exec "$CL_PREFIX-w$i" $PY "$top/scripts/gloo_bench.py" \
            --rank "$i" --world "$nranks" --master "$(cl_worker_ip 0)" --iface shr0 \
            --port 29501 --coll "${colls// /,}" --root "$coll_root" --size "$coll_size" \
            --iters "$coll_iters" --warmup 1 >"$CL_DIR/gloo-coll$i.log" 2>&1 &
        gpids+=($!)
        CL_PIDS+=($!)
    done
    grc=0
    for p in "${gpids[@]}"; do wait "$p" || grc=1; done
    if ((grc)) || ! grep -q '^gloo_ok=' "$CL_DIR/gloo-coll0.log"; then
        say "gloo collectives failed:"
        tail -n 5 "$CL_DIR"/gloo-coll*.log >&2
    fi
    unsup=()
    for c in $colls; do
        v=$(sed -n "s/^gloo_coll_${c}_gbps=//p" "$CL_DIR/gloo-coll0.log")
        okc=$(sed -n "s/^gloo_coll_${c}_ok=//p" "$CL_DIR/gloo-coll0.log")
        if [[ $v == unsupported ]]; then
            unsup+=("$c")
            say "gloo lacks $c: $(sed -n "s/^gloo_coll_${c}_error=//p" \
                "$CL_DIR/gloo-coll0.log")"
            R[gloo_coll_${c}_gbps_n4]=unsupported
        elif [[ -n $v && $okc == 1 ]]; then
            R[gloo_coll_${c}_gbps_n4]=$v
        elif [[ -n $v ]]; then
            say "gloo $c: wrong result (gloo-coll*.log):"
            grep -h "$c iteration" "$CL_DIR"/gloo-coll*.log | head -n 4 >&2 || true
        fi
    done
    if ((grc == 0)); then
        R[gloo_unsupported]=$(IFS=,; echo "${unsup[*]:-none}")
    fi
fi

# 4b. goodput against tensor size (unless --no-plot): each of plot_colls at each of plot_sizes
# with N = each of plot_worlds (the first N ranks), shouter then Gloo on the same namespaces;
# one CSV row per point (collective,world,impl,bytes,iters,gbps,status), then the PNG
if ((plot)); then
    sweep_t0=$SECONDS
    plot_load=$(cut -d ' ' -f 1 /proc/loadavg)
    plot_pts=()   # BYTES:ITERS
    for sz in $plot_sizes; do
        b=$(cl_bytes "${sz%%:*}")
        if [[ $sz == *:* ]]; then
            it=${sz##*:}
        else
            it=$(((8 << 20) / b))
            ((it < 2)) && it=2
            ((it > 8)) && it=8
        fi
        if ! [[ $b =~ ^[0-9]+$ && $it =~ ^[0-9]+$ ]] || ((b < 4 || it < 1)); then
            say "BENCH_PLOT_SIZES: bad point $sz (SIZE[:ITERS])"
            exit 2
        fi
        plot_pts+=("$b:$it")
    done
    mkdir -p "$plot_dir"
    csv=$CL_DIR/sweep.csv
    echo "collective,world,impl,bytes,iters,gbps,status" >"$csv"
    # shellcheck disable=SC2119  # (the box on its defaults)
    cl_agg_start
    for c in $plot_colls; do
        case $c in
        allreduce | broadcast | allgather) CL_SAME_CRC=1 ;;
        *) CL_SAME_CRC=0 ;;
        esac
        for w in $plot_worlds; do
            read -r -a wd <<<"$drivers"
            for p in "${plot_pts[@]}"; do
                say "sweep: shouter $c N=$w ${p%%:*} bytes x ${p##*:}"
                g=nan
                st=failed
                if cl_allreduce "${wd[*]:0:w}" --coll "$c" --root 0 --dtype float32 \
                        --size "${p%%:*}" --iters "${p##*:}" --warmup 1 "${wopts[@]}" >&2; then
                    g=$(cl_mean goodput_gbps)
                    st=ok
                fi
                echo "$c,$w,shouter,${p%%:*},${p##*:},$g,$st" >>"$csv"
            done
        done
    done
    CL_SAME_CRC=1
    cl_agg_stop || say "aggregator exit status $?"
    if ((gloo)); then
        for w in $plot_worlds; do
            say "sweep: gloo ${plot_colls// /,} N=$w"
            gpids=()
            for ((i = 0; i < w; i++)); do
                "$CL_NETNS" kip "$i" on --prefix "$CL_PREFIX"
            done
            for ((i = 0; i < w; i++)); do
                timeout -k 5 1800 ip netns exec "$CL_PREFIX-w$i" $PY \
                    "$top/scripts/gloo_bench.py" --rank "$i" --world "$w" \
                    --master "$(cl_worker_ip 0)" --iface shr0 --port $((29510 + w)) \
                    --coll "${plot_colls// /,}" --root 0 --warmup 1 \
                    --sweep "$(IFS=,; echo "${plot_pts[*]}")" \
                    >"$CL_DIR/gloo-sweep$w-$i.log" 2>&1 &
                gpids+=($!)
                CL_PIDS+=($!)
            done
            grc=0
            for p in "${gpids[@]}"; do wait "$p" || grc=1; done
            if ((grc)); then
                say "gloo sweep N=$w failed:"
                tail -n 5 "$CL_DIR"/gloo-sweep"$w"-*.log >&2
            fi
            for c in $plot_colls; do
                for p in "${plot_pts[@]}"; do
                    l=$(grep -E "^gloo_sweep coll=$c world=$w size=${p%%:*} " \
                        "$CL_DIR/gloo-sweep$w-0.log" || true)
                    g=nan
                    if [[ -z $l ]] && grep -q "^gloo_sweep coll=$c .*gbps=unsupported" \
                            "$CL_DIR/gloo-sweep$w-0.log"; then
                        st=unsupported
                    elif [[ -z $l ]]; then
                        st=failed
                    elif [[ $l == *gbps=unsupported* ]]; then
                        st=unsupported
                    elif [[ $l == *" ok=1" ]]; then
                        g=${l##* gbps=}
                        g=${g%% *}
                        st=ok
                    else
                        st=wrong
                    fi
                    echo "$c,$w,gloo,${p%%:*},${p##*:},$g,$st" >>"$csv"
                done
            done
        done
    fi
    cp "$csv" "$plot_dir/latest.csv"
    say "sweep: $((SECONDS - sweep_t0)) s (load average $plot_load at its start); figures in" \
        "$plot_dir/latest.csv"
    if command -v gnuplot >/dev/null; then
        sub="$(date -u +%F), $(nproc) cores shared with other work (load average $plot_load"
        sub+=" at the start of the sweep), ranks: $drivers, chunk $chunk, window $window,"
        sub+=" agg --idle-us $CL_IDLE_US"
        sub=${sub//\'/}   # inside a gnuplot string in single quotes
        if gnuplot -e "csv='$plot_dir/latest.csv'; png='$plot_dir/latest.png'" \
                -e "colls='$plot_colls'; worlds='$plot_worlds'; subtitle='$sub'" \
                "$top/scripts/plot_bench.gp" 2>"$CL_DIR/plot.log"; then
            say "plot: $plot_dir/latest.png"
        else
            say "plot_bench.gp failed:"
            tail -n 5 "$CL_DIR/plot.log" >&2
        fi
    else
        say "no gnuplot (scripts/deps.sh installs gnuplot-nox): $plot_dir/latest.csv only"
    fi
fi

# 5. a real training run: scripts/train.sh (DDP on the digits, 4 ranks, through the box, then
# Gloo) with fewer epochs; its own namespaces (this run's box is stopped)
R[train_step_vs_gloo]=nan
if ((gloo)) && ((train_epochs > 0)); then
    say "scripts/train.sh --epochs $train_epochs (DDP through the box, then Gloo)"
    SHR_BUILD=$SHR_BUILD scripts/train.sh --no-deps --no-build --epochs "$train_epochs" \
        >"$CL_DIR/train.out" 2>"$CL_DIR/train.log" ||
        { say "train.sh failed:"; tail -n 20 "$CL_DIR/train.log" >&2; }
    sed 's/^/  /' "$CL_DIR/train.out" >&2
    tl=$(tail -n 1 "$CL_DIR/train.out")
    if [[ $tl =~ step_vs_gloo=([^ ]+)$ ]]; then
        R[train_step_vs_gloo]=${BASH_REMATCH[1]}
    fi
fi

# 6. the shaped-link benchmark (its own namespaces; this run's box is stopped)
if ((shaped)); then
    ((gloo)) || shaped_args+=(--no-gloo)
    say "scripts/bench_shaped.sh ${shaped_args[*]} (worker links capped; fairness, TCP share)"
    SHR_BUILD=$SHR_BUILD "$top/scripts/bench_shaped.sh" "${shaped_args[@]}" \
        >"$CL_DIR/shaped.out" || say "bench_shaped.sh failed (exit $?)"
fi

R[lat_vs_gloo_4k]=$(ratio "${R[lat_us_p50_4k]}" "${R[gloo_lat_us_p50_4k]}")

echo "# shouter bench: $(date -u +%FT%TZ), $(nproc) cores, ranks: $drivers" \
    "${wopts[*]}, agg --idle-us $CL_IDLE_US${CL_GROUP:+ --result-group $CL_GROUP}"
for k in agg_mpps_per_lcore agg_gbps_per_lcore agg_vs_roofline zc_vs_copy \
        agg_mpps_per_lcore_8k agg_gbps_per_lcore_8k agg_vs_roofline_8k \
        agg_mpps_lanes1 agg_mpps_lanes2 agg_mpps_lanes2_steered handoff_ns_per_frame \
        f32_stream_gbps f32_exact_gbps repro_vs_stream mac_vs_crc crc_fold_vs_hw \
        crc_fold_vs_hw_8k crc_fold_vs_hw_hot crc_fold_vs_hw_hot_8k e2e_gbps_n4 e2e_vs_gloo_n4 \
        lat_us_p50_4k lat_vs_gloo_4k \
        gloo_gbps_n4 gloo_lat_us_p50_4k e2e_loss1_gbps_n4 e2e_loss1_lossless_gbps_n4 \
        e2e_loss1_vs_lossless e2e_loss0_norules_gbps_n4 e2e_loss0_vs_norules \
        e2e_gso_gbps_n4 e2e_nogso_gbps_n4 gso_vs_nogso \
        e2e_group_gbps_n4 e2e_unicast_gbps_n4 group_vs_unicast \
        sim_loss1_vs_lossless sim_loss2_vs_lossless \
        "${sweep_keys[@]}"; do
    echo "$k=${R[$k]}"
done
echo "lanes2_vs_lanes1=$(ratio "${R[agg_mpps_lanes2]}" "${R[agg_mpps_lanes1]}")"
echo "lanes2_steered_vs_lanes1=$(ratio "${R[agg_mpps_lanes2_steered]}" "${R[agg_mpps_lanes1]}")"
echo "shards1_gbps_n4=${R[shards1_gbps_n4]}"
echo "shards2_gbps_n4=${R[shards2_gbps_n4]}"
echo "shards2_vs_shards1=$(ratio "${R[shards2_gbps_n4]}" "${R[shards1_gbps_n4]}")"
echo "tree_flat_gbps_n4=${R[tree_flat_gbps_n4]}"
echo "tree_gbps_n4=${R[tree_gbps_n4]}"
echo "tree_vs_flat=$(ratio "${R[tree_gbps_n4]}" "${R[tree_flat_gbps_n4]}")"
echo "pmd_afp_gbps=${R[pmd_afp_gbps]}"
echo "pmd_xdp_gbps=${R[pmd_xdp_gbps]}"
echo "xdp_vs_afp=$(ratio "${R[pmd_xdp_gbps]}" "${R[pmd_afp_gbps]}")"
for k in "${sweep_keys[@]}"; do
    echo "${k/gbps/vs_gloo}=$(ratio "${R[$k]}" "${R[gloo_gbps_n4]}")"
done
for c in $colls; do
    echo "coll_${c}_gbps_n4=${R[coll_${c}_gbps_n4]}"
    echo "gloo_coll_${c}_gbps_n4=${R[gloo_coll_${c}_gbps_n4]}"
    echo "coll_${c}_vs_gloo=$(ratio "${R[coll_${c}_gbps_n4]}" "${R[gloo_coll_${c}_gbps_n4]}")"
done
[[ -z $colls ]] || echo "gloo_unsupported=${R[gloo_unsupported]}"
echo "py_call_us_4b=${R[py_call_us_4b]}"
echo "py_call_dry_us_0b=${R[py_call_dry_us_0b]}"
((train_epochs == 0)) || echo "train_step_vs_gloo=${R[train_step_vs_gloo]}"
echo "udp_rtt_us_p50=${R[udp_rtt_us_p50]}"
echo "lat_vs_udp_rtt_4k=$(ratio "${R[lat_us_p50_4k]}" "${R[udp_rtt_us_p50]}")"
echo "lat_us_p50_4k_n1=${R[lat_us_p50_4k_n1]}"
echo "lat_vs_udp_rtt_4k_n1=$(ratio "${R[lat_us_p50_4k_n1]}" "${R[udp_rtt_us_p50]}")"
echo "udp_gather_us_p50_4k=${R[udp_gather_us_p50_4k]}"
echo "udp_gather_us_p50_4k_n1=${R[udp_gather_us_p50_4k_n1]}"
echo "udp_gather_vs_rtt_4k=$(ratio "${R[udp_gather_us_p50_4k]}" "${R[udp_gather_us_p50_4k_n1]}")"
echo "lat_vs_udp_gather_4k=$(ratio "${R[lat_us_p50_4k]}" "${R[udp_gather_us_p50_4k]}")"
((shaped == 0)) || grep -v '^#' "$CL_DIR/shaped.out" || true
