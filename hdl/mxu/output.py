"""``OutputStage``: the rows leaving the ``MXU``'s array, through the output accumulators and
the rounder lanes into the output FIFO, and the sticky flags (hdl/mxu/array.py wires it)."""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

from ..stochastic_rounder import StochasticRounder
from ..xorshift import Xorshift32
from .output_fifo import OutputFIFO

__all__ = ["OutputStage", "tag_layout"]


def tag_layout(plan) -> data.StructLayout:
    """A row's tag as it leaves the array: ``valid`` and, with output accumulators, ``addr``,
    ``first``, ``last`` (``x``'s control fields)."""
    return data.StructLayout({"valid": 1, **({"addr": plan.acc_addr_width, "first": 1, "last": 1}
                                             if plan.acc_depth else {})})


class OutputStage(wiring.Component):
    """Each row leaving the array: accumulated (``acc_depth``), rounded (``out_rounding``),
    into the output FIFO (``OutputFIFO``), its flags into the sticky registers; ``y`` is
    the FIFO's head register.

    Parameters (keyword-only)
    -------------------------
    plan : MXUPlan
        The array's plan (hdl/mxu/plan.py): formats, output rounding, accumulators, FIFO.
    y : stream.Signature
        The ``y`` stream's.
    accumulator_adder : callable
        A new accumulator adder per column (``MXU.accumulator_adder``).

    Ports: in ``psums`` (each column's sum, ``acc_fmt``), ``col_flags`` (their flags),
    ``tag`` (``tag_layout``), ``flags_clear`` and, with a stochastic output rounding,
    ``seed``, ``seed_load``; out ``y``, ``flags`` (per column, sticky) and ``returned`` (a
    ``y`` row left last cycle, a register). A row entering in cycle ``T`` is offered on ``y``
    from ``T + latency``.
    """

    def __init__(self, *, plan, y, accumulator_adder):
        self.plan, self._adder = plan, accumulator_adder
        members = {"psums": In(data.ArrayLayout(unsigned(plan.acc_fmt.width), plan.cols)),
                   "col_flags": In(data.ArrayLayout(unsigned(5), plan.cols)), "tag": In(tag_layout(plan)),
                   "flags_clear": In(1), "y": Out(y), "flags": Out(data.ArrayLayout(unsigned(5), plan.cols)),
                   "returned": Out(1)}
        if plan.rand_bits is not None:
            members.update(seed=In(32), seed_load=In(1))
        super().__init__(members)
        self.fifo = OutputFIFO(width=plan.cols * plan.out_fmt.width, depth=plan.fifo_depth, ram=plan.fifo_ram)
        self.acc = None if not plan.acc_depth else memory.Memory(
            shape=data.ArrayLayout(unsigned(plan.acc_fmt.width), plan.cols), depth=plan.acc_depth, init=[])

    @property
    def latency(self) -> int:
        """Cycles from a row leaving the array to its ``y`` row, without stalls (the FIFO's:
        the accumulators and rounders add no register)."""
        return self.fifo.latency

    def accumulator_rows(self, m: Module) -> list:
        """Every accumulator row, read through ports of their own driven from ``m`` (for a
        formal harness's invariants)."""
        rows = []
        for a in range(self.plan.acc_depth):
            peek = self.acc.read_port(domain="comb")
            m.d.comb += peek.addr.eq(a)
            rows.append(peek.data)
        return rows

    def elaborate(self, platform):
        m = Module()
        plan, tag = self.plan, self.tag
        m.submodules.fifo = fifo = self.fifo
        leave = Signal()      # a y row enters the FIFO
        m.d.comb += leave.eq(tag.valid & (tag.last if plan.acc_depth else 1))
        row_flags = [Mux(tag.valid, f, 0) for f in self.col_flags]
        results = list(self.psums)
        if plan.acc_depth:
            results, acc_flags = self._accumulate(m)
            row_flags = [f | a for f, a in zip(row_flags, acc_flags)]
        rounded, round_flags = self._round_outputs(m, results, leave)
        row_flags = [f | Mux(leave, r, 0) for f, r in zip(row_flags, round_flags)]
        for j in range(plan.cols):
            m.d.sync += self.flags[j].eq(Mux(self.flags_clear, 0, self.flags[j]) | row_flags[j])
        m.d.comb += [fifo.w_en.eq(leave), fifo.w_data.eq(Cat(*rounded))]
        # y leaves from the FIFO's head register in the fabric, not from its memory (block
        # RAM on large arrays, whose read data arrives late in the cycle on ECP5), and
        # y.ready never reaches the memory's read (hdl/mxu/output_fifo.py).
        m.d.comb += [self.y.valid.eq(fifo.r.valid), self.y.payload.eq(fifo.r.payload), fifo.r.ready.eq(self.y.ready)]
        m.d.sync += self.returned.eq(self.y.valid & self.y.ready)
        return m

    def _accumulate(self, m: Module):
        """``acc[addr] = y`` (first tile) or ``acc[addr] + y``: ``(results, flags)``, the
        flags those of the accumulator adds that were used.

        The read-add-write completes in the row's output cycle (asynchronous read, one
        combinational adder per column), so back-to-back rows to one address need no
        forwarding.
        """
        tag = self.tag
        m.submodules.acc = acc = self.acc
        read, write = acc.read_port(domain="comb"), acc.write_port()
        m.d.comb += [read.addr.eq(tag.addr), write.addr.eq(tag.addr), write.en.eq(tag.valid & ~tag.last)]
        sums, flags = [], []
        for j, psum in enumerate(self.psums):
            m.submodules[f"acc_add{j}"] = add = self._adder()
            m.d.comb += [add.a.eq(read.data[j]), add.b.eq(psum), add.valid_in.eq(1)]
            total = Signal(self.plan.acc_fmt.width, name=f"acc_sum{j}")
            m.d.comb += [total.eq(Mux(tag.first, psum, add.result)), write.data[j].eq(total)]
            sums.append(total)
            flags.append(Mux(tag.valid & ~tag.first, add.flags, 0))
        return sums, flags

    def _round_outputs(self, m: Module, values, step):
        """The output rounder lanes: ``(rounded, flags)`` (``values`` and no flags without
        output rounding). The lanes' xorshift steps on ``step`` (a row enters the FIFO)."""
        plan = self.plan
        if plan.out_rounding is None:
            return values, [0] * len(values)
        rand = [None] * plan.cols
        if plan.rand_bits is not None:
            m.submodules.xorshift = xs = Xorshift32(lanes=plan.cols)
            m.d.comb += [xs.seed.eq(self.seed), xs.load.eq(self.seed_load), xs.next.eq(step)]
            rand = [xs.value[j][32 - plan.rand_bits:] for j in range(plan.cols)]
        out, flags = [], []
        for j, value in enumerate(values):
            m.submodules[f"round{j}"] = rounder = StochasticRounder(
                in_fmt=plan.acc_fmt, out_fmt=plan.in_fmt, rounding=plan.out_rounding, sr_bits=plan.sr_bits, rng=False)
            m.d.comb += [rounder.a.eq(value), rounder.valid_in.eq(1)]
            if rand[j] is not None:
                m.d.comb += rounder.rand.eq(rand[j])
            out.append(rounder.result)
            flags.append(rounder.flags)
        return out, flags
