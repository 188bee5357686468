"""``ExponentArray``: the exact anchor's (max, +) product of the exponent fields, a small
systolic array that runs ahead of the MXU's (golden.column's ``exact_anchor``)."""

from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.formats import FloatFormat

from ...float import FloatLayout
from .window import exponent_field

__all__ = ["ExponentArray", "exponent_array_latency", "finite_nonzero_field", "weight_field",
           "weight_fields_layout"]


def weight_fields_layout(in_fmt: FloatFormat) -> data.ArrayLayout:
    """One element's two weight buffers' fields (``weight_field``)."""
    return data.ArrayLayout(unsigned(in_fmt.exp_bits), 2)


def weight_field(fmt: FloatFormat, value):
    """What an element hands the exponent array of a weight ``value``: its exponent field as
    stored where the field alone tells infinities and NaN (all ones; the array's cell
    clears them, ``finite_nonzero_field``), else (a finite format, whose NaN needs the
    mantissa) ``exponent_field``, cleared in the element."""
    return exponent_field(fmt, value) if fmt.finite else FloatLayout(fmt)(value).exponent


def finite_nonzero_field(fmt: FloatFormat, field):
    """Whether a ``weight_field`` is a finite nonzero value's (subnormals have field 0 and
    count as zero, DAZ)."""
    nonzero = field != 0
    return nonzero if fmt.finite else nonzero & (field != fmt.exp_max_field)


def exponent_array_latency(rows: int) -> int:
    """``ExponentArray``'s latency for ``rows`` rows (a plan fact, without the array)."""
    return rows + 4


class ExponentArray(wiring.Component):
    """Per accepted row ``x`` and column ``j``, the anchor field of golden.column's
    ``exact_anchor``: the largest ``ex[k] + ew[k][j]`` over the rows ``k`` whose two operands
    are finite and nonzero, minus twice the input bias, plus one (two significands multiply
    to [1, 4)) and ``acc_fmt``'s bias, clipped to ``0..2**exp_bits - 2``; 0 if no pair is.

    A cell per element, without storage of its own: it reads its element's two weight
    fields (``weights``), adds the row's field to the one ``sel`` picks (a register), and
    keeps the larger of that sum and the cell above's (a register): every path is one add or
    one compare. The row's fields move right a cell per cycle, the maxima down a row per
    cycle. A pair that does not count sums to 0; a sum of two nonzero fields is at least 2,
    so 0 stands for "no pair".

    Parameters (keyword-only)
    -------------------------
    in_fmt, acc_fmt : FloatFormat
        The operands' and the window's formats.
    rows, cols : int
        The MXU's.

    Ports: in ``x`` (the accepted row, ``rows`` values), ``sel`` (its weight buffer),
    ``weights`` (``rows x cols`` of ``weight_fields_layout``, row-major: the elements'
    weight registers' fields); out ``anchors``: column ``j``'s anchor ``latency + j`` cycles
    after its row. A weight must be in its element before the first row that selects its
    buffer enters here (the MXU's swap waits for the load; rows enter here first).
    """

    def __init__(self, *, in_fmt: FloatFormat, acc_fmt: FloatFormat, rows: int, cols: int):
        self.in_fmt, self.acc_fmt, self.rows, self.cols = in_fmt, acc_fmt, rows, cols
        super().__init__({
            "x": In(data.ArrayLayout(unsigned(in_fmt.width), rows)), "sel": In(1),
            "weights": In(data.ArrayLayout(weight_fields_layout(in_fmt), rows * cols)),
            "anchors": Out(data.ArrayLayout(unsigned(acc_fmt.exp_bits), cols)),
        })

    @property
    def latency(self) -> int:
        """Cycles from a row to column 0's anchor: the row's fields registered, the first
        cell's sum, a cycle per row down the array (each cell's compare), the offset and
        clip decisions' register and the anchor's register."""
        return exponent_array_latency(self.rows)

    def elaborate(self, platform):
        m = Module()
        fi, e = self.in_fmt, self.in_fmt.exp_bits
        maxima = [Const(0, e + 1)] * self.cols
        for k in range(self.rows):
            # Row k's field (cleared unless finite and nonzero) waits k cycles, the maxima's
            # row-by-row descent, then moves right.
            ex, sel = Signal(e, name=f"ex{k}_0"), Signal(name=f"ex{k}_0_sel")
            m.d.sync += [ex.eq(exponent_field(fi, self.x[k])), sel.eq(self.sel)]
            for d in range(k):
                ex_r, sel_r = Signal(e, name=f"ex{k}_0_{d}"), Signal(name=f"ex{k}_0_{d}_sel")
                m.d.sync += [ex_r.eq(ex), sel_r.eq(sel)]
                ex, sel = ex_r, sel_r
            for j in range(self.cols):
                fields = self.weights[k * self.cols + j]
                weight = Mux(sel, fields[1], fields[0])
                # The sum in a register of its own (0: the pair does not count), the compare
                # after it: the weight's route from its element and the add fill one cycle.
                total = Signal(e + 1, name=f"sum{k}_{j}")
                m.d.sync += total.eq(Mux((ex != 0) & finite_nonzero_field(fi, weight), ex + weight, 0))
                largest = Signal(e + 1, name=f"max{k}_{j}")
                # Row 0 has no maximum above it: its sum is the maximum (a compare with 0
                # becomes the register's reset in synthesis, a net across the die).
                m.d.sync += largest.eq(Mux(total > maxima[j], total, maxima[j]) if k else total)
                maxima[j] = largest
                if j + 1 < self.cols:
                    ex_r, sel_r = Signal(e, name=f"ex{k}_{j + 1}"), Signal(name=f"ex{k}_{j + 1}_sel")
                    m.d.sync += [ex_r.eq(ex), sel_r.eq(sel)]
                    ex, sel = ex_r, sel_r
        offset, top = 1 + self.acc_fmt.bias - 2 * fi.bias, self.acc_fmt.exp_max_field - 1
        for j, largest in enumerate(maxima):
            # The last maximum's offset and clip in two cycles (the add and the clip after
            # it, then the zero test, reach column j's top across the die): first the
            # offset field (modulo its width) and, compared with constants beside the add,
            # whether the anchor is 0 (no pair, or below the range) or the top; then only
            # their multiplexer into the anchor's register.
            field = Signal(self.acc_fmt.exp_bits, name=f"anchor_field{j}")
            low, high = Signal(name=f"anchor_low{j}"), Signal(name=f"anchor_high{j}")
            # A negative offset as the subtraction of its magnitude (no wider than the operand).
            m.d.sync += [field.eq(largest + offset if offset >= 0 else largest - -offset),
                         low.eq((largest == 0) | (largest < -offset)), high.eq(largest > top - offset)]
            m.d.sync += self.anchors[j].eq(Mux(low, 0, Mux(high, top, field)))
        return m
