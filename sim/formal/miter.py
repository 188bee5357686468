"""The miter the formal check proves: a pipelined unit against its combinational self, delayed.

``Miter`` drives a unit at ``stages=N`` and the same unit at ``stages=0`` with the same free
inputs, delays every output of the combinational one by ``N`` registers and raises ``ok``
while they agree. ``Mutant`` is a test-only broken unit, so a check can be shown to fail.
"""

from __future__ import annotations

from amaranth.hdl import Cat, ClockDomain, Module, Shape, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["Miter", "Mutant", "PETop", "inputs_of", "outputs_of"]


def inputs_of(unit) -> dict:
    """A component's input ports: name -> shape."""
    return {n: Shape.cast(m.shape) for n, m in unit.signature.members.items() if m.flow == In}


def outputs_of(unit) -> dict:
    """A component's output ports: name -> shape."""
    return {n: Shape.cast(m.shape) for n, m in unit.signature.members.items() if m.flow == Out}


def _delay(m: Module, value, cycles: int, name: str):
    """``value`` through ``cycles`` registers (reset value 0; a struct as its bits)."""
    value = Value.cast(value)
    for i in range(cycles):
        reg = Signal.like(value, name=f"{name}_d{i}", init=0)
        m.d.sync += reg.eq(value)
        value = reg
    return value


class Mutant(wiring.Component):
    """A pipelined unit with a planted bug (test only).

    Result bit 0 is flipped whenever operand ``a`` held ``pattern`` ``latency`` cycles
    earlier: the unit's own datapath, then wrong for one input pattern, as a misplaced
    pipeline register would make it.
    """

    def __init__(self, unit, pattern: int):
        self.unit = unit
        self.pattern = pattern
        self.latency = unit.latency
        super().__init__({**{n: In(s) for n, s in inputs_of(unit).items()},
                          **{n: Out(s) for n, s in outputs_of(unit).items()}})

    def elaborate(self, platform):
        m = Module()
        m.submodules.unit = unit = self.unit
        for name in inputs_of(unit):
            m.d.comb += getattr(unit, name).eq(getattr(self, name))
        for name in outputs_of(unit):
            m.d.comb += getattr(self, name).eq(getattr(unit, name))
        hit = _delay(m, self.a == self.pattern, self.latency, "mutant_hit")
        m.d.comb += self.result.eq(unit.result ^ hit)
        return m


class Miter(wiring.Component):
    """``dut`` (latency ``N``) against ``ref`` (combinational) delayed ``N`` cycles.

    ``ref`` is delayed ``input_delay`` cycles at its inputs and the rest at its outputs: the
    same for a combinational unit once the delays are full. Matching the registers at the
    pipelined unit's ``input`` cut point lets Yosys merge them and the identical logic
    behind them (the two significand multipliers, say) before the SAT problem is built.

    Ports: the units' inputs, free; out ``ok`` and, for the counterexample report, each
    output as ``dut_NAME`` and ``ref_NAME`` (the delayed reference). The clock domain has
    no reset: the check starts from the registers' reset values. ``valid_out`` must agree
    from the first cycle after reset; the other outputs from cycle ``N + 1`` on (the first
    being 1), when the pipeline holds only values computed from inputs (before that, the
    pipeline registers hold their reset values, which are no input's result and are
    flagged invalid by ``valid_out``).
    """

    def __init__(self, dut, ref, *, input_delay: int = 0):
        if inputs_of(dut) != inputs_of(ref) or outputs_of(dut) != outputs_of(ref):
            raise ValueError("dut and ref must have the same ports")
        if ref.latency != 0:
            raise ValueError(f"ref must be combinational, not of latency {ref.latency}")
        if not 0 <= input_delay <= dut.latency:
            raise ValueError(f"input_delay must be 0..{dut.latency}, not {input_delay}")
        self.dut, self.ref, self.input_delay = dut, ref, input_delay
        outputs = outputs_of(dut)
        super().__init__({**{n: In(s) for n, s in inputs_of(dut).items()}, "ok": Out(1),
                          **{f"dut_{n}": Out(s) for n, s in outputs.items()},
                          **{f"ref_{n}": Out(s) for n, s in outputs.items()}})

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = ClockDomain("sync", reset_less=True)
        m.submodules.dut, m.submodules.ref = self.dut, self.ref
        latency = self.dut.latency
        for name in inputs_of(self.dut):
            m.d.comb += [getattr(self.dut, name).eq(getattr(self, name)),
                         getattr(self.ref, name).eq(_delay(m, getattr(self, name), self.input_delay, name))]
        # Cycles since reset, saturating at the latency: the pipeline is full when it gets there.
        count = Signal(range(latency + 1), init=0)
        full = count == latency
        with m.If(~full):
            m.d.sync += count.eq(count + 1)
        agree = []
        for name in outputs_of(self.dut):
            dut_out = getattr(self, f"dut_{name}")
            ref_out = getattr(self, f"ref_{name}")
            m.d.comb += [dut_out.eq(getattr(self.dut, name)),
                         ref_out.eq(_delay(m, getattr(self.ref, name), latency - self.input_delay, f"ref_{name}"))]
            same = dut_out == ref_out
            agree.append(same if name == "valid_out" else ~full | same)
        m.d.comb += self.ok.eq(Cat(*agree).all())
        return m


class PETop(wiring.Component):
    """A processing element in a clock domain without reset, its ports passed through: the
    netlist ``sim.formal pe`` compares (in the MXU, no processing element register's reset
    value is ever used: a tile is loaded before the first row, and rows carry valid tags).

    ``mutant`` (test only): ``psum_out`` bit 0 flipped in the cycle after ``x_in`` held it.
    """

    def __init__(self, pe, mutant: int | None = None):
        self.pe, self.mutant = pe, mutant
        super().__init__({**{n: In(s) for n, s in inputs_of(pe).items()},
                          **{n: Out(s) for n, s in outputs_of(pe).items()}})

    def elaborate(self, platform):
        m = Module()
        m.domains.sync = ClockDomain("sync", reset_less=True)
        m.submodules.pe = pe = self.pe
        for name in inputs_of(pe):
            m.d.comb += getattr(pe, name).eq(getattr(self, name))
        for name in outputs_of(pe):
            m.d.comb += getattr(self, name).eq(getattr(pe, name))
        if self.mutant is not None:
            hit = _delay(m, self.x_in == self.mutant, 1, "mutant_hit")
            m.d.comb += self.psum_out.eq(pe.psum_out ^ hit)
        return m
