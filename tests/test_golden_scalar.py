"""The vectorised model against the exact-rational scalar reference (golden.scalar), in
every rounding mode, for conversions, products and sums across formats."""

import numpy as np
import pytest

from golden import BF16, FP8_E4M3, FP8_E5M2, FP16, FP32, TF32, Rounding, add, convert, multiply, scalar
from golden.ops import add_sr_bits, convert_sr_bits, multiply_sr_bits
from golden.vectors import corner_values, far_pairs, near_pairs, random_encodings

N = 3000
MODES = list(Rounding)


def _rand(rng, rand_bits, n):
    if rand_bits is None:
        return None
    return rng.integers(0, 1 << rand_bits, n, dtype=np.uint64)


def _compare(vector_out, scalar_outs, operands):
    bits, flags = vector_out
    for i, (want_bits, want_flags) in enumerate(scalar_outs):
        if (int(bits[i]), int(flags[i])) != (want_bits, int(want_flags)):
            args = ", ".join(f"{int(o[i]):#x}" for o in operands)
            raise AssertionError(f"({args}): vectorised {int(bits[i]):#x}/{int(flags[i]):#07b},"
                                 f" scalar {want_bits:#x}/{int(want_flags):#07b}")


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("in_fmt, out_fmt", [
    (FP32, BF16), (FP32, FP16), (FP32, TF32), (FP32, FP8_E4M3), (FP16, FP8_E5M2), (BF16, FP32),
], ids=str)
def test_convert_matches_scalar(in_fmt, out_fmt, mode, rng, scale):
    n = N * scale
    a = np.concatenate([corner_values(in_fmt), random_encodings(in_fmt, n, rng)])
    rand_bits = convert_sr_bits(in_fmt, out_fmt, mode)
    rand = _rand(rng, rand_bits, len(a))
    want = [scalar.convert(int(a[i]), in_fmt, out_fmt, mode,
                           None if rand is None else int(rand[i]), rand_bits) for i in range(len(a))]
    _compare(convert(a, in_fmt, out_fmt, mode, rand), want, (a,))


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("in_fmt, out_fmt", [
    (BF16, FP32), (BF16, BF16), (FP16, FP16), (FP32, FP32), (FP8_E4M3, FP32), (FP32, BF16),
], ids=str)
def test_multiply_matches_scalar(in_fmt, out_fmt, mode, rng, scale):
    n = N * scale
    a = random_encodings(in_fmt, n, rng)
    b = random_encodings(in_fmt, n, rng)
    rand_bits = multiply_sr_bits(in_fmt, out_fmt, mode)
    rand = _rand(rng, rand_bits, n)
    want = [scalar.multiply(int(a[i]), int(b[i]), in_fmt, out_fmt, mode,
                            None if rand is None else int(rand[i]), rand_bits) for i in range(n)]
    _compare(multiply(a, b, in_fmt, out_fmt, mode, rand), want, (a, b))


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@pytest.mark.parametrize("fmt, out_fmt", [(FP32, FP32), (BF16, BF16), (FP32, BF16), (BF16, FP32),
                                          (FP8_E5M2, FP8_E5M2)], ids=str)
def test_add_matches_scalar(fmt, out_fmt, mode, rng, scale):
    n = N * scale
    pairs = [(random_encodings(fmt, n, rng), random_encodings(fmt, n, rng)),
             near_pairs(fmt, n, rng), far_pairs(fmt, n, rng)]
    a = np.concatenate([p[0] for p in pairs])
    b = np.concatenate([p[1] for p in pairs])
    rand_bits = add_sr_bits(out_fmt, mode)
    rand = _rand(rng, rand_bits, len(a))
    want = [scalar.add(int(a[i]), int(b[i]), fmt, mode, None if rand is None else int(rand[i]),
                       rand_bits, out_fmt) for i in range(len(a))]
    _compare(add(a, b, fmt, mode, rand, out_fmt=out_fmt), want, (a, b))


@pytest.mark.parametrize("sr_bits", [1, 5, 16, 32])
def test_add_sr_bits_matches_scalar(sr_bits, rng, scale):
    """Narrow and wide sr_bits on sums whose exact value reaches far below the ulp."""
    n = N * scale
    a, b = far_pairs(FP32, n, rng)
    rand = rng.integers(0, 1 << sr_bits, n, dtype=np.uint64)
    want = [scalar.add(int(a[i]), int(b[i]), FP32, Rounding.STOCHASTIC, int(rand[i]), sr_bits)
            for i in range(n)]
    _compare(add(a, b, FP32, "sr", rand, sr_bits=sr_bits), want, (a, b))
