"""Floating-point formats: the one definition shared by ``golden/`` and ``hdl/``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .params import int_param

__all__ = [
    "FloatFormat", "FP32", "BF16", "FP16", "TF32", "FP8_E5M2", "FP8_E4M3", "FP8_E4M3FN", "FP8_E4M3FN_SAT",
    "FP8_E5M2_SAT",
    "NAMED_FORMATS", "parse_format", "format_param",
]

#: Range of exponent widths the project supports (wide enough for fp32, narrow
#: enough that every exact product and aligned sum fits a 64-bit integer).
EXP_BITS_RANGE = (2, 8)
#: Range of mantissa widths (stored bits, hidden bit excluded).
MAN_BITS_RANGE = (1, 23)


@dataclass(frozen=True)
class FloatFormat:
    """An IEEE-like binary floating-point format ``eXmY``.

    Parameters
    ----------
    exp_bits : int
        Exponent field width, 2 to 8.
    man_bits : int
        Stored mantissa width (hidden bit excluded), 1 to 23.
    name : str, optional
        Display name; not part of equality.

    finite : bool
        No infinities (OCP E4M3FN): the all-ones exponent is one more binade of normal
        values, and only mantissa all ones there is NaN (``S.1111.111``).
    saturate : bool
        A result too large for the format (an overflow, or an infinity the format has
        none of) becomes the largest finite value of its sign, flagged overflow and
        inexact, instead of inf (or NaN in a ``finite`` format).

    Notes
    -----
    Exponent all ones encodes inf (mantissa 0) or NaN, unless ``finite``; exponent 0
    encodes zero or a subnormal. Bits, lowest first: mantissa, exponent, sign.
    """

    exp_bits: int
    man_bits: int
    name: str | None = field(default=None, compare=False)
    finite: bool = False
    saturate: bool = False

    def __post_init__(self):
        for param, (lo, hi) in (("exp_bits", EXP_BITS_RANGE), ("man_bits", MAN_BITS_RANGE)):
            object.__setattr__(self, param, int_param(param, getattr(self, param), lo, hi))
        for param in ("finite", "saturate"):
            if not isinstance(getattr(self, param), bool):
                raise TypeError(f"{param} must be True or False, not {getattr(self, param)!r}")
        if self.finite and self.man_bits < 2:
            raise ValueError(f"a finite format needs man_bits >= 2 (NaN is mantissa all ones), not {self.man_bits}")
        if self.name is None:
            object.__setattr__(self, "name", f"e{self.exp_bits}m{self.man_bits}"
                               + "fn" * self.finite + "_sat" * self.saturate)
        dtype = next(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32)
                     if self.width <= 8 * np.dtype(t).itemsize)
        object.__setattr__(self, "_dtype", dtype)

    def __str__(self):
        return self.name

    # Derived facts, as the contract names them.
    @property
    def bias(self) -> int:
        return 2 ** (self.exp_bits - 1) - 1

    @property
    def precision(self) -> int:
        """Significand bits including the hidden bit."""
        return self.man_bits + 1

    @property
    def width(self) -> int:
        return 1 + self.exp_bits + self.man_bits

    @property
    def emax(self) -> int:
        """Unbiased exponent of the largest finite value."""
        return self.bias + self.finite

    @property
    def emin(self) -> int:
        """Unbiased exponent of the smallest normal value."""
        return 1 - self.bias

    @property
    def exp_max_field(self) -> int:
        """The all-ones exponent field (inf and NaN; NaN and normal values if ``finite``)."""
        return (1 << self.exp_bits) - 1

    @property
    def man_mask(self) -> int:
        return (1 << self.man_bits) - 1

    @property
    def sign_shift(self) -> int:
        return self.exp_bits + self.man_bits

    @property
    def canonical_nan(self) -> int:
        """Quiet NaN: sign 0, exponent all ones, mantissa MSB 1, rest 0 (``finite``: the
        one NaN, mantissa all ones)."""
        low = self.man_mask if self.finite else 1 << (self.man_bits - 1)
        return (self.exp_max_field << self.man_bits) | low

    @property
    def inf(self) -> int:
        """+inf's pattern: exponent all ones, mantissa 0 (a normal value if ``finite``)."""
        return self.exp_max_field << self.man_bits

    @property
    def max_finite(self) -> int:
        if self.finite:
            return (self.exp_max_field << self.man_bits) | (self.man_mask - 1)
        return ((self.exp_max_field - 1) << self.man_bits) | self.man_mask

    @property
    def ieee(self) -> bool:
        """Infinity results are inf: neither ``finite`` nor ``saturate``."""
        return not (self.finite or self.saturate)

    @property
    def min_normal(self) -> int:
        return 1 << self.man_bits

    @property
    def dtype(self) -> np.dtype:
        """Smallest unsigned NumPy integer type that holds an encoding."""
        return self._dtype


FP32 = FloatFormat(8, 23, "fp32")
BF16 = FloatFormat(8, 7, "bf16")
FP16 = FloatFormat(5, 10, "fp16")
TF32 = FloatFormat(8, 10, "tf32")
FP8_E5M2 = FloatFormat(5, 2, "fp8_e5m2")
FP8_E4M3 = FloatFormat(4, 3, "fp8_e4m3")
#: The OCP 8-bit formats: E4M3FN (no inf, one NaN, max 448) and E5M2 (IEEE-like, the same
#: as ``fp8_e5m2``), each also saturating (overflow and inf to the largest finite value).
FP8_E4M3FN = FloatFormat(4, 3, "fp8_e4m3fn", finite=True)
FP8_E4M3FN_SAT = FloatFormat(4, 3, "fp8_e4m3fn_sat", finite=True, saturate=True)
FP8_E5M2_SAT = FloatFormat(5, 2, "fp8_e5m2_sat", saturate=True)

#: Formats by their command-line name.
NAMED_FORMATS = {f.name: f for f in (FP32, BF16, FP16, TF32, FP8_E5M2, FP8_E4M3, FP8_E4M3FN, FP8_E4M3FN_SAT,
                                     FP8_E5M2_SAT)}


def parse_format(spec: str | FloatFormat) -> FloatFormat:
    """Return the format named ``spec`` (``"bf16"``) or spelled ``"eXmY"`` (``"e8m7"``).

    A spelled format equal to a named one gets that name.
    """
    if isinstance(spec, FloatFormat):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"format must be a FloatFormat or a string, not {spec!r}")
    key = spec.strip().lower()
    if key in NAMED_FORMATS:
        return NAMED_FORMATS[key]
    match = re.fullmatch(r"e(\d+)m(\d+)(fn)?(_sat)?", key)
    if not match:
        names = ", ".join(NAMED_FORMATS)
        raise ValueError(f"unknown format {spec!r}: use one of {names} or eXmY[fn][_sat] "
                         f"(X in {EXP_BITS_RANGE[0]}..{EXP_BITS_RANGE[1]}, "
                         f"Y in {MAN_BITS_RANGE[0]}..{MAN_BITS_RANGE[1]})")
    fmt = FloatFormat(int(match[1]), int(match[2]), finite=bool(match[3]), saturate=bool(match[4]))
    for named in NAMED_FORMATS.values():
        if named == fmt:
            return named
    return fmt


def format_param(name: str, value) -> FloatFormat:
    """``value`` (a FloatFormat, a name or ``eXmY``) as a format; errors name ``name``."""
    try:
        return parse_format(value)
    except (TypeError, ValueError) as error:
        raise type(error)(f"{name}: {error}") from None
