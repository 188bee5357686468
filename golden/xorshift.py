"""Marsaglia's xorshift32 (13, 17, 5), one generator per lane, vectorised over lanes.

Lane ``i`` of a unit seeded with ``seed`` starts from ``lane_seed(seed, i)``:
``seed XOR (i * 0x9E3779B9 mod 2**32)``, replaced by ``ZERO_SEED_REPLACEMENT`` when that is 0
(lane 0 starts from the seed itself). Each step outputs the new state; a rounder takes
the top ``rand_bits`` bits of the output.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ZERO_SEED_REPLACEMENT", "LANE_STRIDE", "lane_seeds", "step", "stream", "top_bits",
    "lane_rand",
]

#: The state a zero seed becomes: the example seed of Marsaglia's paper.
ZERO_SEED_REPLACEMENT = 2463534242
#: Lane ``i`` XORs ``i * LANE_STRIDE`` into the seed (2**32 / golden ratio).
LANE_STRIDE = 0x9E3779B9

_MASK = 0xFFFFFFFF


def lane_seeds(seed: int, lanes: int) -> np.ndarray:
    """Initial states (uint32) of ``lanes`` generators seeded with ``seed``; never 0."""
    if not 0 <= seed <= _MASK:
        raise ValueError(f"seed must be in 0..{_MASK}, not {seed}")
    offsets = (np.arange(lanes, dtype=np.uint64) * np.uint64(LANE_STRIDE)) & np.uint64(_MASK)
    states = (np.uint64(seed) ^ offsets).astype(np.uint32)
    return np.where(states == 0, np.uint32(ZERO_SEED_REPLACEMENT), states)


def step(state: np.ndarray) -> np.ndarray:
    """One xorshift32 step of every lane (uint32 in, uint32 out)."""
    y = np.asarray(state, dtype=np.uint32)
    y = y ^ (y << np.uint32(13))
    y = y ^ (y >> np.uint32(17))
    return y ^ (y << np.uint32(5))


def stream(states: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The next ``n`` outputs of every lane: ``(outputs[n, lanes], final states)``."""
    states = np.asarray(states, dtype=np.uint32)
    out = np.empty((n,) + states.shape, np.uint32)
    for i in range(n):
        states = step(states)
        out[i] = states
    return out, states


def top_bits(values: np.ndarray, rand_bits: int) -> np.ndarray:
    """The top ``rand_bits`` bits of 32-bit generator outputs: a rounder's ``rand``."""
    return np.asarray(values, dtype=np.uint32) >> np.uint32(32 - rand_bits)


def lane_rand(seed: int, lanes: int, n: int, rand_bits: int) -> np.ndarray:
    """``rand[n, lanes]`` a freshly seeded ``lanes``-lane unit feeds its rounders."""
    outputs, _ = stream(lane_seeds(seed, lanes), n)
    return top_bits(outputs, rand_bits)
