#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""Instructions per DATA frame, by stage, from callgrind dumps of shouter-agg --bench-mpps.

  instr_tool.py LABEL:DUMP:COUNTFN [LABEL:DUMP:COUNTFN ...]

Each DUMP is one callgrind output file (callgrind --dump-after=FN makes one per call of FN);
COUNTFN is the function called once per DATA frame in it (shr_pool_contribute_out on the data
path, shr_pool_reduce_i32 in the roofline kernel): the frames are counted from the calls to
it. Each function's own instructions (exclusive Ir) go to the stage the table below names;
the harness (the benchmark playing the NIC) is reported apart and left out of the totals.
Prints one table per dump, then name=value lines: instr_per_data_LABEL and, per stage,
instr_LABEL_STAGE.
"""

import re
import sys

# function name (prefix match, after stripping .isra/.part/.constprop suffixes) -> stage
STAGES = [
    ("rx_mbuf", ["rte_eth_rx_burst", "eth_ring_rx", "rte_pktmbuf_free", "rte_mempool",
                 "rte_ring", "__rte_ring", "rte_pktmbuf_alloc", "rte_mbuf", "agg_lcore_poll",
                 "lc_rx"]),
    ("l2_l4", ["agg_process_burst", "agg_l2", "agg_parse", "agg_arp", "agg_neigh"]),
    ("validate", ["shr_proto_validate", "shr_agg_input", "agg_data", "agg_job_find",
                  "agg_mac_in", "agg_kind_ok"]),
    ("crc", ["shr_crc32c", "crc_", "hw_state", "sw_crc"]),
    ("pool", ["shr_pool_contribute", "shr_pool_reduce", "load_i32", "reduce_", "load_f", "load_bf",
              "copy_discard", "round_fill", "same_round", "contrib_"]),
    ("result", ["shr_proto_build", "shr_pool_result_write", "write_i32", "agg_result_build",
                "agg_tx_result", "agg_mac_out", "agg_round_msg"]),
    ("fanout", ["send_zc", "send_copy", "fan_", "agg_send", "tx_prepare"]),
    ("tx", ["rte_eth_tx", "eth_ring_tx", "tx_one", "tx_flush", "rte_eth_tx_buffer",
            "agg_lcore_flush"]),
    ("ring_pmd", ["ring_pmd:"]),
    # b_check and the rte_pktmbuf_read() it calls: the checked pass that b_run() makes
    # before timing reads every result back (only the harness reads mbufs that way);
    # bench_instr.sh counts b_timed() only, without that pass
    ("harness", ["b_pass", "b_drain", "b_run", "b_timed", "b_wait", "b_settle", "b_taken",
                 "b_check", "__rte_pktmbuf_read", "clock_gettime", "agg_bench_cpu_s", "agg_bench_kernel",
                 "rte_rdtsc"]),
]
ORDER = [s for s, _ in STAGES] + ["other"]


def stage_of(fn):
    base = re.sub(r"\.(isra|part|constprop|cold)(\.\d+)?", "", fn)
    for stage, prefixes in STAGES:
        for p in prefixes:
            if base.startswith(p):
                return stage
    return "other"


def parse(path, countfn):
    """Exclusive Ir per function, and the calls to countfn."""
    obnames = {}
    ob = ""
    names = {}
    self_ir = {}
    calls = 0
    fn = None
    cfn = None
    pending_calls = False
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
            if m:
                kind, ident, name = m.groups()
                if name is not None:
                    names[ident] = name
                name = names.get(ident, ident)
                if kind == "fn":
                    fn = name
                    if re.match(r"^0x[0-9a-f]+$", name) and "net_ring" in ob:
                        fn = "ring_pmd:" + name	# the in-process device's rx/tx
                    cfn = None
                else:
                    cfn = name
                continue
            if line.startswith("calls="):
                if cfn == countfn:
                    calls += int(line.split("=")[1].split()[0])
                pending_calls = True
                continue
            if line and (line[0].isdigit() or line[0] in "+-*"):
                parts = line.split()
                if pending_calls:
                    pending_calls = False	# the inclusive cost of that call
                    continue
                if len(parts) >= 2 and fn is not None:
                    self_ir[fn] = self_ir.get(fn, 0) + int(parts[1])
                continue
            m = re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?$", line)
            if m:
                if m.group(3) is not None:
                    obnames[m.group(2)] = m.group(3)	# a name is given once
                if m.group(1) == "ob":
                    ob = obnames.get(m.group(2), "")
                continue
            if line.startswith(("fl=", "fi=", "fe=", "cfi=", "cfl=")):
                continue
    return self_ir, calls


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    out = []
    for spec in argv[1:]:
        label, path, countfn = spec.split(":")
        self_ir, n = parse(path, countfn)
        if n == 0:
            print(f"instr_tool: {path}: no call to {countfn}", file=sys.stderr)
            return 1
        per = {s: 0 for s in ORDER}
        other = {}
        for fn, ir in self_ir.items():
            s = stage_of(fn)
            per[s] += ir
            if s == "other":
                other[fn] = ir
        total = sum(v for s, v in per.items() if s != "harness")
        print(f"{label}: {n} DATA frames; instructions per DATA frame by stage "
              f"(the harness apart):")
        for s in ORDER:
            if per[s] == 0:
                continue
            share = "" if s == "harness" else f" {100.0 * per[s] / total:5.1f}%"
            print(f"  {s:<10} {per[s] / n:9.1f}{share}")
        print(f"  {'total':<10} {total / n:9.1f}")
        for fn, ir in sorted(other.items(), key=lambda kv: -kv[1])[:8]:
            print(f"    other: {fn} {ir / n:.1f}")
        out.append(f"instr_per_data_{label}={total / n:.1f}")
        for s in ORDER:
            if s != "harness" and per[s] != 0:
                out.append(f"instr_{label}_{s}={per[s] / n:.1f}")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
