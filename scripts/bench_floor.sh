# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Sourced by scripts/bench.sh (its variables, say and median, and cluster.sh's functions),
# with the cluster up and box 1 running idle, after the latency runs: the bare kernel-UDP
# floor of lat_us_p50_4k. A 4 KiB UDP request and reply from rank 0's namespace to a Python
# echo on a kernel address of the box's veth ($udp_echo_ip), then the gather of every rank's
# namespace through shouter-udpping's echo, then one rank alone. Sets R[udp_rtt_us_p50],
# R[udp_gather_us_p50_4k] and R[udp_gather_us_p50_4k_n1].

# ugather KEY N: R[KEY], over $floor_reps repetitions, the median of the mean over the first N
# ranks' namespaces of their udp_rtt_us_p50 through shouter-udpping's echo on $udp_echo_ip,
# which answers once it holds one from each
ugather() {
    local key=$1 n=$2 i k rc port
    local -a pids means=()
    R[$key]=nan
    for ((k = 0; k < floor_reps; k++)); do
        rc=0
        pids=()
        rm -f "$CL_DIR/gather.ready" "$CL_DIR"/gather*.out
        ip netns exec "$CL_PREFIX-agg" "$SHR_BUILD/app/shouter-udpping" echo --ranks "$n" \
            --bind "$udp_echo_ip:0" --ready-file "$CL_DIR/gather.ready" &
        echo_pid=$!
        CL_PIDS+=($!)
        for ((i = 0; i < 300; i++)); do [[ -s $CL_DIR/gather.ready ]] && break; sleep 0.1; done
        port=$(cat "$CL_DIR/gather.ready" 2>/dev/null) || port=
        for ((i = 0; i < n && ${#port}; i++)); do
            timeout -k 5 300 ip netns exec "$CL_PREFIX-w$i" "$SHR_BUILD/app/shouter-udpping" \
                ping --to "$udp_echo_ip:$port" --size 4096 --count "$lat_iters" \
                >"$CL_DIR/gather$i.out" &
            pids+=($!)
            CL_PIDS+=($!)
        done
        for i in "${pids[@]}"; do wait "$i" || rc=1; done
        kill "$echo_pid" 2>/dev/null || true
        wait "$echo_pid" 2>/dev/null || true
        if ((rc != 0 || ${#pids[@]} != n)); then
            say "shouter-udpping failed: no $key"
            return 0
        fi
        means+=("$(cat "$CL_DIR"/gather*.out | sed -n 's/^udp_rtt_us_p50=//p' |
            awk '{s += $1} END {if (NR) printf "%.1f", s / NR}')")
    done
    R[$key]=$(median "${means[@]}")
    say "$key: ${R[$key]} (the median of ${means[*]})"
}
bench_floor() {
    local echo_pid out i k
    local -a rtts

    say "bare UDP: 4 KiB request and reply, P-w0 to an echo on the box's veth ($udp_echo_ip)"
    R[udp_rtt_us_p50]=nan
    ip -n "$CL_PREFIX-agg" addr add "$udp_echo_ip/24" dev shr0
    "$CL_NETNS" kip 0 on --prefix "$CL_PREFIX"
    ip netns exec "$CL_PREFIX-agg" $PY "$top/scripts/shaped_tool.py" udp-echo \
        --bind "$udp_echo_ip:5300" --ready-file "$CL_DIR/echo.ready" &
    echo_pid=$!
    CL_PIDS+=($!)
    for ((i = 0; i < 300; i++)); do [[ -e $CL_DIR/echo.ready ]] && break; sleep 0.1; done
    rtts=()
    for ((k = 0; k < floor_reps; k++)); do
        out=$(timeout -k 5 300 ip netns exec "$CL_PREFIX-w0" $PY "$top/scripts/shaped_tool.py" \
            udp-ping --to "$udp_echo_ip:5300" --size 4096 --count "$lat_iters") ||
            { rtts=(); break; }
        say "$(tr '\n' ' ' <<<"$out")"
        rtts+=("$(sed -n 's/^udp_rtt_us_p50=//p' <<<"$out")")
    done
    if ((${#rtts[@]})); then
        R[udp_rtt_us_p50]=$(median "${rtts[@]}")
        say "udp_rtt_us_p50: ${R[udp_rtt_us_p50]} (the median of ${rtts[*]})"
    fi
    kill "$echo_pid" 2>/dev/null || true
    wait "$echo_pid" 2>/dev/null || true
    for ((i = 0; i < CL_N; i++)); do "$CL_NETNS" kip "$i" on --prefix "$CL_PREFIX"; done
    say "bare UDP gather (shouter-udpping): $CL_N ranks' namespaces send 4 KiB each to an echo on" \
        "the box's veth that answers all once it holds one from each; then one rank alone"
    ugather udp_gather_us_p50_4k "$CL_N"
    ugather udp_gather_us_p50_4k_n1 1
    ip -n "$CL_PREFIX-agg" addr del "$udp_echo_ip/24" dev shr0
}
