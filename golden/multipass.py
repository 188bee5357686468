"""fp32 matrix products from bf16 passes through the MXU ("bf16x1", "bf16x3", "bf16x6").

Split. Each fp32 value ``a`` becomes three bf16 parts ``a = a0 + a1 + a2``:
``a0 = bf16(a)``, ``a1 = bf16(a - a0)``, ``a2 = bf16(a - a0 - a1)``, every conversion RNE
(the SR unit's ``convert``) and every residual an fp32 subtraction (golden ``add``). Each
residual is representable in fp32 and each part takes 8 significant bits of it, so the
parts are exact bf16 values and ``a2`` is the whole last residual (24 = 3 x 8 bits; the
sign of an RNE part lets the next residual be negative, never wider). One exception:
``a0`` is the bf16 value truncated towards zero where RNE would overflow to infinity
(``|a| >= (2 - 2^-8) x 2^127``), which keeps every part finite.

Tiny parts (TPU mode). bf16 and fp32 share the exponent range, so a part is subnormal
exactly when its residual is an fp32 subnormal: ``add`` flushes that residual to zero
(FTZ), and the part and every later part are 0. The parts then sum to ``a`` minus a
remainder below ``2^-126`` in magnitude (the MXU would read such a part as zero under DAZ
anyway). So the split is exact for every fp32 value whose residuals are normal or zero:
every ``|a| >= 2^-103`` (whose nonzero residuals are all ``>= 2^-126``);
an fp32 subnormal input is itself read as zero. Inf and NaN go to ``a0``; later parts are 0.

Passes. ``x . w`` with parts ``x_i``, ``w_j`` is the sum of the nine products
``x_i . w_j`` of weight ``2^-8(i+j)``; ``bf16x1`` keeps ``i + j = 0``, ``bf16x3`` keeps
``i + j <= 1`` and ``bf16x6`` keeps ``i + j <= 2`` (Henry, Tang and Heinecke, ARITH 2019).
Each pass is one weight tile of :func:`golden.mxu.mxu` (an fp32 chain of exact bf16
products in the MXU's order), and the output accumulators sum the passes, the first
pass loading them.

Order. Smallest passes first: ``x2.w0, x1.w1, x0.w2`` (weight ``2^-16``), then
``x1.w0, x0.w1`` (``2^-8``), then ``x0.w0`` last; within a weight, the larger index of
``x`` first. Each pass is its own tile, so its K products are summed from +0 at their own
scale; the order then only decides how the pass results combine, and changes the
median error by a few per cent (measured, docs/numerics.md). Smallest first is the order
that stays accurate when the passes share one accumulation chain (one tile of
``passes x K`` products, e.g. an array deeper than K): there, adding ``x0.w0`` first
rounds every later small product at the scale of the full result (bf16x6, K = 256,
normal entries: median error 6x larger).
"""

from __future__ import annotations

import numpy as np

from .formats import BF16, FP32
from .mxu import mxu
from .ops import add, convert
from .rounding import Rounding

__all__ = ["PASSES", "PARTS", "split", "pass_order", "multipass_matmul"]

#: Passes kept by each variant, in accumulation order: ``(i, j)`` is ``x_i . w_j``.
PASSES = {
    1: ((0, 0),),
    3: ((1, 0), (0, 1), (0, 0)),
    6: ((2, 0), (1, 1), (0, 2), (1, 0), (0, 1), (0, 0)),
}
#: Parts of the split.
PARTS = 3


def _encodings(name: str, a) -> np.ndarray:
    """``a`` as fp32 encodings (uint32); floats are refused rather than cast."""
    a = np.asarray(a)
    if a.dtype.kind not in "ui":
        raise TypeError(f"{name} must hold fp32 encodings (unsigned integers), not {a.dtype}: "
                        f"use array.view(np.uint32)")
    return a.astype(np.uint32)


def split(a, parts: int = PARTS) -> np.ndarray:
    """bf16 parts (uint16, shape ``(parts,) + a.shape``) of fp32 encodings ``a``.

    ``parts`` is 1 to 3; see the module notes for exactness and tiny parts.
    """
    if parts not in (1, 2, 3):
        raise ValueError(f"parts must be in 1..3, not {parts}")
    residual = _encodings("a", a)
    out = np.empty((parts,) + residual.shape, BF16.dtype)
    for i in range(parts):
        part, _ = convert(residual, FP32, BF16)
        if i == 0:
            # RNE overflow: truncate instead, so that the residual stays finite.
            overflow = ((part & 0x7FFF) == BF16.inf) & ((residual & 0x7FFFFFFF) != FP32.inf)
            if overflow.any():
                part = np.where(overflow, convert(residual, FP32, BF16, Rounding.TOWARD_ZERO)[0], part)
        out[i] = part
        widened = part.astype(np.uint32) << 16
        finite = (widened & FP32.inf) != FP32.inf
        # residual - part: exact in fp32 when normal, flushed to zero when subnormal.
        residual = np.where(finite, add(residual, widened ^ 0x80000000, FP32)[0], 0).astype(np.uint32)
    return out


def pass_order(passes: int):
    """``(i, j)`` of each pass, in accumulation order (see :data:`PASSES`)."""
    if passes not in PASSES:
        raise ValueError(f"passes must be one of {', '.join(map(str, PASSES))}, not {passes}")
    return PASSES[passes]


def multipass_matmul(x, w, passes: int = 3, rows: int | None = None) -> np.ndarray:
    """``x . w`` for fp32 encodings ``x`` (M x K) and ``w`` (K x N) in ``passes`` MXU passes.

    Parameters
    ----------
    passes : int
        1, 3 or 6.
    rows : int, optional
        The array's reduction depth (a divisor of K; default K). Each pass is then
        ``K / rows`` tiles, and the accumulators sum all tiles of one pass before the next.

    Returns
    -------
    fp32 encodings (M x N): bit for bit what the MXU computes when it is fed the
    concatenated parts ``[x_i0 | x_i1 | ...]`` and ``[w_j0; w_j1; ...]``.
    """
    order = pass_order(passes)
    x, w = _encodings("x", x), _encodings("w", w)
    if x.ndim != 2 or w.ndim != 2 or x.shape[1] != w.shape[0]:
        raise ValueError(f"need x (M x K) and w (K x N), got shapes {x.shape} and {w.shape}")
    k = x.shape[1]
    rows = k if rows is None else rows
    if not isinstance(rows, (int, np.integer)) or rows < 1 or k % rows:
        raise ValueError(f"rows must be a positive divisor of K = {k}, not {rows!r}")
    parts = 1 + max(max(p) for p in order)
    xs, ws = split(x, parts), split(w, parts)
    x_cat = np.concatenate([xs[i] for i, _ in order], axis=1)
    w_cat = np.concatenate([ws[j] for _, j in order], axis=0)
    return mxu(x_cat, w_cat, rows=rows)
