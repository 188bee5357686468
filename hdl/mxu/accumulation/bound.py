"""``BoundAnchor``: each column's window anchored before the column starts, at the row's
largest ``x`` exponent plus the tile column's largest ``w`` exponent (golden.column's
``anchor=bound``): no element compares; the anchor logic sits at the top of the array."""

from __future__ import annotations

from amaranth.hdl import Const, Mux, Signal, signed
from amaranth.lib.wiring import In, Out


from ...pipeline import delayed, select
from ...rounder import signed_width
from .bound_adder import BoundWindowAdder, LateBoundWindowAdder
from .window import exponent_field
from .windowed import WindowAccumulation, WindowColumn

__all__ = ["BoundAnchor", "BoundColumn"]


def _anchor_offset(column) -> int:
    """What the bound anchor adds to the two exponent fields: ``1 + acc bias - 2 * in bias``."""
    return 1 + column.acc_fmt.bias - 2 * column.in_fmt.bias


def _bound_shape(column):
    """A tile column's largest exponent field plus the anchor's offset (signed)."""
    offset = _anchor_offset(column)
    return signed(signed_width(offset, column.in_fmt.exp_max_field + offset))


class BoundAnchor(WindowAccumulation):
    """The window sum with a bound anchor. Without normalisation points the anchor comes
    with each element's product and travels down beside the partial sums
    (``LateBoundWindowAdder``: the partial sum joins at the add); with them it is the
    window's own (``BoundWindowAdder``), since a point's fresh window may sit above it."""

    @property
    def late_sum(self) -> bool:
        return not self.window.group

    @property
    def adder_class(self) -> type:
        return LateBoundWindowAdder if self.late_sum else BoundWindowAdder

    def element_ports(self, in_fmt, acc_fmt):
        if not self.late_sum:
            return {}
        return {"anchor_in": In(acc_fmt.exp_bits), "anchor_out": Out(acc_fmt.exp_bits)}

    def element_outputs(self, m, pe):
        if not self.late_sum:
            return {}
        m.d.comb += pe.add.anchor.eq(pe.anchor_in)
        # The element below takes its product psum_latency cycles after this one.
        return {"anchor_out": delayed(m, pe.anchor_in, pe.psum_latency - 1, "anchor_d", pe.fused)}

    def column(self, **array) -> "BoundColumn":
        return BoundColumn(self, **array)


class BoundColumn(WindowColumn):
    """A bound anchor planned for one array: each tile column's largest exponent kept as the
    tile loads (``tile_state``), each row's largest exponent found by a compare tree as the
    row enters, and their sum the window at each column's top (``tops``)."""

    @property
    def anchor_wait(self) -> int:
        """Cycles the rows wait before the array for the row maximum: the maximum takes a
        register per compare level, and of its ``row_max_levels`` levels ``max(mul_stages,
        1) - 1`` fit while the product is computed."""
        return max(0, self.row_max_levels - (max(self.mul_stages, 1) - 1))

    @property
    def row_max_levels(self) -> int:
        """Compare levels of the tree that finds the row's largest exponent."""
        return (self.rows - 1).bit_length()

    def start(self, m, pe):
        """Nothing: the top window comes from the anchor (``join_top``)."""

    def tile_state(self, m, w_writes, w_row):
        """Per weight buffer and column, the largest exponent field of the tile's column
        (``exponent_field``), kept while the tile is loaded into the shadow buffer:
        ``bounds[buf][j]``.

        Each column's maximum follows its first weight-write register (``w_writes[0][j]``,
        the row's write a cycle after it is accepted) with the row's exponent field
        registered beside it, so the compare starts at flip-flops by the column rather than
        at the ``w`` port, whose route to each column leaves no room for a compare in the
        same cycle. The bound then lands when the row's weights land in PE row 0, before a
        swap row can read it there."""
        # Registers one bit narrower than the anchor's offset sum (their upper bits zero):
        # that sum is then one bit wider than its operand, which Verilator's -Wall accepts
        # (column_anchors); synthesis drops the constant bits.
        width = _bound_shape(self).width - 1
        bounds = [[Signal(width, name=f"tile_bound{b}_{j}") for j in range(self.cols)] for b in (0, 1)]
        for j, (write, value) in enumerate(zip(w_writes[0], w_row)):
            e = Signal(width, name=f"w_exp{j}")
            m.d.sync += e.eq(exponent_field(self.in_fmt, value))
            for b in (0, 1):
                with m.If(write.we & (write.buf == b)):     # buffer b is the shadow
                    m.d.sync += bounds[b][j].eq(Mux((write.row == 0) | (e > bounds[b][j]), e, bounds[b][j]))
        return bounds

    def tops(self, m, x_row, x_sel, pes, tile_bounds):
        """With a bound anchor, each column's window at the top of the array: ``exp`` is
        the anchor of golden.column's ``bound``: the row's largest exponent field plus the
        tile column's (``tile_bounds``, read when the row reaches the column, as its weights
        are), minus twice the input bias, plus one and ``acc_fmt``'s bias, clipped. The window
        arrives with the element's product, ``mul_stages`` cycles after ``x`` enters.

        The row's maximum is a tree over ``x_row`` as it is accepted (before the entry
        register, a cycle ahead of the elements), a register after each compare level (two
        levels in one cycle are longer than the element's slowest path): the levels beyond
        the multiplier's stages are ``anchor_wait``. Every column has a register of its own
        after the tree's root: the root sits by the rows, a column's anchor by its first
        element, and the route between them, across the array, takes a cycle of its own
        (with the anchor's sum, offset and clamp after it, one cycle is too short). The
        offset joins the tile's bound long before the row's maximum arrives: one add after
        the root. Returns one psum input per column."""
        fi, fa = self.in_fmt, self.acc_fmt
        level = [Signal(fi.exp_bits, name=f"row_exp{k}") for k in range(self.rows)]
        m.d.comb += [e.eq(exponent_field(fi, x)) for e, x in zip(level, x_row)]
        anchored = max(self.mul_stages, 1) - 1      # cycles after x enters to the anchor's add
        for d in range(1, self.row_max_levels + 1):
            level = [Mux(a > b, a, b) for a, b in zip(level[0::2], level[1::2])] + level[len(level) & ~1:]
            regs = [Signal(fi.exp_bits, name=f"row_max{d}_{i}") for i in range(len(level))]
            m.d.sync += [r.eq(v) for r, v in zip(regs, level)]
            level = regs
        row_max = level[0]
        offset = _anchor_offset(self)
        anchors = []
        for j in range(self.cols):
            field = Mux(pes[0][j].sel_in, tile_bounds[1][j], tile_bounds[0][j])
            bound = Signal(_bound_shape(self), name=f"col_bound{j}")
            # A negative offset as the subtraction of its magnitude: an unsigned operand plus a
            # signed constant would be two bits wider than the operand.
            m.d.comb += bound.eq(field + offset if offset >= 0 else field - -offset)
            bound = delayed(m, bound, anchored, f"col_bound{j}_")
            # row_max is levels - anchor_wait - 1 cycles behind the entry: delay it to column j's add.
            row_max_j = delayed(m, row_max, j + anchored + self.anchor_wait + 1 - self.row_max_levels,
                                f"row_bound{j}_")
            raw = Signal(signed(signed_width(offset, 2 * fi.exp_max_field + offset)), name=f"anchor_raw{j}")
            m.d.comb += raw.eq(row_max_j + bound)
            top = fa.exp_max_field - 1
            anchor = select(raw[-1], 0, select(raw > top, Const(top, fa.exp_bits), raw[:fa.exp_bits]))
            window = Signal(pes[0][j].psum_in.shape(), name=f"top_window{j}")
            m.d.comb += window.exp.eq(anchor)
            if self.mul_stages:
                r = Signal(pes[0][j].psum_in.shape(), name=f"top_window{j}_r")
                m.d.sync += r.eq(window)
                window = r
            anchors.append(window)
        return anchors

    def join_top(self, m, column, top):
        if self.accumulation.late_sum:
            # The anchor comes with the product and travels down beside the partial sums;
            # the first element adds its product to the empty window.
            m.d.comb += [column[0].anchor_in.eq(top.exp), column[0].psum_in.eq(0),
                         *(below.anchor_in.eq(above.anchor_out) for above, below in zip(column, column[1:]))]
        else:
            m.d.comb += column[0].psum_in.eq(top)
