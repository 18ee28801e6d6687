#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install what shouter needs to build, test and demo, on Debian bookworm (as root).
# Idempotent: installs only what is missing. Usage: scripts/deps.sh [--with-bench]
# The Python package and its tests (lib/python, tests/python), scripts/train.sh and the Gloo
# baseline of scripts/bench.sh need python3-dev, numpy, pytest, PyTorch and scikit-learn
# (its digits data set): all are in the default list; --with-bench adds nothing more now
# (kept for the scripts that pass it).
set -euo pipefail

pkgs=(build-essential pkg-config meson ninja-build dpdk dpdk-dev libdpdk-dev libnuma-dev
      libcmocka-dev libssl-dev iproute2 iputils-ping nftables ethtool procps python3 clang libclang-rt-14-dev
      python3-dev python3-numpy python3-pytest python3-torch python3-sklearn tshark gnuplot-nox lua5.3)

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
    exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "deps: missing packages: ${missing[*]}; run as root (or: sudo $0)" >&2
    exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark (the Wireshark dissector's test): wireshark-common asks whether users other than root
# may capture; the answer is no, given here so that nothing asks
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
