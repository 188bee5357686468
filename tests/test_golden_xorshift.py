"""xorshift32: Marsaglia's known answer, per-lane seeding, never 0, uniform top bits."""

import numpy as np
import pytest

from golden import xorshift


def _scalar_xorshift(state, n):
    out = []
    for _ in range(n):
        state ^= (state << 13) & 0xFFFFFFFF
        state ^= state >> 17
        state ^= (state << 5) & 0xFFFFFFFF
        out.append(state)
    return out


def test_marsaglia_known_answer():
    # Marsaglia (2003), "Xorshift RNGs": xor32() from y = 2463534242 returns 723471715 first.
    outputs, _ = xorshift.stream(np.array([2463534242], np.uint32), 1)
    assert int(outputs[0, 0]) == 723471715


@pytest.mark.parametrize("seed", [0, 1, 0xDEADBEEF, 0xFFFFFFFF])
def test_lanes_match_a_scalar_generator_per_lane(seed):
    lanes = 8
    states = xorshift.lane_seeds(seed, lanes)
    outputs, final = xorshift.stream(states, 50)
    for i in range(lanes):
        start = seed ^ ((i * 0x9E3779B9) & 0xFFFFFFFF) or xorshift.ZERO_SEED_REPLACEMENT
        assert int(states[i]) == start
        assert outputs[:, i].tolist() == _scalar_xorshift(start, 50)
    assert np.array_equal(final, outputs[-1])


def test_zero_seeds_are_replaced():
    assert int(xorshift.lane_seeds(0, 1)[0]) == xorshift.ZERO_SEED_REPLACEMENT
    # seed == lane 3's offset would make lane 3 start at 0
    seed = (3 * xorshift.LANE_STRIDE) & 0xFFFFFFFF
    states = xorshift.lane_seeds(seed, 4)
    assert int(states[3]) == xorshift.ZERO_SEED_REPLACEMENT
    assert (states != 0).all()


def test_never_zero_and_lanes_differ(rng):
    seeds = [0, 1, 2, 0x80000000, int(rng.integers(0, 1 << 32))]
    for seed in seeds:
        states = xorshift.lane_seeds(seed, 64)
        assert len(set(states.tolist())) == 64, "lanes start in distinct states"
        outputs, _ = xorshift.stream(states, 2000)
        assert (outputs != 0).all()
        assert all(len(set(row.tolist())) == 64 for row in outputs[::97])


def test_bad_seed_is_rejected():
    with pytest.raises(ValueError, match="seed"):
        xorshift.lane_seeds(1 << 32, 1)


def test_top_bits_are_uniform(scale):
    """Chi-square of the top 8 bits (the rounder's bits) and balance of each top-16 bit."""
    steps, lanes = 16384 * scale, 64
    outputs, _ = xorshift.stream(xorshift.lane_seeds(12345, lanes), steps)
    top8 = xorshift.top_bits(outputs, 8).ravel()
    counts = np.bincount(top8, minlength=256)
    expected = top8.size / 256
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 400, f"chi-square {chi2:.1f} for 255 degrees of freedom"  # p ~ 1e-8
    bits = (xorshift.top_bits(outputs, 16).ravel()[:, None] >> np.arange(16, dtype=np.uint32)) & 1
    assert (np.abs(bits.mean(axis=0) - 0.5) < 6 * 0.5 / np.sqrt(top8.size)).all()


def test_top_bits_takes_the_most_significant_bits():
    values = np.array([0xF0000001, 0x80000000, 0x7FFFFFFF], np.uint32)
    assert xorshift.top_bits(values, 4).tolist() == [0xF, 0x8, 0x7]
    assert xorshift.top_bits(values, 1).tolist() == [1, 1, 0]
    assert xorshift.top_bits(values, 32).tolist() == values.tolist()


@pytest.mark.parametrize("n", [0, 1, 2, 7, 100, 4097])
def test_chunked_stream_and_jump_equal_stepping(n):
    states = xorshift.lane_seeds(2024, 3)
    expected = [_scalar_xorshift(int(s), n) for s in states]
    outputs, final = xorshift.stream(states, n)
    assert outputs.shape == (n, 3)
    assert outputs.T.tolist() == expected
    if n:
        assert final.tolist() == [e[-1] for e in expected]
        assert xorshift.jump(states, n).tolist() == final.tolist()
    else:
        assert final.tolist() == states.tolist()
