"""``FPAdder``: ``fmt + fmt -> fmt``, the exact sum rounded once."""

from __future__ import annotations

import math

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed

from golden.formats import FP32
from golden.ops import add_sr_bits
from golden.rounding import Rounding

from .float import FloatLayout
from .params import format_param, rounding_param
from .pipeline import Delay, select
from .rounder import Rounder, signed_width
from .shift import count_width, halves, lzc_depth, lzc_join, lzc_leaves, lzc_result, shift_steps
from .unit import ArithmeticUnit, UnitPlan

__all__ = ["FPAdder", "AdderPlan"]


def _fine_names(prefix: str, steps: list[int]) -> list[str]:
    """The fine cut points inside a shifter half: after each step but the last."""
    return [f"{prefix}_by{1 << k}" for k in steps[:-1]]


def _split(total: Delay, parts: int) -> list[Delay]:
    """``total`` as ``parts`` delays in quarter levels (sums exact, so the coarse placement
    sees the same costs), the carry chain in the last."""
    each = math.floor(4 * total.levels / parts) / 4
    return [Delay(each)] * (parts - 1) + [Delay(total.levels - each * (parts - 1), total.carry)]


class AdderPlan(UnitPlan):
    """``FPAdder``'s parameters (keyword-only, as the adder's) and pipeline."""

    #: Pipeline registers without reset (``pipeline.Stages``): the generic unit keeps them.
    _reset_less = False

    def __init__(self, *, fmt=FP32, rounding=Rounding.NEAREST_EVEN, sr_bits=None, stages=0):
        self.fmt = format_param("fmt", fmt)
        self.rounding = rounding_param(rounding)
        rand_bits = add_sr_bits(self.fmt, self.rounding, sr_bits)
        cuts, fine = self._cuts(rand_bits)
        super().__init__(rand_bits=rand_bits, stages=stages, cuts=cuts, fine=fine, reset_less=self._reset_less)

    def _cuts(self, rand_bits):
        """The cut points with their delays, and the names of the fine ones (inside the
        classification, the shifters and the leading-zero tree)."""
        f, p = self.fmt, self.fmt.precision
        g = (rand_bits or 1) + 2
        width = g + p + 1
        a_hi, a_lo = (_fine_names("align", half) for half in halves((g + p).bit_length()))
        n_hi, n_lo = (_fine_names("norm", half) for half in halves(count_width(width)))
        lzc, joins = (width - 1).bit_length(), lzc_depth(width) // 2
        cuts = [("input", Delay()),
                ("classified", Delay(0.5)),                 # operand classes
                ("compared", Delay(0.5, f.width - 1)),      # magnitude compare, both exponent differences
                ("ordered", Delay(2)),                      # swap multiplexers (fanout of the compare)
                ("clamped", Delay(1, f.exp_bits)),          # shift clamp
                *zip(a_hi + ["align_hi"], _split(Delay(2), len(a_hi) + 1)),    # upper steps + sticky
                *zip(a_lo + ["aligned"], _split(Delay(3), len(a_lo) + 1)),     # lower steps + sticky
                ("sum", Delay(1, width)),                   # significand add / subtract
                ("lzc_half", Delay(1 + joins)),             # leading-zero tree: leaves, first joins
                ("counted", Delay(lzc - 1 - joins)),        # ... the other joins
                *zip(n_hi + ["norm_hi"], _split(Delay(2, f.exp_bits + 2), len(n_hi) + 1)),
                *zip(n_lo + ["normalised"], _split(Delay(3), len(n_lo) + 1)),
                *Rounder.cuts(f, width, f.exp_bits + 3, self.rounding, rand_bits)]
        return cuts, ("classified", "clamped", *a_hi, *a_lo, "lzc_half", *n_hi, *n_lo)

    @property
    def guard_bits(self) -> int:
        """Bits kept below the larger operand before sticky: ``rand_bits + 2`` (3 without rand).

        Enough for an exact result: whenever bits go to sticky, the sum loses at most two
        leading bits, and the rounder still sees every discarded bit it looks at.
        """
        return (self.rand_bits or 1) + 2

    def _result_shape(self):
        return self.fmt.width


class FPAdder(AdderPlan, ArithmeticUnit):
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
        leading-zero count, normalising shift (two halves), the rounder's, output, input; then
        at the fine ones (operand classes, shift clamp, inside the shifter halves and the
        leading-zero tree): 21 for fp32 RNE.

    Ports: in ``a``, ``b``, [``rand``], ``valid_in``; out ``result``, ``flags``, ``valid_out``.
    """

    def _operands(self):
        return {"a": self.fmt.width, "b": self._b_shape()}

    def _b_shape(self):
        return self.fmt.width

    def _classified(self, a, b):
        """Operand ``b`` as an encoding of ``fmt``, and both operands' classes (the
        ``classified`` cut point's values): ``a`` and ``b`` are the ``input`` cut point's."""
        views = {"a": FloatLayout(self.fmt)(a), "b": FloatLayout(self.fmt)(b)}
        return b, {f"{cls}_{name}": getattr(x, cls) for name, x in views.items()
                   for cls in ("is_zero_daz", "is_inf", "is_nan", "is_signalling")}

    def _sum(self, big, small, sticky, subtract):
        """The aligned significands' exact sum, ``big - small - sticky`` when subtracting."""
        return Mux(subtract, big - small - sticky, big + small)

    def _steps(self, m, prefix, steps, value, dropped, amount, carry, left=False):
        """One half of a shifter (``shift_steps``), a fine cut point (``_fine_names``) after
        each step but the last, ``carry`` (a dict) travelling alongside; returns the shifted
        value, the sticky bit, the amount and ``carry`` after the half's last step."""
        for k, name in zip(steps, _fine_names(prefix, steps)):
            value, dropped = shift_steps(value, amount, [k], left=left, sticky=dropped)
            v = self._stages.cut(m, name, shifted=value, dropped=dropped, amount=amount, **carry)
            value, dropped, amount = v.pop("shifted"), v.pop("dropped"), v.pop("amount")
            carry = v
        value, dropped = shift_steps(value, amount, steps[-1:], left=left, sticky=dropped)
        return value, dropped, amount, carry

    def elaborate(self, platform):
        m = Module()
        v, side = self._ordered(m)
        v, side = self._aligned(m, v, side)
        v, side = self._summed(m, v, side)
        self._rounded(m, self._normalised(m, v, side))
        return m

    def _ordered(self, m):
        """Classify the operands and order them by magnitude (DAZ zeros lowest): the larger
        one's significand, exponent and sign, the smaller one's significand and the shift."""
        f = self.fmt
        cut = self._stages.cut
        rand = {"rand": self.rand} if self.rand_bits is not None else {}
        v = cut(m, "input", a=self.a, b=self.b, valid=self.valid_in, **rand)
        side = {"valid": v["valid"], **{k: v[k] for k in rand}}
        # The operands' classes, wide ANDs and ORs over their fields: a fine cut point ahead
        # of the special cases that combine them.
        b, classes = self._classified(v["a"], v["b"])
        c = cut(m, "classified", a=v["a"], b=b, **classes, **side)
        side = {k: c[k] for k in side}
        a, b = FloatLayout(f)(c["a"]), FloatLayout(f)(c["b"])
        zero_a, zero_b, inf_a, inf_b = c["is_zero_daz_a"], c["is_zero_daz_b"], c["is_inf_a"], c["is_inf_b"]

        # Order by magnitude; DAZ zeros lowest. One format: the encodings order as the values.
        # The compare's carry chain starts straight from the inputs; the DAZ flags (an
        # exponent AND) settle beside it and only select after it.
        raw_swap = Cat(b.mantissa, b.exponent) > Cat(a.mantissa, a.exponent)
        swap = Mux(zero_a, ~zero_b, ~zero_b & raw_swap)
        sig_a = select(zero_a, 0, a.significand)       # gates: no inferred reset (pipeline.select)
        sig_b = select(zero_b, 0, b.significand)
        inf_minus_inf = inf_a & inf_b & (a.sign != b.sign)
        side.update(
            subtract=a.sign ^ b.sign, zero_sign=a.sign & b.sign & zero_a & zero_b,
            nan=c["is_nan_a"] | c["is_nan_b"] | inf_minus_inf,
            invalid=c["is_signalling_a"] | c["is_signalling_b"] | inf_minus_inf,
            any_inf=inf_a | inf_b, inf_sign=Mux(inf_a, a.sign, b.sign))
        # The compare's one bit drives every swap multiplexer: a cut between them.
        v = cut(m, "compared", swap=swap, sig_a=sig_a, sig_b=sig_b, exp_a=a.exponent, exp_b=b.exponent,
                sign_a=a.sign, sign_b=b.sign, diff_ab=(a.exponent - b.exponent)[:f.exp_bits],
                diff_ba=(b.exponent - a.exponent)[:f.exp_bits], **side)
        side = {k: v[k] for k in side}
        swap = v["swap"]
        # Gates (pipeline.select): ProductAdder's ``b`` has constant low bits, and an operand
        # tied to a constant (an array's first partial sum) would make every field one.
        v = cut(m, "ordered", sig_l=select(swap, v["sig_b"], v["sig_a"]), sig_s=select(swap, v["sig_a"], v["sig_b"]),
                shift=select(swap, v["diff_ba"], v["diff_ab"]), exp_l=select(swap, v["exp_b"], v["exp_a"]),
                sign_l=select(swap, v["sign_b"], v["sign_a"]), **side)
        side = {k: v[k] for k in [*side, "exp_l", "sign_l"]}
        return v, side

    def _aligned(self, m, v, side):
        """Shift the smaller significand right by the exponent difference: the exact sum is
        then (total + f) units, 0 < f < 1 exactly where sticky. The shifter's log steps
        drop bits into sticky as they go."""
        cut, g, p = self._stages.cut, self.guard_bits, self.fmt.precision
        n = (g + p).bit_length()
        hi, lo = halves(n)
        shift = select(v["shift"] > g + p, g + p, v["shift"])[:n]
        v = cut(m, "clamped", shift=shift, sig_s=v["sig_s"], sig_l=v["sig_l"], **side)
        small, sticky, shift, carry = self._steps(m, "align", hi, Cat(Const(0, g), v["sig_s"]), Const(0, 1),
                                                  v["shift"], {"sig_l": v["sig_l"], **{k: v[k] for k in side}})
        v = cut(m, "align_hi", small=small, sticky=sticky, shift=shift, sig_l=carry["sig_l"],
                **{k: carry[k] for k in side})
        side = {k: v[k] for k in side}
        small, sticky, _, carry = self._steps(m, "align", lo, v["small"], v["sticky"], v["shift"],
                                              {"sig_l": v["sig_l"], **side})
        v = cut(m, "aligned", small=small, sticky=sticky, sig_l=carry["sig_l"], **{k: carry[k] for k in side})
        return v, side

    def _summed(self, m, v, side):
        """The significand sum (or difference), then its leading zeros: a tree, cut halfway
        (a fine cut point) by packing each level's pairs."""
        cut, g, p = self._stages.cut, self.guard_bits, self.fmt.precision
        big = Cat(Const(0, g), v["sig_l"])
        total = Signal(g + p + 1)
        m.d.comb += total.eq(self._sum(big, v["small"], v["sticky"], v["subtract"]))
        side = {k: v[k] for k in side if k != "subtract"}
        v = cut(m, "sum", total=total, sticky=v["sticky"], **side)
        side = {k: v[k] for k in side}

        width = g + p + 1
        joins = lzc_depth(width) // 2
        level = lzc_join(lzc_leaves(v["total"]), joins)
        if self._stages.count["lzc_half"]:
            cw = len(level[0][1])
            u = cut(m, "lzc_half", lzc_zero=Cat(*(z for z, _ in level)), lzc_count=Cat(*(c for _, c in level)),
                    total=v["total"], sticky=v["sticky"], **side)
            level = [(u["lzc_zero"][i], u["lzc_count"][i * cw:(i + 1) * cw]) for i in range(len(level))]
            v, side = {k: u[k] for k in ("total", "sticky")}, {k: u[k] for k in side}
        zeros = lzc_result(lzc_join(level, lzc_depth(width) - joins), width)
        v = cut(m, "counted", zeros=zeros, total=v["total"], sticky=v["sticky"], **side)
        return v, side

    def _normalised(self, m, v, side):
        """Shift the sum left by its leading zeros (two halves of log steps) and take the
        result's exponent from the larger operand's."""
        f, cut, g, p = self.fmt, self._stages.cut, self.guard_bits, self.fmt.precision
        width = g + p + 1
        lo_e, hi_e = -f.bias - g - p, f.exp_max_field - f.bias + width - g - p
        exp = Signal(signed(signed_width(lo_e, hi_e)))
        m.d.comb += exp.eq(v["exp_l"] - f.bias + (width - g - p) - v["zeros"])
        assert len(v["zeros"]) == count_width(width)
        hi, lo = halves(len(v["zeros"]))
        side = {k: v[k] for k in side if k != "exp_l"}
        sig, _, zeros, carry = self._steps(m, "norm", hi, v["total"], Const(0, 1), v["zeros"],
                                           {"exp": exp, "exact_zero": v["total"] == 0, "sticky": v["sticky"],
                                            **side}, left=True)
        v = cut(m, "norm_hi", sig=sig, zeros=zeros, **carry)
        sig, _, _, carry = self._steps(m, "norm", lo, v["sig"], Const(0, 1), v["zeros"],
                                       {k: x for k, x in v.items() if k not in ("sig", "zeros")}, left=True)
        return cut(m, "normalised", sig=sig, **carry)

    def _rounded(self, m, v):
        """The shared rounder, with the special results (NaN, infinities, exact zeros)."""
        f = self.fmt
        m.submodules.rounder = rounder = Rounder(
            fmt=f, width=self.guard_bits + f.precision + 1, exp_width=len(v["exp"]), rounding=self.rounding,
            rand_bits=self.rand_bits, sticky=True, stages=self._stages)
        zero_or_inf_sign = select(v["any_inf"], v["inf_sign"], v["zero_sign"])
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
