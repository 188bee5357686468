"""What the column units share: the window's layout as it travels down a column and the
checks of their parameters (golden.column's window sum)."""

from __future__ import annotations

from amaranth.hdl import signed, unsigned
from amaranth.lib import data

from golden.column import MAX_TERMS, ColumnAccumulator, headroom
from golden.formats import FloatFormat

from ...float import FloatLayout
from ...params import check_exact_products, format_param, int_param

__all__ = ["window_layout", "check_window", "window_params", "exponent_field"]


def window_layout(acc_fmt: FloatFormat, acc: ColumnAccumulator, terms: int) -> data.StructLayout:
    """A column's partial sum as it travels down the array (golden.column): ``sum`` (two's
    complement window units, ``window + headroom(terms)`` bits and a sign), ``exp`` (the
    anchor: the biased exponent of the window's top bit, 0 while empty), ``dropped`` (a
    truncation lost nonzero bits), and the specials ``nan``, ``inf``, ``inf_sign``. All
    zeros is the empty window."""
    return data.StructLayout({"sum": signed(acc.window + headroom(terms) + 1), "exp": unsigned(acc_fmt.exp_bits),
                              "dropped": 1, "nan": 1, "inf": 1, "inf_sign": 1})


def check_window(acc, in_fmt: FloatFormat, acc_fmt: FloatFormat) -> ColumnAccumulator:
    """``acc`` if the hardware builds it for these formats, else a ValueError naming the
    parameter."""
    if not isinstance(acc, ColumnAccumulator):
        raise TypeError(f"accumulation must be a golden.column.ColumnAccumulator, not {acc!r}")
    acc.check(acc_fmt, 2 * in_fmt.precision)
    return acc


def window_params(in_fmt, acc_fmt, accumulation, terms):
    """A column unit's checked parameters: ``(in_fmt, acc_fmt, accumulation, terms, layout)``
    (``terms``: 1..``golden.column.MAX_TERMS``; the window's ``window_layout``)."""
    in_fmt, acc_fmt = format_param("in_fmt", in_fmt), format_param("acc_fmt", acc_fmt)
    check_exact_products(in_fmt, acc_fmt)
    accumulation = check_window(accumulation, in_fmt, acc_fmt)
    terms = int_param("terms", terms, 1, MAX_TERMS)
    return in_fmt, acc_fmt, accumulation, terms, window_layout(acc_fmt, accumulation, terms)


def exponent_field(fmt: FloatFormat, value):
    """``value``'s exponent field if it is finite and nonzero (after DAZ), else 0: what the
    fixed anchors (bound, exact) are made of."""
    u = FloatLayout(fmt)(value)
    # A zero's or subnormal's field is 0 already, so only the non-finite are cleared, by
    # the exponent field alone where it can: the mantissa stays off the compares that
    # follow. The clearing keeps the anchor golden.column's, but no output shows it: every
    # product of an infinity or NaN is one, so the sums that anchor serves are special
    # whatever it is.
    return u.exponent & (~u.is_inf_or_nan).replicate(fmt.exp_bits)
