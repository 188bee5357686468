"""Packing, unpacking, classifying and decoding float bit patterns (vectorised)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .formats import FloatFormat

__all__ = ["Unpacked", "unpack", "pack", "to_float64", "from_float64"]


@dataclass(frozen=True)
class Unpacked:
    """Fields of an array of encodings, with the contract's classification helpers."""

    fmt: FloatFormat
    sign: np.ndarray       # unsigned, 0 or 1
    exponent: np.ndarray   # int32, the biased exponent field
    mantissa: np.ndarray   # unsigned, the stored mantissa field

    @cached_property
    def _exp_zero(self):
        return self.exponent == 0

    @cached_property
    def _exp_max(self):
        return self.exponent == self.fmt.exp_max_field

    @cached_property
    def _man_zero(self):
        return self.mantissa == 0

    @property
    def is_zero(self):
        return self._exp_zero & self._man_zero

    @property
    def is_subnormal(self):
        return self._exp_zero & ~self._man_zero

    @property
    def is_zero_daz(self):
        """Zero once subnormals are treated as zero (TPU mode's DAZ)."""
        return self._exp_zero

    @cached_property
    def is_inf(self):
        return self._exp_max & self._man_zero

    @cached_property
    def is_nan(self):
        return self._exp_max & ~self._man_zero

    @property
    def is_signalling(self):
        """Signalling NaN: a NaN whose mantissa MSB is 0."""
        return self.is_nan & ((self.mantissa >> (self.fmt.man_bits - 1)) == 0)

    @cached_property
    def significand(self):
        """Mantissa with the hidden bit set (meaningful for normal values)."""
        return self.mantissa | (1 << self.fmt.man_bits)

    @property
    def unbiased_exponent(self):
        return self.exponent - self.fmt.bias


def unpack(bits, fmt: FloatFormat, work=np.uint64) -> Unpacked:
    """Split encodings (an integer array) into fields held in the unsigned type ``work``."""
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
    sign = np.asarray(sign).astype(np.uint64)
    exponent = np.asarray(exponent).astype(np.uint64)
    mantissa = np.asarray(mantissa).astype(np.uint64)
    bits = (sign << fmt.sign_shift) | (exponent << fmt.man_bits) | mantissa
    return bits.astype(fmt.dtype)


def to_float64(bits, fmt: FloatFormat) -> np.ndarray:
    """Decode encodings to float64 for display and reference checks (exact, subnormals kept)."""
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
    values = np.asarray(values, dtype=np.float64)
    sign = np.signbit(values).astype(np.uint64)
    mag = np.abs(values)
    frac, exp = np.frexp(mag)  # mag = frac * 2**exp, frac in [0.5, 1)
    biased = exp.astype(np.int64) - 1 + fmt.bias
    finite_nonzero = np.isfinite(mag) & (mag != 0)
    man_float = np.where(finite_nonzero, np.ldexp(frac, fmt.precision) - 2.0 ** fmt.man_bits, 0.0)
    exact = (man_float == np.floor(man_float)) & (biased >= 1) & (biased < fmt.exp_max_field)
    if np.any(finite_nonzero & ~exact):
        bad = values[finite_nonzero & ~exact].ravel()[0]
        raise ValueError(f"{bad!r} is not a normal {fmt} value")
    biased = np.where(finite_nonzero, biased, np.where(np.isfinite(mag), 0, fmt.exp_max_field))
    mantissa = np.where(np.isnan(mag), 1 << (fmt.man_bits - 1), man_float.astype(np.uint64))
    return pack(np.where(np.isnan(values), 0, sign), biased, mantissa, fmt)
