#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# -Dcpu holds for every C file of the build (suite 'integration'; no root): in
# compile_commands.json, the last -march= of each compile command (the one the compiler obeys)
# is the configured one. DPDK's pkg-config Cflags carry their own (-march=corei7 on Debian),
# placed after the project's; meson.build strips it.
#
#   march_it.sh CPU
set -euo pipefail

BUILD=${SHR_BUILD:?SHR_BUILD must name the build directory}
(($# == 1)) || { echo "usage: march_it.sh CPU" >&2; exit 2; }
want=-march=$1
db=$BUILD/compile_commands.json
[[ -r $db ]] || { echo "march_it: no $db" >&2; exit 1; }

n=0 bad=0
while IFS= read -r line; do
    file=$(sed -n 's/.* -c \([^ "]*\).*/\1/p' <<<"$line")
    last=$(grep -o -- ' -march=[^ "]*' <<<"$line" | tail -n 1 | tr -d ' ')
    n=$((n + 1))
    if [[ $last != "$want" ]]; then
        echo "march_it: $file: compiled with '${last:-no -march}', not $want" >&2
        bad=$((bad + 1))
    fi
done < <(grep '"command"' "$db" | grep -- ' -c ')
((n > 0)) || { echo "march_it: no compile command in $db" >&2; exit 1; }
((bad == 0)) || { echo "march_it: $bad of $n files not built for -Dcpu" >&2; exit 1; }
echo "march_it: $n files, each built with $want"
