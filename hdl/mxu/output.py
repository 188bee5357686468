"""The ``MXU``'s output side: the rows leaving the array through the output accumulators
and rounder lanes into the output FIFO, and the sticky flags (hdl/mxu/array.py's ``elaborate``).

Each function takes the ``MXU`` being elaborated and its ``Module``.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data, memory

from ..stochastic_rounder import StochasticRounder
from ..xorshift import Xorshift32

__all__ = ["output"]


def output(mxu, m: Module, out_fifo, y_out, psums, col_flags, tag, platform):
    """Rows leaving the array: accumulate, round, into the FIFO, flags into the sticky
    registers; ``y`` from a register after the FIFO."""
    leave = Signal()      # a y row enters the FIFO
    m.d.comb += leave.eq(tag.valid & (tag.last if mxu.acc_depth else 1))
    row_flags = [Mux(tag.valid, f, 0) for f in col_flags]
    if mxu.acc_depth:
        results, acc_flags = _accumulate(mxu, m, psums, tag, platform)
        row_flags = [f | a for f, a in zip(row_flags, acc_flags)]
    else:
        results = psums
    rounded, round_flags = _round_outputs(mxu, m, results, leave)
    row_flags = [f | Mux(leave, r, 0) for f, r in zip(row_flags, round_flags)]
    for j in range(mxu.cols):
        m.d.sync += mxu.flags[j].eq(Mux(mxu.flags_clear, 0, mxu.flags[j]) | row_flags[j])
    m.d.comb += [out_fifo.w_en.eq(leave), out_fifo.w_data.eq(Cat(*rounded))]
    # y leaves from the FIFO's head register in the fabric, not from its memory (block
    # RAM on large arrays, whose read data arrives late in the cycle on ECP5), and
    # y.ready never reaches the memory's read (hdl/mxu/output_fifo.py).
    m.d.comb += [y_out.valid.eq(out_fifo.r.valid), y_out.payload.eq(out_fifo.r.payload),
                 out_fifo.r.ready.eq(y_out.ready)]


def _accumulate(mxu, m: Module, psums, tag, platform):
    """``acc[addr] = y`` (first tile) or ``acc[addr] + y``: ``(results, flags)``, the
    flags those of the accumulator adds that were used. With platform ``formal``,
    ``internals.acc_rows`` reads every accumulator row (for a harness's invariants).

    The read-add-write completes in the row's output cycle (asynchronous read, one
    combinational adder per column), so back-to-back rows to one address need no
    forwarding.
    """
    m.submodules.acc = acc = memory.Memory(
        shape=data.ArrayLayout(unsigned(mxu.acc_fmt.width), mxu.cols), depth=mxu.acc_depth, init=[])
    read, write = acc.read_port(domain="comb"), acc.write_port()
    m.d.comb += [read.addr.eq(tag.addr), write.addr.eq(tag.addr), write.en.eq(tag.valid & ~tag.last)]
    if platform == "formal":
        mxu.internals.acc_rows = []
        for a in range(mxu.acc_depth):
            peek = acc.read_port(domain="comb")
            m.d.comb += peek.addr.eq(a)
            mxu.internals.acc_rows.append(peek.data)
    sums, flags = [], []
    for j, psum in enumerate(psums):
        m.submodules[f"acc_add{j}"] = add = mxu.accumulator_adder()
        m.d.comb += [add.a.eq(read.data[j]), add.b.eq(psum), add.valid_in.eq(1)]
        total = Signal(mxu.acc_fmt.width, name=f"acc_sum{j}")
        m.d.comb += [total.eq(Mux(tag.first, psum, add.result)), write.data[j].eq(total)]
        sums.append(total)
        flags.append(Mux(tag.valid & ~tag.first, add.flags, 0))
    return sums, flags


def _round_outputs(mxu, m: Module, values, step):
    """The output rounder lanes: ``(rounded, flags)`` (``values`` and no flags without
    output rounding). The lanes' xorshift steps on ``step`` (a row enters the FIFO)."""
    if mxu.out_rounding is None:
        return values, [0] * len(values)
    rand = [None] * mxu.cols
    if mxu.rand_bits is not None:
        m.submodules.xorshift = xs = Xorshift32(lanes=mxu.cols)
        m.d.comb += [xs.seed.eq(mxu.seed), xs.load.eq(mxu.seed_load),
                     xs.next.eq(step)]
        rand = [xs.value[j][32 - mxu.rand_bits:] for j in range(mxu.cols)]
    out, flags = [], []
    for j, value in enumerate(values):
        m.submodules[f"round{j}"] = rounder = StochasticRounder(
            in_fmt=mxu.acc_fmt, out_fmt=mxu.in_fmt, rounding=mxu.out_rounding, sr_bits=mxu.sr_bits, rng=False)
        m.d.comb += [rounder.a.eq(value), rounder.valid_in.eq(1)]
        if rand[j] is not None:
            m.d.comb += rounder.rand.eq(rand[j])
        out.append(rounder.result)
        flags.append(rounder.flags)
    return out, flags
