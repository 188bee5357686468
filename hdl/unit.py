"""``ArithmeticUnit``: what the multiplier, adder and SR unit share around their datapaths."""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .pipeline import Stages

__all__ = ["ArithmeticUnit"]


class ArithmeticUnit(wiring.Component):
    """Operands and ``valid_in`` in; ``result``, ``flags``, ``valid_out`` out; ``stages``
    registers at the datapath's cut points (the last cut point used is ``output``)."""

    def __init__(self, *, operands: dict[str, int], result_width: int, rand_bits: int | None,
                 stages: int, cut_points: list[str], extra: dict | None = None):
        self.rand_bits = rand_bits
        self._stages = Stages(stages, cut_points)
        members = {name: In(width) for name, width in operands.items()}
        members.update(valid_in=In(1), result=Out(result_width), flags=Out(5), valid_out=Out(1))
        members.update(extra or {})
        super().__init__(members)

    @property
    def latency(self) -> int:
        """Cycles from ``valid_in`` to ``valid_out``."""
        return self._stages.stages

    @property
    def cut_registers(self) -> dict[str, int]:
        """Registers at each cut point: name -> count (they add up to ``latency``)."""
        return dict(self._stages.count)

    def _drive_outputs(self, m: Module, rounder, valid) -> None:
        """The rounder's result through the ``output`` registers to the ports."""
        v = self._stages.cut(m, "output", result=rounder.result, flags=rounder.flags, valid=valid)
        m.d.comb += [self.result.eq(v["result"]), self.flags.eq(v["flags"]), self.valid_out.eq(v["valid"])]
