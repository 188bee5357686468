"""``SignificandMultiplier``: the bare ``width x width`` multiplier, the floor of every float multiplier's
area in the sweeps; ``SignificandAdder``: a bare add/subtract (the fp32 adder's longest carry chain)."""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hdl.params import int_param

__all__ = ["SignificandMultiplier", "SignificandAdder"]


class SignificandMultiplier(wiring.Component):
    """``p = a * b``, unsigned, combinational; ``width`` 2..64 (a significand is ``m + 1`` bits)."""

    def __init__(self, *, width):
        self.width = int_param("width", width, 2, 64)
        super().__init__({"a": In(self.width), "b": In(self.width), "p": Out(2 * self.width)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.p.eq(self.a * self.b)
        return m


class SignificandAdder(wiring.Component):
    """``s = a + b``, or ``a - b`` when ``sub`` (modulo ``2**(width + 1)``), combinational;
    ``width`` 2..64: the fp32 adder's significand sum is 28 bits wide."""

    def __init__(self, *, width):
        self.width = int_param("width", width, 2, 64)
        super().__init__({"a": In(self.width), "b": In(self.width), "sub": In(1), "s": Out(self.width + 1)})

    def elaborate(self, platform):
        m = Module()
        with m.If(self.sub):
            m.d.comb += self.s.eq(self.a - self.b)
        with m.Else():
            m.d.comb += self.s.eq(self.a + self.b)
        return m
