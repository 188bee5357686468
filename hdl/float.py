"""A ``lib.data`` view of a float: ``mantissa``, ``exponent``, ``sign`` and classification."""

from __future__ import annotations

from amaranth.hdl import Const, Value
from amaranth.lib import data

from golden.formats import FloatFormat

__all__ = ["CLASSES_LAYOUT", "FloatLayout", "FloatView", "operand_classes", "significand"]


class FloatLayout(data.StructLayout):
    """Bit layout of ``fmt``, lowest bits first: mantissa, exponent, sign."""

    def __init__(self, fmt: FloatFormat):
        if not isinstance(fmt, FloatFormat):
            raise TypeError(f"fmt must be a FloatFormat, not {fmt!r}")
        self.fmt = fmt
        super().__init__({"mantissa": fmt.man_bits, "exponent": fmt.exp_bits, "sign": 1})

    def __eq__(self, other):
        return isinstance(other, FloatLayout) and other.fmt == self.fmt

    def __hash__(self):
        return hash(self.fmt)

    def __call__(self, target):
        return FloatView(self, target)


class FloatView(data.View):
    """A float's fields plus the classifications the contract uses (TPU mode: DAZ)."""

    @property
    def fmt(self) -> FloatFormat:
        return self.shape().fmt

    @property
    def is_zero(self) -> Value:
        return (self.exponent == 0) & (self.mantissa == 0)

    @property
    def is_subnormal(self) -> Value:
        return (self.exponent == 0) & (self.mantissa != 0)

    @property
    def is_zero_daz(self) -> Value:
        """Zero or subnormal: both read as zero (DAZ)."""
        return self.exponent == 0

    @property
    def is_inf(self) -> Value:
        if self.fmt.finite:         # no infinities (E4M3FN)
            return Const(0, 1)
        return (self.exponent == self.fmt.exp_max_field) & (self.mantissa == 0)

    @property
    def is_nan(self) -> Value:
        if self.fmt.finite:         # one NaN: exponent and mantissa all ones
            return (self.exponent == self.fmt.exp_max_field) & self.mantissa.all()
        return (self.exponent == self.fmt.exp_max_field) & (self.mantissa != 0)

    @property
    def is_inf_or_nan(self) -> Value:
        """Not finite. In a format with infinities the exponent field alone says so (no
        mantissa bits: one LUT level fewer than ``is_inf | is_nan``)."""
        if self.fmt.finite:
            return self.is_nan
        return self.exponent == self.fmt.exp_max_field

    @property
    def is_signalling(self) -> Value:
        """A NaN whose mantissa MSB is 0."""
        return self.is_nan & ~self.mantissa[-1]

    @property
    def significand(self) -> Value:
        """Mantissa with the hidden bit (``precision`` bits; meaningful for normal values)."""
        return significand(self.fmt, self.mantissa)


def significand(fmt: FloatFormat, mantissa) -> Value:
    """``mantissa`` with ``fmt``'s hidden bit, a constant: after a register, not through one
    (identical constant registers merge into one flip-flop with a fanout across the array)."""
    return mantissa | Const(1 << fmt.man_bits, fmt.precision)


#: A multiplier operand's classes, as ``operand_classes`` gives them.
CLASSES_LAYOUT = data.StructLayout({"inf": 1, "zero": 1, "nan": 1, "signalling": 1})


def operand_classes(value: FloatView) -> dict:
    """What a multiplier needs to know of an operand besides its fields (``CLASSES_LAYOUT``'s
    names): an infinity, a zero (DAZ: or a subnormal), a NaN, a signalling NaN."""
    return {"inf": value.is_inf, "zero": value.is_zero_daz, "nan": value.is_nan, "signalling": value.is_signalling}
