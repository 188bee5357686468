"""golden.column: the column accumulator against a scalar reference written from
docs/semantics.md (Python integers, one column at a time), its limits, and its errors."""

import numpy as np
import pytest

import golden
from golden import BF16, FP32, FP8_E4M3, Flags, multiply
from golden.column import (WINDOW_FIELDS, ColumnAccumulator, accumulator_param, product_anchor, reduce_column,
                           window_add, window_round)
from golden.mxu import matmul_flags, stream

BIAS, PREC = FP32.bias, FP32.precision


def _round_units(total, unit_exp):
    """``total * 2**unit_exp`` (integers) rounded to fp32: RNE, FTZ, +0 for 0."""
    if total == 0:
        return 0, 0
    sign, mag = int(total < 0), abs(total)
    n = mag.bit_length()
    exp = unit_exp + n - 1
    flags = 0
    if n > PREC:
        shift = n - PREC
        kept, rest, half = mag >> shift, mag & ((1 << shift) - 1), 1 << (shift - 1)
        if rest:
            flags = Flags.INEXACT
        if rest > half or (rest == half and kept & 1):
            kept += 1
            if kept >> PREC:
                kept, exp = kept >> 1, exp + 1
    else:
        kept = mag << (PREC - n)
    if exp < -126:
        return sign << 31, Flags.UNDERFLOW | Flags.INEXACT
    if exp > 127:
        return sign << 31 | 0x7F800000, Flags.OVERFLOW | Flags.INEXACT
    return sign << 31 | (exp + BIAS) << 23 | (kept & 0x7FFFFF), int(flags)


def _column_reference(terms, acc: ColumnAccumulator, anchor_bound=None):
    """One column's sum of fp32 terms (encodings, in order) by the documented rules."""
    def start():
        return {"E": 0, "S": 0, "dropped": False, "nan": False, "inf": None, "invalid": False}

    def floor_shift(value, amount, st):
        shifted = value >> amount
        lost = (shifted << amount) != value
        st["dropped"] |= lost
        return shifted | int(lost) if acc.sticky else shifted

    def add(st, bits):
        sign, e, man = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
        finite_nonzero = 0 < e < 255
        e_term = e if finite_nonzero else 0
        new_e = max(st["E"], e_term, anchor_bound if anchor_bound is not None else 0)
        st["S"] = floor_shift(st["S"], new_e - st["E"], st)
        st["E"] = new_e
        if finite_nonzero:
            sig = (man | 1 << 23) << max(acc.window - PREC, 0)
            st["S"] += floor_shift(-sig if sign else sig, new_e - e + max(PREC - acc.window, 0), st)
        if e == 255 and man:
            st["nan"] = True
        elif e == 255:
            if st["inf"] is not None and st["inf"] != sign and not st["nan"]:
                st["nan"] = st["invalid"] = True
            if st["inf"] is None:
                st["inf"] = sign

    def rounded(st):
        if st["nan"]:
            return 0x7FC00000, Flags.INVALID if st["invalid"] else 0
        if st["inf"] is not None:
            return st["inf"] << 31 | 0x7F800000, 0
        bits, flags = _round_units(st["S"], st["E"] - BIAS - acc.window + 1)
        return bits, flags | (Flags.INEXACT if st["dropped"] else 0)

    group = acc.group or len(terms)
    st, flags, result = start(), 0, 0
    for k, term in enumerate(terms):
        add(st, int(term))
        if (k + 1) % group == 0 or k + 1 == len(terms):
            result, point_flags = rounded(st)
            flags |= int(point_flags)
            if k + 1 < len(terms):
                st = start()
                add(st, result)
    return result, flags


def _operands(rng, m, k, n, fmt=BF16, specials=0.0, spread=6):
    """Random encodings of normal-ish values with a spread of exponents, some specials."""
    def draw(shape):
        values = rng.standard_normal(shape) * np.exp2(rng.integers(-spread, spread + 1, shape))
        bits = golden.convert(values.astype(np.float32).view(np.uint32), FP32, fmt)[0]
        special = rng.random(shape) < specials
        pick = rng.choice([0, 0x8000 >> (16 - fmt.width), fmt.inf, fmt.inf | 1 << (fmt.width - 1),
                           fmt.canonical_nan, 1], size=shape)
        return np.where(special, pick, bits).astype(fmt.dtype)
    return draw((m, k)), draw((k, n))


ACCUMULATORS = [ColumnAccumulator(window=w, group=g, sticky=s, anchor=a)
                for w, g, s, a in [(16, 0, False, "running"), (24, 0, False, "running"), (28, 0, True, "running"),
                                   (20, 3, False, "running"), (26, 4, True, "running"), (48, 0, False, "running"),
                                   (24, 0, False, "bound"), (30, 5, True, "bound")]]


@pytest.mark.parametrize("acc", ACCUMULATORS, ids=str)
def test_matches_scalar_reference(acc):
    rng = np.random.default_rng(acc.window * 7 + acc.group)
    x, w = _operands(rng, 6, 13, 5, specials=0.08)
    y, flags = reduce_column(x, w[None], BF16, FP32, acc)
    anchors = golden.column.product_anchor(x, w[None], BF16, FP32) if acc.anchor == "bound" else None
    for m in range(x.shape[0]):
        for n in range(w.shape[1]):
            products, mul_flags = multiply(x[m], w[:, n], BF16, FP32)
            bound = None if anchors is None else int(anchors[m, n])
            want, want_flags = _column_reference(products, acc, bound)
            got = (int(y[m, n]), int(flags[m, n]))
            assert got == (want, want_flags | int(np.bitwise_or.reduce(mul_flags))), (m, n, acc)


def test_wide_window_rounds_the_exact_sum_once():
    """Products within the window lose no bit: the result is the exact sum (Python
    rationals) rounded once, and only that rounding raises inexact."""
    from fractions import Fraction
    rng = np.random.default_rng(3)
    x, w = _operands(rng, 20, 9, 7, spread=2)
    y, flags = reduce_column(x, w[None], BF16, FP32, ColumnAccumulator(window=48))
    xf, wf = golden.to_float64(x, BF16), golden.to_float64(w, BF16)
    for m in range(20):
        for n in range(7):
            exact = sum(Fraction(float(a)) * Fraction(float(b)) for a, b in zip(xf[m], wf[:, n]))
            scaled = exact * (1 << 300)
            assert scaled.denominator == 1
            assert (int(y[m, n]), int(flags[m, n])) == _round_units(scaled.numerator, -300)


def test_exact_cancellation_is_positive_zero_and_specials_follow_the_adder():
    one, minus_one = 0x3F80, 0xBF80
    x = np.array([[one, one, one]], np.uint16)
    w = np.array([[one], [minus_one], [0x8000]], np.uint16)
    y, flags = reduce_column(x, w[None], BF16, FP32, ColumnAccumulator(window=24))
    assert (int(y[0, 0]), int(flags[0, 0])) == (0, 0)
    w = np.array([[0x7F80], [0xFF80], [one]], np.uint16)           # inf - inf: NaN, invalid
    y, flags = reduce_column(x, w[None], BF16, FP32, ColumnAccumulator(window=24))
    assert (int(y[0, 0]), int(flags[0, 0])) == (0x7FC00000, int(Flags.INVALID))


def test_truncation_is_toward_minus_infinity_and_sticky_rounds_to_odd():
    """1 + 2**-30 and 1 - 2**-30 in a 24-bit window: the small term is floored (lost
    below the window), raising inexact; with sticky its lowest bit is set."""
    big, small = 0x3F80, 0x3080                 # 1.0, 2**-30
    x = np.array([[big, small]], np.uint16)
    # 2**-30 below 1.0 floors to 0 (positive) or to -1 unit = -2**-23 (negative); with
    # sticky both become odd: +1 unit and -1 unit.
    for sign, sticky, want in ((0, False, 0x3F800000), (1, False, 0x3F7FFFFE),
                               (0, True, 0x3F800001), (1, True, 0x3F7FFFFE)):
        w = np.array([[big], [small | sign << 15]], np.uint16)
        y, flags = reduce_column(x, w[None], BF16, FP32, ColumnAccumulator(window=24, sticky=sticky))
        assert (int(y[0, 0]), int(flags[0, 0])) == (want, int(Flags.INEXACT))


def test_default_is_sequential_fp32():
    rng = np.random.default_rng(5)
    x, w = _operands(rng, 4, 10, 3)
    assert np.array_equal(golden.mxu.matmul_flags(x, w)[0], golden.mxu.matmul_flags(x, w, accumulator="fp32")[0])
    column = golden.mxu.matmul_flags(x, w, accumulator="column:w=24")[0]
    assert np.array_equal(column, reduce_column(x, w[None], BF16, FP32, ColumnAccumulator(window=24))[0])


def test_stream_and_matmul_take_the_accumulator():
    rng = np.random.default_rng(6)
    x, w = _operands(rng, 8, 8, 4)
    acc = "column:w=26,g=3"
    s = stream(x, [w], np.zeros(8, bool), accumulator=acc)
    assert np.array_equal(s.y, matmul_flags(x, w, accumulator=acc)[0])
    tiled = golden.matmul(x, w, array=(4, 4), accumulator=acc)
    halves = [matmul_flags(x[:, t:t + 4], w[t:t + 4], accumulator=acc)[0] for t in (0, 4)]
    assert np.array_equal(tiled.y, golden.add(halves[0], halves[1], FP32)[0])


def test_fp8_products_fit_the_narrowest_window():
    rng = np.random.default_rng(7)
    x, w = _operands(rng, 5, 6, 4, fmt=FP8_E4M3)
    y, _ = reduce_column(x, w[None], FP8_E4M3, FP32, ColumnAccumulator(window=8))
    assert y.dtype == np.uint32
    with pytest.raises(ValueError, match="window must be at least the products' 16"):
        reduce_column(*_operands(rng, 2, 2, 2)[:1], _operands(rng, 2, 2, 2)[1][None], BF16, FP32,
                      ColumnAccumulator(window=12))


@pytest.mark.parametrize("spec, message", [
    ("column:w=7", "window must be in 8..48, not 7"),
    ("column:w=x", "w must be an integer"),
    ("column:q=1", "unknown option 'q=1'"),
    ("column:anchor=best", "anchor must be one of running, bound"),
    ("column:g=-1", "group must be in 0..8192"),
    ("kahan", "use fp32 or column"),
])
def test_bad_accumulator_names_the_parameter(spec, message):
    with pytest.raises(ValueError, match=message):
        accumulator_param("accumulator", spec)


def test_spelling_round_trips():
    for acc in ACCUMULATORS:
        assert accumulator_param("accumulator", str(acc)) == acc
    assert accumulator_param("accumulator", "fp32") is None
    assert accumulator_param("accumulator", "column").key == "colw26"


@pytest.mark.parametrize("acc", [ColumnAccumulator(window=20, sticky=True), ColumnAccumulator(anchor="bound"),
                                 ColumnAccumulator(window=18, group=3, anchor="bound")], ids=str)
def test_window_steps_chain_into_reduce_column(acc):
    """``window_add`` per product (a normalisation point: ``window_round``, then its value
    added to an empty window) and ``window_round`` at the end: ``reduce_column``'s bits
    and flags, the per-unit models the column units' testbenches check against."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 1 << 16, (300, 7)).astype(np.uint16)
    w = rng.integers(0, 1 << 16, (1, 7, 1)).astype(np.uint16)
    want = reduce_column(x, w, BF16, FP32, acc)

    def empty():
        return {name: np.zeros((300, 1), np.int64 if name in ("sum", "exp") else bool) for name in WINDOW_FIELDS}
    anchor = product_anchor(x, w, BF16, FP32) if acc.anchor == "bound" else None
    window, flags = empty(), np.zeros((300, 1), np.uint8)
    for k in range(7):
        product, mul_flags = multiply(x[:, k, None], w[:, k, :], BF16, FP32)
        window, add_flags = window_add(window, product, acc, FP32, anchor)
        flags |= mul_flags | add_flags
        if acc.group and (k + 1) % acc.group == 0 and k < 6:
            carried, point_flags = window_round(window, acc, FP32)
            window, add_flags = window_add(empty(), carried, acc, FP32, anchor)
            flags |= point_flags | add_flags
    bits, round_flags = window_round(window, acc, FP32)
    np.testing.assert_array_equal(bits, want[0])
    np.testing.assert_array_equal(flags | round_flags, want[1])
