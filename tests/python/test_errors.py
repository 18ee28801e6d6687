# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""Errors of the binding: bad buffers refused before anything is sent (the job goes on, the
box saw nothing), the box's abort when ranks call different collectives (shouter.Error with
ECONNABORTED naming both sides), a missing box (ETIMEDOUT), two threads on one Comm."""

import errno



def test_bad_buffers_refused_before_sending(run_ranks):
    # every bad call raises TypeError / ValueError; then one good allreduce, exact: had any
    # bad call sent something, the ranks' calls would differ and the box would abort
    res = run_ranks("""
        import torch
        c = comm(dtype="float32")
        n = 64
        x = np.ones(n, np.float32)
        ro = np.ones(n, np.float32)
        ro.flags.writeable = False
        bad = {
            "float64": lambda: c.allreduce(np.ones(n)),
            "int32_in_float32_job": lambda: c.allreduce(np.ones(n, np.int32)),
            # the wire is little-endian: big-endian float32 is not the job's dtype (sent as
            # it is, the box would read every value byte-swapped)
            "big_endian": lambda: c.allreduce(np.ones(n, ">f4")),
            "torch_int32": lambda: c.allreduce(torch.ones(n, dtype=torch.int32)),
            "non_contiguous": lambda: c.allreduce(np.ones(2 * n, np.float32)[::2]),
            "fortran_2d": lambda: c.allreduce(np.ones((8, 8), np.float32, order="F")),
            "torch_non_contiguous": lambda: c.allreduce(torch.ones(8, 8).t()),
            "out_size": lambda: c.allreduce(x, np.zeros(n + 1, np.float32)),
            "out_overlap": lambda: c.allreduce(x[:32], x[16:48]),
            "read_only_in_place": lambda: c.allreduce(ro),
            "read_only_out": lambda: c.allreduce(x, ro),
            "bytes_out": lambda: c.allreduce(x, bytes(4 * n)),
            "read_only_bcast": lambda: c.broadcast(ro, root=(rank + 1) % world),
            "reduce_scatter_size": lambda: c.reduce_scatter(np.ones(n, np.float32),
                                                            np.zeros(n, np.float32)),
            "allgather_size": lambda: c.allgather(x, np.zeros(n, np.float32)),
            "alltoall_blocks": lambda: c.alltoall(np.ones(world * 3 + 1, np.float32),
                                                  np.zeros(world * 3 + 1, np.float32)),
            "relay_partial_elem": lambda: c.broadcast(np.ones(6, np.uint8)),
            "gather_no_out": lambda: c.gather(x, None, root=rank),
            "scatter_no_inp": lambda: c.scatter(None, x, root=rank),
            "reduce_no_root": lambda: c.reduce(x),
            "root_range": lambda: c.broadcast(x, root=world),
            "op": lambda: c.allreduce(x, op="avg"),
            "list": lambda: c.allreduce([1.0, 2.0]),
            "step_negative": lambda: c.allreduce(x, step=-1),
            "root_negative": lambda: c.reduce(x, root=-1),
            "root_float": lambda: c.broadcast(x, root=0.0),
            "step_float": lambda: c.allreduce(x, step=1.5),
            # views whose memory is not their values
            "torch_conj": lambda: c.broadcast(torch.ones(n, dtype=torch.cfloat).conj()),
            # (one element: contiguous whatever its stride)
            "torch_neg": lambda: c.allreduce(torch.ones(1, dtype=torch.cfloat).conj().imag),
            # not strided: no memory of its values to send
            "torch_sparse": lambda: c.allreduce(torch.ones(n).to_sparse()),
            # numpy uint16 stands for bfloat16's bits in a bfloat16 job only
            "uint16": lambda: c.allreduce(np.ones(2 * n, np.uint16)),
            # out of the same bytes but another type: it would get float32 bits
            "out_float64": lambda: c.allreduce(x, np.zeros(n // 2)),
            # out not whole elements: its last bytes would never be written (root 0 gives
            # as many bytes as needed)
            "scatter_partial_elem": lambda: c.scatter(
                np.ones(6 * world, np.uint8) if rank == 0 else None, np.zeros(6, np.uint8),
                root=0),
        }
        if True:   # a GPU-less torch: a meta tensor stands for "not on the CPU"
            bad["meta_tensor"] = lambda: c.allreduce(torch.ones(n, device="meta"))
        got = {}
        for name, f in bad.items():
            try:
                f()
                got[name] = "no exception"
            except (TypeError, ValueError) as e:
                got[name] = type(e).__name__ + ": " + str(e)
        tx = c.stats()["tx_data"]
        y = np.full(n, rank + 1, np.float32)
        c.allreduce(y)
        # a numpy integer is an integer (root through __index__)
        z = np.full(n, rank + 5, np.float32)
        c.broadcast(z, root=np.int64(world - 1))
        emit(ok=bool((y == sum(range(1, world + 1))).all()), tx_before=tx, got=got,
             x_untouched=bool((x == 1).all()), np_root=bool((z == world + 4).all()))
    """, 2)
    for r in res:
        got = r.rec["got"]
        taken = [name for name, v in got.items() if v == "no exception"]
        assert not taken, (taken, got)
        assert r.rec["ok"] and r.rec["tx_before"] == 0 and r.rec["x_untouched"]
        assert r.rec["np_root"]
        for name in ("float64", "int32_in_float32_job", "big_endian", "torch_int32", "list",
                     "meta_tensor", "torch_sparse", "uint16", "out_float64",
                     "gather_no_out", "scatter_no_inp", "reduce_no_root", "root_float",
                     "step_float"):
            assert got[name].startswith("TypeError"), (name, got[name])
        for name in ("non_contiguous", "fortran_2d", "torch_non_contiguous", "out_size",
                     "out_overlap", "read_only_in_place", "read_only_out", "bytes_out",
                     "read_only_bcast", "reduce_scatter_size", "allgather_size",
                     "alltoall_blocks", "relay_partial_elem", "root_range", "op",
                     "step_negative", "root_negative", "torch_conj", "torch_neg",
                     "scatter_partial_elem"):
            assert got[name].startswith("ValueError"), (name, got[name])
        assert got["root_negative"].startswith("ValueError: root -1: not a rank"), got
        assert "conjugate view (.resolve_conj()" in got["torch_conj"], got
        assert "negative view (.resolve_neg()" in got["torch_neg"], got
        assert "contiguous" in got["non_contiguous"]
        assert "read-only" in got["read_only_out"]
        assert "float64 buffer in a float32 job" in got["float64"]
        assert "'>f'" in got["big_endian"] and "float32 job" in got["big_endian"], got
        assert "torch.int32 buffer" in got["torch_int32"]
        assert "non-strided" in got["torch_sparse"], got
        assert "buf: a uint16 buffer in a float32 job" in got["uint16"], got
        assert "out: a float64 buffer in a float32 job" in got["out_float64"], got
        assert got["scatter_partial_elem"].startswith("ValueError: out: 6 bytes"), got


def test_bad_constructor_arguments(run_ranks):
    res = run_ranks("""
        got = {}
        for name, kw in {
            "dtype": dict(dtype="float64"),
            "rank": dict(rank=world),
            "box": dict(box="not-an-address"),
            "port": dict(port=70000),
        }.items():
            args = dict(box=box, job=job, rank=rank, world=world, timeout_ms=200)
            args.update(kw)
            try:
                shouter.Comm(args.pop("box"), **args)
                got[name] = "no exception"
            except (TypeError, ValueError) as e:
                got[name] = type(e).__name__
        try:
            shouter.Comm(box, job=job, rank=rank)
        except TypeError:
            got["missing_world"] = "TypeError"
        # several boxes (sharded): refused before anything is sent
        for name, f in {
            "box_twice": lambda: shouter.init([box, box], job=job, rank=rank, world=world),
            "dpdk_two_boxes": lambda: shouter.Comm([box, "198.18.0.2"], driver="dpdk",
                                                   job=job, rank=rank, world=world),
            "ports_length": lambda: shouter.Comm([box, "198.18.0.2"], port=[47000],
                                                 job=job, rank=rank, world=world),
            "box_list_entry": lambda: shouter.Comm([box, 5], job=job, rank=rank,
                                                   world=world),
            # an integer out of its range is refused, not truncated (2**32 + job was job)
            "job_2_32": lambda: shouter.Comm(box, job=2**32 + job, rank=rank, world=world),
            "timeout_negative": lambda: shouter.Comm(box, job=job, rank=rank, world=world,
                                                     timeout_ms=-1),
            "eal_args_str": lambda: shouter.Comm(box, job=job, rank=rank, world=world,
                                                 eal_args="--no-huge"),
            # the per-job MAC is keyed from the secret: refused before anything is sent
            "mac_no_secret": lambda: shouter.Comm(box, mac=True, job=job, rank=rank,
                                                  world=world),
        }.items():
            try:
                f()
                got[name] = "no exception"
            except (TypeError, ValueError) as e:
                got[name] = str(e)
        emit(ok=True, got=got)
    """, 1)
    got = res[0].rec["got"]
    sharded = {k: got.pop(k) for k in ("box_twice", "dpdk_two_boxes", "ports_length",
                                       "box_list_entry", "mac_no_secret", "job_2_32",
                                       "timeout_negative", "eal_args_str")}
    assert got == {"dtype": "ValueError", "rank": "ValueError", "box": "ValueError",
                   "port": "ValueError", "missing_world": "TypeError"}
    assert "listed twice" in sharded["box_twice"], sharded
    assert "udp driver" in sharded["dpdk_two_boxes"], sharded
    assert "1 ports for 2 boxes" in sharded["ports_length"], sharded
    assert sharded["box_list_entry"].startswith("box[1]"), sharded
    assert sharded["mac_no_secret"] == "mac=True needs the job's secret (secret_file)", sharded
    assert sharded["job_2_32"].startswith("job: an integer 0..4294967295, not 42949"), sharded
    assert sharded["timeout_negative"] == "timeout_ms: an integer 0..4294967295, not -1", sharded
    assert sharded["eal_args_str"] == "eal_args: a list of strings", sharded


def test_box_abort_names_both_sides(run_ranks):
    # rank 0 calls allreduce, rank 1 broadcast (same step and tensor id): the box aborts the
    # job; both get shouter.Error ECONNABORTED whose text names both calls, and the fields
    res = run_ranks("""
        c = comm(dtype="float32")
        x = np.ones(256, np.float32)
        try:
            if rank == 0:
                c.allreduce(x, step=4, tensor=9)
            else:
                c.broadcast(x, root=0, step=4, tensor=9)
            emit(ok=False)
        except shouter.Error as e:
            emit(ok=True, err=error_record(e))
        try:
            c.barrier()
        except shouter.Error as e:
            emit(ok=True, err=error_record(e), after=True)
    """, 2)
    for r in res:
        first = r.records[0]
        assert first["ok"], r.rec
        e = first["err"]
        assert e["type"] == "Error" and e["errno"] == errno.ECONNABORTED
        assert "allreduce" in e["strerror"] and "broadcast" in e["strerror"], e
        assert "rank 0" in e["strerror"] and "rank 1" in e["strerror"], e
        assert e["str"] == e["strerror"]
        ab = e["abort"]
        assert ab["reason"] == errno.EPROTO
        if ab["detailed"]:
            kinds = {ab["called"]["kind"], ab["other_called"]["kind"]}
            assert kinds == {"allreduce", "broadcast"}
            assert {ab["rank"], ab["other"]} == {0, 1}
            assert ab["called"]["step"] == 4 and ab["called"]["tensor"] == 9
        # the communicator stays failed: the next call fails too
        assert r.rec.get("after") and r.rec["err"]["errno"] in (errno.ECONNABORTED,
                                                                errno.EPIPE)


def test_missing_box_times_out(run_ranks, cluster):
    # nothing answers on this port of the box's address: the join fails with ETIMEDOUT after
    # timeout_ms, with the C text and what was tried
    res = run_ranks("""
        try:
            shouter.Comm(box, port=40000, job=job, rank=0, world=2, timeout_ms=300)
            emit(ok=False)
        except shouter.Error as e:
            emit(ok=True, err=error_record(e))
    """, 1)
    e = res[0].rec["err"]
    assert e["errno"] == errno.ETIMEDOUT
    assert "timed out" in e["strerror"] and "40000" in e["strerror"]
    assert e["abort"] is None


def test_two_threads_one_comm(run_ranks, cluster):
    # rank 0: two threads call allreduce on one Comm at once. The first one in blocks (rank 1
    # has not called yet), so the other finds the Comm busy: RuntimeError; only then does
    # rank 0 let rank 1 call (a file), which completes the blocked call. The second thread
    # can run at all only because the blocked call released the GIL.
    flag = f"{cluster.tmp}/threads-{cluster.next_job()}"
    res = run_ranks("""
        import threading, time
        flag = sys.argv[1]
        c = comm(dtype="int32")
        if rank == 1:
            while not os.path.exists(flag):
                time.sleep(0.01)
            x = np.full(8, 5, np.int32)
            c.allreduce(x)
            emit(ok=bool((x == 6).all()))
            sys.exit(0)
        go = threading.Barrier(2)
        outcome = {}
        def call(name):
            x = np.ones(8, np.int32)
            go.wait()
            try:
                c.allreduce(x)
                outcome[name] = ("done", int(x[0]))
            except RuntimeError as e:
                outcome[name] = ("busy", str(e))
                open(flag, "w").close()
        ts = [threading.Thread(target=call, args=(n,)) for n in "ab"]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        kinds = sorted(v[0] for v in outcome.values())
        done = [v[1] for v in outcome.values() if v[0] == "done"]
        emit(ok=kinds == ["busy", "done"] and done == [6], outcome=outcome)
    """, 2, [flag], timeout=60)
    for r in res:
        assert r.rec["ok"], r.rec
