"""``UnitPlan`` and ``ArithmeticUnit``: what the multiplier, adder and SR unit share around
their datapaths, the plan (parameters and pipeline) apart from the hardware."""

from __future__ import annotations

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .pipeline import Stages

__all__ = ["UnitPlan", "ArithmeticUnit"]


class UnitPlan:
    """A unit's resolved parameters and pipeline, without its hardware: what a caller reads
    to choose or describe a unit (``latency``, ``max_stages``, ``segments``,
    ``cut_registers``). Each unit's plan class resolves and checks its keyword parameters;
    the unit (``ArithmeticUnit``) is its plan with ports, so the two never differ.

    ``stages`` registers at the datapath's cut points (``cuts``: ``input`` first, then the
    unit's own, then the shared rounder's ``Rounder.cuts``, ending at ``output``; ``routes``:
    the cut points next to a hard block; ``fine``: the cut points only the deepest pipelines
    use; see ``pipeline.Stages``; ``reset_less``: registers without reset but ``valid``'s;
    ``inputs_first``: a spare register at the inputs before the outputs)."""

    def __init__(self, *, rand_bits: int | None, stages: int, cuts: list, routes: tuple[str, ...] = (),
                 fine: tuple[str, ...] = (), reset_less: bool = False, inputs_first: bool = False):
        self.rand_bits = rand_bits
        self._stages = Stages(stages, cuts, routes, fine, reset_less, inputs_first)

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


class ArithmeticUnit(UnitPlan, wiring.Component):
    """A unit's plan (a ``UnitPlan`` class before this one among its bases, whose parameters
    it takes) with its ports: operands (``_operands``) and ``valid_in`` in; ``result``
    (``_result_shape``), ``flags``, ``valid_out`` out; ``rand`` in where there are random bits
    (``_extra``). Operand and result shapes are widths or layouts."""

    def __init__(self, **pipeline):
        super().__init__(**pipeline)
        members = {name: In(shape) for name, shape in self._operands().items()}
        members.update(valid_in=In(1), result=Out(self._result_shape()), flags=Out(5), valid_out=Out(1))
        members.update(self._extra())
        wiring.Component.__init__(self, members)

    @classmethod
    def plan(cls, **params) -> UnitPlan:
        """The unit's plan for ``params`` (its keyword parameters, checked as the unit checks
        them): its facts without building the component."""
        pure = next(c for c in cls.__mro__ if issubclass(c, UnitPlan) and not issubclass(c, ArithmeticUnit))
        return pure(**params)

    def _operands(self) -> dict:
        """Operand name -> width or layout."""
        raise NotImplementedError

    def _result_shape(self):
        raise NotImplementedError

    def _extra(self) -> dict:
        """Ports beyond the common ones: ``rand`` where the unit takes random bits."""
        return {"rand": In(self.rand_bits)} if self.rand_bits is not None else {}

    def _drive_outputs(self, m: Module, rounder, valid) -> None:
        """The rounder's result through the ``output`` registers to the ports; ``valid``
        through the rounder's cut points alongside it."""
        for name in rounder.CUTS:
            valid = self._stages.cut(m, name, valid=valid)["valid"]
        v = self._stages.cut(m, "output", result=rounder.result, flags=rounder.flags, valid=valid)
        m.d.comb += [self.result.eq(v["result"]), self.flags.eq(v["flags"]), self.valid_out.eq(v["valid"])]
