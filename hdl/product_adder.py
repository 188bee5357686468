"""``ProductAdder``: ``acc_fmt + exact product -> acc_fmt``, the MXU's accumulate step."""

from __future__ import annotations

from amaranth.hdl import Cat, Const

from golden.formats import BF16, FP32

from .adder import AdderPlan, FPAdder
from .params import check_exact_products, format_param
from .product import raw_product_layout

__all__ = ["ProductAdder", "ProductAdderPlan"]


class ProductAdderPlan(AdderPlan):
    """``ProductAdder``'s parameters (keyword-only, as the unit's) and pipeline."""

    _reset_less = True

    def __init__(self, *, in_fmt=BF16, acc_fmt=FP32, stages=0):
        self.in_fmt = format_param("in_fmt", in_fmt)
        acc_fmt = format_param("acc_fmt", acc_fmt)
        check_exact_products(self.in_fmt, acc_fmt)
        super().__init__(fmt=acc_fmt, stages=stages)

    @property
    def acc_fmt(self):
        return self.fmt


class ProductAdder(ProductAdderPlan, FPAdder):
    """``FPAdder`` (RNE) whose operand ``b`` is an ``ExactProduct``'s raw product.

    The sum is the adder's: ``a + b`` rounded once, bit for bit what ``FPAdder`` returns
    for ``b`` encoded in ``acc_fmt``. What it saves is the encoding: ``b``'s class comes
    with it (no compare over its fields), its mantissa bits below the product's are
    constants, and its registers carry no reset.

    Parameters (keyword-only)
    -------------------------
    in_fmt, acc_fmt : FloatFormat or str
        The product's operand format and the sum's format (as ``ExactProduct``'s).
    stages : int
        Register stages, as ``FPAdder``'s (0..21 for fp32).

    Ports: in ``a`` (``acc_fmt``), ``b`` (``raw_product_layout``), ``valid_in``; out
    ``result``, ``flags``, ``valid_out``.
    """

    def _b_shape(self):
        return raw_product_layout(self.in_fmt, self.fmt)

    def _classified(self, a, b):
        b = self._b_shape()(b)
        pad = self.fmt.man_bits - len(b.mantissa)
        bits = Cat(Const(0, pad), b.mantissa, b.exponent, b.sign)
        a_classes = {k: x for k, x in super()._classified(a, bits)[1].items() if k.endswith("_a")}
        # The product's NaN is the canonical (quiet) one: its invalid flag was the multiplier's.
        return bits, {**a_classes, "is_zero_daz_b": b.zero, "is_inf_b": b.inf, "is_nan_b": b.nan,
                      "is_signalling_b": Const(0, 1)}

    def _sum(self, big, small, sticky, subtract):
        # One carry chain: big - small - sticky = big + ~small + (1 - sticky). (The generic
        # adder's two sums and a multiplexer cost ~100 LUT4 more on ECP5.)
        # Subtracting, the carry out of that chain is the 2**n of ~small's, not a result bit.
        raw = big + (small ^ subtract.replicate(len(small))) + (subtract & ~sticky)
        return Cat(raw[:len(big)], raw[len(big)] & ~subtract)
