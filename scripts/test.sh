#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The whole test suite, from a fresh machine: installs what is missing, builds with -Werror,
# runs every meson test suite (unit, integration, e2e, python, fuzz replay), then the unit suite and
# the fuzz corpora again under AddressSanitizer + UndefinedBehaviorSanitizer, then a short
# libFuzzer run of every target (SHR_FUZZ_SECS seconds each, default 20; 0 skips it) from a
# fixed random seed (SHR_FUZZ_SEED, default 1): a red run is the code's, not the draw's, and
# replays the same; open-ended campaigns are scripts/fuzz.sh's, outside CI.
#   scripts/test.sh                 everything
#   scripts/test.sh --suite unit    only one suite (any meson test arguments pass through)
#   SHR_NO_SANITIZE=1 scripts/test.sh   skip the sanitizer pass
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
# checked before anything runs (not after the suites)
fuzz_secs=${SHR_FUZZ_SECS:-20}
[[ $fuzz_secs =~ ^[0-9]+$ ]] || { echo "test: SHR_FUZZ_SECS: seconds, not '$fuzz_secs'" >&2; exit 2; }

scripts/deps.sh

build=${SHR_BUILD:-$top/build}
if [[ ! -f $build/build.ninja ]]; then
    meson setup "$build" -Dwerror=true
else
    meson configure "$build" -Dwerror=true   # a build dir made by build.sh or by hand too
fi
ninja -C "$build"
meson test -C "$build" --print-errorlogs --num-processes 1 "$@"

if [[ -z "${SHR_NO_SANITIZE:-}" && $# -eq 0 ]]; then
    asan=${build}-asan
    if [[ ! -f $asan/build.ninja ]]; then
        meson setup "$asan" -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
            -Dbuildtype=debugoptimized -De2e=false
    fi
    ninja -C "$asan"
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
        meson test -C "$asan" --print-errorlogs --suite unit --suite fuzz
fi

if ((10#$fuzz_secs != 0 && $# == 0)); then
    SHR_FUZZ_SEED=${SHR_FUZZ_SEED:-1} scripts/fuzz.sh "$((10#$fuzz_secs))"
fi
