"""Rounding modes, exception flags and the one rounding core every operation uses."""

from __future__ import annotations

import enum

import numpy as np

from .formats import FloatFormat
from .params import int_param

__all__ = ["Rounding", "Flags", "SR_BITS_RANGE", "resolve_sr_bits", "round_raw"]

#: Allowed ``sr_bits`` (random bits a stochastic rounding consumes).
SR_BITS_RANGE = (1, 32)


class Rounding(enum.Enum):
    """Rounding modes, valued by their command-line names."""

    NEAREST_EVEN = "rne"
    TOWARD_ZERO = "rtz"
    STOCHASTIC = "sr"            # "mode 1": away with probability = discarded fraction
    STOCHASTIC_HALF = "sr-half"  # "mode 2": an inexact value goes away with probability 1/2

    @property
    def is_stochastic(self) -> bool:
        return self in (Rounding.STOCHASTIC, Rounding.STOCHASTIC_HALF)

    @classmethod
    def parse(cls, value) -> Rounding:
        """Accept a ``Rounding`` or its name (``"rne"``); raise a clear error otherwise."""
        if isinstance(value, cls):
            return value
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown rounding {value!r}: use one of {names}") from None


class Flags(enum.IntFlag):
    """Exception flags, TestFloat's bit order."""

    INEXACT = 1
    UNDERFLOW = 2
    OVERFLOW = 4
    DIVIDE_BY_ZERO = 8  # SoftFloat's "infinite" flag: never raised, nothing here divides
    INVALID = 16


def resolve_sr_bits(rounding: Rounding, sr_bits, default: int) -> int | None:
    """Return the width of the ``rand`` input for ``rounding``, or None when it takes none.

    ``default`` is the unit's default for ``sr``: it is clamped to ``SR_BITS_RANGE``.
    """
    rounding = Rounding.parse(rounding)
    if sr_bits is not None:
        sr_bits = int_param("sr_bits", sr_bits, *SR_BITS_RANGE)
        if not rounding.is_stochastic:
            raise ValueError(f"sr_bits={sr_bits} needs stochastic rounding (sr, sr-half), "
                             f"not {rounding.value}")
        if rounding is Rounding.STOCHASTIC_HALF and sr_bits != 1:
            raise ValueError(f"sr_bits={sr_bits}: sr-half uses one random bit "
                             "(leave sr_bits out, or use sr)")
    if rounding is Rounding.STOCHASTIC_HALF:
        return 1
    if rounding is Rounding.STOCHASTIC:
        return sr_bits if sr_bits is not None else min(max(default, 1), SR_BITS_RANGE[1])
    return None


def _check_rand(rand, rand_bits: int | None, like: np.ndarray) -> np.ndarray | None:
    if rand_bits is None:
        if rand is not None:
            raise ValueError("rand is only taken by stochastic rounding")
        return None
    if rand is None:
        raise ValueError(f"stochastic rounding needs rand ({rand_bits}-bit random integers)")
    rand = np.asarray(rand)
    if rand.dtype.kind not in "ui":
        raise TypeError(f"rand must hold integers, not {rand.dtype}")
    if rand.size and (rand.min() < 0 or int(rand.max()) >> rand_bits):
        raise ValueError(f"rand must hold {rand_bits}-bit values (0..{(1 << rand_bits) - 1})")
    # One bit more than rand_bits so that top + rand cannot wrap.
    work = like.dtype if rand_bits < 8 * like.dtype.itemsize else np.uint64
    return np.broadcast_to(rand.astype(work), like.shape)


def round_raw(sign, exp, sig, width: int, fmt: FloatFormat, rounding: Rounding,
              rand=None, rand_bits: int | None = None, sticky=None):
    """Round exact nonzero finite values to ``fmt``: the rounding core.

    Parameters
    ----------
    sign : unsigned array
        Sign bits (0 or 1); kept whatever the magnitude rounds to.
    exp : int32 array
        Unbiased exponent of the significand's leading bit.
    sig : unsigned array (uint32 or uint64)
        Significand normalised to ``width`` bits: ``2**(width-1) <= sig < 2**width``.
        Its type must also hold a ``fmt`` encoding.
    width : int
        Significand width; ``width - fmt.precision`` bits are discarded (none if <= 0).
    fmt : FloatFormat
        Result format.
    rounding : Rounding
        Mode; ``rand`` holds ``rand_bits``-bit integers for the stochastic modes.
    sticky : bool array, optional
        True where nonzero bits lie below ``sig``'s LSB (the value exceeds ``sig``).
        Callers guarantee at least ``rand_bits`` + 2 discarded bits where it is set.

    Returns
    -------
    bits, flags : arrays of ``fmt.dtype`` and uint8
        Tiny results flush to signed zero (tininess after rounding, unbounded
        exponent); overflow goes to inf, or the largest finite value under ``rtz``.
    """
    discard = width - fmt.precision
    rand = _check_rand(rand, rand_bits, sig)
    if discard <= 0:
        if sticky is not None and np.any(sticky):
            raise ValueError("sticky bits need discarded bits below the result's precision")
        kept = sig << -discard
        inexact = np.zeros(sig.shape, bool)
    else:
        kept = sig >> discard
        low = sig & ((1 << discard) - 1)
        inexact = low != 0
        if sticky is not None:
            inexact |= sticky
        if rounding is Rounding.NEAREST_EVEN:
            half = 1 << (discard - 1)
            tie_breaker = (kept & 1) != 0
            if sticky is not None:
                tie_breaker |= sticky
            up = (low > half) | ((low == half) & tie_breaker)
        elif rounding is Rounding.STOCHASTIC:
            # floor(f * 2**k) + R >= 2**k, f the exact discarded fraction of an ulp.
            k = rand_bits
            top = low >> (discard - k) if discard >= k else low.astype(rand.dtype) << (k - discard)
            up = (top + rand) >> k != 0
        elif rounding is Rounding.STOCHASTIC_HALF:
            up = inexact & (rand != 0)
        else:
            up = None
        if up is not None:
            kept = kept + up
            carry = kept >> fmt.precision
            kept >>= carry
            exp = exp + carry.astype(exp.dtype)

    sign_bits = sign << fmt.sign_shift
    biased = ((exp + fmt.bias) & fmt.exp_max_field).astype(sig.dtype)
    bits = sign_bits | (biased << fmt.man_bits) | (kept & fmt.man_mask)
    flags = inexact.view(np.uint8)  # Flags.INEXACT is bit 0
    tiny = exp < fmt.emin
    huge = exp > fmt.emax
    if fmt.finite:          # the top binade's mantissa all ones is NaN, not a number
        huge |= (exp == fmt.emax) & ((kept & fmt.man_mask) == fmt.man_mask)
    if tiny.any():
        np.copyto(bits, sign_bits, where=tiny)
        np.copyto(flags, int(Flags.UNDERFLOW | Flags.INEXACT), where=tiny)
    if huge.any():
        np.copyto(bits, overflow_bits(fmt, rounding, sign_bits), where=huge)
        np.copyto(flags, int(Flags.OVERFLOW | Flags.INEXACT), where=huge)
    return bits.astype(fmt.dtype, copy=False), flags


def overflow_bits(fmt: FloatFormat, rounding: Rounding, sign_bits):
    """An overflow's result: the largest finite value of its sign toward zero or in a
    ``saturate`` format, else inf, or the canonical NaN in a ``finite`` format (the value
    that stands for an infinity it cannot hold)."""
    if rounding is Rounding.TOWARD_ZERO or fmt.saturate:
        return sign_bits | fmt.max_finite
    return fmt.canonical_nan if fmt.finite else sign_bits | fmt.inf
