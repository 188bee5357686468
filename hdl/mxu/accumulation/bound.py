"""``BoundAnchor``: each column's window anchored before the column starts, at the row's
largest ``x`` exponent plus the tile column's largest ``w`` exponent (golden.column's
``anchor=bound``): no element compares; the anchor logic sits at the top of the array."""

from __future__ import annotations

from amaranth.lib.wiring import In, Out

from ...pipeline import delayed
from .bound_adder import BoundWindowAdder, LateBoundWindowAdder
from .bound_windows import BoundWindows
from .windowed import WindowAccumulation, WindowColumn

__all__ = ["BoundAnchor", "BoundColumn"]


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
        """The ``BoundWindows`` unit, fed the weight rows as the tile loads (``w_writes[0]``:
        row 0's write registers)."""
        m.submodules.bound_windows = windows = BoundWindows(plan=self)
        m.d.comb += [*(windows.w_write[j].eq(write) for j, write in enumerate(w_writes[0])),
                     *(windows.w_row[j].eq(value) for j, value in enumerate(w_row))]
        return windows

    def tops(self, m, x_row, x_sel, pes, windows):
        """Each column's window from the ``BoundWindows`` unit (``tile_state``), which takes
        the accepted row and each column's buffer tag at its first element."""
        m.d.comb += [*(windows.x[k].eq(x) for k, x in enumerate(x_row)),
                     *(windows.sel[j].eq(pes[0][j].sel_in) for j in range(self.cols))]
        return list(windows.windows)

    def join_top(self, m, column, top):
        if self.accumulation.late_sum:
            # The anchor comes with the product and travels down beside the partial sums;
            # the first element adds its product to the empty window.
            m.d.comb += [column[0].anchor_in.eq(top.exp), column[0].psum_in.eq(0),
                         *(below.anchor_in.eq(above.anchor_out) for above, below in zip(column, column[1:]))]
        else:
            m.d.comb += column[0].psum_in.eq(top)
