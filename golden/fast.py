"""The MXU's tile reduction on the machine's float32 where that is provably the integer model.

One weight tile computes ``y[m, n] = ((+0 + x[m,0]*w[0,n]) + ...) + x[m,K-1]*w[K-1,n]``:
exact products, each ``+`` RNE in fp32, flush to zero, and the OR of every operation's flags
(``golden.mxu.matmul_flags``, the reference on integer bit patterns). :func:`reduce_tile`
gives the same bits and flags, ~20x faster, by running the safe part of the matrix on
NumPy's float32 (IEEE 754 binary32, round to nearest even):

* **Safe pairs.** Row ``m`` of ``x`` and column ``n`` of ``w`` are *safe* when neither holds
  a NaN, an infinity or a subnormal (in the input format) and, with ``Ex``, ``Ew`` the
  exponents of their nonzero entries, ``min Ex + min Ew >= -126 + 2 (p - 1)`` (``p`` the
  input format's precision) and ``max Ex + max Ew <= 124 - ceil(log2 K)``.
* **Why they are exact.** Every product of a safe pair is a multiple of ``q = 2^(min Ex +
  min Ew - 2(p - 1)) >= 2^-126`` with at most ``2p <= 24`` significant bits: float32 holds
  it exactly, and the reference's product is the same value with no flag. Each partial sum
  is the float32 RNE sum of two multiples of ``q``, so a multiple of ``q`` itself (rounding
  keeps multiples of ``q`` above ``2^24 q``, and below that the sum is exact): nonzero sums
  are normal, nothing flushes. Every magnitude stays below ``K 2^(max Ex + max Ew + 2)
  (1 + 2^-24)^K < 2^127``: nothing overflows. So float32 and the reference agree bit for
  bit, and the only flag either raises is inexact.
* **Inexact** is detected per step with the error-free transformation TwoSum (Knuth): ``err
  = (y - (s - (s - y))) + (p - (s - y))`` is exactly ``y + p - s`` when nothing overflows,
  so a step is inexact iff ``err != 0``. ``err`` is never ``-0`` (``y`` is never ``-0``:
  the chain starts at ``+0`` and an exact zero sum is ``+0``), so OR-ing its bits over the
  steps gives the element's inexact flag.
* **The rest** (unsafe pairs: specials, subnormals, exponent ranges near the limits) goes
  through the reference, by rows or by columns, whichever covers them with less work.

``tests/test_golden_fast.py`` checks the claims against the reference: every bf16 x bf16
product (``--scale``: all 2^32; by default a dense sample), and random and edge-case tiles
at the limits of the safe region and beyond.
"""

from __future__ import annotations

import numpy as np

from .formats import FP32, FloatFormat
from .ops import add as reference_add, convert
from .rounding import Flags

__all__ = ["applies", "safe_pairs", "reduce_tile", "add"]

#: Elements of ``y`` per block of the float32 loop: its six work arrays stay in the cache.
BLOCK = 16384


def applies(in_fmt: FloatFormat, acc_fmt: FloatFormat) -> bool:
    """Whether the float32 path covers ``in_fmt`` products accumulated in ``acc_fmt``: fp32
    accumulation of products that are exact in fp32."""
    return acc_fmt == FP32 and 2 * in_fmt.precision <= FP32.precision


def _exponents(bits: np.ndarray, fmt: FloatFormat, axis: int):
    """fp32 values of ``bits`` (``fmt`` encodings), the min and max unbiased exponent of the
    nonzero entries along ``axis`` (+-1000 where all are zero), and whether a line along
    ``axis`` holds a NaN, an infinity or a subnormal."""
    exp_field = (bits.astype(np.uint32) >> fmt.man_bits) & fmt.exp_max_field
    man = bits.astype(np.uint32) & fmt.man_mask
    special = (exp_field == fmt.exp_max_field) if not fmt.finite else \
        (exp_field == fmt.exp_max_field) & (man == fmt.man_mask)
    subnormal = (exp_field == 0) & (man != 0)
    nonzero = exp_field != 0
    exponent = exp_field.astype(np.int32) - fmt.bias
    low = np.where(nonzero, exponent, 1000).min(axis=axis)
    high = np.where(nonzero, exponent, -1000).max(axis=axis)
    wide = convert(bits, fmt, FP32)[0].view(np.float32)
    return wide, low, high, (special | subnormal).any(axis=axis)


def safe_pairs(x: np.ndarray, w: np.ndarray, in_fmt: FloatFormat):
    """``x``, ``w`` as float32 arrays and the M x N mask of the pairs (row of ``x``, column
    of ``w``) whose whole reduction float32 computes exactly as the reference (module notes)."""
    k = x.shape[1]
    xf, x_low, x_high, x_bad = _exponents(x, in_fmt, axis=1)
    wf, w_low, w_high, w_bad = _exponents(w, in_fmt, axis=0)
    low_limit = -126 + 2 * (in_fmt.precision - 1)
    high_limit = 124 - max(k - 1, 0).bit_length()
    safe = (x_low[:, None] + w_low[None, :] >= low_limit) & (x_high[:, None] + w_high[None, :] <= high_limit)
    safe &= ~x_bad[:, None] & ~w_bad[None, :]
    return xf, wf, safe


def _float32_chain(xf: np.ndarray, wf: np.ndarray):
    """The reduction on float32 with TwoSum's inexact detection: (y bits, inexact mask)."""
    m_rows, k = xf.shape
    n = wf.shape[1]
    y_all = np.empty((m_rows, n), np.uint32)
    nx_all = np.empty((m_rows, n), bool)
    block_rows = max(1, BLOCK // max(n, 1))
    xt = np.ascontiguousarray(xf.T)
    with np.errstate(all="ignore"):       # unsafe pairs compute garbage here; the reference replaces them
        for m0 in range(0, m_rows, block_rows):
            rows = slice(m0, min(m0 + block_rows, m_rows))
            shape = (rows.stop - rows.start, n)
            y, s, p, t, u = (np.zeros(shape, np.float32) for _ in range(5))
            nx = np.zeros(shape, np.uint32)
            for j in range(k):
                np.multiply(xt[j, rows, None], wf[j], out=p)
                np.add(y, p, out=s)
                np.subtract(s, y, out=t)          # TwoSum: t = s - y
                np.subtract(s, t, out=u)
                np.subtract(y, u, out=u)          # y - (s - t)
                np.subtract(p, t, out=t)          # p - t
                np.add(u, t, out=u)               # the rounding error of y + p
                np.bitwise_or(nx, u.view(np.uint32), out=nx)
                y, s = s, y
            y_all[rows] = y.view(np.uint32)
            nx_all[rows] = nx != 0
    return y_all, nx_all


def reduce_tile(x: np.ndarray, w: np.ndarray, in_fmt: FloatFormat, acc_fmt: FloatFormat, reference):
    """One tile, ``x`` (M x K) by ``w`` (K x N) encodings: ``(y, flags)`` equal to
    ``reference(x, w)`` (the integer model's tile reduction), computed on float32 for the
    safe pairs when :func:`applies`, by ``reference`` for the rest."""
    if not applies(in_fmt, acc_fmt) or 0 in x.shape or 0 in w.shape:
        return reference(x, w)
    xf, wf, safe = safe_pairs(x, w, in_fmt)
    y, inexact = _float32_chain(xf, wf)
    flags = np.where(inexact, np.uint8(Flags.INEXACT), np.uint8(0))
    y = y.astype(acc_fmt.dtype)
    if not safe.all():
        bad_rows, bad_cols = np.flatnonzero(~safe.all(axis=1)), np.flatnonzero(~safe.all(axis=0))
        if len(bad_rows) * w.shape[1] <= len(bad_cols) * x.shape[0]:
            y[bad_rows], flags[bad_rows] = reference(x[bad_rows], w)
        else:
            y[:, bad_cols], flags[:, bad_cols] = reference(x, w[:, bad_cols])
    return y, flags


def add(a: np.ndarray, b: np.ndarray, fmt: FloatFormat):
    """``golden.ops.add(a, b, fmt)`` (RNE) for fp32 encodings: on float32 where both are
    zero or normal below ``2^126`` and the sum is zero or normal (it then rounds as the
    reference, and TwoSum finds the inexact ones), by the reference elsewhere."""
    if fmt != FP32:
        return reference_add(a, b, fmt)
    a, b = np.asarray(a, np.uint32), np.asarray(b, np.uint32)
    af, bf = a.view(np.float32), b.view(np.float32)
    big, tiny = np.float32(2.0 ** 126), np.float32(2.0 ** -126)
    with np.errstate(all="ignore"):
        s = af + bf
        t = s - af
        err = (af - (s - t)) + (bf - t)
        mag = np.abs(s)
        ok = (np.abs(af) < big) & (np.abs(bf) < big) & ((mag >= tiny) | (mag == 0))
        for v in (af, bf):
            ok &= (np.abs(v) >= tiny) | (v == 0)
    out = s.view(np.uint32).copy()
    flags = np.where(err != 0, np.uint8(Flags.INEXACT), np.uint8(0))
    if not ok.all():
        out[~ok], flags[~ok] = reference_add(a[~ok], b[~ok], fmt)
    return out, flags


def split(a: np.ndarray, parts: int, reference_split):
    """``golden.multipass.split(a, parts)`` (``reference_split``) for fp32 encodings: on
    float32 and integers where ``2^-103 <= |a| < 2^127`` (each part the RNE bf16 of the
    residual, ``(u + 0x7FFF + bit 16) >> 16`` on its bits; each residual an exact float32
    difference, normal or zero there, so no flush and no overflow), by the reference
    elsewhere (zeros, specials, tiny and huge values)."""
    a = np.asarray(a, np.uint32)
    magnitude = a & 0x7FFFFFFF
    ok = (magnitude >= np.uint32(127 - 103) << 23) & (magnitude < np.uint32(127 + 127) << 23)
    out = np.empty((parts,) + a.shape, np.uint16)
    residual = a.copy()
    with np.errstate(all="ignore"):     # the reference replaces what overflows here
        for i in range(parts):
            part = ((residual + np.uint32(0x7FFF) + ((residual >> 16) & 1)) >> 16).astype(np.uint16)
            out[i] = part
            widened = (part.astype(np.uint32) << 16).view(np.float32)
            residual = (residual.view(np.float32) - widened).view(np.uint32)
    if not ok.all():
        out[:, ~ok] = reference_split(a[~ok], parts)
    return out
