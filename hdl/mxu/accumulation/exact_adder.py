"""``ExactWindowAdder``: the exact anchor's element step, the late bound anchor's datapath
with ``WindowProduct``'s product (not normalised) as its term."""

from __future__ import annotations

from .bound_adder import LateBoundWindowAdder, LateBoundWindowAdderPlan
from .window_product import window_product_layout

__all__ = ["ExactWindowAdder", "ExactWindowAdderPlan"]


class ExactWindowAdderPlan(LateBoundWindowAdderPlan):
    """``ExactWindowAdder``'s parameters (keyword-only, as ``LateBoundWindowAdder``'s) and
    pipeline."""

    _term_above = 1

    @property
    def _term_layout(self):
        return window_product_layout(self.in_fmt, self.acc_fmt)

    @property
    def _term_width(self) -> int:
        """The frame of ``LateBoundWindowAdder``'s term and one bit above the window's top:
        the product's MSB, weight 2, at the exponent of its weight-1 bit."""
        return super()._term_width + 1


class ExactWindowAdder(ExactWindowAdderPlan, LateBoundWindowAdder):
    """``LateBoundWindowAdder`` for ``WindowProduct``'s term: its significand product sits
    at the frame's top, one bit above the window, and shifts down by the gap from the anchor
    to its exponent. That bit is always clear once shifted: a product whose significand
    reaches 2 has an exponent below the anchor's (the exact anchor is at least every
    product's exponent, and the exponent here is that one less one), and one below 2 has
    it clear already. The window receives the bits the normalised product would give it,
    so the sums are ``LateBoundWindowAdder``'s.

    Ports: as ``LateBoundWindowAdder``'s; ``b`` is ``window_product_layout``.
    """

    def _significand(self, b, ordinary):
        return {"sig": b.sig & ordinary.replicate(len(b.sig)), "negative": b.sign & ordinary}
