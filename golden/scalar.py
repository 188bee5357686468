"""Scalar reference written straight from the contract with exact rationals.

Slow and independent of the vectorised model (no alignment, no sticky bits, no fixed
widths): it exists to cross-check ``golden.ops`` in every mode and format.
"""

from __future__ import annotations

from fractions import Fraction

from .formats import FloatFormat, format_param
from .rounding import Flags, Rounding

__all__ = ["decode", "round_exact", "convert", "multiply", "add"]


def decode(bits: int, fmt: FloatFormat):
    """Return ``("nan", signalling)``, ``("inf", sign)`` or ``("num", sign, value)`` under DAZ."""
    sign = bits >> fmt.sign_shift
    exponent = (bits >> fmt.man_bits) & fmt.exp_max_field
    mantissa = bits & fmt.man_mask
    if exponent == fmt.exp_max_field and fmt.finite and mantissa == fmt.man_mask:
        return ("nan", False)
    if exponent == fmt.exp_max_field and not fmt.finite:
        if mantissa:
            return ("nan", not mantissa >> (fmt.man_bits - 1))
        return ("inf", sign)
    if exponent == 0:
        return ("num", sign, Fraction(0))
    value = Fraction((1 << fmt.man_bits) | mantissa) * Fraction(2) ** (exponent - fmt.bias - fmt.man_bits)
    return ("num", sign, value)


def _floor_log2(value: Fraction) -> int:
    e = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** e > value:
        e -= 1
    return e


def round_exact(sign: int, value: Fraction, fmt: FloatFormat, rounding: Rounding,
                rand: int | None = None, rand_bits: int | None = None):
    """Round the exact magnitude ``value`` (may be 0) with ``sign`` to ``fmt``: ``(bits, flags)``."""
    if value == 0:
        return sign << fmt.sign_shift, 0
    e = _floor_log2(value)
    scaled = value / Fraction(2) ** (e - fmt.man_bits)   # in [2**man_bits, 2**precision)
    kept = scaled.numerator // scaled.denominator
    frac = scaled - kept
    if frac == 0:
        up = False  # exact values never move, in any mode
    elif rounding is Rounding.NEAREST_EVEN:
        up = frac > Fraction(1, 2) or (frac == Fraction(1, 2) and kept % 2 == 1)
    elif rounding is Rounding.STOCHASTIC:
        scaled_frac = frac * 2 ** rand_bits
        up = scaled_frac.numerator // scaled_frac.denominator + rand >= 2 ** rand_bits
    elif rounding is Rounding.STOCHASTIC_HALF:
        up = frac != 0 and rand == 1
    else:
        up = False
    kept += up
    if kept == 1 << fmt.precision:
        kept >>= 1
        e += 1
    if e < fmt.emin:
        return sign << fmt.sign_shift, Flags.UNDERFLOW | Flags.INEXACT
    if e > fmt.emax or (fmt.finite and e == fmt.emax and kept & fmt.man_mask == fmt.man_mask):
        if rounding is Rounding.TOWARD_ZERO or fmt.saturate:
            return (sign << fmt.sign_shift) | fmt.max_finite, Flags.OVERFLOW | Flags.INEXACT
        if fmt.finite:
            return fmt.canonical_nan, Flags.OVERFLOW | Flags.INEXACT
        return (sign << fmt.sign_shift) | fmt.inf, Flags.OVERFLOW | Flags.INEXACT
    bits = (sign << fmt.sign_shift) | ((e + fmt.bias) << fmt.man_bits) | (kept & fmt.man_mask)
    return bits, Flags.INEXACT if frac else 0


def _infinity(sign: int, fmt):
    """An infinite result: inf, or the largest finite value (``saturate``: overflow,
    inexact), or NaN (``finite``: invalid)."""
    if fmt.saturate:
        return (sign << fmt.sign_shift) | fmt.max_finite, Flags.OVERFLOW | Flags.INEXACT
    if fmt.finite:
        return fmt.canonical_nan, Flags.INVALID
    return (sign << fmt.sign_shift) | fmt.inf, 0


def _nan(fmt, signalling_inputs, invalid=False):
    return fmt.canonical_nan, Flags.INVALID if invalid or any(signalling_inputs) else 0


def convert(a: int, in_fmt, out_fmt, rounding, rand=None, rand_bits=None):
    in_fmt, out_fmt = format_param("in_fmt", in_fmt), format_param("out_fmt", out_fmt)
    x = decode(a, in_fmt)
    if x[0] == "nan":
        return _nan(out_fmt, [x[1]])
    if x[0] == "inf":
        return _infinity(x[1], out_fmt)
    return round_exact(x[1], x[2], out_fmt, rounding, rand, rand_bits)


def multiply(a: int, b: int, in_fmt, out_fmt, rounding, rand=None, rand_bits=None):
    in_fmt, out_fmt = format_param("in_fmt", in_fmt), format_param("out_fmt", out_fmt)
    x, y = decode(a, in_fmt), decode(b, in_fmt)
    nans = [v[1] for v in (x, y) if v[0] == "nan"]
    if nans:
        return _nan(out_fmt, nans)
    sign = x[1] ^ y[1]
    if "inf" in (x[0], y[0]):
        other = y if x[0] == "inf" else x
        if other[0] == "num" and other[2] == 0:
            return _nan(out_fmt, [], invalid=True)
        return _infinity(sign, out_fmt)
    return round_exact(sign, x[2] * y[2], out_fmt, rounding, rand, rand_bits)


def add(a: int, b: int, fmt, rounding, rand=None, rand_bits=None, out_fmt=None):
    fmt = format_param("fmt", fmt)
    out_fmt = fmt if out_fmt is None else format_param("out_fmt", out_fmt)
    x, y = decode(a, fmt), decode(b, fmt)
    nans = [v[1] for v in (x, y) if v[0] == "nan"]
    if nans:
        return _nan(out_fmt, nans)
    if x[0] == "inf" and y[0] == "inf" and x[1] != y[1]:
        return _nan(out_fmt, [], invalid=True)
    for v in (x, y):
        if v[0] == "inf":
            return _infinity(v[1], out_fmt)
    total = (-x[2] if x[1] else x[2]) + (-y[2] if y[1] else y[2])
    if total == 0:
        both_negative_zeros = x[2] == 0 and y[2] == 0 and x[1] and y[1]
        return (1 << out_fmt.sign_shift) if both_negative_zeros else 0, 0
    return round_exact(int(total < 0), abs(total), out_fmt, rounding, rand, rand_bits)
