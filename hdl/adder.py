"""``FPAdder``: ``fmt + fmt -> fmt``, the exact sum rounded once."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, signed
from amaranth.lib.wiring import In

from golden.formats import FP32
from golden.ops import add_sr_bits
from golden.rounding import Rounding

from .float import FloatLayout
from .params import format_param, rounding_param
from .pipeline import Delay
from .rounder import Rounder, signed_width
from .unit import ArithmeticUnit

__all__ = ["FPAdder", "leading_zeros"]


def leading_zeros(value) -> Value:
    """Leading zero count of ``value`` (its width for 0), a log-depth tree: each level
    joins two halves' (all zero, count) pairs with one mux."""
    w = len(value)
    size = 1 << max(1, (w - 1).bit_length())
    # Padding below with 1 then 0s keeps the count at w for value 0 without a final mux.
    bits = Cat(Const(1 << (size - w - 1), size - w), value) if size > w else value
    level = [(~(bits[i + 1] | bits[i]), ~bits[i + 1]) for i in range(0, size, 2)]
    while len(level) > 1:
        level = [(lo_zero & hi_zero, Mux(hi_zero, Cat(lo_count, 1), Cat(hi_count, 0)))
                 for (lo_zero, lo_count), (hi_zero, hi_count) in zip(level[0::2], level[1::2])]
    zero, count = level[0]
    return count if size > w else Mux(zero, w, count)


def _shift_steps(value, amount, steps, left=False, sticky=None):
    """``value`` shifted by the bits ``steps`` of ``amount`` (one mux level each), width
    kept; right shifts OR what they drop into ``sticky``."""
    w = len(value)
    for k in steps:
        by, on = 1 << k, amount[k]
        if left:
            value = Mux(on, (value << by)[:w], value)
        else:
            sticky = sticky | (on & value[:min(by, w)].any())
            value = Mux(on, value >> by, value)
    return value, sticky


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
        Register stages, 0..``max_stages``, placed by estimated delay (hdl/pipeline.py) at
        the cut points: magnitude compared, operands swapped, alignment shift (two halves), significand sum,
        leading-zero count, normalising shift (two halves), the rounder's, output, input.

    Ports: in ``a``, ``b``, [``rand``], ``valid_in``; out ``result``, ``flags``, ``valid_out``.
    """

    def __init__(self, *, fmt=FP32, rounding=Rounding.NEAREST_EVEN, sr_bits=None, stages=0):
        self.fmt = format_param("fmt", fmt)
        self.rounding = rounding_param(rounding)
        rand_bits = add_sr_bits(self.fmt, self.rounding, sr_bits)
        super().__init__(operands={"a": self.fmt.width, "b": self.fmt.width}, result_width=self.fmt.width,
                         rand_bits=rand_bits, stages=stages, cuts=self._cuts(rand_bits),
                         extra={"rand": In(rand_bits)} if rand_bits is not None else None)

    def _cuts(self, rand_bits):
        f, p = self.fmt, self.fmt.precision
        width = (rand_bits or 1) + 2 + p + 1
        return [("input", Delay()),
                ("compared", Delay(1, f.width - 1)),        # magnitude compare, both exponent differences
                ("ordered", Delay(2)),                      # swap multiplexers (fanout of the compare)
                ("align_hi", Delay(3, f.exp_bits)),         # shift clamp, upper shift steps + sticky
                ("aligned", Delay(3)),                      # lower shift steps + sticky
                ("sum", Delay(1, width)),                   # significand add / subtract
                ("counted", Delay((width - 1).bit_length())),  # leading-zero tree
                ("norm_hi", Delay(2, f.exp_bits + 2)),      # exponent, upper normalising steps
                ("normalised", Delay(3)),                   # lower normalising steps
                *Rounder.cuts(f, width, f.exp_bits + 3, self.rounding, rand_bits)]

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
        cut = self._stages.cut
        rand = {"rand": self.rand} if self.rand_bits is not None else {}
        v = cut(m, "input", a=self.a, b=self.b, valid=self.valid_in, **rand)
        a, b = FloatLayout(f)(v["a"]), FloatLayout(f)(v["b"])
        side = {"valid": v["valid"], **{k: v[k] for k in rand}}

        # Order by magnitude; DAZ zeros lowest. One format: the encodings order as the values.
        # The compare's carry chain starts straight from the inputs; the DAZ flags (an
        # exponent AND) settle beside it and only select after it.
        raw_swap = Cat(b.mantissa, b.exponent) > Cat(a.mantissa, a.exponent)
        swap = Mux(a.is_zero_daz, ~b.is_zero_daz, ~b.is_zero_daz & raw_swap)
        sig_a = Mux(a.is_zero_daz, 0, a.significand)
        sig_b = Mux(b.is_zero_daz, 0, b.significand)
        inf_minus_inf = a.is_inf & b.is_inf & (a.sign != b.sign)
        side.update(
            subtract=a.sign ^ b.sign, zero_sign=a.sign & b.sign & a.is_zero_daz & b.is_zero_daz,
            nan=a.is_nan | b.is_nan | inf_minus_inf,
            invalid=a.is_signalling | b.is_signalling | inf_minus_inf,
            any_inf=a.is_inf | b.is_inf, inf_sign=Mux(a.is_inf, a.sign, b.sign))
        # The compare's one bit drives every swap multiplexer: a cut between them.
        v = cut(m, "compared", swap=swap, sig_a=sig_a, sig_b=sig_b, exp_a=a.exponent, exp_b=b.exponent,
                sign_a=a.sign, sign_b=b.sign, diff_ab=(a.exponent - b.exponent)[:f.exp_bits],
                diff_ba=(b.exponent - a.exponent)[:f.exp_bits], **side)
        side = {k: v[k] for k in side}
        swap = v["swap"]
        v = cut(m, "ordered", sig_l=Mux(swap, v["sig_b"], v["sig_a"]), sig_s=Mux(swap, v["sig_a"], v["sig_b"]),
                shift=Mux(swap, v["diff_ba"], v["diff_ab"]), exp_l=Mux(swap, v["exp_b"], v["exp_a"]),
                sign_l=Mux(swap, v["sign_b"], v["sign_a"]), **side)
        side = {k: v[k] for k in [*side, "exp_l", "sign_l"]}

        # Align: the exact sum is (total + f) units, 0 < f < 1 exactly where sticky. The
        # shifter's log steps drop bits into sticky as they go.
        n = (g + p).bit_length()
        shift = Mux(v["shift"] > g + p, g + p, v["shift"])[:n]
        hi, lo = range(n - 1, n // 2 - 1, -1), range(n // 2 - 1, -1, -1)
        small, sticky = _shift_steps(Cat(Const(0, g), v["sig_s"]), shift, hi, sticky=Const(0, 1))
        v = cut(m, "align_hi", small=small, sticky=sticky, shift=shift, sig_l=v["sig_l"], **side)
        side = {k: v[k] for k in side}
        small, sticky = _shift_steps(v["small"], v["shift"], lo, sticky=v["sticky"])
        v = cut(m, "aligned", small=small, sticky=sticky, sig_l=v["sig_l"], **side)

        big = Cat(Const(0, g), v["sig_l"])
        total = Signal(g + p + 1)
        m.d.comb += total.eq(Mux(v["subtract"], big - v["small"] - v["sticky"], big + v["small"]))
        side = {k: v[k] for k in side if k != "subtract"}
        v = cut(m, "sum", total=total, sticky=v["sticky"], **side)
        side = {k: v[k] for k in side}

        width = g + p + 1
        v = cut(m, "counted", zeros=leading_zeros(v["total"]), total=v["total"], sticky=v["sticky"], **side)

        lo_e, hi_e = -f.bias - g - p, f.exp_max_field - f.bias + width - g - p
        exp = Signal(signed(signed_width(lo_e, hi_e)))
        m.d.comb += exp.eq(v["exp_l"] - f.bias + (width - g - p) - v["zeros"])
        n = len(v["zeros"])
        hi, lo = range(n - 1, n // 2 - 1, -1), range(n // 2 - 1, -1, -1)
        sig, _ = _shift_steps(v["total"], v["zeros"], hi, left=True)
        side = {k: v[k] for k in side if k != "exp_l"}
        v = cut(m, "norm_hi", sig=sig, zeros=v["zeros"], exp=exp, exact_zero=v["total"] == 0,
                sticky=v["sticky"], **side)
        sig, _ = _shift_steps(v["sig"], v["zeros"], lo, left=True)
        v = cut(m, "normalised", sig=sig, **{k: x for k, x in v.items() if k not in ("sig", "zeros")})

        m.submodules.rounder = rounder = Rounder(
            fmt=f, width=width, exp_width=len(exp), rounding=self.rounding,
            rand_bits=self.rand_bits, sticky=True, stages=self._stages)
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
