"""Bit-exact conversion, multiplication and addition in TPU mode (DAZ, FTZ, canonical NaN).

Every function takes and returns integer bit patterns and returns ``(bits, flags)``.
Stochastic modes take ``rand``: one ``rand_bits``-wide random integer per element
(``sr_bits`` for ``sr``, one bit for ``sr-half``), the same bits the hardware's
``rand`` port consumes.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from .bits import unpack
from .formats import FP32, FloatFormat, format_param
from .rounding import Flags, Rounding, resolve_sr_bits, round_raw

__all__ = [
    "convert", "multiply", "add", "bit_length",
    "convert_sr_bits", "multiply_sr_bits", "add_sr_bits", "ADD_GUARD_BITS",
]

#: Elements per kernel call: big enough to amortise NumPy's per-call cost, small enough
#: that the temporaries stay in cache (and are not fresh mmap'd pages every call).
CHUNK = 1 << 16

#: Bits the adder keeps below the larger operand's LSB before sticky: enough that
#: whenever bits are lost to sticky at least 32 (the widest ``sr_bits``) + 2 exact
#: discarded bits remain after normalisation.
ADD_GUARD_BITS = 34


def convert_sr_bits(in_fmt: FloatFormat, out_fmt: FloatFormat, rounding, sr_bits=None):
    """``rand`` width of a conversion: by default every discarded bit; None when it
    takes no ``rand`` (not stochastic, or a widening conversion that never rounds)."""
    in_fmt, out_fmt = format_param("in_fmt", in_fmt), format_param("out_fmt", out_fmt)
    discarded = in_fmt.precision - out_fmt.precision
    rand_bits = resolve_sr_bits(rounding, sr_bits, discarded)
    return rand_bits if discarded > 0 else None


def multiply_sr_bits(in_fmt: FloatFormat, out_fmt: FloatFormat, rounding, sr_bits=None):
    """``rand`` width of a multiplication: by default every discarded bit of the 2p-bit
    product; None when it takes no ``rand`` (not stochastic, or the product is exact)."""
    in_fmt, out_fmt = format_param("in_fmt", in_fmt), format_param("out_fmt", out_fmt)
    discarded = 2 * in_fmt.precision - out_fmt.precision
    rand_bits = resolve_sr_bits(rounding, sr_bits, discarded)
    return rand_bits if discarded > 0 else None


def add_sr_bits(out_fmt: FloatFormat, rounding, sr_bits=None):
    """``rand`` width of an addition: by default the output precision."""
    out_fmt = format_param("out_fmt", out_fmt)
    return resolve_sr_bits(rounding, sr_bits, out_fmt.precision)


def bit_length(x: np.ndarray) -> np.ndarray:
    """Bit length (int32) of each uint64 below 2**64 (0 for 0).

    Each 32-bit half converts to float64 exactly, so frexp's exponent is its exact bit length.
    """
    high = (x >> 32).astype(np.float64)
    low = (x & 0xFFFFFFFF).astype(np.float64)
    return np.where(high != 0, np.frexp(high)[1] + 32, np.frexp(low)[1]).astype(np.int32)


def _work_type(bits: int):
    """The unsigned type that holds every intermediate of ``bits`` bits."""
    return np.uint32 if bits <= 32 else np.uint64


def _elementwise(kernel, out_fmt: FloatFormat, rand, *operands):
    """``kernel(*operands, rand)`` over the broadcast operands (and ``rand``), in chunks."""
    arrays = [np.asarray(x) for x in operands] + ([np.asarray(rand)] if rand is not None else [])
    try:
        shape = np.broadcast_shapes(*(x.shape for x in arrays))
    except ValueError:
        shapes = ", ".join(str(x.shape) for x in arrays)
        raise ValueError(f"operand{'s and rand' if rand is not None else 's'} must broadcast "
                         f"to one shape, not {shapes}") from None
    if math.prod(shape) <= CHUNK:
        arrays = [x if x.shape == shape else np.broadcast_to(x, shape) for x in arrays]
        if rand is None:
            arrays.append(None)
        return kernel(*arrays)
    flat = [np.broadcast_to(x, shape).reshape(-1) for x in arrays]
    if rand is None:
        flat.append(None)
    size = math.prod(shape)
    bits, flags = np.empty(size, out_fmt.dtype), np.empty(size, np.uint8)
    for start in range(0, size, CHUNK):
        part = slice(start, start + CHUNK)
        bits[part], flags[part] = kernel(*(None if x is None else x[part] for x in flat))
    return bits.reshape(shape), flags.reshape(shape)


def _finish(bits, flags, fmt, nan, invalid, special, special_bits, infinite):
    """Override rounded results with NaN and exact special results (``infinite``: those
    that are infinities). A format without inf results (not ``fmt.ieee``) gives the
    largest finite value of the sign for them if ``saturate`` (overflow, inexact), else
    NaN (invalid: an operation whose result the format cannot hold)."""
    np.copyto(bits, special_bits, where=special, casting="unsafe")
    np.copyto(flags, 0, where=special)
    if not fmt.ieee:
        infinite = infinite & ~nan
        if fmt.saturate:
            sign_bits = np.asarray(special_bits) & (1 << fmt.sign_shift)
            np.copyto(bits, sign_bits | fmt.max_finite, where=infinite, casting="unsafe")
            np.copyto(flags, int(Flags.OVERFLOW | Flags.INEXACT), where=infinite)
        else:
            nan, invalid = nan | infinite, invalid | infinite
    np.copyto(bits, fmt.canonical_nan, where=nan)
    np.copyto(flags, 0, where=nan)
    flags |= invalid.view(np.uint8) * np.uint8(Flags.INVALID)
    return bits, flags


def convert(a, in_fmt: FloatFormat, out_fmt: FloatFormat, rounding=Rounding.NEAREST_EVEN,
            rand=None, sr_bits=None):
    """Convert ``in_fmt`` encodings to ``out_fmt`` (the stochastic rounding unit's model).

    Formats are FloatFormats, names (``"bf16"``) or ``"eXmY"``; ``rounding`` a Rounding
    or its name (``"rne"``, ``"rtz"``, ``"sr"``, ``"sr-half"``).
    """
    in_fmt, out_fmt = format_param("in_fmt", in_fmt), format_param("out_fmt", out_fmt)
    rounding = Rounding.parse(rounding)
    rand_bits = convert_sr_bits(in_fmt, out_fmt, rounding, sr_bits)
    kernel = partial(_convert, in_fmt=in_fmt, out_fmt=out_fmt, rounding=rounding, rand_bits=rand_bits)
    return _elementwise(kernel, out_fmt, rand, a)


def _convert(a, rand, in_fmt, out_fmt, rounding, rand_bits):
    work = _work_type(max(in_fmt.width, out_fmt.width, out_fmt.precision))
    u = unpack(a, in_fmt, work)
    bits, flags = round_raw(u.sign, u.unbiased_exponent, u.significand, in_fmt.precision,
                            out_fmt, rounding, rand, rand_bits)
    sign_bits = u.sign << out_fmt.sign_shift
    special = u.is_inf | u.is_zero_daz
    special_bits = np.where(u.is_inf, sign_bits | out_fmt.inf, sign_bits)
    return _finish(bits, flags, out_fmt, u.is_nan, u.is_signalling, special, special_bits, u.is_inf)


def multiply(a, b, in_fmt: FloatFormat, out_fmt: FloatFormat = FP32,
             rounding=Rounding.NEAREST_EVEN, rand=None, sr_bits=None):
    """Multiply two ``in_fmt`` arrays, rounding the exact product once to ``out_fmt``."""
    in_fmt, out_fmt = format_param("in_fmt", in_fmt), format_param("out_fmt", out_fmt)
    rounding = Rounding.parse(rounding)
    rand_bits = multiply_sr_bits(in_fmt, out_fmt, rounding, sr_bits)
    kernel = partial(_multiply, in_fmt=in_fmt, out_fmt=out_fmt, rounding=rounding, rand_bits=rand_bits)
    return _elementwise(kernel, out_fmt, rand, a, b)


def _multiply(a, b, rand, in_fmt, out_fmt, rounding, rand_bits):
    width = 2 * in_fmt.precision
    work = _work_type(max(width, out_fmt.width, out_fmt.precision))
    ua, ub = unpack(a, in_fmt, work), unpack(b, in_fmt, work)
    sign = ua.sign ^ ub.sign
    a_zero, b_zero = ua.is_zero_daz, ub.is_zero_daz
    a_inf, b_inf = ua.is_inf, ub.is_inf
    inf_times_zero = (a_inf & b_zero) | (a_zero & b_inf)
    nan = ua.is_nan | ub.is_nan | inf_times_zero
    invalid = ua.is_signalling | ub.is_signalling | inf_times_zero

    product = ua.significand * ub.significand           # in [2**(width-2), 2**width)
    top = product >> (width - 1)                         # 1 when the product is >= 2
    sig = product << (1 - top)
    exp = ua.exponent + ub.exponent + (top.astype(np.int32) - 2 * in_fmt.bias)
    bits, flags = round_raw(sign, exp, sig, width, out_fmt, rounding, rand, rand_bits)

    sign_bits = sign << out_fmt.sign_shift
    any_inf = a_inf | b_inf
    special = any_inf | a_zero | b_zero
    special_bits = np.where(any_inf, sign_bits | out_fmt.inf, sign_bits)
    return _finish(bits, flags, out_fmt, nan, invalid, special, special_bits, any_inf)


def add(a, b, fmt: FloatFormat = FP32, rounding=Rounding.NEAREST_EVEN, rand=None,
        sr_bits=None, out_fmt: FloatFormat | None = None):
    """Add two ``fmt`` arrays, rounding the exact sum once to ``out_fmt`` (default ``fmt``).

    ``x + (-x)`` is ``+0`` in every mode and ``(-0) + (-0)`` is ``-0``.
    """
    fmt = format_param("fmt", fmt)
    out_fmt = fmt if out_fmt is None else format_param("out_fmt", out_fmt)
    rounding = Rounding.parse(rounding)
    rand_bits = add_sr_bits(out_fmt, rounding, sr_bits)
    kernel = partial(_add, fmt=fmt, out_fmt=out_fmt, rounding=rounding, rand_bits=rand_bits)
    return _elementwise(kernel, out_fmt, rand, a, b)


def _add(a, b, rand, fmt, out_fmt, rounding, rand_bits):
    ua, ub = unpack(a, fmt), unpack(b, fmt)
    a_inf, b_inf = ua.is_inf, ub.is_inf
    inf_minus_inf = a_inf & b_inf & (ua.sign != ub.sign)
    nan = ua.is_nan | ub.is_nan | inf_minus_inf
    invalid = ua.is_signalling | ub.is_signalling | inf_minus_inf

    # Order by magnitude (DAZ zeros lowest): for one format the encodings order as the values.
    a_zero, b_zero = ua.is_zero_daz, ub.is_zero_daz
    a_key = np.where(a_zero, 0, (ua.exponent.astype(np.uint64) << fmt.man_bits) | ua.mantissa)
    b_key = np.where(b_zero, 0, (ub.exponent.astype(np.uint64) << fmt.man_bits) | ub.mantissa)
    swap = b_key > a_key
    sig_a = np.where(a_zero, 0, ua.significand)
    sig_b = np.where(b_zero, 0, ub.significand)
    sig_l, sig_s = np.where(swap, sig_b, sig_a), np.where(swap, sig_a, sig_b)
    exp_l = np.where(swap, ub.exponent, ua.exponent)
    shift = np.minimum(exp_l - np.where(swap, ua.exponent, ub.exponent), 63).astype(np.uint64)
    sign_l = np.where(swap, ub.sign, ua.sign)
    subtract = ua.sign != ub.sign

    # The exact sum is (total + f) units with f in [0, 1), f > 0 exactly where sticky.
    guard = max(out_fmt.precision, fmt.precision) - fmt.precision + ADD_GUARD_BITS
    big = sig_l << guard
    small_full = sig_s << guard
    small = small_full >> shift
    sticky = (small << shift) != small_full
    total = np.where(subtract, big - small - sticky, big + small)

    width = guard + fmt.precision + 1
    n = bit_length(total)
    sig = total << (width - n).astype(np.uint64)
    exp = exp_l + (n - guard - fmt.precision - fmt.bias)
    bits, flags = round_raw(sign_l, exp, sig, width, out_fmt, rounding, rand, rand_bits,
                            sticky=sticky)

    exact_zero = total == 0
    zero_sign = (ua.sign & ub.sign) & (a_zero & b_zero)
    inf_sign = np.where(a_inf, ua.sign, ub.sign)
    any_inf = a_inf | b_inf
    special = any_inf | exact_zero
    special_bits = np.where(any_inf, (inf_sign << out_fmt.sign_shift) | out_fmt.inf,
                            zero_sign << out_fmt.sign_shift)
    return _finish(bits, flags, out_fmt, nan, invalid, special, special_bits, any_inf)
