"""``BoundWindows``: the bound anchor's logic at the top of the array: each tile column's
largest weight exponent, kept as the tile loads, and each row's largest activation exponent,
found as the row enters; their sum is every column's first window (golden.column's
``anchor=bound``)."""

from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Signal, signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from ...pipeline import delayed, select
from ...rounder import signed_width
from ..control import write_layout
from .window import exponent_field

__all__ = ["BoundWindows", "anchor_offset"]


def anchor_offset(in_fmt, acc_fmt) -> int:
    """What the bound anchor adds to the two exponent fields: ``1 + acc bias - 2 * in bias``."""
    return 1 + acc_fmt.bias - 2 * in_fmt.bias


class BoundWindows(wiring.Component):
    """Every column's first window with the bound anchor: the row's largest exponent field
    plus the tile column's, minus twice the input bias, plus one and ``acc_fmt``'s bias,
    clipped, in an otherwise empty window.

    Parameters (keyword-only)
    -------------------------
    plan : BoundColumn
        The bound anchor planned for the array (formats, ``rows``, ``cols``,
        ``mul_stages``, ``row_max_levels``, ``anchor_wait``, the element's ``psum_shape``).

    Ports: in ``w_write`` (per column, row 0's weight-write register), ``w_row`` (the ``w``
    row, a cycle before it reaches ``w_write``), ``x`` (the accepted row, before the entry
    register), ``sel`` (per column, the buffer tag at its first element); out ``windows``
    (per column, its first window, ``latency`` cycles after the row is accepted: with the
    top element's product).
    """

    def __init__(self, *, plan):
        self.plan = plan
        fi, n = plan.in_fmt, plan.cols
        super().__init__({"w_write": In(data.ArrayLayout(write_layout(plan.rows, fi), n)),
                          "w_row": In(data.ArrayLayout(fi.width, n)), "x": In(data.ArrayLayout(fi.width, plan.rows)),
                          "sel": In(data.ArrayLayout(1, n)),
                          "windows": Out(data.ArrayLayout(plan.element.psum_shape, n))})

    @property
    def latency(self) -> int:
        """Cycles from an accepted row to column 0's window: the entry register, the rows'
        wait and the product's stages."""
        return 1 + self.plan.anchor_wait + self.plan.mul_stages

    def _bound_shape(self):
        """A tile column's largest exponent field plus the anchor's offset (signed)."""
        offset = anchor_offset(self.plan.in_fmt, self.plan.acc_fmt)
        return signed(signed_width(offset, self.plan.in_fmt.exp_max_field + offset))

    def elaborate(self, platform):
        m = Module()
        row_max = self._row_max(m)
        bounds = self._tile_bounds(m)
        self._windows(m, row_max, bounds)
        return m

    def _tile_bounds(self, m):
        """Per weight buffer and column, the largest exponent field of the tile's column
        (``exponent_field``), kept while the tile is loaded into the shadow buffer:
        ``bounds[buf][j]``.

        Each column's maximum follows its first weight-write register (``w_write``, the
        row's write a cycle after it is accepted) with the row's exponent field registered
        beside it, so the compare starts at flip-flops by the column rather than at the
        ``w`` port, whose route to each column leaves no room for a compare in the same
        cycle. The bound then lands when the row's weights land in element row 0, before a
        swap row can read it there."""
        # Registers one bit narrower than the anchor's offset sum (their upper bits zero):
        # that sum is then one bit wider than its operand, which Verilator's -Wall accepts;
        # synthesis drops the constant bits.
        plan = self.plan
        width = self._bound_shape().width - 1
        bounds = [[Signal(width, name=f"tile_bound{b}_{j}") for j in range(plan.cols)] for b in (0, 1)]
        for j, (write, value) in enumerate(zip(self.w_write, self.w_row)):
            e = Signal(width, name=f"w_exp{j}")
            m.d.sync += e.eq(exponent_field(plan.in_fmt, value))
            for b in (0, 1):
                with m.If(write.we & (write.buf == b)):     # buffer b is the shadow
                    m.d.sync += bounds[b][j].eq(Mux((write.row == 0) | (e > bounds[b][j]), e, bounds[b][j]))
        return bounds

    def _row_max(self, m):
        """The row's largest exponent field: a tree over ``x`` as it is accepted (before the
        entry register, a cycle ahead of the elements), a register after each compare level
        (two levels in one cycle are longer than the element's slowest path); the levels
        beyond the multiplier's stages are ``anchor_wait``."""
        fi = self.plan.in_fmt
        level = [Signal(fi.exp_bits, name=f"row_exp{k}") for k in range(self.plan.rows)]
        m.d.comb += [e.eq(exponent_field(fi, x)) for e, x in zip(level, self.x)]
        for d in range(1, self.plan.row_max_levels + 1):
            level = [Mux(a > b, a, b) for a, b in zip(level[0::2], level[1::2])] + level[len(level) & ~1:]
            regs = [Signal(fi.exp_bits, name=f"row_max{d}_{i}") for i in range(len(level))]
            m.d.sync += [r.eq(v) for r, v in zip(regs, level)]
            level = regs
        return level[0]

    def _windows(self, m, row_max, tile_bounds):
        """Each column's window: the tile column's bound (read when the row reaches the
        column, as its weights are) plus the row's maximum, arriving with the element's
        product, ``mul_stages`` cycles after ``x`` enters.

        Every column has a register of its own after the tree's root: the root sits by the
        rows, a column's anchor by its first element, and the route between them, across the
        array, takes a cycle of its own (with the anchor's sum, offset and clamp after it,
        one cycle is too short). The offset joins the tile's bound long before the row's
        maximum arrives: one add after the root."""
        plan = self.plan
        fi, fa = plan.in_fmt, plan.acc_fmt
        anchored = max(plan.mul_stages, 1) - 1      # cycles after x enters to the anchor's add
        offset = anchor_offset(fi, fa)
        for j in range(plan.cols):
            field = Mux(self.sel[j], tile_bounds[1][j], tile_bounds[0][j])
            bound = Signal(self._bound_shape(), name=f"col_bound{j}")
            # A negative offset as the subtraction of its magnitude: an unsigned operand plus a
            # signed constant would be two bits wider than the operand.
            m.d.comb += bound.eq(field + offset if offset >= 0 else field - -offset)
            bound = delayed(m, bound, anchored, f"col_bound{j}_")
            # row_max is levels - anchor_wait - 1 cycles behind the entry: delay it to column j's add.
            row_max_j = delayed(m, row_max, j + anchored + plan.anchor_wait + 1 - plan.row_max_levels,
                                f"row_bound{j}_")
            raw = Signal(signed(signed_width(offset, 2 * fi.exp_max_field + offset)), name=f"anchor_raw{j}")
            m.d.comb += raw.eq(row_max_j + bound)
            top = fa.exp_max_field - 1
            anchor = select(raw[-1], 0, select(raw > top, Const(top, fa.exp_bits), raw[:fa.exp_bits]))
            window = Signal(plan.element.psum_shape, name=f"top_window{j}")
            m.d.comb += window.exp.eq(anchor)
            if plan.mul_stages:
                r = Signal(plan.element.psum_shape, name=f"top_window{j}_r")
                m.d.sync += r.eq(window)
                window = r
            m.d.comb += self.windows[j].eq(window)
