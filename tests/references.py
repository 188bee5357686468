"""Independent references for the golden model: ml_dtypes and NumPy floating-point casts.

TPU mode is applied around them from the contract's words: DAZ on inputs; a result is
tiny when, rounded to the target precision with an unbounded exponent, it is below the
smallest normal, and then flushes to signed zero (underflow, inexact).
"""

import ml_dtypes
import numpy as np

from golden import Flags, FloatFormat, to_float64, unpack

#: A NumPy/ml_dtypes type per significand precision; its RNE cast is the reference rounding.
_ROUNDING_TYPES = {
    3: ml_dtypes.float8_e5m2,
    4: ml_dtypes.float8_e4m3,
    8: ml_dtypes.bfloat16,
    11: np.float16,   # fp16, and tf32 (same precision; the exponent is scaled away)
    24: np.float32,
}
#: Types whose cast from float64 rounds once (ml_dtypes goes through float32).
_DIRECT_FROM_FLOAT64 = (np.float16, np.float32)


def daz(bits, fmt: FloatFormat) -> np.ndarray:
    """Decode to float64 with subnormals read as signed zeros."""
    values = to_float64(bits, fmt)
    sub = unpack(bits, fmt).is_subnormal
    return np.where(sub, np.copysign(0.0, values), values)


def round_unbounded(x: np.ndarray, precision: int) -> np.ndarray:
    """Round finite float64 values to ``precision`` bits, RNE, with an unbounded exponent."""
    rounding_type = _ROUNDING_TYPES[precision]
    frac, exp = np.frexp(x)                 # x = frac * 2**exp, 0.5 <= |frac| < 1
    scaled = frac * 2.0                      # into [1, 2): every type's normal range
    if rounding_type not in _DIRECT_FROM_FLOAT64:
        assert np.array_equal(scaled.astype(np.float32).astype(np.float64), scaled), \
            "reference would round twice"
        scaled = scaled.astype(np.float32)
    rounded = scaled.astype(rounding_type).astype(np.float64)
    return np.ldexp(rounded / 2.0, exp)


def tpu_round(exact: np.ndarray, fmt: FloatFormat, signalling=None, invalid=None):
    """Expected ``(float64 values, flags)`` for exact results ``exact`` (float64) under RNE.

    ``exact`` may hold NaN (canonicalised) and inf (passed through, no flags): the caller
    marks NaNs that raise invalid.
    """
    finite = np.isfinite(exact)
    rounded = np.where(finite, round_unbounded(np.where(finite, exact, 1.0), fmt.precision), exact)
    magnitude = np.abs(rounded)
    min_normal = 2.0 ** fmt.emin
    overflow_limit = 2.0 ** (fmt.emax + 1)
    tiny = finite & (exact != 0) & (magnitude < min_normal)
    huge = finite & (magnitude >= overflow_limit)
    result = np.where(tiny, np.copysign(0.0, exact), np.where(huge, np.copysign(np.inf, exact), rounded))
    flags = np.where(finite & (rounded != exact), Flags.INEXACT, 0)
    flags = np.where(tiny, Flags.UNDERFLOW | Flags.INEXACT, flags)
    flags = np.where(huge, Flags.OVERFLOW | Flags.INEXACT, flags)
    if invalid is not None:
        flags = np.where(invalid, Flags.INVALID, flags)
    return result, flags.astype(np.uint8)


def assert_same(bits, flags, fmt: FloatFormat, expected, expected_flags, context=()):
    """Compare golden output (bits, flags) with expected float64 values and flags, bit for bit.

    NaN must be the canonical NaN; zeros must carry the expected sign.
    """
    bits = np.asarray(bits)
    got = to_float64(bits, fmt)
    nan_expected = np.isnan(expected)
    value_ok = np.where(nan_expected, bits == fmt.canonical_nan,
                        (got == expected) & (np.signbit(got) == np.signbit(expected)))
    ok = value_ok & (flags == expected_flags)
    if not ok.all():
        i = np.flatnonzero(~ok)[:5]
        rows = [f"  #{j}: " + " ".join(f"{np.asarray(c)[j]!r}" for c in context)
                + f" -> got {int(bits[j]):#x} ({got[j]!r}) flags {int(flags[j]):#04b},"
                f" want {expected[j]!r} flags {int(expected_flags[j]):#04b}" for j in i]
        raise AssertionError(f"{np.count_nonzero(~ok)} of {ok.size} mismatches:\n" + "\n".join(rows))
