#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# Prepare a box or a worker host for DPDK: reserve and mount hugepages (dpdk-hugepages.py)
# and bind NICs to vfio-pci (dpdk-devbind.py), both from Debian's dpdk package. --dry-run
# prints every command without running it (and needs no root). See --help.
set -euo pipefail

prog=host-setup.sh
dry=0
huge=''
pagesize=''
node=''
driver=vfio-pci
noiommu=0
binds=()

usage() {
    cat <<EOF
Usage: $prog [--dry-run] [--hugepages SIZE [--pagesize SIZE] [--node N]]
             [--bind PCI]... [--driver DRIVER] [--noiommu]

Prepare a shouter box or worker host for DPDK (run as root; --dry-run does not need it).

  --hugepages SIZE  reserve SIZE of hugepages (bytes with K, M or G: 2G) and mount
                    hugetlbfs: dpdk-hugepages.py --setup SIZE (clears the pages reserved
                    before, unmounts, reserves, mounts)
  --pagesize SIZE   hugepage size (2M, 1G; default: the system's default)
  --node N          reserve on NUMA node N only (default: as dpdk-hugepages.py does)
  --bind PCI        bind this PCI device (0000:01:00.0 or 01:00.0) to DRIVER; repeat for
                    more. dpdk-devbind.py refuses a device whose interface is up with
                    routes (the host's own link): this script never forces it
  --driver DRIVER   the kernel driver to bind to (default vfio-pci, loaded with modprobe)
  --noiommu         enable vfio's unsafe no-IOMMU mode first (VMs without a vIOMMU)
  --dry-run         print what would be done, change nothing
  -h, --help        this text

Example (a box with one 100G port, 4 GB of 1G pages):
  $prog --hugepages 4G --pagesize 1G --bind 0000:3b:00.0
Exit: 0 done, 1 a command failed or a tool is missing, 2 usage error.
EOF
}

die_usage() {
    echo "$prog: $*" >&2
    echo "Try '$prog --help'." >&2
    exit 2
}

die() {
    echo "$prog: $*" >&2
    exit 1
}

# the value of option $1, given as $2 (empty when missing)
need_arg() {
    [[ -n ${2:-} && ${2:0:2} != -- ]] || die_usage "option $1 needs a value"
}

# a size with its unit (no unit meant bytes: --hugepages 1024 reserved nothing)
size_ok() {
    [[ $1 =~ ^[1-9][0-9]*[KMGkmg]$ ]]
}

# size $1 in KiB
size_kib() {
    local n=${1%?} u=${1: -1}
    case $u in
    K | k) echo "$n" ;;
    M | m) echo $((n * 1024)) ;;
    G | g) echo $((n * 1024 * 1024)) ;;
    esac
}

# normalise a PCI address to domain:bus:slot.func, or fail
pci_full() {
    local a=$1
    if [[ $a =~ ^[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$ ]]; then
        a=0000:$a
    fi
    [[ $a =~ ^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$ ]] || return 1
    echo "${a,,}"
}

# print the command; run it unless --dry-run
run() {
    local q
    printf -v q '%q ' "$@"
    echo "+ ${q% }"
    ((dry)) || "$@"
}

# a tool of Debian's dpdk package: its path, or fail (a warning only in a dry run)
tool() {
    local p
    if p=$(command -v "$1"); then
        echo "$p"
    elif ((dry)); then
        echo "$prog: warning: $1 not found (Debian: apt-get install dpdk)" >&2
        echo "$1"
    else
        die "$1 not found (Debian: apt-get install dpdk)"
    fi
}

while (($#)); do
    case $1 in
    --dry-run) dry=1 ;;
    --hugepages) need_arg "$@"; huge=$2; shift ;;
    --hugepages=*) huge=${1#*=} ;;
    --pagesize) need_arg "$@"; pagesize=$2; shift ;;
    --pagesize=*) pagesize=${1#*=} ;;
    --node) need_arg "$@"; node=$2; shift ;;
    --node=*) node=${1#*=} ;;
    --bind) need_arg "$@"; binds+=("$2"); shift ;;
    --bind=*) binds+=("${1#*=}") ;;
    --driver) need_arg "$@"; driver=$2; shift ;;
    --driver=*) driver=${1#*=} ;;
    --noiommu) noiommu=1 ;;
    -h | --help) usage; exit 0 ;;
    *) die_usage "unknown argument '$1'" ;;
    esac
    shift
done

[[ -n $huge || ${#binds[@]} -gt 0 || $noiommu -eq 1 ]] ||
    die_usage "nothing to do: give --hugepages and/or --bind"
if [[ -n $huge ]] && ! size_ok "$huge"; then
    die_usage "--hugepages '$huge': a size in bytes with K, M or G (2G, 512M)"
fi
if [[ -n $pagesize ]]; then
    [[ -n $huge ]] || die_usage "--pagesize goes with --hugepages"
    size_ok "$pagesize" || die_usage "--pagesize '$pagesize': a size such as 2M or 1G"
    # checked here: dpdk-hugepages.py clears the reservation before it checks its arguments
    [[ -d /sys/kernel/mm/hugepages/hugepages-$(size_kib "$pagesize")kB ]] ||
        die_usage "--pagesize '$pagesize': not a hugepage size of this CPU ($(ls \
            /sys/kernel/mm/hugepages 2>/dev/null | sed 's/hugepages-//' | tr '\n' ' '))"
fi
if [[ -n $huge ]]; then
    # the page size given, else the system's default (what dpdk-hugepages.py takes; read
    # with builtins: this runs with any PATH)
    def_ps=
    while read -r k v _; do
        [[ $k == Hugepagesize: ]] && def_ps=${v}K
    done </proc/meminfo
    ps_kib=$(size_kib "${pagesize:-$def_ps}")
    [[ $ps_kib =~ ^[1-9][0-9]*$ ]] || die "cannot read the hugepage size (/proc/meminfo)"
    (($(size_kib "$huge") % ps_kib == 0)) ||
        die_usage "--hugepages '$huge': not a multiple of the page size (${ps_kib} KiB)"
fi
if [[ -n $node ]]; then
    [[ -n $huge ]] || die_usage "--node goes with --hugepages"
    [[ $node =~ ^[0-9]+$ ]] || die_usage "--node '$node': a NUMA node number"
fi
[[ $driver =~ ^[A-Za-z0-9_-]+$ ]] || die_usage "--driver '$driver': not a driver name"
pcis=()
for b in "${binds[@]}"; do
    p=$(pci_full "$b") || die_usage "--bind '$b': not a PCI address (0000:01:00.0 or 01:00.0)"
    pcis+=("$p")
done

if ((dry)); then
    echo "$prog: dry run: nothing is changed"
elif ((EUID != 0)); then
    die "must run as root (or try --dry-run)"
fi

if ((noiommu)); then
    run modprobe vfio
    p=/sys/module/vfio/parameters/enable_unsafe_noiommu_mode
    echo "+ echo 1 > $p"
    ((dry)) || echo 1 > "$p" || die "cannot write $p"
fi

if [[ -n $huge ]]; then
    hp=$(tool dpdk-hugepages.py)
    args=()
    [[ -z $pagesize ]] || args+=(--pagesize "$pagesize")
    [[ -z $node ]] || args+=(--node "$node")
    run "$hp" "${args[@]}" --setup "$huge" || die "dpdk-hugepages.py --setup $huge failed"
    # dpdk-hugepages.py (22.11) exits 0 when its mount fails (no /dev/hugepages, say)
    if ((!dry)) && ! grep -q ' hugetlbfs ' /proc/mounts; then
        die "hugepages reserved but no hugetlbfs is mounted (does /dev/hugepages exist?)"
    fi
    run "$hp" --show
fi

if ((${#pcis[@]})); then
    db=$(tool dpdk-devbind.py)
    for p in "${pcis[@]}"; do
        if ((!dry)) && [[ ! -e /sys/bus/pci/devices/$p ]]; then
            die "--bind $p: no such PCI device (see: $db --status-dev net)"
        fi
    done
    run modprobe "$driver" || die "modprobe $driver failed"
    run "$db" --bind "$driver" "${pcis[@]}" || die "dpdk-devbind.py --bind $driver failed"
    run "$db" --status-dev net
fi
