#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the libFuzzer targets (tests/fuzz) with clang + ASan + UBSan and run each of them.
#   scripts/fuzz.sh [SECONDS] [TARGET...]    default: 60 s each for proto, agg, endpoint
# For each target: replays tests/fuzz/regress/<target> first (a failure there stops it),
# then fuzzes for SECONDS on a scratch copy of tests/fuzz/corpus/<target>, and prints the
# executions. Exits non-zero if any target crashed; the crashing input is saved under
# $SHR_FUZZ_BUILD/crashes/<target>/ (to keep it as a regression, copy it into
# tests/fuzz/regress/<target>/). SHR_FUZZ_BUILD (default ./build-fuzz) is the build dir,
# SHR_FUZZ_ARGS adds libFuzzer options (e.g. "-jobs=2 -workers=2"). SHR_FUZZ_SEED fixes
# libFuzzer's random seed (a positive integer; default: a new one each run, printed), so the
# same build explores the same inputs: scripts/test.sh (CI) sets 1; campaigns leave it unset.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

secs=${1:-60}
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
    targets=(proto agg endpoint)
fi
# at least 1: libFuzzer takes -max_total_time=0 as no limit (a CI run that never ends)
if ! [[ $secs =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: $0 [SECONDS] [proto|agg|endpoint...]" >&2
    exit 2
fi
seed=()
if [[ -n ${SHR_FUZZ_SEED:-} ]]; then
    if ! [[ $SHR_FUZZ_SEED =~ ^[1-9][0-9]{0,8}$ ]]; then
        echo "fuzz: SHR_FUZZ_SEED must be a positive integer below 10^9, not '$SHR_FUZZ_SEED'" >&2
        exit 2
    fi
    seed=(-seed="$SHR_FUZZ_SEED")
fi

# clang's libFuzzer runtime lives in libclang-rt-14-dev, which clang only recommends.
need=()
for p in clang libclang-rt-14-dev meson ninja-build; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        need+=("$p")
done
if ((${#need[@]} > 0)); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "fuzz: missing packages: ${need[*]}; run as root" >&2
        exit 1
    fi
    echo "fuzz: installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${need[@]}"
fi

build=${SHR_FUZZ_BUILD:-$top/build-fuzz}
if [[ ! -f $build/build.ninja ]]; then
    # Everything compiled with coverage instrumentation (fuzzer-no-link) and the sanitizers;
    # the fuzz targets themselves link libFuzzer (-Dfuzz=true).
    CC=clang meson setup "$build" -Dfuzz=true -Dbuildtype=debugoptimized \
        -Db_sanitize=address,undefined -Db_lundef=false -De2e=false \
        -Dc_args=-fsanitize=fuzzer-no-link -Dc_link_args=-fsanitize=fuzzer-no-link
fi
ninja -C "$build" "${targets[@]/#/tests/fuzz/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=()
summary=()
for t in "${targets[@]}"; do
    bin=$build/tests/fuzz/fuzz_$t
    log=$build/fuzz-$t.log
    crashes=$build/crashes/$t
    mkdir -p "$crashes"

    # 1. Regression inputs: each must run clean.
    regress=()
    if [[ -d tests/fuzz/regress/$t ]]; then
        mapfile -t regress < <(find "tests/fuzz/regress/$t" -type f | sort)
    fi
    if ((${#regress[@]} > 0)); then
        if ! "$bin" "${regress[@]}" >"$log" 2>&1; then
            echo "fuzz: $t: a regression input fails; see $log" >&2
            tail -n 30 "$log" >&2
            failed+=("$t")
            summary+=("$t: regression input fails")
            continue
        fi
        echo "fuzz: $t: ${#regress[@]} regression inputs pass"
    fi

    # 2. Fuzz on a scratch copy of the seed corpus.
    work=$build/corpus/$t
    rm -rf "$work"
    mkdir -p "$work"
    cp tests/fuzz/corpus/"$t"/* "$work"/
    echo "fuzz: $t: ${secs}s from $(find "$work" -type f | wc -l) seeds," \
        "seed ${SHR_FUZZ_SEED:-random}"
    rc=0
    # shellcheck disable=SC2086
    "$bin" "${seed[@]}" -max_total_time="$secs" -print_final_stats=1 -timeout=20 \
        -rss_limit_mb=4096 -max_len=4096 -artifact_prefix="$crashes/" ${SHR_FUZZ_ARGS:-} "$work" \
        >"$log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1 || true)
    if ((rc != 0)); then
        echo "fuzz: $t: CRASH (exit $rc) after ${execs:-?} executions; log $log" >&2
        grep -E '^(==[0-9]+==ERROR|SUMMARY|.*check failed|.*runtime error)' "$log" |
            head -n 5 >&2 || true
        grep -E 'Test unit written to' "$log" >&2 || true
        failed+=("$t")
        summary+=("$t: CRASH after ${execs:-?} executions")
    else
        n=$(find "$work" -type f | wc -l)
        summary+=("$t: ${execs:-?} executions in ${secs}s, ${cov:-no coverage line}, corpus $n")
    fi
done

echo "fuzz summary:"
printf '  %s\n' "${summary[@]}"
if ((${#failed[@]} > 0)); then
    echo "fuzz: FAILED: ${failed[*]} (crashing inputs in $build/crashes/)" >&2
    exit 1
fi
