#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Configure (once) and build shouter in ./build (or $SHR_BUILD). Extra args go to meson setup.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${SHR_BUILD:-$top/build}
if [[ ! -f $build/build.ninja ]]; then
    meson setup "$build" "$top" "$@"
elif (($#)); then
    meson configure "$build" "$@"
fi
ninja -C "$build"
