# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The shouter authors
"""Tensors as the box sees them, for the torch.distributed backend (shouter.torch): a
tensor's bytes as float32 words for a relay, the reduce ops by name, and the local reduction
of what the box does not sum (other dtypes, bitwise ops), in rank order."""

import torch
import torch.distributed as dist

_BOX_OPS = ("sum", "min", "max", "prod")      # what the box reduces (float32)


def _cpu(t, what):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"shouter: {what}: a torch.Tensor, not {type(t).__name__}")
    if t.device.type != "cpu":
        raise TypeError(f"shouter: {what}: a CPU tensor (this one is on {t.device}): the "
                        "shouter backend moves host memory")
    return t


def _words(t):
    """t's bytes as a flat float32 tensor sharing its memory, or None (not contiguous, or a
    size that is not a multiple of 4 bytes)."""
    if not t.is_contiguous() or (t.numel() * t.element_size()) % 4:
        return None
    flat = t.reshape(-1)
    if flat.dtype == torch.float32:
        return flat
    if flat.dtype == torch.bool:
        flat = flat.view(torch.uint8)
    return flat.view(torch.uint8).view(torch.float32)


class _Bytes:
    """A tensor's bytes as float32 words for a relay: the tensor itself when it can be, else
    a padded copy (in: filled now; out: copied back by finish())."""

    def __init__(self, t, copy_in=True):
        self.t = t
        self.w = _words(t)
        self.copied = self.w is None
        if self.copied:
            nb = t.numel() * t.element_size()
            self.w = torch.zeros((nb + 3) // 4, dtype=torch.float32)
            if copy_in:
                self.bytes()[:nb].copy_(_u8(t.contiguous()))

    def bytes(self):
        return self.w.view(torch.uint8)

    def finish(self):
        if self.copied:
            nb = self.t.numel() * self.t.element_size()
            self.t.copy_(_from_u8(self.bytes()[:nb], self.t))


def _u8(t):
    """A contiguous tensor's bytes (uint8, flat, sharing its memory)."""
    return t.reshape(-1).view(torch.uint8)


def _from_u8(b, like):
    """Bytes b (uint8, contiguous) as a tensor of like's dtype and shape."""
    dt = like.dtype
    v = b.view(torch.uint8) if dt == torch.bool else b.view(dt)
    if dt == torch.bool:
        v = v.view(torch.bool)
    return v.reshape(like.shape)


def _red_name(op):
    R = dist.ReduceOp
    for name, o in (("sum", R.SUM), ("min", R.MIN), ("max", R.MAX), ("prod", R.PRODUCT),
                    ("avg", R.AVG), ("band", R.BAND), ("bor", R.BOR), ("bxor", R.BXOR)):
        if op == o:
            return name
    raise ValueError(f"shouter: reduce op {op} is not supported (SUM, MIN, MAX, PRODUCT, "
                     "AVG, and BAND/BOR/BXOR for integers)")


def _local_reduce(blocks, name, dtype):
    """Reduce a list of tensors (rank order) in dtype: exact for integers, the same order
    at every rank for floats."""
    if name in ("band", "bor", "bxor") and (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"shouter: {name.upper()} of {dtype}: integers only")
    acc = blocks[0].clone()
    for b in blocks[1:]:
        if name in ("sum", "avg"):
            if dtype == torch.bool:
                acc.logical_or_(b)
            else:
                acc.add_(b)
        elif name == "prod":
            if dtype == torch.bool:
                acc.logical_and_(b)
            else:
                acc.mul_(b)
        elif name == "min":
            acc = torch.minimum(acc, b)
        elif name == "max":
            acc = torch.maximum(acc, b)
        elif name == "band":
            acc.bitwise_and_(b)
        elif name == "bor":
            acc.bitwise_or_(b)
        else:
            acc.bitwise_xor_(b)
    if name == "avg":
        acc.div_(len(blocks))
    return acc


def _check_red(t, name):
    """Whether the box reduces t (float32 and a box op), or the fallback does; raises for
    what neither does."""
    if name == "avg" and not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise ValueError(f"shouter: AVG of {t.dtype}: floating point only")
    if name in ("band", "bor", "bxor") and (t.dtype.is_floating_point or t.dtype.is_complex):
        raise ValueError(f"shouter: {name.upper()} of {t.dtype}: integers only")
    return t.dtype == torch.float32 and name in _BOX_OPS + ("avg",)
