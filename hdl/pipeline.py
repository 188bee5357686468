"""Placing a unit's ``stages`` registers at its cut points, by delay.

Each unit declares its datapath as an ordered list of named cut points, each with an
estimate of the logic delay since the previous one (``Delay``: LUT levels, carry-chain
bits, hard multipliers). ``Stages(n, cuts)`` puts ``n`` registers where they minimise the
largest register-to-register delay (the FloPoCo / cvfpu approach): every added stage
shortens the critical path until each segment between two neighbouring cut points has its
own stage. The first cut point is the unit's inputs, the last its outputs; registers there
only help when the surrounding logic is combinational, so they are used last: the outputs'
first, or the inputs' first (``inputs_first``) in a unit whose outputs run down a chain
that each of its registers lengthens by a cycle per link while one at its inputs costs one
cycle in all (a column element's late partial sum). Past one
register per cut point, ``routes`` (cut points whose values travel to or from a hard block,
such as a DSP multiplier) take a second register each, in order: in a large placed design
the wire to a block that sits in a fixed row of the die then gets a cycle of its own.
Past those, ``fine`` cut points (inside a shifter's log steps or a tree, where a slow
fabric such as the iCE40's needs segments of one or two LUT levels) take a register each,
placed by the same rule. Until then they are not there at all, so the deep pipelines
leave every shallower depth's hardware as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from amaranth.hdl import Const, Signal, Value
from amaranth.lib import data

from .params import int_param

__all__ = ["Delay", "Stages", "delayed", "select"]

@dataclass(frozen=True)
class Delay:
    """Logic between two cut points: LUT levels, carry-chain bits, hard multipliers (the
    features of the per-architecture delay model, hdl/timing.py)."""

    levels: float = 0
    carry: int = 0
    mul: int = 0

    def __add__(self, other: Delay) -> Delay:
        return Delay(self.levels + other.levels, self.carry + other.carry, self.mul + other.mul)

    @property
    def cost(self) -> float:
        """Architecture-neutral estimate in LUT levels, the placement's measure (fixed, so
        the generated hardware does not change when the timing model is recalibrated):
        a carry chain ripples ~16 bits per LUT level, a hard multiply is ~6 levels."""
        return self.levels + self.carry / 16 + 6 * self.mul


@lru_cache(maxsize=None)
def _place(costs: tuple[float, ...], n: int, forced: frozenset[int] = frozenset()) -> frozenset[int]:
    """The ``n`` boundaries (1..len-1, ``forced`` among them) splitting ``costs`` with the
    smallest largest group sum, ties broken by the smallest sum of squares (balanced stages)."""
    prefix = [0.0]
    for c in costs:
        prefix.append(prefix[-1] + c)

    def key(option):
        return round(option[0], 9), round(option[1], 9)

    def allowed(i, j):          # a group may not run across a forced boundary
        return not any(i < f < j for f in forced)
    # best[r][j]: (max, sum of squares, cuts) splitting costs[:j] with r cuts.
    best = [{j: (prefix[j], prefix[j] ** 2, ()) for j in range(1, len(costs) + 1) if allowed(0, j)}]
    for r in range(1, n + 1):
        best.append({})
        for j in range(r + 1, len(costs) + 1):
            options = []
            for i in range(r, j):
                if i not in best[r - 1] or not allowed(i, j):
                    continue
                worst, squares, cuts = best[r - 1][i]
                seg = prefix[j] - prefix[i]
                options.append((max(worst, seg), squares + seg * seg, cuts + (i,)))
            if options:
                best[r][j] = min(options, key=key)
    return frozenset(best[n][len(costs)][2])


class Stages:
    """Distributes ``stages`` registers over a datapath's cut points.

    Parameters
    ----------
    stages : int
        Register stages in the datapath (its latency), 0..``len(cuts) + len(routes)``.
    cuts : list of (str, Delay)
        Cut point names in datapath order, each with the delay of the logic before it; the
        first is the inputs (no logic before it), the last the outputs.
    routes : tuple of str
        Interior cut points next to a hard block, which take a second register (in this
        order) once every other cut point has one.
    fine : tuple of str
        Interior cut points used only past that (one register each, placed by delay).
    reset_less : bool
        Registers carry no reset but ``valid``'s: in an array, a flip-flop without set/reset
        packs into any slice (an FPGA slice's flip-flops share one clock enable and one
        set/reset; a placer short of slices whose control set suits a flip-flop fails).
    inputs_first : bool
        The first spare register at the inputs rather than at the outputs.
    """

    def __init__(self, stages: int, cuts: list[tuple[str, Delay]], routes: tuple[str, ...] = (),
                 fine: tuple[str, ...] = (), reset_less: bool = False, inputs_first: bool = False):
        self.reset_less = reset_less
        self.names = [name for name, _ in cuts]
        self.delays = [delay for _, delay in cuts[1:]]
        assert set(routes) | set(fine) <= set(self.names[1:-1]) and not set(routes) & set(fine), (routes, fine)
        self.routes, self.fine = tuple(routes), frozenset(fine)
        self.stages = int_param("stages", stages, 0, len(cuts) + len(routes))
        # The coarse cut points (indices), each with the delay since the previous one.
        coarse = [i for i, name in enumerate(self.names) if name not in self.fine]
        costs = tuple(sum(d.cost for d in self.delays[a:b]) for a, b in zip(coarse, coarse[1:]))
        interior = min(self.stages, len(coarse) - 2)
        self.count = dict.fromkeys(self.names, 0)
        for t in _place(costs, interior):
            self.count[self.names[coarse[t]]] = 1
        spare = self.stages - interior
        edges = (self.names[0], self.names[-1]) if inputs_first else (self.names[-1], self.names[0])
        self.count[edges[0]] += spare >= 1
        self.count[edges[1]] += spare >= 2
        for name in self.routes[:max(0, self.stages - len(coarse))]:
            self.count[name] += 1
        extra = self.stages - len(coarse) - len(self.routes)
        if extra > 0:
            forced = frozenset(coarse[1:-1])
            for i in _place(tuple(d.cost for d in self.delays), len(forced) + extra, forced) - forced:
                self.count[self.names[i]] += 1

    @property
    def max_stages(self) -> int:
        return len(self.names) + len(self.routes)

    @property
    def segments(self) -> list[Delay]:
        """The delay between consecutive registers (inputs and outputs count as registered)."""
        out, run = [], Delay()
        for name, delay in zip(self.names[1:-1], self.delays):
            run = run + delay
            if self.count[name]:
                out += [run] + [Delay()] * (self.count[name] - 1)     # a second register: a wire only
                run = Delay()
        return out + [run + self.delays[-1]]

    def cut(self, m, name: str, **values):
        """``values`` delayed by the registers at cut point ``name`` (a dict, same keys).

        A cut point without a register still names each value with a wire (``NAME_KEY``):
        the logic after it refers to the wire, not to a copy of the expression, which
        otherwise Amaranth would lower once per use (an unpipelined fp32 adder's netlist was
        17 times larger before synthesis merged the copies again). A fine cut point without
        a register is not there: the values pass unchanged, not even named."""
        out = {}
        for key, value in values.items():
            if name in self.fine and not self.count[name]:
                out[key] = value
                continue
            shape = value.shape() if isinstance(value, (Value, data.View)) else Value.cast(value).shape()
            if not self.count[name] and not _named(value):
                wire = Signal(shape, name=f"{name}_{key}")
                m.d.comb += wire.eq(value)
                value = wire
            for i in range(self.count[name]):
                reg = Signal(shape, name=f"{name}_{key}_r{i}", reset_less=self.reset_less and key != "valid")
                m.d.sync += reg.eq(value)
                value = reg
            out[key] = value
        return out


def _named(value) -> bool:
    """Whether ``value`` is a signal (or a view of one) or a constant: nothing to name."""
    if isinstance(value, data.View):
        value = Value.cast(value)
    return isinstance(value, (Signal, Const, int))


def select(sel, a, b) -> Value:
    """``Mux(sel, a, b)`` as AND and OR gates (unsigned, the wider operand's width).

    Yosys maps a register fed by a multiplexer with a constant input (a zeroing ``Mux(c, 0,
    x)``, a shifter's filled bits, a special case's fixed pattern) onto a flip-flop with a
    synchronous reset or set on ``c``, even where the design gives the register no reset:
    on ECP5 the slice's LSR pin, then driven by logic through the routing. Gates leave ``c``
    in the LUTs. A constant 0 operand adds no gate: ``select(c, 0, x)`` is ``x & ~c``."""
    a, b, sel = Value.cast(a), Value.cast(b), Value.cast(sel)
    if len(sel) != 1:
        raise ValueError(f"sel must be 1 bit wide, not {len(sel)}")
    width = max(len(a), len(b))
    # The 1-bit select as a signed operand sign-extends to the mask: one net, where
    # ``replicate`` makes the backend write the select's expression once per bit.
    terms = [(x.as_unsigned() & s.as_signed())[:width] for x, s in ((a, sel), (b, ~sel))
             if not (isinstance(x, Const) and x.value == 0)]
    return (terms[0] | terms[1]) if len(terms) == 2 else terms[0] if terms else Const(0, width)


def delayed(m, value, cycles: int, name: str, reset_less: bool = False) -> Value:
    """``value`` through ``cycles`` registers named ``NAME0``, ``NAME1``, ..."""
    for i in range(cycles):
        reg = Signal(Value.cast(value).shape(), name=f"{name}{i}", reset_less=reset_less)
        m.d.sync += reg.eq(value)
        value = reg
    return value
