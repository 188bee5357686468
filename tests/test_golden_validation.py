"""The golden API's argument checks: format names anywhere a format is taken, and errors that
name the parameter, the value and what is allowed."""

import numpy as np
import pytest

from golden import bits, mxu, ops, scalar, vectors, xorshift
from golden.formats import BF16, FP32, FloatFormat


@pytest.mark.parametrize("spelling", [BF16, "bf16", "BF16", "e8m7"])
def test_every_format_argument_takes_a_name_or_eXmY(spelling, rng):
    a = vectors.random_encodings(BF16, 500, rng)
    b = vectors.random_encodings(BF16, 500, rng)
    want_mul = ops.multiply(a, b, BF16, FP32)
    got_mul = ops.multiply(a, b, spelling, "fp32")
    assert all(np.array_equal(g, w) for g, w in zip(got_mul, want_mul))
    assert all(np.array_equal(g, w) for g, w in zip(ops.add(a, b, spelling), ops.add(a, b, BF16)))
    wide = ops.convert(a, spelling, "e8m23")[0]
    assert np.array_equal(wide, ops.convert(a, BF16, FP32)[0])
    assert np.array_equal(ops.convert(wide, "fp32", spelling, "rtz")[0], ops.convert(wide, FP32, BF16, "rtz")[0])
    assert np.array_equal(bits.to_float64(a, spelling), bits.to_float64(a, BF16), equal_nan=True)
    assert np.array_equal(vectors.corner_values(spelling), vectors.corner_values(BF16))
    assert scalar.multiply(int(a[0]), int(b[0]), spelling, "fp32", ops.Rounding.NEAREST_EVEN) == \
        scalar.multiply(int(a[0]), int(b[0]), BF16, FP32, ops.Rounding.NEAREST_EVEN)
    x, w = a[:12].reshape(3, 4), b[:8].reshape(4, 2)
    assert np.array_equal(mxu.mxu(x, w, in_fmt=spelling, acc_fmt="fp32", out_rounding="rne"),
                          mxu.mxu(x, w, in_fmt=BF16, acc_fmt=FP32, out_rounding="rne"))


@pytest.mark.parametrize("call, error, message", [
    (lambda: ops.multiply(1, 1, "bf17", FP32), ValueError, "in_fmt: unknown format 'bf17'"),
    (lambda: ops.add(1, 1, 16), TypeError, "fmt: format must be a FloatFormat or a string, not 16"),
    (lambda: ops.convert(1, FP32, "e9m7"), ValueError, "exp_bits must be in 2..8, not 9"),
    (lambda: ops.add(np.zeros(3, np.uint32), np.zeros(4, np.uint32)), ValueError,
     "operands must broadcast to one shape, not (3,), (4,)"),
    (lambda: mxu.mxu(np.zeros((2, 3), np.uint16), np.zeros((4, 2), np.uint16)), ValueError,
     "x (M x K) has K = 3 columns but w (K x N) has 4 rows"),
    (lambda: mxu.mxu(np.zeros(3, np.uint16), np.zeros((3, 2), np.uint16)), ValueError,
     "x must be a 2-D array, not 1-D"),
    (lambda: mxu.mxu(np.zeros((2, 3)), np.zeros((3, 2), np.uint16)), TypeError,
     "x must hold integer bit patterns, not float64"),
    (lambda: mxu.mxu(np.zeros((2, 4), np.uint16), np.zeros((4, 2), np.uint16), rows=0), ValueError,
     "rows must be in 1..4, not 0"),
    (lambda: mxu.mxu(np.zeros((2, 4), np.uint16), np.zeros((4, 2), np.uint16), out_rounding="up"), ValueError,
     "unknown rounding 'up'"),
    (lambda: mxu.round_outputs(np.zeros((2, 2), np.uint32), FP32, BF16, "sr", seed=-1), ValueError,
     "seed must be in 0..4294967295, not -1"),
    (lambda: xorshift.lane_rand(1, 0, 4, 8), ValueError, "lanes must be in 1..1048576, not 0"),
    (lambda: xorshift.lane_rand(1, 4, 4, 40), ValueError, "rand_bits must be in 1..32, not 40"),
    (lambda: xorshift.lane_rand(1, 4, -1, 8), ValueError, "n must be in 0..1099511627776, not -1"),
    (lambda: xorshift.lane_rand(1.5, 4, 4, 8), TypeError, "seed must be an integer, not 1.5"),
    (lambda: vectors.random_encodings("bf16", -1, np.random.default_rng(0)), ValueError,
     "n must be in 0..2147483648, not -1"),
    (lambda: vectors.random_encodings("bf16", 4, 0), TypeError, "rng must be a numpy.random.Generator"),
    (lambda: vectors.random_encodings("bf16", 4, np.random.default_rng(0), 1.5), ValueError,
     "special_fraction must be in 0.0..1.0, not 1.5"),
    (lambda: ops.convert(np.array([0x3F800001], np.uint32), FP32, BF16, "sr-half", np.array([1]), sr_bits=3),
     ValueError, "sr_bits=3: sr-half uses one random bit"),
])
def test_bad_arguments_name_the_parameter(call, error, message):
    with pytest.raises(error) as raised:
        call()
    assert message in str(raised.value)


def test_format_names_resolve_to_the_named_format():
    assert ops.convert_sr_bits("fp32", "e8m7", "sr") == 16
    assert isinstance(mxu.matmul(np.zeros((1, 1), np.uint16), np.zeros((1, 1), np.uint16), "e8m7",
                                 "fp32"), np.ndarray)
    assert FloatFormat(8, 7) == BF16
