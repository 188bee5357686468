"""golden.column: the column accumulator against a scalar reference written from
docs/semantics.md (Python integers, one column at a time), its limits, and its errors."""

import numpy as np
import pytest

import golden
from golden import BF16, FP32, FP8_E4M3, Flags, multiply
from golden.column import (WINDOW_FIELDS, ColumnAccumulator, accumulation_arg, accumulation_param, exact_anchor,
                           product_anchor, reduce_column, window_add, window_round)
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


def _column_reference(terms, acc: ColumnAccumulator, anchors=None):
    """One column's sum of fp32 terms (encodings, in order) by the documented rules;
    ``anchors``: the fixed anchor of each segment (None: running)."""
    def start():
        return {"E": 0, "S": 0, "dropped": False, "nan": False, "inf": None, "invalid": False}

    def floor_shift(value, amount, st):
        shifted = value >> amount
        lost = (shifted << amount) != value
        st["dropped"] |= lost
        return shifted | int(lost) if acc.sticky else shifted

    def add(st, bits, anchor_bound):
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
        anchor = None if anchors is None else anchors[k // group]
        add(st, int(term), anchor)
        if (k + 1) % group == 0 or k + 1 == len(terms):
            result, point_flags = rounded(st)
            flags |= int(point_flags)
            if k + 1 < len(terms):
                st = start()
                add(st, result, None if anchors is None else anchors[(k + 1) // group])
    return result, flags


def _fields(bits, fmt=BF16):
    """Biased exponent fields of finite nonzero values (DAZ), None for the rest (Python ints)."""
    e, man = (int(bits) >> fmt.man_bits) & fmt.exp_max_field, int(bits) & fmt.man_mask
    return e if 0 < e < fmt.exp_max_field else None


def _anchor_of(largest, fmt=BF16):
    """The anchor the docs give products whose exponent fields sum to ``largest`` (None: no such pair)."""
    return 0 if largest is None else min(max(largest - 2 * fmt.bias + 1 + BIAS, 0), 254)


def _scalar_anchors(xs, ws, acc: ColumnAccumulator):
    """One column's fixed anchor per segment by docs/semantics.md, from the operands' fields
    (None for the running anchor)."""
    if acc.anchor == "running":
        return None
    ex, ew = [_fields(v) for v in xs], [_fields(v) for v in ws]
    group = acc.group or len(xs)
    if acc.anchor == "bound":
        bound = max((e or 0) for e in ex) + max((e or 0) for e in ew)
        return [min(max(bound - 2 * BF16.bias + 1 + BIAS, 0), 254)] * -(-len(xs) // group)
    sums = [a + b if a is not None and b is not None else None for a, b in zip(ex, ew)]
    segments = [[v for v in sums[s:s + group] if v is not None] for s in range(0, len(xs), group)]
    return [_anchor_of(max(seg, default=None)) for seg in segments]


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
                                   (24, 0, False, "bound"), (30, 5, True, "bound"), (16, 0, False, "exact"),
                                   (24, 4, False, "exact"), (26, 3, True, "exact")]]


@pytest.mark.parametrize("acc", ACCUMULATORS, ids=str)
def test_matches_scalar_reference(acc):
    rng = np.random.default_rng(acc.window * 7 + acc.group)
    x, w = _operands(rng, 6, 13, 5, specials=0.08)
    y, flags = reduce_column(x, w[None], BF16, FP32, acc)
    for m in range(x.shape[0]):
        for n in range(w.shape[1]):
            products, mul_flags = multiply(x[m], w[:, n], BF16, FP32)
            want, want_flags = _column_reference(products, acc, _scalar_anchors(x[m], w[:, n], acc))
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


def test_default_is_sequential():
    rng = np.random.default_rng(5)
    x, w = _operands(rng, 4, 10, 3)
    assert np.array_equal(golden.mxu.matmul_flags(x, w)[0], golden.mxu.matmul_flags(x, w, accumulation="sequential")[0])
    column = golden.mxu.matmul_flags(x, w, accumulation="column:w=24")[0]
    assert np.array_equal(column, reduce_column(x, w[None], BF16, FP32, ColumnAccumulator(window=24))[0])


@pytest.mark.parametrize("acc", ["column:w=26,g=3", "column:w=20,g=3,anchor=bound", "column:w=20,g=3,anchor=exact"])
def test_stream_and_matmul_take_the_accumulation(acc):
    rng = np.random.default_rng(6)
    x, w = _operands(rng, 8, 8, 4, spread=10)
    s = stream(x, [w], np.zeros(8, bool), accumulation=acc)
    assert np.array_equal(s.y, matmul_flags(x, w, accumulation=acc)[0])
    tiled = golden.matmul(x, w, array=(4, 4), accumulation=acc)
    halves = [matmul_flags(x[:, t:t + 4], w[t:t + 4], accumulation=acc)[0] for t in (0, 4)]
    assert np.array_equal(tiled.y, golden.add(halves[0], halves[1], FP32)[0])


def test_old_spellings_of_the_accumulation_compute_alike():
    """``accumulator=`` and ``fp32``, the old spellings of ``accumulation=`` and
    ``sequential``: the same results from every public entry; both keywords with different
    values are an error naming both."""
    rng = np.random.default_rng(8)
    x, w = _operands(rng, 6, 8, 3, spread=10)
    for old, new in (("fp32", "sequential"), ("column:w=26", "column:w=26")):
        assert np.array_equal(golden.mxu.matmul(x, w, accumulator=old), golden.mxu.matmul(x, w, accumulation=new))
        for a, b in zip(matmul_flags(x, w, accumulator=old), matmul_flags(x, w, accumulation=new)):
            assert np.array_equal(a, b)
        assert np.array_equal(golden.mxu.mxu(x, w, rows=4, accumulator=old), golden.mxu.mxu(x, w, rows=4, accumulation=new))
        swaps = np.zeros(6, bool)
        for a, b in zip(stream(x, [w], swaps, accumulator=old), stream(x, [w], swaps, accumulation=new)):
            assert np.array_equal(a, b)
        a, b = (golden.matmul(x, w, array=(4, 3), **kw) for kw in (dict(accumulator=old), dict(accumulation=new)))
        assert np.array_equal(a.y, b.y) and np.array_equal(a.flags, b.flags)
    assert accumulation_arg("column:w=26", "column:w=26") == "column:w=26"
    for call in (lambda **kw: golden.mxu.matmul(x, w, **kw), lambda **kw: golden.matmul(x, w, **kw),
                 lambda **kw: stream(x, [w], np.zeros(6, bool), **kw)):
        with pytest.raises(TypeError, match="accumulation='sequential' and accumulator='column:w=26' .* differ"):
            call(accumulation="sequential", accumulator="column:w=26")


def test_fp8_products_fit_the_narrowest_window():
    rng = np.random.default_rng(7)
    x, w = _operands(rng, 5, 6, 4, fmt=FP8_E4M3)
    y, _ = reduce_column(x, w[None], FP8_E4M3, FP32, ColumnAccumulator(window=8))
    assert y.dtype == np.uint32
    with pytest.raises(ValueError, match="window w must be at least the products' 16"):
        reduce_column(*_operands(rng, 2, 2, 2)[:1], _operands(rng, 2, 2, 2)[1][None], BF16, FP32,
                      ColumnAccumulator(window=12))


@pytest.mark.parametrize("spec, message", [
    ("column:w=7", "to 48, not 7"),
    ("column:w=x", "w must be an integer"),
    ("column:q=1", "unknown option 'q=1'"),
    ("column:anchor=best", "anchor must be one of running, bound, exact, not 'best'"),
    ("column:g=-1", "group g must be in 0..8192"),
    ("kahan", "use sequential or column"),
])
def test_bad_accumulation_names_the_parameter(spec, message):
    with pytest.raises(ValueError, match=message):
        accumulation_param("accumulation", spec)


def test_spelling_round_trips():
    for acc in ACCUMULATORS:
        assert accumulation_param("accumulation", str(acc)) == acc
    assert accumulation_param("accumulation", "sequential") is None
    assert accumulation_param("accumulation", "fp32") is None             # the old spelling
    assert accumulation_param("accumulation", "column").key == "colw26"
    exact = accumulation_param("accumulation", "column:w=26,g=8,sticky,anchor=exact")
    assert (str(exact), exact.key) == ("column:w=26,g=8,sticky,anchor=exact", "colw26g8sx")
    assert ColumnAccumulator(anchor="exact").key == "colw26x"


ONE, TWO_10, BF16_NEG = 0x3F80, 0x4480, 0x8000       # bf16 1.0, 2**10, the sign bit


def test_exact_anchor_is_tight_where_the_bound_is_loose():
    """x = [2**10, 1, 1], w = [1, 2**10, 0.375]: the exponent sums are 10, 10 and -2, so
    the exact anchor is 10 + 1 = 11 (field 138) where the bound's row and column maxima
    give 10 + 10 + 1 = 21 (field 148). In a 16-bit window the bound anchor's unit is
    2**6, which floors 0.375 away (2048, inexact); the exact anchor's is 2**-4, which
    keeps it: 2048.375 = 0x45000600, exact, as the running anchor."""
    x = np.array([[TWO_10, ONE, ONE]], np.uint16)
    w = np.array([[ONE], [TWO_10], [0x3EC0]], np.uint16)
    assert exact_anchor(x, w, BF16, FP32).tolist() == [[138]]
    assert product_anchor(x, w, BF16, FP32).tolist() == [[148]]
    for anchor, want in (("exact", (0x45000600, 0)), ("running", (0x45000600, 0)),
                         ("bound", (0x45000000, int(Flags.INEXACT)))):
        y, flags = reduce_column(x, w[None], BF16, FP32, ColumnAccumulator(window=16, anchor=anchor))
        assert (int(y[0, 0]), int(flags[0, 0])) == want, anchor


def test_exact_anchor_is_per_segment():
    """g=2, products [-2**-5, -2**-5 | 2**10, 0]: the first segment's exact anchor is its
    own (-5 + 1 = -4: field 123), so it sums to -2**-4 exactly; the second starts with that
    at max(123, 138) = 138 (unit 2**-4 in 16 bits: one unit) and gives 1024 - 2**-4 =
    1023.9375 = 0x447FFC00, exact. One anchor for the whole tile (the bound anchor's
    138) floors each -2**-5 to one unit, -2**-4: 1023.875 = 0x447FF800, inexact."""
    x = np.full((1, 4), ONE, np.uint16)
    w = np.array([[BF16_NEG | 0x3D00], [BF16_NEG | 0x3D00], [TWO_10], [0]], np.uint16)
    for anchor, want in (("exact", (0x447FFC00, 0)), ("running", (0x447FFC00, 0)),
                         ("bound", (0x447FF800, int(Flags.INEXACT)))):
        y, flags = reduce_column(x, w[None], BF16, FP32, ColumnAccumulator(window=16, group=2, anchor=anchor))
        assert (int(y[0, 0]), int(flags[0, 0])) == want, anchor


def _special_operands(rng, m, k, n):
    """Random bf16 operands over 60 binades (no product overflows or flushes), with
    zeros, subnormals, infinities and NaN mixed in."""
    def draw(shape):
        bits = rng.integers(0x3F80 - (30 << 7), 0x3F80 + (30 << 7), shape) | rng.integers(0, 2, shape) << 15
        pick = rng.choice([0, 0x8000, 0x0001, 0x807F, 0x7F80, 0xFF80, 0x7FC0], size=shape)
        return np.where(rng.random(shape) < 0.15, pick, bits).astype(np.uint16)
    return draw((m, k)), draw((k, n))


def test_exact_anchor_brackets_every_product():
    """Per (m, n): the exact anchor is at or above every finite nonzero product's exponent
    field, at most one above the largest, and 0 where no pair of operands is finite and
    nonzero; the tile-per-row form (M x K x N) is each row's own."""
    rng = np.random.default_rng(11)
    x, w = _special_operands(rng, 40, 9, 30)
    x[0] = 0                                  # a row with no finite nonzero pair
    x[1, :] = 0x7F80
    anchor = exact_anchor(x, w, BF16, FP32)
    products, _ = multiply(x[:, :, None], w[None], BF16, FP32)          # M x K x N
    field = (products.astype(np.int64) >> 23) & 0xFF
    finite_nonzero = (field > 0) & (field < 255)
    largest = np.where(finite_nonzero, field, 0).max(axis=1)
    assert (anchor[:, None, :] >= np.where(finite_nonzero, field, 0)).all()
    assert (anchor <= largest + 1).all()
    assert (anchor[:2] == 0).all() and (largest[:2] == 0).all()
    assert ((anchor == largest) & (largest > 0)).any() and ((anchor == largest + 1) & (largest > 0)).any()
    rows = np.broadcast_to(w, (40,) + w.shape)
    assert np.array_equal(exact_anchor(x, rows, BF16, FP32), anchor)
    assert np.array_equal(exact_anchor(x, w[None], BF16, FP32), anchor)


def test_exact_anchor_is_the_running_anchors_last_or_one_above():
    """Without normalisation points and with no product flushed or overflowed, the running
    anchor ends at the largest product's exponent field: the exact anchor is that (where
    the largest product's significands reach 2) or one above, never the bound's slack."""
    rng = np.random.default_rng(12)
    x, w = _operands(rng, 200, 16, 1, spread=12)
    running = {name: np.zeros((200, 1), np.int64 if name in ("sum", "exp") else bool) for name in WINDOW_FIELDS}
    for k in range(16):
        product, _ = multiply(x[:, k, None], w[None, k, :], BF16, FP32)
        running, _ = window_add(running, product, ColumnAccumulator(), FP32)
    difference = exact_anchor(x, w, BF16, FP32) - running["exp"]
    assert set(np.unique(difference)) == {0, 1}
    assert (product_anchor(x, w, BF16, FP32) - running["exp"]).max() > 1


@pytest.mark.parametrize("acc", [ColumnAccumulator(window=20, sticky=True), ColumnAccumulator(anchor="bound"),
                                 ColumnAccumulator(window=18, group=3, anchor="bound"),
                                 ColumnAccumulator(window=18, group=3, anchor="exact")], ids=str)
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
    def anchor_from(k):       # the bound anchor is the tile's, the exact one its segment's
        if acc.anchor == "exact":
            return exact_anchor(x[:, k:k + acc.group], w[:, k:k + acc.group], BF16, FP32)
        return product_anchor(x, w, BF16, FP32) if acc.anchor == "bound" else None
    anchor = anchor_from(0)
    window, flags = empty(), np.zeros((300, 1), np.uint8)
    for k in range(7):
        product, mul_flags = multiply(x[:, k, None], w[:, k, :], BF16, FP32)
        window, add_flags = window_add(window, product, acc, FP32, anchor)
        flags |= mul_flags | add_flags
        if acc.group and (k + 1) % acc.group == 0 and k < 6:
            carried, point_flags = window_round(window, acc, FP32)
            anchor = anchor_from(k + 1)
            window, add_flags = window_add(empty(), carried, acc, FP32, anchor)
            flags |= point_flags | add_flags
    bits, round_flags = window_round(window, acc, FP32)
    np.testing.assert_array_equal(bits, want[0])
    np.testing.assert_array_equal(flags | round_flags, want[1])


@pytest.mark.parametrize("anchor", ["exact", "bound"])
def test_the_exact_anchor_is_per_tile_and_per_pass(anchor):
    """golden.matmul with three bf16 passes on a 3-row array: each pass's tile of 3 rows
    is its own column (a segment anchor of its own), the passes and tiles summed by the
    output accumulators (RNE, smallest pass first): the same bits from golden.mxu.matmul
    per tile and golden.add."""
    rng = np.random.default_rng(13)
    x = (rng.standard_normal((5, 6)) * np.exp2(rng.integers(-12, 13, (5, 6)))).astype(np.float32).view(np.uint32)
    w = (rng.standard_normal((6, 4)) * np.exp2(rng.integers(-12, 13, (6, 4)))).astype(np.float32).view(np.uint32)
    acc = f"column:w=20,g=2,anchor={anchor}"
    xs, ws = golden.multipass.split(x, 2), golden.multipass.split(w, 2)
    want = None
    for i, j in golden.multipass.pass_order(3):
        for t in (0, 3):
            tile = golden.mxu.matmul(xs[i][:, t:t + 3], ws[j][t:t + 3], accumulation=acc)
            want = tile if want is None else golden.add(want, tile, FP32)[0]
    assert np.array_equal(golden.matmul(x, w, precision="HIGH", array=(3, 2), accumulation=acc).y, want)


@pytest.mark.parametrize("accumulator, x, w_column, unpadded", [
    # A point after the last real row (K = 2, g=2, rows 3): the two products cancel to a
    # tiny negative sum that the first point flushes to -0; the padded row's segment (that
    # -0 and a +0 product) rounds to +0, as the RTL computes it.
    ("column:w=26,g=2", [0x20C0, 0x20A0], [0xA000, 0x2000], 0x80000000),
    ("column:w=26,g=2,anchor=exact", [0x20C0, 0x20A0], [0xA000, 0x2000], 0x80000000),
    # Sequential fp32: -1.5 * 2**-126 + 1.25 * 2**-126 flushes to -0; the padded +0 product
    # adds +0: -0 + +0 = +0.
    ("fp32", [0x80C0, 0x00A0], [0x3F80, 0x3F80], 0x80000000),
])
def test_a_short_last_tile_is_zero_padded(accumulator, x, w_column, unpadded):
    """golden.matmul reduces a short last tile padded with zeros to the array's rows, as
    the hardware and golden.mxu.stream (fed the zero row) do."""
    x = np.array([x], np.uint16)
    w = np.zeros((2, 5), np.uint16)
    w[:, 0] = w_column
    padded_x, padded_w = np.pad(x, ((0, 0), (0, 1))), np.pad(w, ((0, 1), (0, 0)))
    got = golden.matmul(x, w, array=(3, 5), accumulation=accumulator)
    assert (int(got.y[0, 0]), int(got.flags[0, 0])) == (0, int(Flags.UNDERFLOW | Flags.INEXACT))
    assert int(golden.matmul(x, w, accumulation=accumulator).y[0, 0]) == unpadded     # one tile of K: no padding
    streamed = stream(padded_x, [padded_w], np.ones(1, bool), accumulation=accumulator)
    assert np.array_equal(got.y, streamed.y) and np.array_equal(got.flags, streamed.row_flags)
