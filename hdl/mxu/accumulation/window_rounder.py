"""``WindowRounder``: a column accumulator's window normalised and rounded once."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal, signed

from golden.formats import BF16, FP32
from golden.rounding import Flags, Rounding

from ...shift import count_width, halves, leading_zeros, lzc_depth, shift_steps
from ...pipeline import Delay
from ...rounder import Rounder, signed_width
from ...unit import ArithmeticUnit, UnitPlan
from .window import window_params

__all__ = ["WindowRounder", "WindowRounderPlan"]


class WindowRounderPlan(UnitPlan):
    """``WindowRounder``'s parameters (keyword-only, as the unit's) and pipeline."""

    def __init__(self, *, in_fmt=BF16, acc_fmt=FP32, accumulation=None, terms=1, stages=0):
        self.in_fmt, self.fmt, self.accumulation, self.terms, self.layout = window_params(
            in_fmt, acc_fmt, accumulation, terms)
        super().__init__(rand_bits=None, stages=stages, cuts=self._cuts(), reset_less=True)

    @property
    def acc_fmt(self):
        """The result's format (``fmt``), by the name the other column units give it."""
        return self.fmt

    @property
    def _width(self) -> int:
        """The magnitude's width: the window and its headroom."""
        return self.layout["sum"].shape.width - 1

    def _exp_range(self) -> tuple[int, int]:
        """The unbiased exponent of the magnitude's leading bit, over every anchor and count."""
        head = self._width - self.accumulation.window
        return -self.fmt.bias - self._width, self.fmt.exp_max_field - self.fmt.bias + head

    def _cuts(self):
        w, f = self._width, self.fmt
        return [("input", Delay()),
                ("magnitude", Delay(1, w + 1)),                       # |sum|: a conditional negate
                ("counted", Delay(1 + lzc_depth(w))),                # leading-zero count
                ("norm_hi", Delay(2, f.exp_bits + 2)),                # exponent, upper shift steps
                ("normalised", Delay(3)),
                *Rounder.cuts(f, w, signed_width(*self._exp_range()), Rounding.NEAREST_EVEN)]


class WindowRounder(WindowRounderPlan, ArithmeticUnit):
    """A column's window (``window_layout``) as an ``acc_fmt`` encoding, RNE, FTZ: bit for
    bit ``golden.column``'s rounding at the column's end.

    A zero sum is +0; NaN and infinities are exact. ``flags`` is ``flags_in`` (the
    column's multiplies' and window adds') OR the rounding's, and inexact where a
    truncation lost bits of a finite result.

    Parameters (keyword-only)
    -------------------------
    in_fmt, acc_fmt, accumulation, terms
        As the column's ``WindowAdder``'s.
    stages : int
        Register stages, 0..``max_stages``, at the cut points: magnitude, leading-zero
        count, normalising shift (two halves), the shared rounder's, output, input.

    Ports: in ``a`` (window), ``flags_in``, ``valid_in``; out ``result``, ``flags``, ``valid_out``.
    """

    def _operands(self):
        return {"a": self.layout, "flags_in": 5}

    def _result_shape(self):
        return self.fmt.width

    def elaborate(self, platform):
        m = Module()
        f, cut, w = self.fmt, self._stages.cut, self._width
        v = cut(m, "input", a=self.a, flags_in=self.flags_in, valid=self.valid_in)
        a = self.layout(v["a"])
        negative = a.sum[-1]
        magnitude = Signal(w)
        m.d.comb += magnitude.eq((a.sum ^ negative.replicate(w + 1)) + negative)
        side = {"flags_in": v["flags_in"], "valid": v["valid"], "negative": negative, "exp_a": a.exp,
                "special": a.nan | a.inf, "nan": a.nan, "inf_sign": a.inf_sign,
                "dropped": a.dropped & ~(a.nan | a.inf)}
        v = cut(m, "magnitude", magnitude=magnitude, **side)
        side = {k: v[k] for k in side}
        v = cut(m, "counted", zeros=leading_zeros(v["magnitude"]), magnitude=v["magnitude"], **side)
        side = {k: v[k] for k in side if k != "exp_a"}
        # The leading bit's weight: the window's top is the anchor, the headroom above it.
        exp = Signal(signed(signed_width(*self._exp_range())))
        m.d.comb += exp.eq(v["exp_a"] - f.bias + (w - self.accumulation.window) - v["zeros"])
        hi, lo = halves(count_width(w))
        sig, _ = shift_steps(v["magnitude"], v["zeros"], hi, left=True)
        v = cut(m, "norm_hi", sig=sig, zeros=v["zeros"], exp=exp, zero=v["magnitude"] == 0, **side)
        sig, _ = shift_steps(v["sig"], v["zeros"], lo, left=True)
        v = cut(m, "normalised", sig=sig, exp=v["exp"], zero=v["zero"], **{k: v[k] for k in side})

        m.submodules.rounder = rounder = Rounder(fmt=f, width=w, exp_width=len(v["exp"]),
                                                 rounding=Rounding.NEAREST_EVEN, stages=self._stages)
        inf = v["special"] & ~v["nan"]
        m.d.comb += [
            rounder.sign.eq(v["negative"]), rounder.exp.eq(v["exp"]), rounder.sig.eq(v["sig"]),
            rounder.nan.eq(v["nan"]), rounder.invalid.eq(0), rounder.exact.eq(v["special"] | v["zero"]),
            # +0 for a zero sum; an infinity with its sign.
            rounder.exact_bits.eq(Cat(Const(0, f.man_bits), inf.replicate(f.exp_bits), inf & v["inf_sign"])),
        ]
        assert Flags.INEXACT == 1
        flags, valid = v["flags_in"] | v["dropped"], v["valid"]
        for name in rounder.CUTS:
            c = cut(m, name, flags=flags, valid=valid)
            flags, valid = c["flags"], c["valid"]
        out = cut(m, "output", result=rounder.result, flags=rounder.flags | flags, valid=valid)
        m.d.comb += [self.result.eq(out["result"]), self.flags.eq(out["flags"]), self.valid_out.eq(out["valid"])]
        return m
