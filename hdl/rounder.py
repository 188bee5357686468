"""The one rounder every unit uses: an exact raw float in, an encoding and flags out."""

from __future__ import annotations

import math
import operator

from amaranth.hdl import Cat, Const, Module, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.formats import FloatFormat
from golden.rounding import Flags, Rounding

from .pipeline import Delay, select

__all__ = ["Rounder", "signed_width"]


def signed_width(lo: int, hi: int) -> int:
    """Bits of a signed value holding every integer in ``lo..hi``."""
    return max(lo.bit_length() if lo >= 0 else (-lo - 1).bit_length(), hi.bit_length()) + 1


class Rounder(wiring.Component):
    """Round an exact nonzero finite value to ``fmt`` (TPU mode), or pass a special result.

    The hardware twin of ``golden.rounding.round_raw`` followed by the special-case
    override of ``golden.ops``: tininess after rounding flushes to signed zero, overflow
    goes to inf (largest finite under ``rtz``).

    Parameters
    ----------
    fmt : FloatFormat
        Result format.
    width : int
        Width of ``sig``, normalised: its MSB is 1. ``width - fmt.precision`` bits are
        discarded; with none discarded there is no rounding logic at all.
    exp_width : int
        Width of the signed ``exp``: the unbiased exponent of ``sig``'s MSB.
    rounding : Rounding
    rand_bits : int or None
        Width of ``rand`` (stochastic modes with discarded bits).
    sticky : bool
        Whether a ``sticky`` input flags nonzero bits below ``sig``.
    stages : Stages or None
        The unit's pipeline, whose ``decided`` and ``rounded`` cut points (``cuts``) lie
        inside the rounder: after the rounding decision and after the increment.

    Ports: ``sign``, ``exp``, ``sig``, [``sticky``], [``rand``]; ``nan`` (result is the
    canonical NaN, ``invalid`` sets the invalid flag), ``exact`` (result is
    ``exact_bits``, no flags); out ``result``, ``flags``.
    """

    def __init__(self, *, fmt: FloatFormat, width: int, exp_width: int, rounding: Rounding,
                 rand_bits: int | None = None, sticky: bool = False, stages=None):
        self._fmt = fmt
        self._width = operator.index(width)
        self._exp_width = operator.index(exp_width)
        self._rounding = Rounding.parse(rounding)
        self._discard = self._width - fmt.precision
        if self._width < 1 or self._exp_width < 2:
            raise ValueError(f"width must be >= 1 and exp_width >= 2, not {width} and {exp_width}")
        needs_rand = self._rounding.is_stochastic and self._discard > 0
        if needs_rand != (rand_bits is not None):
            raise ValueError(f"rand_bits={rand_bits!r} does not fit {self._rounding.value} "
                             f"with {self._discard} discarded bits")
        if sticky and self._discard < (rand_bits or 1) + 2:
            raise ValueError("a sticky input needs rand_bits + 2 discarded bits")
        self._rand_bits = rand_bits
        self._sticky = sticky
        self._stages = stages
        members = {
            "sign": In(1), "exp": In(signed(self._exp_width)), "sig": In(self._width),
            "nan": In(1), "invalid": In(1), "exact": In(1), "exact_bits": In(fmt.width),
            "result": Out(fmt.width), "flags": Out(5),
        }
        if sticky:
            members["sticky"] = In(1)
        if rand_bits is not None:
            members["rand"] = In(rand_bits)
        super().__init__(members)

    #: The rounder's cut points, in order, ahead of the unit's ``output``.
    CUTS = ("decided", "rounded")

    @staticmethod
    def cuts(fmt: FloatFormat, width: int, exp_width: int, rounding: Rounding,
             rand_bits: int | None = None) -> list[tuple[str, Delay]]:
        """Its cut points with the delay before each, then ``output`` and the delay of the
        final exponent select and special-case mux."""
        d = width - fmt.precision
        if d <= 0:
            decide = Delay(1, exp_width)
        elif Rounding.parse(rounding) is Rounding.STOCHASTIC:
            decide = Delay(1, max(rand_bits, exp_width))
        else:
            decide = Delay(max(2, math.ceil(math.log(d + 1, 4)) + 1), exp_width)
        return [("decided", decide), ("rounded", Delay(1, fmt.precision + 1) if d > 0 else Delay()),
                ("output", Delay(2))]

    def elaborate(self, platform):
        m = Module()
        cut = self._stages.cut if self._stages is not None else (lambda m, name, **v: v)
        kept, inexact, up = self._decision()
        v = self._rounded(m, cut, kept, inexact, up)
        self._select(m, v)
        return m

    def _decision(self):
        """The kept bits, whether anything was discarded, and whether to round up."""
        d = self._discard
        sticky = self.sticky if self._sticky else Const(0, 1)
        if d <= 0:
            kept = Cat(Const(0, -d), self.sig)
            inexact = Const(0, 1)
            up = Const(0, 1)
        else:
            kept = self.sig[d:]
            low = self.sig[:d]
            inexact = low.any() | sticky
            if self._rounding is Rounding.NEAREST_EVEN:
                rest = (low[:-1].any() if d > 1 else Const(0, 1)) | sticky
                up = low[-1] & (rest | kept[0])
            elif self._rounding is Rounding.STOCHASTIC:
                # floor(f * 2**k) + R >= 2**k: the carry out of the top k discarded bits + R.
                k = self._rand_bits
                top = low[d - k:] if d >= k else Cat(Const(0, k - d), low)
                up = (top + self.rand)[k]
            elif self._rounding is Rounding.STOCHASTIC_HALF:
                up = inexact & self.rand[0]
            else:
                up = Const(0, 1)
        return kept, inexact, up

    def _rounded(self, m, cut, kept, inexact, up):
        """The increment, with both exponents a rounding carry can leave compared ahead of
        it (the carry only selects): the values the result is selected from."""
        fmt = self._fmt
        # Both exponents a rounding carry can leave, compared ahead of the increment so the
        # carry only selects.
        exp = [Signal(signed(self._exp_width + 1), name=f"exp_{c}") for c in (0, 1)]
        m.d.comb += [exp[0].eq(self.exp), exp[1].eq(self.exp + 1)]
        # The increment carries out exactly when every kept bit is 1: that AND settles
        # beside the increment's carry chain, so the exponent select need not wait for it.
        v = cut(m, "decided", kept=kept, up=up, all_ones=kept.all(), inexact=inexact, sign=self.sign, nan=self.nan,
                invalid=self.invalid, exact=self.exact, exact_bits=self.exact_bits,
                tiny=Cat(e < fmt.emin for e in exp), huge=Cat(e > fmt.emax for e in exp),
                **({"top": Cat(e == fmt.emax for e in exp)} if fmt.finite else {}),
                biased=Cat((e + fmt.bias)[:fmt.exp_bits] for e in exp))

        rounded = Signal(fmt.precision + 1)
        m.d.comb += rounded.eq(v["kept"] + v["up"])
        return cut(m, "rounded", rounded=rounded, carry=v["up"] & v["all_ones"],
                   **{k: x for k, x in v.items() if k not in ("kept", "up", "all_ones")})

    def _select(self, m, v):
        """The result and flags: NaN, saturated or exact values, flush, overflow or the
        rounded number."""
        fmt = self._fmt
        carry = v["carry"]
        tiny, huge = v["tiny"].bit_select(carry, 1), v["huge"].bit_select(carry, 1)
        biased = v["biased"].word_select(carry, fmt.exp_bits)
        mantissa = v["rounded"][:fmt.man_bits]          # all zero after a carry
        if fmt.finite:      # the top binade's mantissa all ones is the NaN
            huge = huge | (v["top"].bit_select(carry, 1) & mantissa.all())
        sign = v["sign"]
        saturated = Cat(Const(fmt.max_finite, fmt.width - 1), sign)
        if self._rounding is Rounding.TOWARD_ZERO or fmt.saturate:
            overflow = saturated
        else:
            overflow = Const(fmt.canonical_nan, fmt.width) if fmt.finite else Cat(Const(fmt.inf, fmt.width - 1), sign)
        # An exact infinity (the operands' inf, passed as its pattern) in a format without
        # inf results: saturated (overflow, inexact) or NaN (invalid).
        exact_inf = v["exact"] & (v["exact_bits"][:fmt.width - 1] == fmt.inf)
        nan, invalid = v["nan"], v["invalid"]
        if fmt.finite and not fmt.saturate:
            nan, invalid = nan | exact_inf, invalid | exact_inf

        # Highest priority first: (condition, result, flags); otherwise the rounded number.
        cases = [(nan, Const(fmt.canonical_nan, fmt.width), Cat(Const(0, 4), invalid))]    # Flags.INVALID
        if fmt.saturate:
            cases.append((exact_inf, Cat(Const(fmt.max_finite, fmt.width - 1), v["exact_bits"][-1]),
                          Const(Flags.OVERFLOW | Flags.INEXACT, 5)))
        cases += [(v["exact"], v["exact_bits"], Const(0, 5)),
                  (tiny, Cat(Const(0, fmt.width - 1), sign), Const(Flags.UNDERFLOW | Flags.INEXACT, 5)),
                  (huge, overflow, Const(Flags.OVERFLOW | Flags.INEXACT, 5))]
        result, flags = Cat(mantissa, biased, sign), v["inexact"]
        # Gates, not multiplexers (pipeline.select): the fixed patterns would be a register's
        # inferred reset or set.
        for when, value, raised in reversed(cases):
            result, flags = select(when, value, result), select(when, raised, flags)
        m.d.comb += [self.result.eq(result), self.flags.eq(flags)]
