"""Test vectors: every corner class of a format, random encodings weighted towards them, and
the MXU's random stimulus (shared by its cocotb test, the compiled path and the board's host
driver): values of moderate size with corners mixed in, tiles that cancel, X rows with random
swap marks. Every random draw comes from the ``rng`` passed in."""

from __future__ import annotations

import numpy as np

from .bits import from_float64
from .formats import FP32, FloatFormat, format_param
from .ops import convert
from .params import int_param, real_param, rng_param

#: Most encodings one call returns.
MAX_VECTORS = 1 << 31

__all__ = ["corner_values", "random_encodings", "near_pairs", "far_pairs", "matrix", "cancelling", "rows_and_tiles"]


def corner_values(fmt: FloatFormat) -> np.ndarray:
    """Both signs of: zero, smallest/largest subnormal, smallest normal and its neighbours,
    one and its neighbours, largest finite and its neighbour, inf, quiet and signalling NaNs."""
    fmt = format_param("fmt", fmt)
    e = fmt.man_bits
    magnitudes = [
        0, 1, fmt.man_mask,                                    # zero, subnormals
        fmt.min_normal, fmt.min_normal + 1, 2 * fmt.min_normal - 1, 2 * fmt.min_normal,
        fmt.bias << e, (fmt.bias << e) + 1, (fmt.bias << e) - 1,  # 1.0 and neighbours
        ((fmt.bias + 1) << e) | (1 << (e - 1)),                 # 3.0: a tie maker
        fmt.max_finite, fmt.max_finite - 1, fmt.inf,
        fmt.canonical_nan, fmt.inf | fmt.man_mask,            # quiet NaNs
    ]
    if fmt.man_bits > 1:
        magnitudes += [fmt.inf | 1, fmt.inf | (fmt.man_mask >> 1)]  # signalling NaNs
    magnitudes = np.unique(np.array(magnitudes, dtype=np.uint64))
    sign = np.uint64(1 << fmt.sign_shift)
    return np.concatenate([magnitudes, magnitudes | sign]).astype(fmt.dtype)


def _common(fmt, n, rng):
    return format_param("fmt", fmt), int_param("n", n, 0, MAX_VECTORS), rng_param("rng", rng)


def random_encodings(fmt: FloatFormat, n: int, rng: np.random.Generator,
                     special_fraction: float = 0.25) -> np.ndarray:
    """``n`` encodings: uniform bit patterns, with ``special_fraction`` of them drawn from
    the corner classes or from exponents at the edges of the range."""
    fmt, n, rng = _common(fmt, n, rng)
    special_fraction = real_param("special_fraction", special_fraction, 0.0, 1.0)
    bits = rng.integers(0, 1 << fmt.width, n, dtype=np.uint64)
    pick = rng.random(n) < special_fraction
    corners = corner_values(fmt)
    edge_exp = rng.choice(np.array([0, 1, 2, fmt.exp_max_field - 2, fmt.exp_max_field - 1,
                                    fmt.exp_max_field], dtype=np.uint64), n)
    edge = (bits & ~np.uint64(fmt.exp_max_field << fmt.man_bits)) | (edge_exp << np.uint64(fmt.man_bits))
    special = np.where(rng.random(n) < 0.5, corners[rng.integers(0, len(corners), n)], edge)
    return np.where(pick, special, bits).astype(fmt.dtype)


def near_pairs(fmt: FloatFormat, n: int, rng: np.random.Generator):
    """Pairs ``(a, b)`` with ``b`` a few ulps or binades from ``+-a``: cancellation, carries, ties."""
    fmt, n, rng = _common(fmt, n, rng)
    a = random_encodings(fmt, n, rng, special_fraction=0.1).astype(np.int64)
    distance = rng.integers(-(1 << min(fmt.man_bits + 3, 30)), 1 << min(fmt.man_bits + 3, 30), n)
    distance = np.where(rng.random(n) < 0.5, distance >> rng.integers(0, fmt.man_bits + 3, n), distance)
    flip = rng.integers(0, 2, n).astype(np.int64) << fmt.sign_shift
    b = ((a ^ flip) + distance) % (1 << fmt.width)
    return a.astype(fmt.dtype), b.astype(fmt.dtype)


def far_pairs(fmt: FloatFormat, n: int, rng: np.random.Generator):
    """Pairs ``(a, b)`` with ``b`` many binades below ``a``, either sign: bits lost to sticky.
    A third of the ``a`` are powers of two, where ``a - tiny`` drops into the binade below."""
    fmt, n, rng = _common(fmt, n, rng)
    a = random_encodings(fmt, n, rng, special_fraction=0.0)
    a = np.where(rng.random(n) < 0.3, a & ~np.array(fmt.man_mask, fmt.dtype), a)
    exp_a = (a.astype(np.int64) >> fmt.man_bits) & fmt.exp_max_field
    exp_b = np.clip(exp_a - rng.integers(fmt.precision, 2 * fmt.precision + 40, n), 1, fmt.exp_max_field - 1)
    b = (rng.integers(0, 2, n) << fmt.sign_shift) | (exp_b << fmt.man_bits) | rng.integers(0, 1 << fmt.man_bits, n)
    return a, b.astype(fmt.dtype)


def matrix(shape, rng, fmt, special_fraction):
    """``fmt`` values of moderate size, with corners (NaN, inf, zeros, subnormals) mixed in."""
    values = rng.standard_normal(shape) * 2.0 ** rng.integers(-6, 7, shape)
    big = rng.random(shape) < 0.02
    values = np.where(big, values * 2.0 ** 120, values)     # sums that overflow
    bits = convert(from_float64(values.astype(np.float32).astype(np.float64), FP32), FP32, fmt)[0]
    corners = corner_values(fmt)
    pick = rng.random(shape) < special_fraction
    return np.where(pick, corners[rng.integers(0, len(corners), shape)], bits).astype(fmt.dtype)


def cancelling(x, weights, fmt, rng):
    """Column 0 of every tile gets ``w[1] = -w[0]``; a fifth of the X rows get ``x[1] = x[0]``
    (exact cancellation) or ``x[0]`` one ulp off (the sum cancels down to one product's ulp)."""
    if x.shape[1] < 2:
        return
    sign = fmt.dtype.type(1 << (fmt.width - 1))
    for w in weights:
        w[1, 0] = w[0, 0] ^ sign
    rows = np.flatnonzero(rng.random(len(x)) < 0.2)
    x[rows, 1] = x[rows, 0] ^ (rng.random(len(rows)) < 0.5).astype(fmt.dtype)


def rows_and_tiles(k: int, n: int, count: int, fmt, rng, swap_rate: float = 1 / 8, special_fraction: float = 0.05):
    """``count`` X rows (``count`` x ``k``), their swap marks and one ``k`` x ``n`` tile per
    swap: ``(xs, tiles, swaps)``. A row swaps in the next tile with probability
    ``swap_rate``; the first two rows always do (a swap right after the first)."""
    swaps = rng.random(count) < swap_rate
    swaps[:2] = True
    tiles = [matrix((k, n), rng, fmt, special_fraction) for _ in range(int(swaps.sum()))]
    return matrix((count, k), rng, fmt, special_fraction), tiles, swaps
