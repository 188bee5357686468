"""``FPAdder``: ``fmt + fmt -> fmt``, the exact sum rounded once."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib.wiring import In

from golden.formats import FP32
from golden.ops import add_sr_bits
from golden.rounding import Rounding

from .float import FloatLayout
from .params import format_param, rounding_param
from .rounder import Rounder, signed_width
from .unit import ArithmeticUnit

__all__ = ["FPAdder", "leading_zeros"]


def leading_zeros(m: Module, value) -> Signal:
    """Leading zero count of ``value`` (its width for 0): a priority encoder."""
    count = Signal(range(len(value) + 1), init=len(value))
    for i in range(len(value)):
        with m.If(value[i]):
            m.d.comb += count.eq(len(value) - 1 - i)
    return count


class FPAdder(ArithmeticUnit):
    """Floating-point adder in TPU mode (DAZ, FTZ, canonical NaN, ``x + (-x) = +0``).

    Parameters (keyword-only)
    -------------------------
    fmt : FloatFormat or str
        Operand and result format.
    rounding : Rounding or str
        ``rne``, ``rtz``, ``sr`` or ``sr-half``.
    sr_bits : int, optional
        ``rand`` width for ``sr`` (default: the format's precision).
    stages : int
        Register stages, 0..16: after the aligned add first, then at the output, after
        normalisation, after the exponent compare, at the inputs.

    Ports: in ``a``, ``b``, [``rand``], ``valid_in``; out ``result``, ``flags``, ``valid_out``.
    """

    def __init__(self, *, fmt=FP32, rounding=Rounding.NEAREST_EVEN, sr_bits=None, stages=0):
        self.fmt = format_param("fmt", fmt)
        self.rounding = rounding_param(rounding)
        rand_bits = add_sr_bits(self.fmt, self.rounding, sr_bits)
        super().__init__(operands={"a": self.fmt.width, "b": self.fmt.width}, result_width=self.fmt.width,
                         rand_bits=rand_bits, stages=stages,
                         cut_points=["sum", "output", "normalise", "align", "input"],
                         extra={"rand": In(rand_bits)} if rand_bits is not None else None)

    @property
    def guard_bits(self) -> int:
        """Bits kept below the larger operand before sticky: ``rand_bits + 2`` (3 without rand).

        Enough for an exact result: whenever bits go to sticky, the sum loses at most two
        leading bits, and the rounder still sees every discarded bit it looks at.
        """
        return (self.rand_bits or 1) + 2

    def elaborate(self, platform):
        m = Module()
        f, g, p = self.fmt, self.guard_bits, self.fmt.precision
        rand = {"rand": self.rand} if self.rand_bits is not None else {}
        v = self._stages.cut(m, "input", a=self.a, b=self.b, valid=self.valid_in, **rand)
        a, b = FloatLayout(f)(v["a"]), FloatLayout(f)(v["b"])

        # Order by magnitude; DAZ zeros lowest. One format: the encodings order as the values.
        a_key = Mux(a.is_zero_daz, 0, Cat(a.mantissa, a.exponent))
        b_key = Mux(b.is_zero_daz, 0, Cat(b.mantissa, b.exponent))
        swap = b_key > a_key
        sig_a = Mux(a.is_zero_daz, 0, a.significand)
        sig_b = Mux(b.is_zero_daz, 0, b.significand)
        inf_minus_inf = a.is_inf & b.is_inf & (a.sign != b.sign)
        v = self._stages.cut(
            m, "align", valid=v["valid"], **{k: v[k] for k in rand},
            sig_l=Mux(swap, sig_b, sig_a), sig_s=Mux(swap, sig_a, sig_b),
            exp_l=Mux(swap, b.exponent, a.exponent),
            shift=Mux(swap, b.exponent - a.exponent, a.exponent - b.exponent)[:f.exp_bits],
            sign_l=Mux(swap, b.sign, a.sign), subtract=a.sign ^ b.sign,
            zero_sign=a.sign & b.sign & a.is_zero_daz & b.is_zero_daz,
            nan=a.is_nan | b.is_nan | inf_minus_inf,
            invalid=a.is_signalling | b.is_signalling | inf_minus_inf,
            any_inf=a.is_inf | b.is_inf, inf_sign=Mux(a.is_inf, a.sign, b.sign))

        # Align: the exact sum is (total + f) units, 0 < f < 1 exactly where sticky.
        small_full = Cat(Const(0, g), v["sig_s"])                # g + p bits
        shift = Mux(v["shift"] > g + p, g + p, v["shift"])
        small = (small_full >> shift)[:g + p]
        lost = small_full & ~(Const((1 << (g + p)) - 1, g + p) << shift)[:g + p]
        sticky = lost.any()
        big = Cat(Const(0, g), v["sig_l"])
        total = Signal(g + p + 1)
        m.d.comb += total.eq(Mux(v["subtract"], big - small - sticky, big + small))
        keep = ("valid", "exp_l", "sign_l", "zero_sign", "nan", "invalid", "any_inf", "inf_sign", *rand)
        v = self._stages.cut(m, "sum", total=total, sticky=sticky, **{k: v[k] for k in keep})

        width = g + p + 1
        zeros = leading_zeros(m, v["total"])
        lo, hi = -f.bias - g - p, f.exp_max_field - f.bias + width - g - p
        exp = Signal(signed(signed_width(lo, hi)))
        m.d.comb += exp.eq(v["exp_l"] - f.bias + (width - g - p) - zeros)
        v = self._stages.cut(
            m, "normalise", sig=(v["total"] << zeros)[:width], exp=exp,
            exact_zero=v["total"] == 0, sticky=v["sticky"], **{k: v[k] for k in keep if k != "exp_l"})

        m.submodules.rounder = rounder = Rounder(
            fmt=f, width=width, exp_width=len(exp), rounding=self.rounding,
            rand_bits=self.rand_bits, sticky=True)
        zero_or_inf_sign = Mux(v["any_inf"], v["inf_sign"], v["zero_sign"])
        m.d.comb += [
            rounder.sign.eq(v["sign_l"]), rounder.exp.eq(v["exp"]), rounder.sig.eq(v["sig"]),
            rounder.sticky.eq(v["sticky"]),
            rounder.nan.eq(v["nan"]), rounder.invalid.eq(v["invalid"]),
            rounder.exact.eq(v["any_inf"] | v["exact_zero"]),
            rounder.exact_bits.eq(Cat(Const(0, f.man_bits), v["any_inf"].replicate(f.exp_bits),
                                      zero_or_inf_sign)),
        ]
        if self.rand_bits is not None:
            m.d.comb += rounder.rand.eq(v["rand"])
        self._drive_outputs(m, rounder, v["valid"])
        return m
