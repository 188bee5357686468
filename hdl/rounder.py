"""The one rounder every unit uses: an exact raw float in, an encoding and flags out."""

from __future__ import annotations

import operator

from amaranth.hdl import Cat, Const, Module, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.formats import FloatFormat
from golden.rounding import Flags, Rounding

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

    Ports: ``sign``, ``exp``, ``sig``, [``sticky``], [``rand``]; ``nan`` (result is the
    canonical NaN, ``invalid`` sets the invalid flag), ``exact`` (result is
    ``exact_bits``, no flags); out ``result``, ``flags``.
    """

    def __init__(self, *, fmt: FloatFormat, width: int, exp_width: int, rounding: Rounding,
                 rand_bits: int | None = None, sticky: bool = False):
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

    def elaborate(self, platform):
        m = Module()
        fmt, d = self._fmt, self._discard
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

        rounded = kept + up                        # precision + 1 bits
        carry = rounded[fmt.precision]
        exp = self.exp + carry
        tiny = exp < fmt.emin
        huge = exp > fmt.emax
        mantissa = rounded[:fmt.man_bits]          # all zero after a carry
        biased = (exp + fmt.bias)[:fmt.exp_bits]
        overflow = fmt.max_finite if self._rounding is Rounding.TOWARD_ZERO else fmt.inf

        with m.If(self.nan):
            m.d.comb += [self.result.eq(fmt.canonical_nan),
                         self.flags.eq(Cat(Const(0, 4), self.invalid))]  # Flags.INVALID
        with m.Elif(self.exact):
            m.d.comb += self.result.eq(self.exact_bits)
        with m.Elif(tiny):
            m.d.comb += [self.result.eq(Cat(Const(0, fmt.width - 1), self.sign)),
                         self.flags.eq(Flags.UNDERFLOW | Flags.INEXACT)]
        with m.Elif(huge):
            m.d.comb += [self.result.eq(Cat(Const(overflow, fmt.width - 1), self.sign)),
                         self.flags.eq(Flags.OVERFLOW | Flags.INEXACT)]
        with m.Else():
            m.d.comb += [self.result.eq(Cat(mantissa, biased, self.sign)),
                         self.flags.eq(inexact)]
        return m

