"""``ArithmeticUnit``: what the multiplier, adder and SR unit share around their datapaths."""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .pipeline import Stages

__all__ = ["ArithmeticUnit"]


class ArithmeticUnit(wiring.Component):
    """Operands and ``valid_in`` in; ``result``, ``flags``, ``valid_out`` out; ``stages``
    registers at the datapath's cut points (``cuts``: ``input`` first, then the unit's own,
    then the shared rounder's ``Rounder.cuts``, ending at ``output``; ``routes``: the cut
    points next to a hard block; ``fine``: the cut points only the deepest pipelines use;
    see ``pipeline.Stages``; ``reset_less``: registers without reset but ``valid``'s;
    ``inputs_first``: a spare register at the inputs before the outputs).
    Operand and result shapes are widths or layouts."""

    def __init__(self, *, operands: dict, result_width, rand_bits: int | None,
                 stages: int, cuts: list, routes: tuple[str, ...] = (), fine: tuple[str, ...] = (),
                 extra: dict | None = None, reset_less: bool = False, inputs_first: bool = False):
        self.rand_bits = rand_bits
        self._stages = Stages(stages, cuts, routes, fine, reset_less, inputs_first)
        members = {name: In(width) for name, width in operands.items()}
        members.update(valid_in=In(1), result=Out(result_width), flags=Out(5), valid_out=Out(1))
        members.update(extra or {})
        super().__init__(members)

    @property
    def latency(self) -> int:
        """Cycles from ``valid_in`` to ``valid_out``."""
        return self._stages.stages

    @property
    def max_stages(self) -> int:
        """The deepest pipeline: one register at every cut point (fine ones included), two
        at each route."""
        return self._stages.max_stages

    @property
    def segments(self):
        """Estimated logic delay (``pipeline.Delay``) between consecutive registers."""
        return self._stages.segments

    @property
    def cut_registers(self) -> dict[str, int]:
        """Registers at each cut point: name -> count (they add up to ``latency``)."""
        return dict(self._stages.count)

    def _drive_outputs(self, m: Module, rounder, valid) -> None:
        """The rounder's result through the ``output`` registers to the ports; ``valid``
        through the rounder's cut points alongside it."""
        for name in rounder.CUTS:
            valid = self._stages.cut(m, name, valid=valid)["valid"]
        v = self._stages.cut(m, "output", result=rounder.result, flags=rounder.flags, valid=valid)
        m.d.comb += [self.result.eq(v["result"]), self.flags.eq(v["flags"]), self.valid_out.eq(v["valid"])]
