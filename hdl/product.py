"""``ExactProduct``: ``in_fmt x in_fmt``, exact, as a raw float for ``ProductAdder``."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import data

from golden.formats import BF16, FP32, FloatFormat
from golden.rounding import Flags

from .multiplier import FPMultiplier, MultiplierPlan
from .params import check_exact_products, format_param
from .pipeline import Delay, select

__all__ = ["ExactProduct", "ExactProductPlan", "raw_product_layout"]


def raw_product_layout(in_fmt: FloatFormat, acc_fmt: FloatFormat) -> data.StructLayout:
    """An exact ``in_fmt`` product in ``acc_fmt``'s range: ``mantissa`` (the normalised
    product's bits below its MSB), ``exponent`` (biased as in ``acc_fmt``), ``sign``, and its
    class: ``zero``, ``inf``, ``nan`` (none of them: a normal value); the fields of a class
    are its encoding's in ``acc_fmt`` (the canonical NaN's for ``nan``)."""
    return data.StructLayout({"mantissa": 2 * in_fmt.precision - 1, "exponent": acc_fmt.exp_bits, "sign": 1,
                              "zero": 1, "inf": 1, "nan": 1})


class ExactProductPlan(MultiplierPlan):
    """``ExactProduct``'s parameters (keyword-only, as the unit's) and pipeline."""

    _reset_less = True

    def __init__(self, *, in_fmt=BF16, acc_fmt=FP32, stages=0, mul_dsp="inferred", classified_b=False):
        in_fmt, acc_fmt = format_param("in_fmt", in_fmt), format_param("acc_fmt", acc_fmt)
        check_exact_products(in_fmt, acc_fmt)
        if not acc_fmt.ieee:
            raise ValueError(f"acc_fmt must have infinities (not finite or saturating), not {acc_fmt}")
        super().__init__(in_fmt=in_fmt, out_fmt=acc_fmt, stages=stages, mul_dsp=mul_dsp, classified_b=classified_b)

    @property
    def acc_fmt(self) -> FloatFormat:
        return self.out_fmt

    def _cuts(self, rand_bits):
        cuts = super()._cuts(rand_bits)
        names = [name for name, _ in cuts]
        # This stage holds the class bits and the selects only (the range check's compares
        # sit beside the exponent's add, ``_exponent``), but its estimate is the delay model's
        # (hdl/timing_model.json), fitted with those compares in it: it stays until the model
        # is refitted on this stage (a Delay(2) puts every register where this one does).
        return cuts[:names.index("normalised") + 1] + [("output", Delay(1, self.in_fmt.exp_bits + 3))]


class ExactProduct(ExactProductPlan, FPMultiplier):
    """The multiplier's datapath without its rounder: the exact product, classified.

    What ``FPMultiplier(in_fmt, out_fmt=acc_fmt)`` returns, as fields instead of an
    encoding: a product below ``acc_fmt``'s normal range is a signed zero flagged underflow
    and inexact (FTZ), one above it a signed infinity flagged overflow and inexact, inf x 0
    and NaN operands the canonical NaN (``invalid`` for inf x 0 and signalling NaNs).

    Parameters (keyword-only)
    -------------------------
    in_fmt, acc_fmt : FloatFormat or str
        ``acc_fmt`` holds every product exactly and has infinities (no saturation).
    stages : int
        Register stages, 0..``max_stages``, at the multiplier's cut points up to
        ``normalised`` (the range check before it), then ``output`` (the class and fields).
    mul_dsp : str
        ``inferred`` or ``ecp5``, as ``FPMultiplier``'s.

    Ports: in ``a``, ``b``, ``valid_in``; out ``result`` (``raw_product_layout``), ``flags``,
    ``valid_out``.
    """

    def _result_shape(self):
        return raw_product_layout(self.in_fmt, self.out_fmt)

    def _exponent(self, m, exp_sum, top) -> dict:
        """The range check, before the ``normalised`` cut: ``tiny`` and ``huge`` (the
        product below or above ``acc_fmt``'s normal range) and ``biased``, the exponent
        field of a product in range. The product's exponent is ``exp_sum - 2 * bias + top``;
        each bound is compared with the registered sum for both values of ``top`` (beside
        the add, not after it), so the last stage, from the exponent register into the
        result register, only selects: compares after the add, in series with it, would
        make that stage one of the element's slowest paths."""
        fi, fo = self.in_fmt, self.out_fmt
        biased = Signal(fo.exp_bits)                                  # truncated out of range
        m.d.comb += biased.eq(exp_sum - 2 * fi.bias + fo.bias + top)
        return {"biased": biased, **self._range(exp_sum, top)}

    def _range(self, exp_sum, top) -> dict:
        """``tiny`` and ``huge``: the product (exponent ``exp_sum - 2 * bias + top``) below or
        above ``acc_fmt``'s normal range, each bound compared with ``exp_sum`` for both
        values of ``top``."""
        fi, fo = self.in_fmt, self.out_fmt
        low, high = fo.emin + 2 * fi.bias, fo.emax + 2 * fi.bias     # exp_sum + top's range
        # A bound outside the sum's range is a constant answer, not a compare with a
        # constant wider than the sum (fp8 products never overflow fp32).
        largest = (1 << len(exp_sum)) - 1
        below = lambda c: Const(c > largest) if c <= 0 or c > largest else exp_sum < c
        above = lambda c: Const(c < 0) if c < 0 or c >= largest else exp_sum > c
        return {"tiny": select(top, below(low - 1), below(low)), "huge": select(top, above(high - 1), above(high))}

    def elaborate(self, platform):
        m = Module()
        fo, width = self.out_fmt, 2 * self.in_fmt.precision
        v = self._normalised(m)
        c = self._classes(v)
        nan, zero, inf = c["nan"], c["zero"], c["inf"]
        result = Signal(self._result_shape())
        # The fields of a zero, an infinity or a NaN are those of its encoding (the canonical
        # NaN's), as the generic multiplier's result has them: the adder's datapath then
        # sees the same values as the generic one's, which makes the two provably equal
        # signal by signal (python -m sim.formal pe), for a few LUTs beside the product.
        nan_mantissa = fo.canonical_nan & fo.man_mask
        m.d.comb += [
            # Gates, not multiplexers: the fixed fields would be the register's inferred reset.
            result.mantissa.eq(select(nan, nan_mantissa >> (fo.man_bits - width + 1), select(zero | inf, 0, v["sig"]))),
            result.exponent.eq(select(nan | inf, fo.exp_max_field, select(zero, 0, v["biased"]))),
            result.sign.eq(~nan & v["sign"]), result.nan.eq(nan), result.zero.eq(zero), result.inf.eq(inf),
        ]
        self._output(m, result, c["flags"], v["valid"])
        return m

    @staticmethod
    def _classes(v) -> dict:
        """The product's class (``nan``, ``zero``, ``inf``) and ``flags`` from the
        ``normalised`` cut point's values, in the rounder's order (hdl/rounder.py): NaN, then
        the operands' inf or zero, then the range."""
        nan, any_inf = v["nan"], v["any_inf"]
        ordinary = ~nan & ~v["special"]
        tiny, huge = ordinary & v["tiny"], ordinary & v["huge"]
        assert Flags.INVALID == 1 << 4 and Flags.OVERFLOW == 1 << 2
        return {"nan": nan, "zero": ~nan & (v["special"] & ~any_inf | tiny), "inf": ~nan & (any_inf | huge),
                "flags": Cat(tiny | huge, tiny, huge, Const(0, 1), nan & v["invalid"])}   # Flags' bit order

    def _output(self, m, result, flags, valid) -> None:
        """The ``output`` cut point, to the ports."""
        out = self._stages.cut(m, "output", result=result, flags=flags, valid=valid)
        m.d.comb += [self.result.eq(out["result"]), self.flags.eq(out["flags"]), self.valid_out.eq(out["valid"])]
