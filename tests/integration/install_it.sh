#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
#
# The install, checked (suite 'integration'; no root): `meson install --destdir` of the build
# into a temporary directory, then
#   - every installed piece in its place: shouter-agg, shouter-worker, shouter-pcapgen,
#     shouter-udpping, libshouter.a (with shr_comm_create and the drivers in it), the headers in
#     <includedir>/shouter, shouter.pc, the INI and the env example in <sysconfdir>/shouter,
#     shouter-agg@.service in the unit
#     dir (its ExecStart and config path those of this prefix), the Python package (option
#     python);
#   - an application (install_app.c) compiled and linked with `pkg-config --cflags --libs
#     shouter` alone against the installed tree (a copy of shouter.pc whose prefix points into
#     the DESTDIR), run: it must print "install_app: ok";
#   - `systemd-analyze verify` of an instance of the unit (skipped, and said, without it);
#   - scripts/host-setup.sh: --help, --dry-run output, and its usage errors (exit 2). It is
#     never run without --dry-run (as root that would reserve hugepages and bind NICs).
#
#   install_it.sh APP_C HOST_SETUP PREFIX BINDIR LIBDIR INCLUDEDIR CONFDIR UNITDIR PYTHON
# (directories absolute, as meson computes them; PYTHON 1 when the package is built)
set -euo pipefail

BUILD=${SHR_BUILD:?SHR_BUILD must name the build directory}
(($# == 9)) || { echo "usage: install_it.sh APP_C HOST_SETUP PREFIX BINDIR LIBDIR" \
    "INCLUDEDIR CONFDIR UNITDIR PYTHON" >&2; exit 2; }
APP_C=$1 HOST_SETUP=$2 PREFIX=$3 BINDIR=$4 LIBDIR=$5 INCDIR=$6 CONFDIR=$7 UNITDIR=$8 PY=$9

TMP=$(mktemp -d /tmp/shouter-install.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
DEST=$TMP/dest
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

ok() {
    echo "ok: $*"
}

# $1 must be a regular file (and executable with -x as $2)
have() {
    if [[ ! -f $DEST$1 ]]; then
        fail "not installed: $1"
    elif [[ ${2:-} == -x && ! -x $DEST$1 ]]; then
        fail "not executable: $1"
    else
        ok "installed: $1"
    fi
}

echo "== meson install --destdir $DEST"
meson install -C "$BUILD" --destdir "$DEST" --no-rebuild --quiet >"$TMP/install.log" 2>&1 || {
    cat "$TMP/install.log"
    echo "FAIL: meson install"
    exit 1
}

echo "== files"
have "$BINDIR/shouter-agg" -x
have "$BINDIR/shouter-worker" -x
have "$BINDIR/shouter-pcapgen" -x
have "$BINDIR/shouter-udpping" -x
have "$LIBDIR/libshouter.a"
have "$LIBDIR/pkgconfig/shouter.pc"
for h in shr_comm.h shr_proto.h shr_auth.h shr_endpoint.h shr_pool.h shr_drv.h shr_drv_udp.h \
    shr_drv_ethdev.h; do
    have "$INCDIR/shouter/$h"
done
have "$CONFDIR/shouter-agg.ini"
have "$CONFDIR/shouter-agg.env"
UNIT=$UNITDIR/shouter-agg@.service
have "$UNIT"
if ((PY)); then
    if find "$DEST" -path '*/shouter/__init__.py' | grep -q . &&
        find "$DEST" -path '*/shouter/_shouter*.so' | grep -q .; then
        ok "installed: the Python package (__init__.py and the extension)"
    else
        fail "the Python package is not installed"
    fi
fi
# the archive holds the communicator and both drivers (defined, not just referenced)
if [[ -f $DEST$LIBDIR/libshouter.a ]]; then
    syms=$(nm --defined-only "$DEST$LIBDIR/libshouter.a" 2>/dev/null || true)
    for s in shr_comm_create shr_comm_allreduce shr_crc32c shr_endpoint_create shr_auth_challenge \
        shr_pool_xsum_add shr_drv_udp_create shr_drv_ethdev_create; do
        if grep -qE " T $s\$" <<<"$syms"; then
            ok "libshouter.a defines $s"
        else
            fail "libshouter.a does not define $s"
        fi
    done
fi
if [[ -f $DEST$UNIT ]]; then
    exec_line="ExecStart=$BINDIR/shouter-agg --file-prefix=shouter-%i \$SHOUTER_EAL --"
    exec_line+=" --config $CONFDIR/%i.ini \$SHOUTER_ARGS"
    for k in "$exec_line" Type=simple Restart=on-failure LimitMEMLOCK=infinity \
        "EnvironmentFile=-$CONFDIR/%i.env" "ConditionPathExists=$CONFDIR/%i.ini"; do
        if grep -qxF "$k" "$DEST$UNIT"; then ok "unit: $k"; else fail "unit: no line $k"; fi
    done
fi

echo "== an application built with pkg-config against the installed tree"
# a DESTDIR install keeps the final prefix in the .pc: point a copy of it into the DESTDIR
# (PKG_CONFIG_SYSROOT_DIR would also move libdpdk's and libcrypto's paths)
mkdir -p "$TMP/pc"
sed "s|^prefix=.*|prefix=$DEST$PREFIX|" "$DEST$LIBDIR/pkgconfig/shouter.pc" >"$TMP/pc/shouter.pc"
export PKG_CONFIG_PATH=$TMP/pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
if flags=$(pkg-config --cflags --libs shouter 2>"$TMP/pc.err"); then
    echo "pkg-config --cflags --libs shouter: $flags"
    # shellcheck disable=SC2086 # pkg-config's output is a list of words
    if ${CC:-cc} -std=c11 -Wall -Wextra -Werror -o "$TMP/install_app" "$APP_C" $flags \
        >"$TMP/cc.log" 2>&1; then
        ok "compiled and linked with the installed shouter.pc"
        out=$("$TMP/install_app" 2>&1) || true
        if [[ $out == "install_app: ok" ]]; then
            ok "install_app ran: $out"
        else
            fail "install_app: '$out'"
        fi
        # it linked the installed archive, not the build tree's
        grep -q -- "-L$DEST$LIBDIR" <<<"$flags" || fail "pkg-config -L is not the installed libdir"
    else
        cat "$TMP/cc.log"
        fail "install_app does not build with pkg-config --cflags --libs shouter"
    fi
else
    cat "$TMP/pc.err"
    fail "pkg-config --cflags --libs shouter"
fi

echo "== systemd-analyze verify"
if command -v systemd-analyze >/dev/null && [[ -f $DEST$UNIT ]]; then
    # an instance, its ExecStart pointed at the installed binary (verify checks it exists)
    mkdir -p "$TMP/units"
    sed "s|$BINDIR/shouter-agg|$DEST$BINDIR/shouter-agg|" "$DEST$UNIT" \
        >"$TMP/units/shouter-agg@.service"
    if out=$(cd "$TMP/units" && systemd-analyze verify --man=no ./shouter-agg@box1.service 2>&1) &&
        [[ -z $out ]]; then
        ok "systemd-analyze verify shouter-agg@box1.service: no complaint"
    else
        echo "$out"
        fail "systemd-analyze verify complains about the unit"
    fi
else
    echo "skip: systemd-analyze not found: the unit is not verified"
fi

echo "== scripts/host-setup.sh (dry run and usage errors only)"
# runs it; $1: the exit status wanted; then its arguments. Output in $TMP/hs.out
hs() {
    local want=$1 rc=0
    shift
    "$HOST_SETUP" "$@" >"$TMP/hs.out" 2>&1 || rc=$?
    if ((rc != want)); then
        cat "$TMP/hs.out"
        fail "host-setup.sh $*: exit $rc, want $want"
        return 1
    fi
    # a usage error (2) runs nothing: no command traced
    if ((want == 2)) && grep -q '^+ ' "$TMP/hs.out"; then
        fail "host-setup.sh $*: ran something on a usage error"
        return 1
    fi
}
# the output must have a line matching the regex $1
hs_line() {
    if grep -qE -- "$1" "$TMP/hs.out"; then
        ok "host-setup.sh: '$1'"
    else
        cat "$TMP/hs.out"
        fail "host-setup.sh: no line matching '$1'"
    fi
}
if hs 0 --help; then
    hs_line '^Usage: host-setup.sh '
    hs_line '--dry-run'
fi
if hs 0 --dry-run --hugepages 2G --pagesize 2M --node 0 --bind 3b:00.0 --bind 0000:AF:00.1; then
    hs_line '^host-setup.sh: dry run: nothing is changed$'
    hs_line '^\+ (.*/)?dpdk-hugepages\.py --pagesize 2M --node 0 --setup 2G$'
    hs_line '^\+ (.*/)?dpdk-hugepages\.py --show$'
    hs_line '^\+ modprobe vfio-pci$'
    hs_line '^\+ (.*/)?dpdk-devbind\.py --bind vfio-pci 0000:3b:00\.0 0000:af:00\.1$'
    [[ $(grep -c '^+ ' "$TMP/hs.out") == 5 ]] || fail "host-setup.sh: not 5 commands"
fi
if hs 0 --dry-run --noiommu --bind 0000:01:00.0 --driver uio_pci_generic; then
    hs_line '^\+ echo 1 > /sys/module/vfio/parameters/enable_unsafe_noiommu_mode$'
    hs_line '^\+ modprobe uio_pci_generic$'
    hs_line '^\+ (.*/)?dpdk-devbind\.py --bind uio_pci_generic 0000:01:00\.0$'
    grep -q hugepages "$TMP/hs.out" && fail "host-setup.sh: hugepages without --hugepages"
fi
# usage errors: exit 2, the problem named, nothing run
hs 2 --dry-run && hs_line 'nothing to do'
hs 2 --dry-run --bind eth0 && hs_line "--bind 'eth0': not a PCI address"
hs 2 --dry-run --bind 01:00.9 && hs_line "--bind '01:00.9': not a PCI address"
hs 2 --dry-run --hugepages lots && hs_line "--hugepages 'lots'"
# what dpdk-hugepages.py would refuse only after clearing the reservation, refused first
hs 2 --dry-run --hugepages 1024 && hs_line "--hugepages '1024': a size in bytes with K, M or G"
hs 2 --dry-run --hugepages 3M --pagesize 2M && hs_line "--hugepages '3M': not a multiple"
hs 2 --dry-run --hugepages 2G --pagesize 4M && hs_line "--pagesize '4M': not a hugepage size"
hs 2 --dry-run --hugepages && hs_line 'option --hugepages needs a value'
hs 2 --dry-run --pagesize 1G --bind 01:00.0 && hs_line '--pagesize goes with --hugepages'
hs 2 --dry-run --frobnicate && hs_line "unknown argument '--frobnicate'"
# without the dpdk tools on PATH, a dry run still prints, with a warning
if PATH=$TMP/nobin /bin/bash "$HOST_SETUP" --dry-run --hugepages 1G >"$TMP/hs.out" 2>&1; then
    hs_line 'warning: dpdk-hugepages\.py not found'
    hs_line '^\+ dpdk-hugepages\.py --setup 1G$'
else
    cat "$TMP/hs.out"
    fail "host-setup.sh --dry-run without the dpdk tools"
fi
# not root, not a dry run: refused before anything is done (as root this would change the
# host, so root runs it as user nobody when nobody can read it)
if ((EUID != 0)); then
    hs 1 --hugepages 2G && hs_line 'must run as root'
elif runuser -u nobody -- test -r "$HOST_SETUP" 2>/dev/null; then
    rc=0
    runuser -u nobody -- /bin/bash "$HOST_SETUP" --hugepages 2G >"$TMP/hs.out" 2>&1 || rc=$?
    if ((rc == 1)) && grep -q 'must run as root' "$TMP/hs.out"; then
        ok "host-setup.sh as nobody: refused, must run as root"
    else
        cat "$TMP/hs.out"
        fail "host-setup.sh as nobody: exit $rc, want 1 and 'must run as root'"
    fi
else
    echo "skip: as root, and user nobody cannot read $HOST_SETUP: not run without --dry-run"
fi

if ((fails)); then
    echo "install_it: $fails check(s) failed"
    exit 1
fi
echo "install_it: all checks passed"
