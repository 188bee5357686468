"""Packing, unpacking, classifying and decoding float bit patterns (vectorised)."""

from __future__ import annotations

import numpy as np

from .formats import FloatFormat, format_param

__all__ = ["Unpacked", "unpack", "pack", "to_float64", "from_float64"]


class Unpacked:
    """Fields of an array of encodings, with the contract's classification helpers.

    ``sign`` and ``mantissa`` are unsigned arrays, ``exponent`` the biased exponent
    field (int32). Subnormals count as zeros in ``is_zero_daz`` (TPU mode's DAZ).
    """

    __slots__ = ("fmt", "sign", "exponent", "mantissa", "is_zero_daz", "is_inf", "is_nan",
                 "_exp_max", "_man_zero")

    def __init__(self, fmt: FloatFormat, sign, exponent, mantissa):
        self.fmt, self.sign, self.exponent, self.mantissa = fmt, sign, exponent, mantissa
        self.is_zero_daz = exponent == 0
        self._exp_max = exponent == fmt.exp_max_field
        self._man_zero = mantissa == 0
        if fmt.finite:      # no inf; NaN only with mantissa all ones
            self.is_inf = np.zeros_like(self._exp_max)
            self.is_nan = self._exp_max & (mantissa == fmt.man_mask)
        else:
            self.is_inf = self._exp_max & self._man_zero
            self.is_nan = self._exp_max & ~self._man_zero

    @property
    def is_zero(self):
        return self.is_zero_daz & self._man_zero

    @property
    def is_subnormal(self):
        return self.is_zero_daz & ~self._man_zero

    @property
    def is_signalling(self):
        """Signalling NaN: a NaN whose mantissa MSB is 0."""
        return self.is_nan & ((self.mantissa >> (self.fmt.man_bits - 1)) == 0)

    @property
    def significand(self):
        """Mantissa with the hidden bit set (meaningful for normal values)."""
        return self.mantissa | (1 << self.fmt.man_bits)

    @property
    def unbiased_exponent(self):
        return self.exponent - self.fmt.bias


def unpack(bits, fmt: FloatFormat, work=np.uint64) -> Unpacked:
    """Split encodings (an integer array) into fields held in the unsigned type ``work``."""
    fmt = format_param("fmt", fmt)
    bits = np.asarray(bits)
    if bits.dtype.kind not in "ui":
        raise TypeError(f"encodings must be integer bit patterns, not {bits.dtype}")
    if bits.size and (int(bits.max()) >> fmt.width or bits.min() < 0):
        raise ValueError(f"encodings do not fit {fmt} ({fmt.width} bits)")
    bits = bits.astype(work, copy=False)
    return Unpacked(
        fmt,
        sign=bits >> fmt.sign_shift,
        exponent=((bits >> fmt.man_bits) & fmt.exp_max_field).astype(np.int32),
        mantissa=bits & fmt.man_mask,
    )


def pack(sign, exponent, mantissa, fmt: FloatFormat) -> np.ndarray:
    """Assemble encodings from fields."""
    fmt = format_param("fmt", fmt)
    sign = np.asarray(sign).astype(np.uint64)
    exponent = np.asarray(exponent).astype(np.uint64)
    mantissa = np.asarray(mantissa).astype(np.uint64)
    bits = (sign << fmt.sign_shift) | (exponent << fmt.man_bits) | mantissa
    return bits.astype(fmt.dtype)


def to_float64(bits, fmt: FloatFormat) -> np.ndarray:
    """Decode encodings to float64 for display and reference checks (exact, subnormals kept)."""
    fmt = format_param("fmt", fmt)
    u = unpack(bits, fmt)
    normal = u.exponent != 0
    sig = np.where(normal, u.significand, u.mantissa).astype(np.float64)
    exp = np.where(normal, u.exponent, 1) - fmt.bias - fmt.man_bits
    mag = np.ldexp(sig, exp.astype(np.int32))
    mag = np.where(u.is_inf, np.inf, np.where(u.is_nan, np.nan, mag))
    return np.where(u.sign != 0, -mag, mag)


def from_float64(values, fmt: FloatFormat) -> np.ndarray:
    """Encode float64 values exactly representable in ``fmt`` (normal, zero, inf or NaN).

    Meant for writing test vectors and examples; raises if a value would need rounding.
    """
    fmt = format_param("fmt", fmt)
    values = np.asarray(values, dtype=np.float64)
    sign = np.signbit(values).astype(np.uint64)
    mag = np.abs(values)
    frac, exp = np.frexp(mag)  # mag = frac * 2**exp, frac in [0.5, 1)
    biased = exp.astype(np.int64) - 1 + fmt.bias
    finite_nonzero = np.isfinite(mag) & (mag != 0)
    man_float = np.where(finite_nonzero, np.ldexp(frac, fmt.precision) - 2.0 ** fmt.man_bits, 0.0)
    exact = (man_float == np.floor(man_float)) & (biased >= 1) & (np.abs(values) <= to_float64(fmt.max_finite, fmt))
    if np.any(finite_nonzero & ~exact):
        bad = values[finite_nonzero & ~exact].ravel()[0]
        raise ValueError(f"{bad!r} is not a normal {fmt} value")
    biased = np.where(finite_nonzero, biased, np.where(np.isfinite(mag), 0, fmt.exp_max_field))
    if fmt.finite and np.isinf(mag).any():
        raise ValueError(f"{fmt} has no infinities")
    mantissa = np.where(np.isnan(mag), fmt.canonical_nan & fmt.man_mask, man_float.astype(np.uint64))
    return pack(np.where(np.isnan(values), 0, sign), biased, mantissa, fmt)
