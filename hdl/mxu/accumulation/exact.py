"""``ExactAnchor``: each column's window anchored at the largest exponent sum of the products
it will sum (golden.column's ``anchor=exact``), computed before the column starts by an
``ExponentArray`` running ahead of the MXU's; the elements are the bound anchor's (the
anchor comes with the product, no compare)."""

from __future__ import annotations

from amaranth.hdl import Signal
from amaranth.lib.wiring import Out

from ...pipeline import delayed
from .bound import BoundAnchor, BoundColumn
from .exact_adder import ExactWindowAdder
from .exponent_array import ExponentArray, exponent_array_latency, weight_field, weight_fields_layout
from .window_product import WindowProduct

__all__ = ["ExactAnchor", "ExactColumn"]


class ExactAnchor(BoundAnchor):
    """The window sum with the exact anchor: the bound anchor's late-sum element with a
    product that is not normalised (``WindowProduct`` into ``ExactWindowAdder``: the anchor
    is at least every product's exponent, so the adder's shift places either form), the
    anchor from an ``ExponentArray``, which reads each element's weight fields (the
    element's ``w_fields``, straight from its weight registers). Built without
    normalisation points (each segment would need an anchor of its own)."""

    product_class = WindowProduct
    adder_class = ExactWindowAdder

    def check(self, in_fmt, acc_fmt, fused):
        super().check(in_fmt, acc_fmt, fused)
        if self.window.group:
            raise ValueError(f"accumulation {self.window}: the exact anchor is built without normalisation points "
                             "(g=0)")

    def element_ports(self, in_fmt, acc_fmt):
        return {**super().element_ports(in_fmt, acc_fmt), "w_fields": Out(weight_fields_layout(in_fmt))}

    def element_outputs(self, m, pe):
        m.d.comb += [pe.w_fields[b].eq(weight_field(pe.in_fmt, w)) for b, w in enumerate(pe.weights)]
        return super().element_outputs(m, pe)

    def column(self, **array) -> "ExactColumn":
        return ExactColumn(self, **array)


class ExactColumn(BoundColumn):
    """An exact anchor planned for one array: the ``ExponentArray`` takes each accepted row
    and reads the elements' weights; its anchors reach each column's top element with the
    row's product."""

    @property
    def anchor_wait(self) -> int:
        """Cycles the rows wait before the array for the exponent array, less the cycles
        their products take (``mul_stages``) and the entry register."""
        return max(0, exponent_array_latency(self.rows) - 1 - self.mul_stages)

    def tile_state(self, m, w_writes, w_row):
        """Nothing: the exponent array reads the elements' weight registers."""
        return None

    def tops(self, m, x_row, x_sel, pes, tile):
        m.submodules.exponent_array = exponents = ExponentArray(in_fmt=self.in_fmt, acc_fmt=self.acc_fmt,
                                                                rows=self.rows, cols=self.cols)
        m.d.comb += [exponents.sel.eq(x_sel), *(exponents.x[k].eq(x) for k, x in enumerate(x_row)),
                     *(exponents.weights[k * self.cols + j].eq(pe.w_fields)
                       for k, row in enumerate(pes) for j, pe in enumerate(row))]
        # The product of row 0 at column j: 1 + anchor_wait + j + mul_stages cycles after x.
        wait = 1 + self.anchor_wait + self.mul_stages - exponents.latency
        windows = []
        for j in range(self.cols):
            window = Signal(pes[0][j].psum_in.shape(), name=f"top_window{j}")
            m.d.comb += window.exp.eq(delayed(m, exponents.anchors[j], wait, f"exact_anchor{j}_"))
            windows.append(window)
        return windows
