"""Random MXU stimulus shared by the cocotb test and the compiled path (pure NumPy).

Values of moderate size with corners mixed in, tiles that cancel, and X rows with random
swap marks: every random draw comes from the ``rng`` passed in.
"""

from __future__ import annotations

import numpy as np

from golden import FP32, convert, from_float64
from golden.vectors import corner_values

__all__ = ["matrix", "cancelling", "rows_and_tiles"]


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
