"""``WindowAdder``: a column accumulator's step, ``window + term -> window`` (the term an
exact product, or at a normalisation point the rounded partial sum)."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data

from golden.column import MAX_TERMS, ColumnAccumulator, headroom
from golden.formats import BF16, FP32, FloatFormat

from ...adder import _halves, _shift_steps
from ...float import FloatLayout
from ...params import check_exact_products, choice_param, format_param, int_param
from ...pipeline import Delay
from ...product import raw_product_layout
from ...unit import ArithmeticUnit

__all__ = ["WindowAdder", "window_layout", "window_params", "check_accumulator", "TERMS"]

#: What a ``WindowAdder`` adds: an exact product (``raw_product_layout``) or an ``acc_fmt``
#: encoding (a normalisation point's rounded sum, the first term of a fresh window).
TERMS = ("product", "rounded")


def window_layout(acc_fmt: FloatFormat, acc: ColumnAccumulator, terms: int) -> data.StructLayout:
    """A column's partial sum as it travels down the array (golden.column): ``sum`` (two's
    complement window units, ``window + headroom(terms)`` bits and a sign), ``exp`` (the
    anchor: the biased exponent of the window's top bit, 0 while empty), ``dropped`` (a
    truncation lost nonzero bits), and the specials ``nan``, ``inf``, ``inf_sign``. All
    zeros is the empty window."""
    return data.StructLayout({"sum": signed(acc.window + headroom(terms) + 1), "exp": unsigned(acc_fmt.exp_bits),
                              "dropped": 1, "nan": 1, "inf": 1, "inf_sign": 1})


def check_accumulator(acc, in_fmt: FloatFormat, acc_fmt: FloatFormat) -> ColumnAccumulator:
    """``acc`` if the hardware builds it for these formats, else a ValueError naming the
    parameter."""
    if not isinstance(acc, ColumnAccumulator):
        raise TypeError(f"accumulator must be a golden.column.ColumnAccumulator, not {acc!r}")
    acc.check(acc_fmt, 2 * in_fmt.precision)
    return acc


def window_params(in_fmt, acc_fmt, accumulator, terms):
    """A column unit's checked parameters: ``(in_fmt, acc_fmt, accumulator, terms, layout)``
    (``terms``: 1..``golden.column.MAX_TERMS``; the window's ``window_layout``)."""
    in_fmt, acc_fmt = format_param("in_fmt", in_fmt), format_param("acc_fmt", acc_fmt)
    check_exact_products(in_fmt, acc_fmt)
    accumulator = check_accumulator(accumulator, in_fmt, acc_fmt)
    terms = int_param("terms", terms, 1, MAX_TERMS)
    return in_fmt, acc_fmt, accumulator, terms, window_layout(acc_fmt, accumulator, terms)


class WindowAdder(ArithmeticUnit):
    """``a + b``: a column accumulator's window ``a`` (``window_layout``) plus a term ``b``,
    bit for bit ``golden.column``'s step: an exact product (``raw_product_layout``), or an
    ``acc_fmt`` encoding (``term="rounded"``: a normalisation point's rounded sum, read
    with DAZ; its significand may be wider than the window, whose bits below are truncated).

    Running anchor: the anchor moves to the product's exponent when that is larger (the
    window is shifted right by the difference, truncating toward minus infinity), else the
    product is shifted right into the window; one two's-complement add. Bound anchor:
    ``a.exp`` is the column's bound (the MXU sets it at the column's top, at least every
    product's exponent), so only the product shifts: no exponent compare, no second
    shifter. A rounded term always compares (a rounded sum of products can exceed the bound
    anchor: golden.column's ``max(E, e, A)``). No normaliser, no rounder: ``WindowRounder``
    rounds the column's sum.

    Parameters (keyword-only)
    -------------------------
    in_fmt, acc_fmt : FloatFormat or str
        The products' operand format and the format of their exponent (and of the sum).
    accumulator : ColumnAccumulator
        Window width and the sticky option (``check_accumulator``).
    terms : int
        Most terms (products) one window sums, 1..8192: sets the headroom.
    term : str
        ``product`` (default) or ``rounded``: what ``b`` is (above).
    late_sum : bool
        The window joins at the add, ``sum_wait`` cycles after the term (default False: with
        it). Only where the anchor cannot move (a bound anchor and a product term): the
        term's alignment needs the anchor alone, which comes on its own port ``anchor``
        with the term, and ``a.exp`` is not read (``result.exp`` is the anchor). In an
        array the partial sum then spends only the add's stages in each element.
    stages : int
        Register stages, 0..``max_stages``, at the cut points: exponents compared, the two
        alignment shifters' halves, the sum, the output, the input.

    Ports: in ``a`` (window), ``b`` (raw product or encoding), [``anchor``], ``valid_in``; out
    ``result`` (window), ``flags`` (invalid where inf - inf met), ``valid_out``.
    """

    def __init__(self, *, in_fmt=BF16, acc_fmt=FP32, accumulator=None, terms=1, term="product", late_sum=False,
                 stages=0):
        self.in_fmt, self.acc_fmt, self.accumulator, self.terms, self.layout = window_params(
            in_fmt, acc_fmt, accumulator, terms)
        self.term = choice_param("term", term, TERMS)
        if not isinstance(late_sum, bool):
            raise TypeError(f"late_sum must be True or False, not {late_sum!r}")
        if late_sum and self._moving:
            raise ValueError(f"late_sum needs an anchor that cannot move (anchor=bound, term=product), not "
                             f"anchor={self.accumulator.anchor}, term={term}")
        self.late_sum = late_sum
        operands = {"a": self.layout, "b": self._term_layout}
        if late_sum:
            operands["anchor"] = unsigned(self.acc_fmt.exp_bits)
        # With late_sum a register at the outputs is a cycle per row of the column, one at
        # the inputs (before the add) a cycle in all: the inputs take the first spare one.
        super().__init__(operands=operands, result_width=self.layout, rand_bits=None, stages=stages,
                         cuts=self._cuts(), reset_less=True, inputs_first=late_sum)

    @property
    def sum_wait(self) -> int:
        """Cycles from the term (and ``anchor``) to the window ``a``: the registers before
        the add with ``late_sum``, else 0."""
        if not self.late_sum:
            return 0
        count = self.cut_registers
        return sum(count[name] for name in ("input", "compared", "align_hi", "aligned"))

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
        return max(self.accumulator.window, precision)

    @property
    def _moving(self) -> bool:
        """Whether the window's anchor can move (and the sum needs its shifter)."""
        return self.accumulator.anchor == "running" or self.term == "rounded"

    @property
    def _sum_width(self) -> int:
        return self.layout["sum"].shape.width

    def _amount_bits(self) -> tuple[int, int]:
        """Shift amount widths: ``k`` with ``2**k - 1`` at least the term's width and the
        sum's width (a shift by that much leaves nothing, or only sign bits)."""
        return self._term_width.bit_length(), self._sum_width.bit_length()

    def _cuts(self):
        e, w = self.acc_fmt.exp_bits, self._sum_width
        n = max(self._amount_bits()) if self._moving else self._amount_bits()[0]
        decode = self.term == "rounded"                  # an encoding's class: a LUT level
        return [("input", Delay()),
                ("compared", Delay(1 + decode, e + 1)),  # both exponent differences, saturated
                ("align_hi", Delay((n + 1) // 2 + 1)),  # upper shift steps, their sticky ORs
                ("aligned", Delay(n // 2 + 1)),          # lower steps, the sticky ORs
                ("summed", Delay(1, w)),                 # one two's-complement add
                ("output", Delay(1))]

    def elaborate(self, platform):
        m = Module()
        cut, acc = self._stages.cut, self.accumulator
        fe = self.acc_fmt.exp_bits
        late = self.late_sum
        # With late_sum the window is read at the add (``joined``), not registered before it.
        window = {} if late else {"a": self.a}
        v = cut(m, "input", **window, b=self.b, **({"anchor": self.anchor} if late else {}), valid=self.valid_in)
        a, b = (None if late else self.layout(v["a"])), self._term_layout(v["b"])
        anchor = v["anchor"] if late else a.exp
        zero, inf, nan = (b.zero, b.inf, b.nan) if self.term == "product" else (b.is_zero_daz, b.is_inf, b.is_nan)
        ordinary = ~(zero | inf | nan)
        # Both exponent differences at once (the one that is not negative is the shift), each
        # shift amount saturated by an OR of its upper bits rather than compared: a shift by
        # 2**k - 1 >= the value's width empties it as well as any larger one.
        p_bits, s_bits = self._amount_bits()
        moving = self._moving
        if moving:
            # A term that is zero or special has no exponent: it never moves the anchor.
            exp_p = b.exponent & ordinary.replicate(fe)
            gap_p, gap_s = Signal(fe + 1), Signal(fe + 1)
            m.d.comb += [gap_p.eq(anchor - exp_p), gap_s.eq(exp_p - anchor)]
            larger = gap_p[-1]                                  # the term's exponent is the larger
        else:
            # A bound anchor is at least every finite nonzero product's exponent: the window
            # never moves (golden.column's max(E, e, A) is A), there is no sum shifter, and
            # the gap is never negative. A zero or special term's gap is moot (its
            # significand is masked below), so its exponent goes unmasked into the subtract:
            # the mask's two LUT levels set the element's clock, placed alone and in a 12x12.
            gap_p = Signal(fe)
            m.d.comb += gap_p.eq(anchor - b.exponent)
            larger = Const(0, 1)
        amount_p, amount_s = Signal(p_bits), (Signal(s_bits) if moving else Const(0, s_bits))
        m.d.comb += amount_p.eq((gap_p[:p_bits] | gap_p[p_bits:].any().replicate(p_bits)) & (~larger).replicate(p_bits))
        if moving:
            m.d.comb += amount_s.eq((gap_s[:s_bits] | gap_s[s_bits:].any().replicate(s_bits)) & larger.replicate(s_bits))
        # The window's part: with late_sum only the term's class travels to the add.
        term_class = {"t_nan": nan, "t_inf": inf, "t_sign": b.sign}
        window = {} if late else {"sum": a.sum, "dropped": a.dropped}
        classes = term_class if late else self._specials(a, term_class)
        v = cut(m, "compared", amount_p=amount_p, amount_s=amount_s, exp=Mux(larger, exp_p, anchor) if moving else anchor,
                **window,
                sig=Cat(b.mantissa, 1) & ordinary.replicate(len(b.mantissa) + 1),
                negative=b.sign & ordinary, **classes, valid=v["valid"])
        side = {k: v[k] for k in (*classes, "negative", "valid", "exp")}
        amount_p, amount_s = v["amount_p"], v["amount_s"]

        # The term's significand at the window's top, then shifted down by its gap; bits of
        # a term wider than the window that stay below it are truncated as the shift's are.
        term = Cat(Const(0, self._term_width - len(v["sig"])), v["sig"])
        hi_p, lo_p = _halves(p_bits)
        hi_s, lo_s = _halves(s_bits)
        term, lost_p = _shift_steps(term, amount_p, hi_p, sticky=Const(0, 1))
        total = {} if late else dict(zip(("total", "lost_s"), _shift_steps(v["sum"], amount_s, hi_s if moving else [],
                                                                          sticky=Const(0, 1))))
        v = cut(m, "align_hi", term=term, lost_p=lost_p, amount_p=amount_p, **total, amount_s=amount_s,
                **({} if late else {"dropped": v["dropped"]}), **side)
        side = {k: v[k] for k in side}
        term, lost_p = _shift_steps(v["term"], v["amount_p"], lo_p, sticky=v["lost_p"])
        below = self._term_width - acc.window
        if below:
            term, lost_p = term[below:], lost_p | term[:below].any()
        if late:
            v = cut(m, "aligned", term=term, lost_p=lost_p, **side)
            side = {k: v[k] for k in side if k not in term_class}
            # The window joins: no shift (the anchor stays), its specials meet the term's.
            a = self.layout(self.a)
            total, lost_s, dropped = a.sum, Const(0, 1), a.dropped
            specials = self._specials(a, {k: v[k] for k in term_class})
            side.update(specials)
            term, lost_p = v["term"], v["lost_p"]
        else:
            total, lost_s = _shift_steps(v["total"], v["amount_s"], lo_s if moving else [], sticky=v["lost_s"])
            dropped = v["dropped"]
        if acc.sticky:                 # round to odd: what was lost sets the lowest bit
            term, total = term | lost_p, total | lost_s
        dropped = dropped | lost_p | lost_s
        # floor(-t) = ~t + 1 - lost; with sticky, -(t | lost) = ~(t | lost) + 1
        carry = side["negative"] & (Const(1, 1) if acc.sticky else ~lost_p)
        if not late:
            v = cut(m, "aligned", term=term, total=total, dropped=dropped, carry=carry, **side)
            side = {k: v[k] for k in side}
            term, total, dropped, carry = v["term"], v["total"], v["dropped"], v["carry"]

        summed = Signal(signed(self._sum_width))
        negative = side["negative"].replicate(self._sum_width)
        m.d.comb += summed.eq(total + (Cat(term, Const(0, self._sum_width - acc.window)) ^ negative) + carry)
        v = cut(m, "summed", sum=summed, dropped=dropped, **side)
        result = Signal(self.layout)
        m.d.comb += [result.sum.eq(v["sum"]), result.exp.eq(v["exp"]), result.dropped.eq(v["dropped"]),
                     result.nan.eq(v["nan"]), result.inf.eq(v["inf"]), result.inf_sign.eq(v["inf_sign"])]
        out = cut(m, "output", result=result, flags=Cat(Const(0, 4), v["invalid"]), valid=v["valid"])
        m.d.comb += [self.result.eq(out["result"]), self.flags.eq(out["flags"]), self.valid_out.eq(out["valid"])]
        return m

    @staticmethod
    def _specials(a, term) -> dict:
        """The window's specials after adding a term of class ``t_nan``, ``t_inf``, sign
        ``t_sign``: NaN, infinity and its sign, and ``invalid`` where inf - inf met."""
        inf_minus_inf = a.inf & ~a.nan & term["t_inf"] & (a.inf_sign != term["t_sign"])
        return {"nan": a.nan | term["t_nan"] | inf_minus_inf, "inf": a.inf | term["t_inf"],
                "inf_sign": Mux(term["t_inf"] & ~a.inf, term["t_sign"], a.inf_sign), "invalid": inf_minus_inf}
