"""``ExactAnchor``: each column's window anchored at the largest exponent sum of the products
it will sum (golden.column's ``anchor=exact``), computed before the column starts by an
``ExponentArray`` running ahead of the MXU's; the elements are the bound anchor's (the
anchor comes with the product, no compare)."""

from __future__ import annotations

from amaranth.hdl import Signal

from ...pipeline import delayed
from .bound import BoundAnchor, BoundColumn
from .exponent_array import ExponentArray

__all__ = ["ExactAnchor", "ExactColumn"]


class ExactAnchor(BoundAnchor):
    """The window sum with the exact anchor: the bound anchor's elements
    (``LateBoundWindowAdder``), the anchor from an ``ExponentArray``. Built without
    normalisation points (each segment would need an anchor of its own)."""

    def check(self, in_fmt, acc_fmt, fused):
        super().check(in_fmt, acc_fmt, fused)
        if self.window.group:
            raise ValueError(f"accumulator {self.window}: the exact anchor is built without normalisation points "
                             "(g=0)")

    def column(self, **array) -> "ExactColumn":
        return ExactColumn(self, **array)


class ExactColumn(BoundColumn):
    """An exact anchor planned for one array: the ``ExponentArray`` takes each accepted row
    and the elements' weight writes; its anchors reach each column's top element with the
    row's product."""

    @property
    def anchor_wait(self) -> int:
        """Cycles the rows wait before the array for the exponent array, less the cycles
        their products take (``mul_stages``) and the entry register."""
        return max(0, self.rows + 2 - self.mul_stages)

    def tile_state(self, m, w_writes, w_row):
        """The weight writes themselves: the exponent array keeps its own fields."""
        return w_writes

    def tops(self, m, x_row, x_sel, pes, w_writes):
        m.submodules.exponent_array = exponents = ExponentArray(in_fmt=self.in_fmt, acc_fmt=self.acc_fmt,
                                                                rows=self.rows, cols=self.cols)
        m.d.comb += [exponents.sel.eq(x_sel), *(exponents.x[k].eq(x) for k, x in enumerate(x_row))]
        for k in range(self.rows):
            for j in range(self.cols):
                write, cell = w_writes[k][j], exponents.writes[k * self.cols + j]
                m.d.comb += [cell.we.eq(write.we & (write.row == k)), cell.buf.eq(write.buf),
                             cell.data.eq(write.data)]
        # The product of row 0 at column j: 1 + anchor_wait + j + mul_stages cycles after x.
        wait = 1 + self.anchor_wait + self.mul_stages - exponents.latency
        windows = []
        for j in range(self.cols):
            window = Signal(pes[0][j].psum_in.shape(), name=f"top_window{j}")
            m.d.comb += window.exp.eq(delayed(m, exponents.anchors[j], wait, f"exact_anchor{j}_"))
            windows.append(window)
        return windows
