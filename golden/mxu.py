"""The matrix unit's model: ``Y = X . W`` in the contract's accumulation order."""

from __future__ import annotations

import numpy as np

from . import xorshift
from .formats import BF16, FP32, FloatFormat, format_param
from .params import bits_param, int_param
from .ops import add, convert, convert_sr_bits, multiply
from .rounding import Rounding

__all__ = ["matmul", "accumulate_tiles", "round_outputs", "mxu"]


def matmul(x, w, in_fmt: FloatFormat = BF16, acc_fmt: FloatFormat = FP32) -> np.ndarray:
    """One weight tile: ``y[m, n] = ((+0 + x[m,0]*w[0,n]) + ...) + x[m,K-1]*w[K-1,n]``.

    Each product is exact in ``acc_fmt`` apart from its exponent range (rounded with RNE:
    overflow to inf, FTZ); each ``+`` rounds to ``acc_fmt`` with RNE.
    """
    x, w = _operands(x, w)
    in_fmt, acc_fmt = format_param("in_fmt", in_fmt), format_param("acc_fmt", acc_fmt)
    y = np.zeros((x.shape[0], w.shape[1]), acc_fmt.dtype)
    for k in range(x.shape[1]):
        product, _ = multiply(x[:, k, None], w[None, k, :], in_fmt, acc_fmt)
        y, _ = add(y, product, acc_fmt)
    return y


def _operands(x, w):
    """``x`` (M x K) and ``w`` (K x N) as integer arrays, or an error naming the mismatch."""
    x, w = bits_param("x", x, ndim=2), bits_param("w", w, ndim=2)
    if x.shape[1] != w.shape[0]:
        raise ValueError(f"x (M x K) has K = {x.shape[1]} columns but w (K x N) has {w.shape[0]} rows "
                         f"(shapes {x.shape} and {w.shape})")
    return x, w


def accumulate_tiles(y_tiles, acc_fmt: FloatFormat = FP32) -> np.ndarray:
    """Output accumulators: the first tile loads, then ``acc = acc + y_tile`` (RNE)."""
    acc_fmt = format_param("acc_fmt", acc_fmt)
    acc = None
    for y in y_tiles:
        acc = np.asarray(y) if acc is None else add(acc, y, acc_fmt)[0]
    return acc


def round_outputs(y, acc_fmt: FloatFormat, out_fmt: FloatFormat, rounding, seed: int = 0,
                  sr_bits=None, row_offset: int = 0) -> np.ndarray:
    """Round ``y`` (M x N) to ``out_fmt`` through one rounder lane per column.

    Column ``j`` uses xorshift lane ``j`` of a unit seeded with ``seed``; each lane steps
    once per output row. ``row_offset`` rows were rounded since the seed was loaded.
    """
    acc_fmt, out_fmt = format_param("acc_fmt", acc_fmt), format_param("out_fmt", out_fmt)
    rounding = Rounding.parse(rounding)
    y = bits_param("y", y, ndim=2)
    seed = int_param("seed", seed, 0, 0xFFFFFFFF)
    row_offset = int_param("row_offset", row_offset, 0, 1 << 40)
    rand_bits = convert_sr_bits(acc_fmt, out_fmt, rounding, sr_bits)
    rand = None
    if rand_bits is not None:
        outputs, _ = xorshift.stream(xorshift.lane_seeds(seed, y.shape[1]), row_offset + y.shape[0])
        rand = xorshift.top_bits(outputs[row_offset:], rand_bits)
    return convert(y, acc_fmt, out_fmt, rounding, rand, sr_bits)[0]


def mxu(x, w, *, rows: int | None = None, in_fmt: FloatFormat = BF16,
        acc_fmt: FloatFormat = FP32, convert_inputs: bool = False, out_rounding=None,
        seed: int = 0, sr_bits=None) -> np.ndarray:
    """Everything the MXU computes for ``X`` (M x K) and ``W`` (K x N).

    Parameters
    ----------
    rows : int, optional
        The array's reduction depth. ``K`` must be a multiple of it; ``K / rows`` weight
        tiles are reduced in the array and summed by the output accumulators.
        Default: ``K`` (one tile).
    convert_inputs : bool
        ``x`` and ``w`` are ``acc_fmt`` encodings, rounded to ``in_fmt`` with RNE on entry.
    out_rounding : str or Rounding, optional
        Round the results to ``in_fmt`` (``rne``, ``sr``, ``sr-half``); None keeps ``acc_fmt``.
    seed : int
        Seed of the output rounders' xorshift lanes (stochastic ``out_rounding``).
    """
    x, w = _operands(x, w)
    in_fmt, acc_fmt = format_param("in_fmt", in_fmt), format_param("acc_fmt", acc_fmt)
    k = x.shape[1]
    rows = k if rows is None else int_param("rows", rows, 1, max(k, 1))
    if k % rows:
        raise ValueError(f"K = {k} (x's columns) must be a multiple of rows = {rows}")
    if out_rounding is not None:
        out_rounding = Rounding.parse(out_rounding)
    if convert_inputs:
        x = convert(x, acc_fmt, in_fmt)[0]
        w = convert(w, acc_fmt, in_fmt)[0]
    tiles = (matmul(x[:, t:t + rows], w[t:t + rows], in_fmt, acc_fmt) for t in range(0, k, rows))
    y = accumulate_tiles(tiles, acc_fmt)
    if out_rounding is None:
        return y
    return round_outputs(y, acc_fmt, in_fmt, out_rounding, seed, sr_bits)
