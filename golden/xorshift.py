"""Marsaglia's xorshift32 (13, 17, 5), one generator per lane, vectorised over lanes.

Lane ``i`` of a unit seeded with ``seed`` starts from ``lane_seed(seed, i)``:
``seed XOR (i * 0x9E3779B9 mod 2**32)``, replaced by ``ZERO_SEED_REPLACEMENT`` when that is 0
(lane 0 starts from the seed itself). Each step outputs the new state; a rounder takes
the top ``rand_bits`` bits of the output.
"""

from __future__ import annotations

import numpy as np

from .params import int_param

__all__ = [
    "ZERO_SEED_REPLACEMENT", "LANE_STRIDE", "lane_seeds", "step", "jump", "stream", "top_bits",
    "lane_rand",
]

#: The state a zero seed becomes: the example seed of Marsaglia's paper.
ZERO_SEED_REPLACEMENT = 2463534242
#: Lane ``i`` XORs ``i * LANE_STRIDE`` into the seed (2**32 / golden ratio).
LANE_STRIDE = 0x9E3779B9

_MASK = 0xFFFFFFFF
#: Largest lane count and stream length the functions accept (memory, not arithmetic, limits them).
MAX_LANES = 1 << 20
MAX_STEPS = 1 << 40


def lane_seeds(seed: int, lanes: int) -> np.ndarray:
    """Initial states (uint32) of ``lanes`` generators seeded with ``seed``; never 0."""
    seed = int_param("seed", seed, 0, _MASK)
    lanes = int_param("lanes", lanes, 1, MAX_LANES)
    offsets = (np.arange(lanes, dtype=np.uint64) * np.uint64(LANE_STRIDE)) & np.uint64(_MASK)
    states = (np.uint64(seed) ^ offsets).astype(np.uint32)
    return np.where(states == 0, np.uint32(ZERO_SEED_REPLACEMENT), states)


def step(state: np.ndarray) -> np.ndarray:
    """One xorshift32 step of every lane (uint32 in, uint32 out)."""
    y = np.asarray(state, dtype=np.uint32)
    y = y ^ (y << np.uint32(13))
    y = y ^ (y >> np.uint32(17))
    return y ^ (y << np.uint32(5))


def _step_int(y: int) -> int:
    y ^= (y << 13) & _MASK
    y ^= y >> 17
    return y ^ ((y << 5) & _MASK)


def _jump_matrix(n: int) -> list[int]:
    """Columns of the GF(2) matrix of ``n`` steps (the step is linear over GF(2))."""
    def apply(columns, v):
        out = 0
        for j in range(32):
            if v >> j & 1:
                out ^= columns[j]
        return out

    result = [1 << j for j in range(32)]
    power = [_step_int(1 << j) for j in range(32)]
    while n:
        if n & 1:
            result = [apply(power, c) for c in result]
        power = [apply(power, c) for c in power]
        n >>= 1
    return result


def _apply(columns: list[int], states: np.ndarray) -> np.ndarray:
    out = np.zeros_like(states)
    for j, column in enumerate(columns):
        out ^= ((states >> np.uint32(j)) & np.uint32(1)) * np.uint32(column)
    return out


def jump(states: np.ndarray, n: int) -> np.ndarray:
    """The states of every lane after ``n`` steps, in O(log n) matrix work."""
    n = int_param("n", n, 0, MAX_STEPS)
    return _apply(_jump_matrix(n), np.asarray(states, dtype=np.uint32))


def stream(states: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The next ``n`` outputs of every lane: ``(outputs[n, lanes...], final states)``.

    Long streams are generated as parallel chunks whose starting states come from
    ``jump``: the same outputs as stepping ``n`` times.
    """
    n = int_param("n", n, 0, MAX_STEPS)
    states = np.asarray(states, dtype=np.uint32)
    chunk = max(1, min(n, int(np.sqrt(64 * max(n, 1)))))
    starts = [states]
    if chunk < n:
        columns = _jump_matrix(chunk)
        while len(starts) * chunk < n:
            starts.append(_apply(columns, starts[-1]))
    y = np.stack(starts)                        # [chunks, lanes...]
    out = np.empty((chunk,) + y.shape, np.uint32)
    for i in range(chunk):
        y = step(y)
        out[i] = y
    # out[i, c] is output i of chunk c: output c * chunk + i of the stream.
    out = np.moveaxis(out, 1, 0).reshape((-1,) + states.shape)[:n]
    return out, (out[-1].copy() if n else states)


def top_bits(values: np.ndarray, rand_bits: int) -> np.ndarray:
    """The top ``rand_bits`` bits of 32-bit generator outputs: a rounder's ``rand``."""
    rand_bits = int_param("rand_bits", rand_bits, 1, 32)
    return np.asarray(values, dtype=np.uint32) >> np.uint32(32 - rand_bits)


def lane_rand(seed: int, lanes: int, n: int, rand_bits: int) -> np.ndarray:
    """``rand[n, lanes]`` a freshly seeded ``lanes``-lane unit feeds its rounders."""
    rand_bits = int_param("rand_bits", rand_bits, 1, 32)
    outputs, _ = stream(lane_seeds(seed, lanes), n)
    return top_bits(outputs, rand_bits)
