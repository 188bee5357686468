"""The column sum's step, ``window + term -> window`` (golden.column): what every window
adder shares (``WindowAdder``) and the running anchor's (``RunningWindowAdder``). The bound
anchor's two datapaths are in bound_adder.py."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import data

from golden.formats import BF16, FP32

from ...float import FloatLayout
from ...params import choice_param
from ...pipeline import Delay
from ...product import raw_product_layout
from ...shift import halves, shift_steps
from ...unit import ArithmeticUnit, UnitPlan
from .window import window_params

__all__ = ["WindowAdderPlan", "WindowAdder", "WindowAligner", "RunningWindowAdderPlan", "RunningWindowAdder", "TERMS", "saturated", "amount_wire"]

#: What a ``RunningWindowAdder`` adds: an exact product (``raw_product_layout``) or an
#: ``acc_fmt`` encoding (a normalisation point's rounded sum, the first term of a fresh window).
TERMS = ("product", "rounded")


def saturated(gap, bits: int):
    """A shift amount of ``bits`` bits from the exponent difference ``gap``, saturated by an
    OR of its upper bits rather than compared: a shift by ``2**bits - 1`` (at least the
    value's width) empties the value as well as any larger one."""
    return gap[:bits] | gap[bits:].any().replicate(bits)


def amount_wire(bits: int) -> Signal:
    """A shift amount's wire, under Amaranth's name for an unnamed signal: a name of its own
    would rename it in the generated Verilog of every published design."""
    return Signal(bits, name="$signal")


class WindowAdderPlan(UnitPlan):
    """A window adder's parameters (keyword-only, as ``WindowAdder``'s; ``anchor_port``: the
    anchor on a port of its own) and pipeline: ``BoundWindowAdder``'s."""

    #: What ``b`` is (``TERMS``).
    term = "product"
    #: Whether the window joins at the add, after the term (``LateBoundWindowAdder``).
    late_sum = False
    #: Bits of the term's frame (``_term_width``) above the window's top: zero once the
    #: term is aligned (``ExactWindowAdder``'s product, whose MSB weighs 2).
    _term_above = 0

    def __init__(self, *, in_fmt=BF16, acc_fmt=FP32, accumulation=None, terms=1, stages=0, anchor_port=False):
        self.in_fmt, self.acc_fmt, self.accumulation, self.terms, self.layout = window_params(
            in_fmt, acc_fmt, accumulation, terms)
        self.anchor_port = anchor_port
        # With the anchor on its own port a register at the outputs is a cycle per row of
        # the column, one at the inputs (before the add) a cycle in all: the inputs take the
        # first spare one.
        super().__init__(rand_bits=None, stages=stages, cuts=self._cuts(), reset_less=True, inputs_first=anchor_port)

    @property
    def sum_wait(self) -> int:
        """Cycles from the term to the window ``a``: 0 (they come together)."""
        return 0

    @property
    def _term_layout(self) -> data.StructLayout:
        if self.term == "product":
            return raw_product_layout(self.in_fmt, self.acc_fmt)
        return FloatLayout(self.acc_fmt)

    @property
    def _term_width(self) -> int:
        """The term's significand placed at the window's top, with the bits that hang below
        the window (a rounded term wider than it)."""
        precision = 2 * self.in_fmt.precision if self.term == "product" else self.acc_fmt.precision
        return max(self.accumulation.window, precision)

    @property
    def _sum_width(self) -> int:
        return self.layout["sum"].shape.width

    def _amount_bits(self) -> tuple[int, int]:
        """Shift amount widths: ``k`` with ``2**k - 1`` at least the term's width and the
        sum's width (a shift by that much leaves nothing, or only sign bits)."""
        return self._term_width.bit_length(), self._sum_width.bit_length()

    def _shift_bits(self) -> int:
        """The widest shift amount: the term's (only the term shifts)."""
        return self._amount_bits()[0]

    def _cuts(self):
        e, w, n = self.acc_fmt.exp_bits, self._sum_width, self._shift_bits()
        decode = self.term == "rounded"                  # an encoding's class: a LUT level
        return [("input", Delay()),
                ("compared", Delay(1 + decode, e + 1)),  # both exponent differences, saturated
                ("align_hi", Delay((n + 1) // 2 + 1)),  # upper shift steps, their sticky ORs
                ("aligned", Delay(n // 2 + 1)),          # lower steps, the sticky ORs
                ("summed", Delay(1, w)),                 # one two's-complement add
                ("output", Delay(1))]

    def _result_shape(self):
        return self.layout


class WindowAdder(WindowAdderPlan, ArithmeticUnit):
    """``a + b``: a column's window ``a`` (``window_layout``) plus a term ``b``, bit for bit
    ``golden.column``'s step; what the datapaths share. The term's significand is placed at
    the window's top, shifted right by its exponent's gap below the anchor (bits below the
    window truncated toward minus infinity, or with ``sticky`` into the lowest bit) and
    added in two's complement; specials travel beside the window. No normaliser, no
    rounder: ``WindowRounder`` rounds the column's sum.

    Parameters (keyword-only)
    -------------------------
    in_fmt, acc_fmt : FloatFormat or str
        The products' operand format and the format of their exponent (and of the sum).
    accumulation : ColumnAccumulator
        Window width and the sticky option (``window.check_window``).
    terms : int
        Most terms (products) one window sums, 1..8192: sets the headroom.
    stages : int
        Register stages, 0..``max_stages``, at the cut points: exponents compared, the two
        alignment shifters' halves, the sum, the output, the input.

    Ports: in ``a`` (window), ``b`` (raw product or encoding), ``valid_in``; out ``result``
    (window), ``flags`` (invalid where inf - inf met), ``valid_out``.
    """

    def _operands(self):
        operands = {"a": self.layout, "b": self._term_layout}
        if self.anchor_port:
            operands["anchor"] = self.acc_fmt.exp_bits
        return operands

    def _classes(self, b):
        """The term's ``(zero, inf, nan)``."""
        return b.zero, b.inf, b.nan

    def _significand(self, b, ordinary):
        """The term's significand and sign as the compare cut carries them (zero unless
        ``ordinary``)."""
        return {"sig": Cat(b.mantissa, 1) & ordinary.replicate(len(b.mantissa) + 1), "negative": b.sign & ordinary}

    def _align_hi(self, v, p_bits: int):
        """The term's significand at the window's top, then the upper half of its shift
        down by its gap: ``(term, lost)``."""
        term = Cat(Const(0, self._term_width - len(v["sig"])), v["sig"])
        return shift_steps(term, v["amount_p"], halves(p_bits)[0], sticky=Const(0, 1))

    def _align_lo(self, v, p_bits: int):
        """The lower half of the term's shift; bits of a term wider than the window that
        stay below it are truncated as the shift's are: ``(term, lost)``."""
        term, lost_p = shift_steps(v["term"], v["amount_p"], halves(p_bits)[1], sticky=v["lost_p"])
        below = self._term_width - self._term_above - self.accumulation.window
        if below:
            term, lost_p = term[below:], lost_p | term[:below].any()
        if self._term_above:
            term = term[:-self._term_above]
        return term, lost_p

    def _truncated(self, term, total, lost_p, lost_s, dropped, negative):
        """What the add takes once the shifts' losses are known: ``(term, total, dropped,
        carry)``."""
        if self.accumulation.sticky:                # round to odd: what was lost sets the lowest bit
            term, total = term | lost_p, total | lost_s
        dropped = dropped | lost_p | lost_s
        # floor(-t) = ~t + 1 - lost; with sticky, -(t | lost) = ~(t | lost) + 1
        carry = negative & (Const(1, 1) if self.accumulation.sticky else ~lost_p)
        return term, total, dropped, carry

    def _add(self, m: Module, term, total, dropped, carry, side) -> None:
        """The two's-complement add, the result window and the output cut, to the ports."""
        cut = self._stages.cut
        summed = Signal(signed(self._sum_width))
        negative = side["negative"].replicate(self._sum_width)
        m.d.comb += summed.eq(total + (Cat(term, Const(0, self._sum_width - self.accumulation.window)) ^ negative)
                              + carry)
        v = cut(m, "summed", sum=summed, dropped=dropped, **side)
        result = Signal(self.layout)
        m.d.comb += [result.sum.eq(v["sum"]), result.exp.eq(v["exp"]), result.dropped.eq(v["dropped"]),
                     result.nan.eq(v["nan"]), result.inf.eq(v["inf"]), result.inf_sign.eq(v["inf_sign"])]
        out = cut(m, "output", result=result, flags=Cat(Const(0, 4), v["invalid"]), valid=v["valid"])
        m.d.comb += [self.result.eq(out["result"]), self.flags.eq(out["flags"]), self.valid_out.eq(out["valid"])]

    @staticmethod
    def _specials(a, term) -> dict:
        """The window's specials after adding a term of class ``t_nan``, ``t_inf``, sign
        ``t_sign``: NaN, infinity and its sign, and ``invalid`` where inf - inf met."""
        inf_minus_inf = a.inf & ~a.nan & term["t_inf"] & (a.inf_sign != term["t_sign"])
        return {"nan": a.nan | term["t_nan"] | inf_minus_inf, "inf": a.inf | term["t_inf"],
                "inf_sign": Mux(term["t_inf"] & ~a.inf, term["t_sign"], a.inf_sign), "invalid": inf_minus_inf}


class WindowAligner(WindowAdder):
    """A window adder whose window comes with the term: the compare (``_compare``, each
    anchor's own) decides both shifts, the window's and the term's, which run side by side
    before the add."""

    def _compare(self, m: Module, a, b, ordinary):
        """``(amount_p, amount_s, exp, sum_steps)``: the term's and the window's shift
        amounts, the anchor after the add, and the window shifter's steps (upper half, lower
        half)."""
        raise NotImplementedError

    def elaborate(self, platform):
        m = Module()
        cut = self._stages.cut
        v = cut(m, "input", a=self.a, b=self.b, valid=self.valid_in)
        a, b = self.layout(v["a"]), self._term_layout(v["b"])
        zero, inf, nan = self._classes(b)
        ordinary = ~(zero | inf | nan)
        p_bits = self._amount_bits()[0]
        amount_p, amount_s, exp, (hi_s, lo_s) = self._compare(m, a, b, ordinary)
        classes = self._specials(a, {"t_nan": nan, "t_inf": inf, "t_sign": b.sign})
        v = cut(m, "compared", amount_p=amount_p, amount_s=amount_s, exp=exp, sum=a.sum, dropped=a.dropped,
                **self._significand(b, ordinary), **classes, valid=v["valid"])
        side = {k: v[k] for k in (*classes, "negative", "valid", "exp")}
        term, lost_p = self._align_hi(v, p_bits)
        total, lost_s = shift_steps(v["sum"], v["amount_s"], hi_s, sticky=Const(0, 1))
        v = cut(m, "align_hi", term=term, lost_p=lost_p, amount_p=v["amount_p"], total=total, lost_s=lost_s,
                amount_s=v["amount_s"], dropped=v["dropped"], **side)
        side = {k: v[k] for k in side}
        term, lost_p = self._align_lo(v, p_bits)
        total, lost_s = shift_steps(v["total"], v["amount_s"], lo_s, sticky=v["lost_s"])
        term, total, dropped, carry = self._truncated(term, total, lost_p, lost_s, v["dropped"], side["negative"])
        v = cut(m, "aligned", term=term, total=total, dropped=dropped, carry=carry, **side)
        side = {k: v[k] for k in side}
        self._add(m, v["term"], v["total"], v["dropped"], v["carry"], side)
        return m


class RunningWindowAdderPlan(WindowAdderPlan):
    """``RunningWindowAdder``'s parameters (keyword-only, as the unit's) and pipeline."""

    def __init__(self, *, term="product", **params):
        self.term = choice_param("term", term, TERMS)
        super().__init__(**params)

    def _shift_bits(self) -> int:
        return max(self._amount_bits())


class RunningWindowAdder(RunningWindowAdderPlan, WindowAligner):
    """The running anchor's step: the anchor moves to the term's exponent when that is
    larger (the window shifted right by the difference, truncating toward minus infinity),
    else the term is shifted right into the window; one two's-complement add.

    Besides the ``WindowAdder`` parameters, ``term``: ``product`` (default, an exact product,
    ``raw_product_layout``) or ``rounded`` (an ``acc_fmt`` encoding: a normalisation point's
    rounded sum, read with DAZ; its significand may be wider than the window, whose bits
    below are truncated). A rounded term always compares, whatever the column's anchor: a
    rounded sum of products can exceed a bound anchor (golden.column's ``max(E, e, A)``).
    """

    def _classes(self, b):
        return (b.zero, b.inf, b.nan) if self.term == "product" else (b.is_zero_daz, b.is_inf, b.is_nan)

    def _compare(self, m, a, b, ordinary):
        fe = self.acc_fmt.exp_bits
        p_bits, s_bits = self._amount_bits()
        # Both exponent differences at once: the one that is not negative is the shift. A
        # term that is zero or special has no exponent: it never moves the anchor.
        exp_p = b.exponent & ordinary.replicate(fe)
        gap_p, gap_s = Signal(fe + 1), Signal(fe + 1)
        m.d.comb += [gap_p.eq(a.exp - exp_p), gap_s.eq(exp_p - a.exp)]
        larger = gap_p[-1]                                  # the term's exponent is the larger
        amount_p, amount_s = amount_wire(p_bits), amount_wire(s_bits)
        m.d.comb += amount_p.eq(saturated(gap_p, p_bits) & (~larger).replicate(p_bits))
        m.d.comb += amount_s.eq(saturated(gap_s, s_bits) & larger.replicate(s_bits))
        return amount_p, amount_s, Mux(larger, exp_p, a.exp), halves(s_bits)
