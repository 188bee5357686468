"""The bound anchor's column steps (golden.column's ``anchor=bound``): the window's anchor is
the column's bound, at least every finite nonzero product's exponent, so the window never
moves (``max(E, e, A)`` is ``A``): only the product shifts, no exponent compare decides
anything and there is no window shifter. ``BoundWindowAdder`` takes the anchor with the
window; ``LateBoundWindowAdder`` takes it with the product, and the window joins at the add."""

from __future__ import annotations

from amaranth.hdl import Const, Module, Signal

from .window_adder import WindowAdder, WindowAdderPlan, WindowAligner, amount_wire, saturated

__all__ = ["BoundWindowAdder", "LateBoundWindowAdderPlan", "LateBoundWindowAdder", "bound_gap"]


def bound_gap(m: Module, anchor, b, exp_bits: int, bits: int):
    """The product's shift amount below a bound anchor: the gap is never negative, so it has
    no sign bit, and a zero or special product's gap is moot (its significand is masked),
    so its exponent goes into the subtract unmasked (a mask is two LUT levels on the
    element's slowest path)."""
    gap_p = Signal(exp_bits)
    m.d.comb += gap_p.eq(anchor - b.exponent)
    larger = Const(0, 1)
    amount_p = amount_wire(bits)
    m.d.comb += amount_p.eq(saturated(gap_p, bits) & (~larger).replicate(bits))
    return amount_p


class BoundWindowAdder(WindowAligner):
    """``a + b`` with ``a.exp`` the column's bound anchor (the MXU sets it at the column's
    top), an exact product ``b``; the window registered beside the product's alignment (a
    column with normalisation points, whose fresh windows may sit above the bound)."""

    def _compare(self, m, a, b, ordinary):
        p_bits, s_bits = self._amount_bits()
        return bound_gap(m, a.exp, b, self.acc_fmt.exp_bits, p_bits), Const(0, s_bits), a.exp, ([], [])


class LateBoundWindowAdderPlan(WindowAdderPlan):
    """``LateBoundWindowAdder``'s parameters (keyword-only, as ``WindowAdder``'s) and pipeline."""

    late_sum = True

    def __init__(self, **params):
        super().__init__(**params, anchor_port=True)

    @property
    def sum_wait(self) -> int:
        """Cycles from the product and ``anchor`` to the window ``a``: the registers before
        the add."""
        count = self.cut_registers
        return sum(count[name] for name in ("input", "compared", "align_hi", "aligned"))


class LateBoundWindowAdder(LateBoundWindowAdderPlan, WindowAdder):
    """``a + b`` with the bound anchor on its own port ``anchor``, with the product ``b``:
    the product is aligned before the window ``a`` comes, ``sum_wait`` cycles after it, so
    in an array the partial sum spends only the add's stages in each element. ``a.exp`` is
    not read; ``result.exp`` is the anchor.

    Ports: as ``WindowAdder``'s, and in ``anchor`` (``acc_fmt``'s exponent field).
    """

    def elaborate(self, platform):
        m = Module()
        cut = self._stages.cut
        v = cut(m, "input", b=self.b, anchor=self.anchor, valid=self.valid_in)
        b = self._term_layout(v["b"])
        zero, inf, nan = self._classes(b)
        ordinary = ~(zero | inf | nan)
        p_bits, s_bits = self._amount_bits()
        amount_p = bound_gap(m, v["anchor"], b, self.acc_fmt.exp_bits, p_bits)
        term_class = {"t_nan": nan, "t_inf": inf, "t_sign": b.sign}
        v = cut(m, "compared", amount_p=amount_p, amount_s=Const(0, s_bits), exp=v["anchor"],
                **self._significand(b, ordinary), **term_class, valid=v["valid"])
        side = {k: v[k] for k in (*term_class, "negative", "valid", "exp")}
        term, lost_p = self._align_hi(v, p_bits)
        v = cut(m, "align_hi", term=term, lost_p=lost_p, amount_p=v["amount_p"], amount_s=v["amount_s"], **side)
        side = {k: v[k] for k in side}
        term, lost_p = self._align_lo(v, p_bits)
        v = cut(m, "aligned", term=term, lost_p=lost_p, **side)
        side = {k: v[k] for k in side if k not in term_class}
        # The window joins: no shift (the anchor stays), its specials meet the product's.
        a = self.layout(self.a)
        side.update(self._specials(a, {k: v[k] for k in term_class}))
        term, total, dropped, carry = self._truncated(v["term"], a.sum, v["lost_p"], Const(0, 1), a.dropped,
                                                      side["negative"])
        self._add(m, term, total, dropped, carry, side)
        return m

