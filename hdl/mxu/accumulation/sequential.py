"""``Sequential``: every add of a column rounded to ``acc_fmt`` (RNE), the sum of
``((+0 + x0*w0) + x1*w1) + ...`` in order (golden.mxu's default)."""

from __future__ import annotations

from golden.column import SEQUENTIAL

from ...adder import FPAdder
from ...multiplier import FPMultiplier
from ...product import ExactProduct
from ...product_adder import ProductAdder
from .base import Accumulation

__all__ = ["Sequential"]


class Sequential(Accumulation):
    """Each processing element adds its exact product to the partial sum and rounds (RNE):
    fused (``ExactProduct`` into ``ProductAdder``, the raw product handed over) or generic
    (``FPMultiplier`` into ``FPAdder``), the same bits. The column chains its elements from
    ``+0``; nothing at the edge."""

    spec = SEQUENTIAL
    golden = None

    def element_designs(self, *, in_fmt, acc_fmt, fused, mul_stages, add_stages, terms, mul_dsp):
        if fused:
            return ((ExactProduct, {"in_fmt": in_fmt, "acc_fmt": acc_fmt, "stages": mul_stages, "mul_dsp": mul_dsp}),
                    (ProductAdder, {"in_fmt": in_fmt, "acc_fmt": acc_fmt, "stages": add_stages}))
        return ((FPMultiplier, {"in_fmt": in_fmt, "out_fmt": acc_fmt, "stages": mul_stages, "mul_dsp": mul_dsp}),
                (FPAdder, {"fmt": acc_fmt, "stages": add_stages}))
