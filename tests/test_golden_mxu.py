"""The MXU model against a plain scalar loop written from the contract, and against float64."""

import numpy as np
import pytest

from golden import BF16, FP32, Rounding, convert, from_float64, mxu, scalar, to_float64, xorshift
from golden.vectors import corner_values, random_encodings


def _scalar_tile(x, w):
    """y = ((+0 + x0*w0) + x1*w1) + ...: exact-in-fp32 products, RNE adds, one element at a time."""
    m_rows, k_depth = x.shape
    y = np.zeros((m_rows, w.shape[1]), np.uint32)
    for m in range(m_rows):
        for n in range(w.shape[1]):
            acc = 0
            for k in range(k_depth):
                product, _ = scalar.multiply(int(x[m, k]), int(w[k, n]), BF16, FP32, Rounding.NEAREST_EVEN)
                acc, _ = scalar.add(acc, product, FP32, Rounding.NEAREST_EVEN)
            y[m, n] = acc
    return y


def _matrix(shape, rng, special_fraction):
    """bf16 matrices: moderate values, with corner values (NaN, inf, zeros, subnormals) mixed in."""
    values = rng.standard_normal(shape) * 2.0 ** rng.integers(-4, 5, shape)
    bits = convert(from_float64(values.astype(np.float32).astype(np.float64), FP32), FP32, BF16)[0]
    corners = corner_values(BF16)
    pick = rng.random(shape) < special_fraction
    return np.where(pick, corners[rng.integers(0, len(corners), shape)], bits).astype(np.uint16)


@pytest.mark.parametrize("m, k, n, special_fraction", [
    (1, 1, 1, 0.0), (5, 3, 2, 0.2), (7, 8, 8, 0.05), (4, 16, 3, 0.0),
])
def test_single_tile_matches_scalar_loop(m, k, n, special_fraction, rng):
    x = _matrix((m, k), rng, special_fraction)
    w = _matrix((k, n), rng, special_fraction)
    assert np.array_equal(mxu.mxu(x, w), _scalar_tile(x, w))


def test_random_bits_and_overflowing_sums_match_scalar_loop(rng):
    """Uniform random encodings: overflow to inf while summing, inf - inf, FTZ on products."""
    x = random_encodings(BF16, 6 * 8, rng).reshape(6, 8)
    w = random_encodings(BF16, 8 * 5, rng).reshape(8, 5)
    big = np.full((3, 4), 0x7F00, np.uint16)  # 2^127: sums of products overflow
    assert np.array_equal(mxu.mxu(x, w), _scalar_tile(x, w))
    assert np.array_equal(mxu.mxu(big, big.T.copy()), _scalar_tile(big, big.T.copy()))
    assert (mxu.mxu(big, np.full((4, 2), 0x3F80, np.uint16)) == 0x7F800000).all()


def test_cancellation_gives_plus_zero():
    x = np.array([[0x3F80, 0x3F80]], np.uint16)   # 1, 1
    w = np.array([[0x4000], [0xC000]], np.uint16)  # 2, -2
    assert int(mxu.mxu(x, w)[0, 0]) == 0x00000000
    negative_zero = np.array([[0x8000]], np.uint16)
    assert int(mxu.mxu(negative_zero, np.array([[0x3F80]], np.uint16))[0, 0]) == 0, "+0 + -0 = +0"


def test_close_to_float64_matmul(rng):
    m, k, n = 32, 64, 16
    x = _matrix((m, k), rng, 0.0)
    w = _matrix((k, n), rng, 0.0)
    xf, wf = to_float64(x, BF16), to_float64(w, BF16)
    got = to_float64(mxu.mxu(x, w), FP32)
    bound = k * 2.0 ** -24 * (np.abs(xf) @ np.abs(wf))   # sequential fp32 summation error
    assert (np.abs(got - xf @ wf) <= bound).all()


def test_tiles_accumulate_first_tile_loads_then_rne_adds(rng):
    rows, tiles = 4, 3
    x = _matrix((5, rows * tiles), rng, 0.02)
    w = _matrix((rows * tiles, 3), rng, 0.02)
    acc = None
    for t in range(tiles):
        y = _scalar_tile(x[:, t * rows:(t + 1) * rows], w[t * rows:(t + 1) * rows])
        acc = y if acc is None else np.vectorize(
            lambda p, q: scalar.add(int(p), int(q), FP32, Rounding.NEAREST_EVEN)[0], otypes=[np.uint32])(acc, y)
    assert np.array_equal(mxu.mxu(x, w, rows=rows), acc)


def test_convert_inputs_rounds_fp32_to_bf16_with_rne(rng):
    x32 = random_encodings(FP32, 4 * 6, rng).reshape(4, 6)
    w32 = random_encodings(FP32, 6 * 2, rng).reshape(6, 2)
    x16, w16 = convert(x32, FP32, BF16)[0], convert(w32, FP32, BF16)[0]
    assert np.array_equal(mxu.mxu(x32, w32, convert_inputs=True), _scalar_tile(x16, w16))


@pytest.mark.parametrize("mode", ["rne", "sr", "sr-half"])
def test_output_rounding_uses_one_xorshift_lane_per_column(mode, rng):
    m, k, n, seed = 40, 4, 3, 0xC0FFEE
    x = _matrix((m, k), rng, 0.0)
    w = _matrix((k, n), rng, 0.0)
    y = _scalar_tile(x, w)
    rand_bits = {"rne": None, "sr": 16, "sr-half": 1}[mode]
    got = mxu.mxu(x, w, out_rounding=mode, seed=seed)
    for j in range(n):
        # Column j: lane j of a unit seeded with `seed`, one step per output row.
        state = seed ^ ((j * 0x9E3779B9) & 0xFFFFFFFF) or xorshift.ZERO_SEED_REPLACEMENT
        for i in range(m):
            state ^= (state << 13) & 0xFFFFFFFF
            state ^= state >> 17
            state ^= (state << 5) & 0xFFFFFFFF
            rand = None if rand_bits is None else state >> (32 - rand_bits)
            want, _ = scalar.convert(int(y[i, j]), FP32, BF16, Rounding.parse(mode), rand, rand_bits)
            assert int(got[i, j]) == want, (i, j)


def test_bad_shapes_are_rejected():
    x = np.zeros((2, 6), np.uint16)
    with pytest.raises(ValueError, match="multiple of rows = 4"):
        mxu.mxu(x, np.zeros((6, 2), np.uint16), rows=4)
    with pytest.raises(ValueError, match="K = 6 columns but w"):
        mxu.mxu(x, np.zeros((5, 2), np.uint16))


def test_tile_accumulation_keeps_a_flushed_negative_zero():
    """Each 2-deep tile sums 2^-125 - (1 + 2^-7) 2^-125 = -2^-132: flushed to -0.
    The first tile loads the accumulator (-0), and (-0) + (-0) = -0."""
    x = np.array([[0x0100, 0x8101, 0x0100, 0x8101]], np.uint16)
    w = np.full((4, 1), 0x3F80, np.uint16)
    assert int(mxu.mxu(x[:, :2], w[:2])[0, 0]) == 0x80000000
    assert int(mxu.mxu(x, w, rows=2)[0, 0]) == 0x80000000


def _scalar_flags(x, w):
    """Per element of ``y``: the OR of its multiplies' and adds' flags, one at a time."""
    flags = np.zeros((x.shape[0], w.shape[1]), np.uint8)
    for m in range(x.shape[0]):
        for n in range(w.shape[1]):
            acc = 0
            for k in range(x.shape[1]):
                product, f_mul = scalar.multiply(int(x[m, k]), int(w[k, n]), BF16, FP32, Rounding.NEAREST_EVEN)
                acc, f_add = scalar.add(acc, product, FP32, Rounding.NEAREST_EVEN)
                flags[m, n] |= f_mul | f_add
    return flags


def test_stream_swaps_tiles_at_the_marked_rows_with_flags(rng):
    """Row i uses the tile of the latest swap at or before it (row 0 always swaps); each
    row's flags are its multiplies' and adds' (corner values: invalid, overflow, inexact)."""
    tiles = [_matrix((3, 2), rng, 0.2) for _ in range(3)]
    x = _matrix((7, 3), rng, 0.2)
    swap = [0, 0, 1, 0, 0, 1, 0]
    got = mxu.stream(x, tiles, swap)
    assert got.tile.tolist() == [0, 0, 1, 1, 1, 2, 2]
    for i, t in enumerate(got.tile):
        assert np.array_equal(got.y[i], _scalar_tile(x[i:i + 1], tiles[t])[0])
        assert np.array_equal(got.row_flags[i], _scalar_flags(x[i:i + 1], tiles[t])[0])
    assert np.bitwise_or.reduce(got.row_flags, axis=None) & 0x15, "no flags raised: corners missing"
    with pytest.raises(ValueError, match="3 swaps need as many tiles, not 2"):
        mxu.stream(x, tiles[:2], swap)


def test_stream_accumulators_and_output_rounding_match_mxu(rng):
    """Two passes of two rows into accumulators 1 and 0 (first, then last), RNE output
    rounding: the y rows are mxu() over the 2-tile product; a last row's flags are its
    tile's multiplies and adds, the accumulator add's and the rounder's."""
    rows = 2
    x = _matrix((2, 2 * rows), rng, 0.1)
    w = _matrix((2 * rows, 3), rng, 0.1)
    xs = np.vstack([x[:, :rows], x[:, rows:]])
    control = [(1, 1, 0), (0, 1, 0), (1, 0, 1), (0, 0, 1)]
    got = mxu.stream(xs, [w[:rows], w[rows:]], [1, 0, 1, 0], control=control, out_rounding="rne", acc_depth=2)
    assert np.array_equal(got.y, mxu.mxu(x, w, rows=rows, out_rounding="rne"))
    partial = [_scalar_tile(x[:, :rows], w[:rows]), _scalar_tile(x[:, rows:], w[rows:])]
    for i in range(2):
        assert np.array_equal(got.row_flags[i], _scalar_flags(x[i:i + 1, :rows], w[:rows])[0])
        want = _scalar_flags(x[i:i + 1, rows:], w[rows:])[0]
        for j in range(3):
            total, f_acc = scalar.add(int(partial[0][i, j]), int(partial[1][i, j]), FP32, Rounding.NEAREST_EVEN)
            _, f_round = scalar.convert(total, FP32, BF16, Rounding.NEAREST_EVEN)
            want[j] |= f_acc | f_round
        assert np.array_equal(got.row_flags[2 + i], want), i
