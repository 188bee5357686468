"""Stochastic rounding: exact counts over every random value, then statistics on xorshift bits."""

import numpy as np
import pytest

from golden import BF16, FP32, add, convert, to_float64, xorshift
from golden.vectors import random_encodings


def _normal_fp32(n, rng):
    """fp32 encodings whose bf16 rounding stays normal and finite."""
    exp = rng.integers(100, 150, n, dtype=np.uint64)
    bits = (rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(31)) | (exp << np.uint64(23)) \
        | rng.integers(0, 1 << 23, n, dtype=np.uint64)
    return bits.astype(np.uint32)


@pytest.mark.parametrize("sr_bits", [16, 12, 8, 3, 1])
def test_sr_goes_away_for_exactly_floor_f_2k_of_all_random_values(sr_bits, rng):
    """Over all 2**k values of R, fp32 -> bf16 rounds away exactly floor(f * 2**k) times."""
    a = _normal_fp32(64, rng)
    a[:8] &= np.uint32(0xFFFF0000)          # some exact values
    a[8:16] = (a[8:16] & 0xFFFF0000) | 0x8000  # some ties
    rand = np.arange(1 << sr_bits, dtype=np.uint64)
    bits, flags = convert(a[:, None], FP32, BF16, "sr", rand[None, :], sr_bits=sr_bits)
    truncated = (a >> 16).astype(np.uint16)
    away = bits.astype(np.int64) - truncated[:, None]
    assert np.isin(away, (0, 1)).all(), "result is the truncation or one ulp away from zero"
    discarded = a & np.uint32(0xFFFF)         # f = discarded / 2**16
    expected_away = discarded >> np.uint32(16 - sr_bits)
    assert np.array_equal(away.sum(axis=1), expected_away)
    assert np.array_equal(flags != 0, np.broadcast_to((discarded != 0)[:, None], flags.shape))
    exact = discarded == 0
    assert (away[exact] == 0).all(), "exact values never move"


def test_sr_half_goes_away_for_one_random_bit_value_when_inexact(rng):
    a = _normal_fp32(256, rng)
    a[:32] &= np.uint32(0xFFFF0000)
    bits, _ = convert(a[:, None], FP32, BF16, "sr-half", np.array([[0, 1]], np.uint64))
    away = bits.astype(np.int64) - (a >> 16)[:, None]
    inexact = (a & 0xFFFF) != 0
    assert np.array_equal(away[:, 0], np.zeros(len(a)))
    assert np.array_equal(away[:, 1], inexact.astype(np.int64))


def _xorshift_rand(seed, lanes, steps, rand_bits):
    return xorshift.lane_rand(seed, lanes, steps, rand_bits)   # [steps, lanes]


def test_sr_is_unbiased_on_xorshift_bits(rng, scale):
    """The mean of many stochastic roundings of x equals x within 6 standard errors."""
    lanes, steps = 128, 2048 * scale
    a = _normal_fp32(lanes, rng)
    rand = _xorshift_rand(0x1234, lanes, steps, 16)
    bits, _ = convert(np.broadcast_to(a, (steps, lanes)), FP32, BF16, "sr", rand)
    mean = to_float64(bits, BF16).mean(axis=0)
    x = to_float64(a, FP32)
    ulp = np.ldexp(1.0, np.frexp(np.abs(x))[1] - 8)
    standard_error = ulp / (2 * np.sqrt(steps))   # Bernoulli variance <= 1/4 ulp^2
    assert (np.abs(mean - x) <= 6 * standard_error).all()
    # Round to nearest, by contrast, is off by the whole rounding error every time.
    rne = to_float64(convert(a, FP32, BF16)[0], BF16)
    assert np.abs(rne - x).mean() > 20 * standard_error.mean()


def test_sr_with_fewer_bits_is_biased_towards_zero_by_less_than_2_to_minus_k(rng, scale):
    lanes, steps, sr_bits = 128, 4096 * scale, 4
    a = _normal_fp32(lanes, rng)
    rand = _xorshift_rand(77, lanes, steps, sr_bits)
    bits, _ = convert(np.broadcast_to(a, (steps, lanes)), FP32, BF16, "sr", rand, sr_bits=sr_bits)
    away_rate = (bits.astype(np.int64) - (a >> 16)).mean(axis=0)
    f = (a & 0xFFFF) / 2.0 ** 16
    documented = np.floor(f * 2 ** sr_bits) / 2 ** sr_bits
    assert (np.abs(away_rate - documented) <= 6 * 0.5 / np.sqrt(steps)).all()
    assert ((f - documented >= 0) & (f - documented < 2.0 ** -sr_bits)).all()


def test_sr_half_goes_away_half_the_time(rng, scale):
    lanes, steps = 64, 4096 * scale
    a = _normal_fp32(lanes, rng) | np.uint32(1)   # all inexact
    rand = _xorshift_rand(99, lanes, steps, 1)
    bits, _ = convert(np.broadcast_to(a, (steps, lanes)), FP32, BF16, "sr-half", rand)
    away_rate = (bits.astype(np.int64) - (a >> 16)).mean(axis=0)
    assert (np.abs(away_rate - 0.5) <= 6 * 0.5 / np.sqrt(steps)).all()


def test_sr_add_never_moves_exact_sums(rng):
    a = random_encodings(FP32, 20000, rng)
    b = random_encodings(FP32, 20000, rng)
    exact = (add(a, b, FP32, "rtz")[1] & 1) == 0
    for r in (0, 1, (1 << 24) - 1):
        bits, flags = add(a, b, FP32, "sr", np.full(a.shape, r, np.uint64))
        rne, _ = add(a, b, FP32)
        assert np.array_equal(bits[exact], rne[exact])
        assert not (flags[exact] & 1).any()


def test_sr_add_of_a_far_smaller_value_is_unbiased(scale):
    """1 + 2**-30 rounded stochastically to fp32 with sr_bits = 24 (the default) and 32."""
    steps = 1 << 16 * 1
    one, tiny = np.uint32(0x3F800000), np.uint32(0x30800000)  # 2**-30: f = 2**-7 of an ulp
    for sr_bits in (24, 32):
        rand = xorshift.lane_rand(5, 16, steps * scale // 16, sr_bits).ravel()
        bits, _ = add(np.full(rand.shape, one), np.full(rand.shape, tiny), FP32, "sr", rand,
                      sr_bits=sr_bits)
        rate = (bits.astype(np.int64) - one).mean()
        assert abs(rate - 2.0 ** -7) <= 6 * np.sqrt(2.0 ** -7 / len(rand))
