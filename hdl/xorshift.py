"""``Xorshift32``: Marsaglia's xorshift32 (13, 17, 5), one generator per lane."""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden import xorshift

from .params import int_param

__all__ = ["Xorshift32"]

MAX_LANES = 1024


class Xorshift32(wiring.Component):
    """``lanes`` xorshift32 generators seeded from one seed (see ``golden.xorshift``).

    ``value[i]`` is lane ``i``'s next output: the step of its state. ``next`` consumes it
    (the state becomes ``value``); ``load`` restarts every lane from ``seed`` instead (lane
    ``i`` from ``seed XOR i * 0x9E3779B9``, 0 replaced by 2463534242). After reset the
    lanes start as if seed 0 had been loaded.

    Ports: in ``seed`` (32), ``load``, ``next``; out ``value`` (``lanes`` x 32 bits).
    """

    def __init__(self, *, lanes=1):
        self.lanes = int_param("lanes", lanes, 1, MAX_LANES)
        super().__init__({"seed": In(32), "load": In(1), "next": In(1),
                          "value": Out(data.ArrayLayout(unsigned(32), lanes))})

    def elaborate(self, platform):
        m = Module()
        initial = xorshift.lane_seeds(0, self.lanes)
        for i in range(self.lanes):
            state = Signal(32, name=f"state{i}", init=int(initial[i]))
            y = state ^ (state << 13)[:32]
            y = y ^ (y >> 17)
            y = y ^ (y << 5)[:32]
            m.d.comb += self.value[i].eq(y)
            start = self.seed ^ ((i * xorshift.LANE_STRIDE) & 0xFFFFFFFF)
            with m.If(self.load):
                m.d.sync += state.eq(Mux(start == 0, xorshift.ZERO_SEED_REPLACEMENT, start))
            with m.Elif(self.next):
                m.d.sync += state.eq(self.value[i])
        return m
