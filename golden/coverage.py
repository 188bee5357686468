"""What a set of checked vectors covered: result classes and rounding situations.

``classes`` reads only golden's results and flags. ``situations`` also asks golden the same
question again in other modes on the inexact vectors (``again``), and classifies NaN results
by their inputs:

- ``tie``: the discarded fraction is exactly half an ulp. ``sr`` with 32 random bits
  ``R`` goes up exactly when the fraction is >= 1/2 (``R = 2**31``) or > 1/2
  (``R = 2**31 - 1``), exact whenever at most 32 bits are discarded: every unit but the
  adder, whose sticky bit can hide a fraction within 2**-32 of a half. An ``rne`` result
  already answers one of the two questions.
- ``exponent_carry``: rounding carried into the exponent (the exponent field differs from
  the ``rtz`` result's, both finite and nonzero).
- ``overflow_by_rounding``: overflows, but not under ``rtz``.
- ``tiny_rounded_up``: tiny under ``rtz`` (flushed) but rounded up to the smallest normal.
- ``nan_from_snan``, ``nan_from_qnan``, ``nan_invalid_op``: a NaN result from a signalling
  NaN input, from quiet NaN inputs only, or from no NaN input (inf * 0, inf - inf).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from .bits import unpack
from .formats import FloatFormat
from .rounding import Flags, Rounding

__all__ = ["CLASSES", "SITUATIONS", "classes", "situations", "merge", "table"]

CLASSES = ("zero", "subnormal", "normal", "inf", "nan", "ftz_underflow", "overflow", "inexact", "invalid")
#: Elements per block of the class histogram (its temporaries fit in the cache).
BLOCK = 1 << 16
SITUATIONS = ("tie", "exponent_carry", "overflow_by_rounding", "tiny_rounded_up",
              "nan_from_snan", "nan_from_qnan", "nan_invalid_op")


def _fields(fmt: FloatFormat, bits):
    bits = np.asarray(bits).astype(np.uint32, copy=False)
    exp = (bits >> np.uint32(fmt.man_bits)) & np.uint32(fmt.exp_max_field)
    return exp, bits & np.uint32(fmt.man_mask)


def classes(fmt: FloatFormat, bits, flags) -> dict[str, int]:
    """Counts of each result class in ``CLASSES`` (a result counts once per class it is in)."""
    # One histogram of (exponent kind, mantissa nonzero, flags), built block by block so
    # that the temporaries stay in cache.
    bits, flags = np.asarray(bits).reshape(-1), np.asarray(flags, np.uint8).reshape(-1)
    table = np.zeros(192, np.int64)
    for start in range(0, len(bits), BLOCK):
        exp, man = _fields(fmt, bits[start:start + BLOCK])
        kind = (exp != 0).view(np.uint8) + (exp == fmt.exp_max_field).view(np.uint8)    # 0 low, 1 normal, 2 top
        key = ((kind << np.uint8(1)) | (man != 0).view(np.uint8)) << np.uint8(5)
        key |= flags[start:start + BLOCK] & np.uint8(31)
        table += np.bincount(key, minlength=192)
    table = table.reshape(6, 32)     # [kind * 2 + mantissa nonzero, flags]
    per_kind = table.sum(axis=1)
    per_flag = np.array([table[:, [f for f in range(32) if f & bit]].sum() for bit in
                         (Flags.UNDERFLOW, Flags.OVERFLOW, Flags.INEXACT, Flags.INVALID)])
    counts = [per_kind[0], per_kind[1], per_kind[2] + per_kind[3], per_kind[4], per_kind[5], *per_flag]
    if fmt.finite:      # the top binade holds numbers and the one NaN, no inf
        nan = int(np.count_nonzero(unpack(bits, fmt).is_nan))
        counts[2:5] = [len(bits) - counts[0] - counts[1] - nan, 0, nan]
    return dict(zip(CLASSES, map(int, counts)))


def _nan_kinds(fmt_in: FloatFormat, operands, result_nan):
    snan = np.zeros(result_nan.shape, bool)
    qnan = np.zeros(result_nan.shape, bool)
    quiet_bit = np.uint32(1 << (fmt_in.man_bits - 1))
    for x in operands:
        _, man = _fields(fmt_in, x)
        nan = unpack(np.asarray(x), fmt_in).is_nan
        quiet = (man & quiet_bit) != 0
        snan |= nan & ~quiet
        qnan |= nan & quiet
    return {"nan_from_snan": result_nan & snan, "nan_from_qnan": result_nan & qnan & ~snan,
            "nan_invalid_op": result_nan & ~snan & ~qnan}


def situations(fmt: FloatFormat, bits, flags, again, in_fmt: FloatFormat, operands,
               rounding=None) -> dict[str, int]:
    """Counts of each rounding situation in ``SITUATIONS``.

    ``again(select, rounding, rand, sr_bits) -> (bits, flags)`` is golden on the vectors
    ``select`` (a boolean mask) in another mode; ``operands`` are the inputs (``in_fmt``).
    ``rounding``: the mode of ``bits``; under ``rne`` they tell one side of the half
    (above it where the truncated LSB is even, at or above where odd), which saves asking.
    """
    bits, flags = np.asarray(bits), np.asarray(flags)
    exp, _ = _fields(fmt, bits)
    counts = {k: int(np.count_nonzero(v))
              for k, v in _nan_kinds(in_fmt, operands, unpack(bits, fmt).is_nan).items()}
    inexact = (flags & Flags.INEXACT) != 0
    n = int(np.count_nonzero(inexact))
    if n == 0:
        return {**{k: 0 for k in SITUATIONS}, **counts}
    bits, flags, exp = bits[inexact], flags[inexact], exp[inexact]
    rtz_bits, rtz_flags = again(inexact, "rtz", None, None)
    rtz_exp, _ = _fields(fmt, rtz_bits)
    finite = (exp != 0) & (exp != fmt.exp_max_field) & (rtz_exp != 0) & (rtz_exp != fmt.exp_max_field)
    counts["exponent_carry"] = int(np.count_nonzero(finite & (exp != rtz_exp)))
    counts["overflow_by_rounding"] = int(np.count_nonzero((flags & Flags.OVERFLOW) & ~(rtz_flags & Flags.OVERFLOW)))
    counts["tiny_rounded_up"] = int(np.count_nonzero((rtz_flags & Flags.UNDERFLOW) & ~(flags & Flags.UNDERFLOW)))
    half = np.uint32(1 << 31)      # sr, 32 bits: up iff fraction >= 1/2 (R = 2**31) or > 1/2 (2**31 - 1)
    try:
        if rounding is not None and Rounding.parse(rounding) is Rounding.NEAREST_EVEN:
            odd = (np.asarray(rtz_bits) & 1).astype(bool)
            rne_up = bits != rtz_bits
            sr_up = again(inexact, "sr", half - odd.view(np.uint8).astype(np.uint32), 32)[0] != rtz_bits
            tie = np.where(odd, rne_up & ~sr_up, sr_up & ~rne_up)
        else:
            at_least_half = again(inexact, "sr", np.full(n, half), 32)[0] != rtz_bits
            above_half = again(inexact, "sr", np.full(n, half - np.uint32(1)), 32)[0] != rtz_bits
            tie = at_least_half & ~above_half
        counts["tie"] = int(np.count_nonzero(tie))
    except ValueError:                  # the operation takes no rand: it never rounds inside its range
        counts["tie"] = 0
    return {k: counts[k] for k in SITUATIONS}


def merge(total: dict, part: dict) -> dict:
    """Add the counts of ``part`` into a copy of ``total``."""
    out = Counter(total)
    out.update(part)
    return dict(out)


def table(counts: dict, vectors: int) -> str:
    """A Markdown table of coverage counts and their share of ``vectors``."""
    rows = ["| class or situation | vectors | share |", "|---|---:|---:|"]
    rows += [f"| {k} | {v} | {v / vectors:.3g} |" for k, v in counts.items()]
    return "\n".join(rows)
