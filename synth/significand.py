"""``SignificandMultiplier``: the bare ``width x width`` unsigned multiplier, the floor of
every floating-point multiplier's area in the sweeps."""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hdl.params import int_param

__all__ = ["SignificandMultiplier"]


class SignificandMultiplier(wiring.Component):
    """``p = a * b``, unsigned, combinational; ``width`` 2..64 (a significand is ``m + 1`` bits)."""

    def __init__(self, *, width):
        self.width = int_param("width", width, 2, 64)
        super().__init__({"a": In(self.width), "b": In(self.width), "p": Out(2 * self.width)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.p.eq(self.a * self.b)
        return m
