"""The matrix unit's model: ``Y = X . W`` in the contract's accumulation order."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import xorshift
from .column import ColumnAccumulator, accumulation_arg, accumulation_param, reduce_column
from .formats import BF16, FP32, FloatFormat, format_param
from .params import bits_param, int_param
from .ops import add, convert, convert_sr_bits, multiply
from .rounding import Rounding

__all__ = ["matmul", "matmul_flags", "accumulate_tiles", "round_outputs", "mxu", "Stream", "stream"]


def matmul(x, w, in_fmt: FloatFormat = BF16, acc_fmt: FloatFormat = FP32, accumulation=None, *,
           accumulator=None) -> np.ndarray:
    """One weight tile: ``y[m, n] = ((+0 + x[m,0]*w[0,n]) + ...) + x[m,K-1]*w[K-1,n]``.

    Each product is exact in ``acc_fmt`` apart from its exponent range (rounded with RNE:
    overflow to inf, FTZ); each ``+`` rounds to ``acc_fmt`` with RNE (``accumulation``
    ``"sequential"`` or None, the default), or the column's products are summed by a column
    accumulator (``"column:w=W,..."`` or a ``golden.column.ColumnAccumulator``).
    ``accumulator``: the old name of ``accumulation`` (``"fp32"``: the old ``"sequential"``).
    """
    return matmul_flags(x, w, in_fmt, acc_fmt, accumulation_arg(accumulation, accumulator))[0]


def matmul_flags(x, w, in_fmt: FloatFormat = BF16, acc_fmt: FloatFormat = FP32, accumulation=None, *,
                 accumulator=None):
    """:func:`matmul` and, per element of ``y``, the OR of its multiplies' and adds' flags."""
    x, w = _operands(x, w)
    in_fmt, acc_fmt = format_param("in_fmt", in_fmt), format_param("acc_fmt", acc_fmt)
    return _reduce(x, w[None], in_fmt, acc_fmt,
                   accumulation_param("accumulation", accumulation_arg(accumulation, accumulator)))


def _reduce(x, w, in_fmt: FloatFormat, acc_fmt: FloatFormat, accumulation: ColumnAccumulator | None = None):
    """:func:`matmul_flags` of ``x`` (M x K) with ``w`` (1 x K x N: one tile, or M x K x N:
    each row its own tile, so a stream of many tiles is one vectorised pass)."""
    if accumulation is not None:
        return reduce_column(x, w, in_fmt, acc_fmt, accumulation)
    y = np.zeros((x.shape[0], w.shape[2]), acc_fmt.dtype)
    flags = np.zeros(y.shape, np.uint8)
    for k in range(x.shape[1]):
        product, mul_flags = multiply(x[:, k, None], w[:, k, :], in_fmt, acc_fmt)
        y, add_flags = add(y, product, acc_fmt)
        flags |= mul_flags | add_flags
    return y, flags


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
    return _round_flags(y, acc_fmt, out_fmt, rounding, seed, sr_bits, row_offset)[0]


def _round_flags(y, acc_fmt, out_fmt, rounding, seed=0, sr_bits=None, row_offset=0):
    """:func:`round_outputs` and the rounders' flags."""
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
    return convert(y, acc_fmt, out_fmt, rounding, rand, sr_bits)


def mxu(x, w, *, rows: int | None = None, in_fmt: FloatFormat = BF16,
        acc_fmt: FloatFormat = FP32, convert_inputs: bool = False, out_rounding=None,
        seed: int = 0, sr_bits=None, accumulation=None, accumulator=None) -> np.ndarray:
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
    accumulation : str or ColumnAccumulator, optional
        How a tile's column sums its products (:func:`matmul`); default ``"sequential"``
        (``accumulator``: its old name).
    """
    x, w = _operands(x, w)
    accumulation = accumulation_param("accumulation", accumulation_arg(accumulation, accumulator))
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
    tiles = (matmul(x[:, t:t + rows], w[t:t + rows], in_fmt, acc_fmt, accumulation) for t in range(0, k, rows))
    y = accumulate_tiles(tiles, acc_fmt)
    if out_rounding is None:
        return y
    return round_outputs(y, acc_fmt, in_fmt, out_rounding, seed, sr_bits)


class Stream(NamedTuple):
    """What the MXU does with a stream of rows (see :func:`stream`).

    ``y``: the ``y`` rows in the order they leave; ``row_flags[i, j]``: the flags row ``i``
    of X ORs into column ``j``'s sticky register when it leaves the array (its multiplies
    and adds, its accumulator add, its output rounding); ``tile[i]``: the tile it used.
    """

    y: np.ndarray
    row_flags: np.ndarray
    tile: np.ndarray


def stream(x, tiles, swap, *, control=None, in_fmt: FloatFormat = BF16, acc_fmt: FloatFormat = FP32,
           convert_inputs: bool = False, out_rounding=None, seed: int = 0, sr_bits=None,
           acc_depth: int = 0, accumulation=None, accumulator=None) -> Stream:
    """The MXU fed X rows (M x K) with per-row swap marks, weight tiles loaded in order.

    Row ``i`` uses the tile made active by the latest swap at or before it: the first row
    swaps whatever ``swap[0]`` says (no row runs before a tile), and every swap activates
    the next of ``tiles``. ``control`` (with ``acc_depth`` accumulator rows, initially +0):
    per row ``(addr, first, last)``; rows without ``last`` write the accumulator and
    produce no ``y`` row, ``last`` rows write no accumulator. The output
    rounders' lanes (seeded with ``seed``) step once per ``y`` row. Input conversion
    (``convert_inputs``) raises no flags. ``accumulation`` (``accumulator``): as :func:`matmul`'s.
    """
    accumulation = accumulation_param("accumulation", accumulation_arg(accumulation, accumulator))
    in_fmt, acc_fmt = format_param("in_fmt", in_fmt), format_param("acc_fmt", acc_fmt)
    x = np.asarray(x)
    swap = np.asarray(swap, bool).copy()
    if len(swap) != len(x):
        raise ValueError(f"need one swap mark per X row: {len(swap)} marks, {len(x)} rows")
    if len(swap):
        swap[0] = True
    tile = np.cumsum(swap) - 1
    if len(x) and tile[-1] >= len(tiles):
        raise ValueError(f"{tile[-1] + 1} swaps need as many tiles, not {len(tiles)}")
    if convert_inputs:
        x = convert(x, acc_fmt, in_fmt)[0]
        tiles = [convert(w, acc_fmt, in_fmt)[0] for w in tiles]
    if len(x):
        x = bits_param("x", x, ndim=2)
        w = np.stack([bits_param("tiles", t, ndim=2) for t in tiles[:tile[-1] + 1]])
        if w.shape[1] != x.shape[1]:
            raise ValueError(f"x (M x K) has K = {x.shape[1]} columns but the tiles (K x N) have {w.shape[1]} rows")
        y, row_flags = _reduce(x, w[tile], in_fmt, acc_fmt, accumulation)
    else:
        y = np.zeros((0, np.asarray(tiles[0]).shape[1]), acc_fmt.dtype)
        row_flags = np.zeros(y.shape, np.uint8)
    keep = np.ones(len(x), bool)
    if acc_depth:
        if control is None or len(control) != len(x):
            raise ValueError("acc_depth needs one (addr, first, last) per X row in control")
        acc = np.zeros((acc_depth, y.shape[1]), acc_fmt.dtype)
        for i, (addr, first, last) in enumerate(control):
            if not first:
                y[i], acc_flags = add(acc[addr], y[i], acc_fmt)
                row_flags[i] |= acc_flags
            if not last:        # a last row leaves on y and leaves the accumulator alone
                acc[addr] = y[i]
            keep[i] = bool(last)
    out = y[keep]
    if out_rounding is not None:
        out, round_flags = _round_flags(out, acc_fmt, in_fmt, out_rounding, seed, sr_bits)
        row_flags[keep] |= round_flags
    return Stream(out, row_flags, tile)
