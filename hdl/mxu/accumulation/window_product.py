"""``WindowProduct``: the exact product as an element with an exact anchor adds it: the
significand product as it leaves the multiply, not normalised, and its fields not masked."""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import data

from golden.formats import FloatFormat

from ...product import ExactProduct, ExactProductPlan

__all__ = ["WindowProduct", "WindowProductPlan", "window_product_layout"]


def window_product_layout(in_fmt: FloatFormat, acc_fmt: FloatFormat) -> data.StructLayout:
    """An exact ``in_fmt`` product as ``WindowProduct`` gives it: ``sig``, the significand
    product in [1, 4) (its MSB weighs 2), ``exponent``, ``acc_fmt``'s biased exponent of
    the product's weight-1 bit (truncated out of range), ``sign``, and its class: ``zero``
    (a zero operand, or below ``acc_fmt``'s normal range: FTZ), ``inf`` (an infinite
    operand, or above the range), ``nan``. A product of a class has ``sig`` and
    ``exponent`` of no meaning: the adder masks them."""
    return data.StructLayout({"sig": 2 * in_fmt.precision, "exponent": acc_fmt.exp_bits, "sign": 1,
                              "zero": 1, "inf": 1, "nan": 1})


class WindowProductPlan(ExactProductPlan):
    """``WindowProduct``'s parameters (keyword-only, as ``ExactProduct``'s) and pipeline:
    ``ExactProduct``'s cut points."""


class WindowProduct(WindowProductPlan, ExactProduct):
    """``ExactProduct`` without the normalisation and the masks, for an adder that aligns to
    an anchor at least every product's exponent (``ExactWindowAdder``): a product whose
    significand is below 2 sits one place lower in its 2p bits instead of being shifted up
    and its exponent counted one down, and the adder's shift places both alike. The range
    check (FTZ, overflow) and the flags are ``ExactProduct``'s: the same classes, the same
    flags, the same sums.

    Parameters (keyword-only): as ``ExactProduct``'s.

    Ports: in ``a``, ``b``, ``valid_in``; out ``result`` (``window_product_layout``),
    ``flags``, ``valid_out``.
    """

    def _result_shape(self):
        return window_product_layout(self.in_fmt, self.out_fmt)

    def _normalise(self, m, v) -> dict:
        """The ``normalised`` cut point's values: the product as it is, its exponent and
        range."""
        top = v["product"][-1]
        return self._stages.cut(m, "normalised", sig=v["product"], **self._exponent(m, v["exp_sum"], top),
                                **{k: x for k, x in v.items() if k not in ("product", "exp_sum")})

    def _exponent(self, m, exp_sum, top) -> dict:
        """``biased``: the exponent of the product's weight-1 bit, whatever ``top``; ``tiny``
        and ``huge`` as ``ExactProduct``'s (``_range``)."""
        fi, fo = self.in_fmt, self.out_fmt
        biased = Signal(fo.exp_bits)                                  # truncated out of range
        m.d.comb += biased.eq(exp_sum - 2 * fi.bias + fo.bias)
        return {"biased": biased, **self._range(exp_sum, top)}

    def elaborate(self, platform):
        m = Module()
        v = self._normalised(m)
        c = self._classes(v)
        result = Signal(self._result_shape())
        m.d.comb += [result.sig.eq(v["sig"]), result.exponent.eq(v["biased"]), result.sign.eq(v["sign"]),
                     *(getattr(result, k).eq(c[k]) for k in ("zero", "inf", "nan"))]
        self._output(m, result, c["flags"], v["valid"])
        return m
