"""``StochasticRounder``: the SR unit, converting ``in_fmt`` to a narrower ``out_fmt``."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Signal, signed
from amaranth.lib.wiring import In

from golden.formats import BF16, FP32
from golden.ops import convert_sr_bits
from golden.rounding import Rounding

from .float import FloatLayout
from .params import format_param, rounding_param
from .pipeline import Delay
from .rounder import Rounder, signed_width
from .unit import ArithmeticUnit, UnitPlan
from .xorshift import Xorshift32

__all__ = ["StochasticRounder", "StochasticRounderPlan"]


class StochasticRounderPlan(UnitPlan):
    """``StochasticRounder``'s parameters (keyword-only, as the unit's) and pipeline."""

    def __init__(self, *, in_fmt=FP32, out_fmt=BF16, rounding=Rounding.STOCHASTIC, sr_bits=None,
                 stages=0, rng=True):
        self.in_fmt = format_param("in_fmt", in_fmt)
        self.out_fmt = format_param("out_fmt", out_fmt)
        self.rounding = rounding_param(rounding)
        fi, fo = self.in_fmt, self.out_fmt
        if self.rounding.is_stochastic and fo.precision >= fi.precision and fo.exp_bits >= fi.exp_bits:
            raise ValueError(f"rounding {self.rounding.value}: {fi} -> {fo} never rounds (every {fi} value is exact "
                             f"in {fo}); stochastic rounding needs an out_fmt narrower than in_fmt, or use rne")
        rand_bits = convert_sr_bits(self.in_fmt, self.out_fmt, self.rounding, sr_bits)
        if not isinstance(rng, bool):
            raise TypeError(f"rng must be True or False, not {rng!r}")
        self.rng = rng and rand_bits is not None
        super().__init__(rand_bits=rand_bits, stages=stages,
                         cuts=[("input", Delay()), *Rounder.cuts(self.out_fmt, self.in_fmt.precision,
                                                                 self.in_fmt.exp_bits + 2, self.rounding, rand_bits)])


class StochasticRounder(StochasticRounderPlan, ArithmeticUnit):
    """Format conversion through the shared rounder, stochastic by default (TPU mode).

    Parameters (keyword-only)
    -------------------------
    in_fmt, out_fmt : FloatFormat or str
    rounding : Rounding or str
        ``sr`` (default), ``sr-half``, ``rne`` or ``rtz``.
    sr_bits : int, optional
        Random bits per ``sr`` rounding (default: every discarded bit).
    stages : int
        Register stages, 0..``max_stages``, placed by estimated delay (hdl/pipeline.py) at
        the rounder's cut points, the output, the input.
    rng : bool
        True: a built-in xorshift32 lane supplies the random bits, stepping once per
        ``valid_in`` (ports ``seed``, ``seed_load``). False: they come in on ``rand``.
        Without random bits to take (``rne``, ``rtz``, a widening conversion) neither exists.

    Ports: in ``a``, ``valid_in``, [``rand``] or [``seed``, ``seed_load``]; out ``result``,
    ``flags``, ``valid_out``.
    """

    def _operands(self):
        return {"a": self.in_fmt.width}

    def _result_shape(self):
        return self.out_fmt.width

    def _extra(self):
        return {"seed": In(32), "seed_load": In(1)} if self.rng else super()._extra()

    def elaborate(self, platform):
        m = Module()
        fi, fo = self.in_fmt, self.out_fmt
        rand = {}
        if self.rng:
            m.submodules.xorshift = xs = Xorshift32(lanes=1)
            m.d.comb += [xs.seed.eq(self.seed), xs.load.eq(self.seed_load), xs.next.eq(self.valid_in)]
            rand["rand"] = xs.value[0][32 - self.rand_bits:]     # the top rand_bits bits
        elif self.rand_bits is not None:
            rand["rand"] = self.rand
        v = self._stages.cut(m, "input", a=self.a, valid=self.valid_in, **rand)
        a = FloatLayout(fi)(v["a"])
        exp = Signal(signed(signed_width(-fi.bias, fi.exp_max_field - fi.bias)))
        m.d.comb += exp.eq(a.exponent - fi.bias)
        m.submodules.rounder = rounder = Rounder(
            fmt=fo, width=fi.precision, exp_width=len(exp), rounding=self.rounding, rand_bits=self.rand_bits,
            stages=self._stages)
        m.d.comb += [
            rounder.sign.eq(a.sign), rounder.exp.eq(exp), rounder.sig.eq(a.significand),
            rounder.nan.eq(a.is_nan), rounder.invalid.eq(a.is_signalling),
            rounder.exact.eq(a.is_inf | a.is_zero_daz),
            rounder.exact_bits.eq(Cat(Const(0, fo.man_bits), a.is_inf.replicate(fo.exp_bits), a.sign)),
        ]
        if rand:
            m.d.comb += rounder.rand.eq(v["rand"])
        self._drive_outputs(m, rounder, v["valid"])
        return m
