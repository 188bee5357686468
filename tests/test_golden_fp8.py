"""OCP 8-bit floats in golden/: E4M3FN and E5M2 against ml_dtypes on every input pattern.

The TPU-mode adaptation (docs/fp8.md): subnormal inputs are flushed to zero before
ml_dtypes sees them (DAZ); a result golden flushes to zero (FTZ, flagged underflow) must be
one ml_dtypes rounds below the smallest normal, or to it through its coarser subnormal grid;
everything else, NaN positions included, must be equal (any NaN equals any NaN).
"""

import ml_dtypes
import numpy as np
import pytest

from golden import convert, multiply, scalar
from golden.bits import to_float64, unpack
from golden.formats import FP8_E4M3FN, FP8_E4M3FN_SAT, FP8_E5M2, FP8_E5M2_SAT, FloatFormat, parse_format
from golden.rounding import Flags, Rounding

ML = {FP8_E4M3FN: ml_dtypes.float8_e4m3fn, FP8_E5M2: ml_dtypes.float8_e5m2}
ALL = np.arange(256, dtype=np.uint8)


def _daz(bits, fmt):
    u = unpack(bits, fmt)
    return np.where(u.is_subnormal, bits & np.asarray(1 << fmt.sign_shift, bits.dtype), bits)


def _check_against_ml(exact, ours, flags, fmt):
    """``exact``: float64 values (exact, or exactly fp32) rounded by golden to ``ours``."""
    ref = exact.astype(np.float32).astype(ML[fmt]).view(np.uint8)     # exact in float32: no double rounding
    ours_f, ref_f = to_float64(ours, fmt), to_float64(ref, fmt)
    min_normal = float(to_float64(np.array([fmt.min_normal]), fmt)[0])
    flushed = (ours_f == 0) & (exact != 0) & np.isfinite(exact)
    assert np.all(np.abs(ref_f[flushed]) <= min_normal), "flushed a value ml_dtypes keeps normal"
    assert np.all(flags[flushed] & Flags.UNDERFLOW)
    both_nan = np.isnan(ours_f) & np.isnan(ref_f)
    same = (ours == ref) | both_nan | flushed
    bad = np.flatnonzero(~same)
    assert bad.size == 0, [(float(exact[i]), hex(ours[i]), hex(ref[i])) for i in bad[:5]]


@pytest.mark.parametrize("fmt", [FP8_E4M3FN, FP8_E5M2], ids=str)
def test_every_pattern_decodes_as_ml_dtypes(fmt):
    assert np.array_equal(to_float64(ALL, fmt), ALL.view(ML[fmt]).astype(np.float64), equal_nan=True)


def test_e4m3fn_encodings():
    fmt = FP8_E4M3FN
    assert (fmt.max_finite, fmt.canonical_nan, fmt.emax) == (0x7E, 0x7F, 8)
    assert to_float64(np.array([0x7E, 0x78, 0x7F, 0xFF]), fmt).tolist()[:2] == [448.0, 256.0]
    nan = unpack(ALL, fmt).is_nan
    assert np.flatnonzero(nan).tolist() == [0x7F, 0xFF] and not unpack(ALL, fmt).is_inf.any()
    assert parse_format("e4m3fn") is FP8_E4M3FN and parse_format("E4M3FN_sat") is FP8_E4M3FN_SAT
    assert FloatFormat(4, 3, finite=True) == FP8_E4M3FN != parse_format("fp8_e4m3")
    with pytest.raises(TypeError, match="finite must be True or False, not 1"):
        FloatFormat(4, 3, finite=1)


@pytest.mark.parametrize("fmt", [FP8_E4M3FN, FP8_E5M2], ids=str)
def test_conversion_from_fp32_matches_ml_dtypes(fmt, rng):
    """Every bf16 value widened to fp32, 2^18 random fp32 values and every value between
    two neighbours of the format (ties, the overflow threshold) converted with RNE."""
    grid = to_float64(ALL, fmt)
    grid = np.sort(np.unique(np.abs(grid[np.isfinite(grid)])))
    mids = np.concatenate([(grid[:-1] + grid[1:]) / 2, [grid[-1] * (1 + 2.0 ** -(fmt.man_bits + 1))]])
    values = np.concatenate([np.arange(1 << 16, dtype=np.uint32) << 16,
                             rng.integers(0, 1 << 32, 1 << 18, dtype=np.uint64).astype(np.uint32),
                             np.concatenate([mids, -mids]).astype(np.float32).view(np.uint32)])
    values = _daz(values, parse_format("fp32"))
    ours, flags = convert(values, "fp32", fmt, "rne")
    _check_against_ml(values.view(np.float32), ours, flags, fmt)


@pytest.mark.parametrize("fmt", [FP8_E4M3FN, FP8_E5M2], ids=str)
def test_every_product_matches_ml_dtypes(fmt):
    """All 65,536 pairs, exact to fp32 and rounded (RNE) to the format itself."""
    a, b = (x.ravel().astype(np.uint8) for x in np.meshgrid(ALL, ALL))
    exact = to_float64(_daz(a, fmt), fmt) * to_float64(_daz(b, fmt), fmt)     # exact in float64
    ours32, _ = multiply(a, b, fmt, "fp32")
    ref32 = exact.astype(np.float32)
    assert np.array_equal(ours32.view(np.float32), ref32, equal_nan=True) \
        and np.array_equal(np.isnan(ref32), unpack(ours32, "fp32").is_nan)
    ours, flags = multiply(a, b, fmt, fmt, "rne")
    _check_against_ml(exact, ours, flags, fmt)


@pytest.mark.parametrize("sat, plain", [(FP8_E4M3FN_SAT, FP8_E4M3FN), (FP8_E5M2_SAT, FP8_E5M2)], ids=str)
def test_saturation_replaces_exactly_the_overflows_and_infinities(sat, plain, rng):
    values = rng.integers(0, 1 << 32, 1 << 16, dtype=np.uint64).astype(np.uint32)
    values[:4] = [0x7F800000, 0xFF800000, 0x7F7FFFFF, 0x47800000]          # +-inf, fp32 max, 65536
    want, want_flags = convert(values, "fp32", plain, "rne")
    got, got_flags = convert(values, "fp32", sat, "rne")
    u = unpack(values, "fp32")
    big = (want_flags & Flags.OVERFLOW).astype(bool) | u.is_inf
    sign = (values >> 31).astype(np.uint8) << 7
    assert big[:4].all() and big.sum() > 1000
    assert np.array_equal(got[big], sign[big] | sat.max_finite)
    assert np.all(got_flags[big] == Flags.OVERFLOW | Flags.INEXACT)
    assert np.array_equal(got[~big], want[~big]) and np.array_equal(got_flags[~big], want_flags[~big])


def test_e4m3fn_overflow_and_infinity_give_nan():
    bits, flags = convert(np.array([0x43E00000, 0x43F00000, 0x7F800000, 0xC3F00000], np.uint32), "fp32",
                          FP8_E4M3FN, "rne")
    assert bits.tolist() == [0x7E, 0x7F, 0x7F, 0x7F]                   # 448, 480 -> NaN, inf -> NaN
    assert flags.tolist() == [0, Flags.OVERFLOW | Flags.INEXACT, Flags.INVALID, Flags.OVERFLOW | Flags.INEXACT]


@pytest.mark.parametrize("fmt", [FP8_E4M3FN, FP8_E4M3FN_SAT, FP8_E5M2_SAT], ids=str)
@pytest.mark.parametrize("rounding", ["rne", "rtz", "sr"])
def test_vector_model_matches_the_scalar_reference(fmt, rounding, rng):
    a = rng.integers(0, 256, 3000).astype(np.uint8)
    b = rng.integers(0, 256, 3000).astype(np.uint8)
    rand = rng.integers(0, 1 << 4, 3000).astype(np.uint32) if rounding == "sr" else None
    bits, flags = multiply(a, b, fmt, fmt, rounding, rand, sr_bits=4 if rand is not None else None)
    for i in range(a.size):
        want = scalar.multiply(int(a[i]), int(b[i]), fmt, fmt, Rounding.parse(rounding),
                               None if rand is None else int(rand[i]), 4 if rand is not None else None)
        assert (int(bits[i]), int(flags[i])) == want, (hex(a[i]), hex(b[i]))
    x = rng.integers(0, 1 << 32, 3000, dtype=np.uint64).astype(np.uint32)
    x[:3] = [0x7F800000, 0xFF800000, 0x43F00000]
    bits, flags = convert(x, "fp32", fmt, "rne")
    for i in range(x.size):
        assert (int(bits[i]), int(flags[i])) == scalar.convert(int(x[i]), "fp32", fmt, Rounding.NEAREST_EVEN), hex(x[i])
