"""``NormalisationPoint``: a column accumulator's window rounded and started afresh."""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.formats import BF16, FP32

from ...params import int_param
from .window import window_params
from .window_adder import RunningWindowAdder
from .window_rounder import WindowRounder

__all__ = ["NormalisationPoint", "point_add_stages"]


def _segments(rounder, adder) -> list:
    """A point's register-to-register delays: the rounder's last segment runs into the
    adder's first (unless a register at the rounder's output or the adder's input cuts
    them); the adder's last ends at the point's output register."""
    r, a = rounder.segments, adder.segments
    if rounder.cut_registers["output"] or adder.cut_registers["input"]:
        return [*r, *a]
    return [*r[:-1], r[-1] + a[0], *a[1:]]


def point_add_stages(worst: float, *, round_stages: int, **window_args) -> int:
    """The fewest register stages of a point's ``RunningWindowAdder`` whose slowest segment
    (``round_stages`` in its rounder) is estimated (``pipeline.Delay.cost``) no slower than
    ``worst``, else its deepest pipeline; ``window_args``: ``in_fmt``, ``acc_fmt``,
    ``accumulation``, ``terms``."""
    rounder = WindowRounder.plan(**window_args, stages=round_stages)
    deepest = RunningWindowAdder.plan(**window_args, term="rounded").max_stages
    for stages in range(deepest + 1):
        adder = RunningWindowAdder.plan(**window_args, term="rounded", stages=stages)
        if max(d.cost for d in _segments(rounder, adder)) <= worst:
            return stages
    return deepest


class NormalisationPoint(wiring.Component):
    """A normalisation point between two rows of a column (golden.column): the incoming
    window rounded to ``acc_fmt`` (a ``WindowRounder``, RNE, FTZ), the rounded value the
    first term of a fresh window (a ``RunningWindowAdder`` with ``term="rounded"``), registered.

    The fresh window's anchor is the rounded value's exponent (running anchor), or the
    larger of it and the column's bound ``anchor`` (bound: golden.column's ``max(e, A)``).
    ``flags`` is ``flags_in`` (the column's so far) OR the rounding's.

    Parameters (keyword-only)
    -------------------------
    in_fmt, acc_fmt, accumulation, terms
        As the column's ``WindowAdder``'s.
    round_stages, add_stages : int
        Register stages of the rounder and of the adder (``point_add_stages``).

    Ports: in ``a`` (window), ``flags_in``, ``anchor`` (the bound anchor, with ``a``; 0
    with the running anchor); out ``result`` (window), ``flags``, ``latency`` cycles later.
    """

    def __init__(self, *, in_fmt=BF16, acc_fmt=FP32, accumulation=None, terms=1, round_stages=0, add_stages=0):
        self.in_fmt, self.acc_fmt, self.accumulation, self.terms, self.layout = window_params(
            in_fmt, acc_fmt, accumulation, terms)
        args = {"in_fmt": self.in_fmt, "acc_fmt": self.acc_fmt, "accumulation": self.accumulation,
                "terms": self.terms}
        self.round_stages = int_param("round_stages", round_stages, 0, WindowRounder.plan(**args).max_stages)
        self.add_stages = int_param("add_stages", add_stages, 0,
                                    RunningWindowAdder.plan(**args, term="rounded").max_stages)
        self.rounder = WindowRounder(**args, stages=round_stages)
        self.adder = RunningWindowAdder(**args, term="rounded", stages=add_stages)
        super().__init__({"a": In(self.layout), "flags_in": In(5), "anchor": In(self.acc_fmt.exp_bits),
                          "result": Out(self.layout), "flags": Out(5)})

    @property
    def latency(self) -> int:
        """Cycles from ``a`` to ``result``: the rounder's, the adder's and the output register."""
        return self.round_stages + self.add_stages + 1

    @property
    def segments(self) -> list:
        """Estimated logic delay (``pipeline.Delay``) between consecutive registers."""
        return _segments(self.rounder, self.adder)

    def elaborate(self, platform):
        m = Module()
        m.submodules.rounder = rounder = self.rounder
        m.submodules.adder = adder = self.adder
        m.d.comb += [rounder.a.eq(self.a), rounder.flags_in.eq(self.flags_in), rounder.valid_in.eq(1)]
        anchor = self.anchor
        for i in range(self.round_stages):              # beside the rounder, to the fresh window
            r = Signal.like(anchor, name=f"anchor_d{i}", reset_less=True)
            m.d.sync += r.eq(anchor)
            anchor = r
        fresh = Signal(self.layout)
        m.d.comb += [fresh.exp.eq(anchor), adder.a.eq(fresh), adder.b.eq(rounder.result), adder.valid_in.eq(1)]
        flags = rounder.flags
        for i in range(self.add_stages):                # beside the adder
            r = Signal(5, name=f"flags_d{i}", reset_less=True)
            m.d.sync += r.eq(flags)
            flags = r
        # The output register: the element below starts its add from a register, as it
        # does below another element.
        result, out_flags = Signal(self.layout, reset_less=True), Signal(5, reset_less=True)
        m.d.sync += [result.eq(adder.result), out_flags.eq(flags | adder.flags)]
        m.d.comb += [self.result.eq(result), self.flags.eq(out_flags)]
        return m
