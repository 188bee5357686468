"""``ExponentArray``: the exact anchor's (max, +) product of the exponent fields, a small
systolic array that runs ahead of the MXU's (golden.column's ``exact_anchor``)."""

from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.formats import FloatFormat

from ...rounder import signed_width
from .window import exponent_field

__all__ = ["ExponentArray", "write_layout"]


def write_layout(in_fmt: FloatFormat) -> data.StructLayout:
    """One weight write at a cell: enable (this cell's row of the tile), buffer, value."""
    return data.StructLayout({"we": 1, "buf": 1, "data": in_fmt.width})


class ExponentArray(wiring.Component):
    """Per accepted row ``x`` and column ``j``, the anchor field of golden.column's
    ``exact_anchor``: the largest ``ex[k] + ew[k][j]`` over the rows ``k`` whose two operands
    are finite and nonzero, minus twice the input bias, plus one (two significands multiply
    to [1, 4)) and ``acc_fmt``'s bias, clipped to ``0..2**exp_bits - 2``; 0 if no pair is.

    A cell per element: it keeps its weight's exponent field in two buffers (written as the
    element's weight is, by ``writes``), adds the row's field to the one ``sel`` picks, and
    passes the larger of that sum and the cell above's down; the row's fields move right a
    cell per cycle, the maxima down a row per cycle, so every path is one add or one compare.
    A sum of two nonzero fields is at least 2, so 0 stands for "no pair".

    Parameters (keyword-only)
    -------------------------
    in_fmt, acc_fmt : FloatFormat
        The operands' and the window's formats.
    rows, cols : int
        The MXU's.

    Ports: in ``x`` (the accepted row, ``rows`` values), ``sel`` (its weight buffer),
    ``writes`` (``rows x cols`` of ``write_layout``, row-major); out ``anchors``: column
    ``j``'s anchor ``latency + j`` cycles after its row.
    """

    def __init__(self, *, in_fmt: FloatFormat, acc_fmt: FloatFormat, rows: int, cols: int):
        self.in_fmt, self.acc_fmt, self.rows, self.cols = in_fmt, acc_fmt, rows, cols
        super().__init__({
            "x": In(data.ArrayLayout(unsigned(in_fmt.width), rows)), "sel": In(1),
            "writes": In(data.ArrayLayout(write_layout(in_fmt), rows * cols)),
            "anchors": Out(data.ArrayLayout(unsigned(acc_fmt.exp_bits), cols)),
        })

    @property
    def latency(self) -> int:
        """Cycles from a row to column 0's anchor: the row's fields registered, a cycle per
        row down the array, the last cell's compare and the anchor's register."""
        return self.rows + 3

    def elaborate(self, platform):
        m = Module()
        fi, e = self.in_fmt, self.in_fmt.exp_bits
        ew = [[[Signal(e, name=f"ew{b}_{k}_{j}") for j in range(self.cols)] for k in range(self.rows)]
              for b in (0, 1)]
        for k in range(self.rows):
            for j in range(self.cols):
                write = self.writes[k * self.cols + j]
                for b in (0, 1):
                    with m.If(write.we & (write.buf == b)):
                        m.d.sync += ew[b][k][j].eq(exponent_field(fi, write.data))
        maxima = [Const(0, e + 1)] * self.cols
        for k in range(self.rows):
            # Row k's field waits k cycles (the maxima's row-by-row descent), then moves right.
            ex, sel = Signal(e, name=f"ex{k}_0"), Signal(name=f"ex{k}_0_sel")
            m.d.sync += [ex.eq(exponent_field(fi, self.x[k])), sel.eq(self.sel)]
            for d in range(k):
                ex_r, sel_r = Signal(e, name=f"ex{k}_0_{d}"), Signal(name=f"ex{k}_0_{d}_sel")
                m.d.sync += [ex_r.eq(ex), sel_r.eq(sel)]
                ex, sel = ex_r, sel_r
            for j in range(self.cols):
                weight = Mux(sel, ew[1][k][j], ew[0][k][j])
                total = Signal(e + 1, name=f"sum{k}_{j}")
                m.d.sync += total.eq(Mux((ex == 0) | (weight == 0), 0, ex + weight))
                largest = Signal(e + 1, name=f"max{k}_{j}")
                m.d.sync += largest.eq(Mux(total > maxima[j], total, maxima[j]))
                maxima[j] = largest
                if j + 1 < self.cols:
                    ex_r, sel_r = Signal(e, name=f"ex{k}_{j + 1}"), Signal(name=f"ex{k}_{j + 1}_sel")
                    m.d.sync += [ex_r.eq(ex), sel_r.eq(sel)]
                    ex, sel = ex_r, sel_r
        offset, top = 1 + self.acc_fmt.bias - 2 * fi.bias, self.acc_fmt.exp_max_field - 1
        for j, largest in enumerate(maxima):
            raw = Signal(signed(signed_width(offset, 2 * fi.exp_max_field + offset)), name=f"anchor_raw{j}")
            # A negative offset as the subtraction of its magnitude (no wider than the operand).
            m.d.comb += raw.eq(largest + offset if offset >= 0 else largest - -offset)
            clipped = Mux(raw[-1], 0, Mux(raw > top, top, raw[:self.acc_fmt.exp_bits]))
            m.d.sync += self.anchors[j].eq(Mux(largest == 0, 0, clipped))
        return m
