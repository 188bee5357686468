"""golden.coverage: the class histogram against a plain per-element reading, and the
rounding situations on values built to be in them."""

import numpy as np
import pytest

from golden import coverage
from golden.formats import BF16, FP32, FP8_E4M3
from golden.ops import convert, multiply
from golden.rounding import Flags


@pytest.mark.parametrize("fmt", [BF16, FP32, FP8_E4M3])
def test_classes_match_a_plain_reading(fmt):
    rng = np.random.default_rng(3)
    bits = rng.integers(0, 1 << fmt.width, 5000).astype(fmt.dtype)
    flags = rng.integers(0, 32, 5000).astype(np.uint8)
    want = dict.fromkeys(coverage.CLASSES, 0)
    for b, f in zip(bits.tolist(), flags.tolist()):
        e, m = (b >> fmt.man_bits) & fmt.exp_max_field, b & fmt.man_mask
        kind = ("zero" if m == 0 else "subnormal") if e == 0 else \
            ("inf" if m == 0 else "nan") if e == fmt.exp_max_field else "normal"
        want[kind] += 1
        for name, bit in (("ftz_underflow", Flags.UNDERFLOW), ("overflow", Flags.OVERFLOW),
                          ("inexact", Flags.INEXACT), ("invalid", Flags.INVALID)):
            want[name] += bool(f & bit)
    assert coverage.classes(fmt, bits, flags) == want


def test_situations_of_fp32_to_bf16():
    one = 0x3F800000
    a = np.array([
        one | 0x8000,              # 1 + half a bf16 ulp: a tie (even: stays)
        one | 0x18000,             # odd + half: a tie, rounds up
        0x3FFFFFFF,                # just below 2: carries into the exponent
        0x7F7FFFFF,                # fp32 max: overflows by rounding
        0x00FFFFFF,                # just below twice the smallest normal: carries too
        0x7F800001, 0x7FC00000,    # signalling and quiet NaN
        one | 0x4000,              # a quarter ulp: no situation
    ], np.uint32)
    bits, flags = convert(a, FP32, BF16, "rne")

    def again(select, mode, rand, sr_bits):
        return convert(a[select], FP32, BF16, mode, rand, sr_bits)

    got = coverage.situations(BF16, bits, flags, again, FP32, [a])
    assert coverage.situations(BF16, bits, flags, again, FP32, [a], "rne") == got
    assert got == {"tie": 2, "exponent_carry": 2, "overflow_by_rounding": 1, "tiny_rounded_up": 0,
                   "nan_from_snan": 1, "nan_from_qnan": 1, "nan_invalid_op": 0}


def test_situations_of_bf16_products():
    # (181/128)**2 = 32761/16384 just below 2: times 2**-127 it is tiny and rounds up to 2**-126.
    a = np.array([0x2035, 0x7F80, 0x3F80], np.uint16)
    b = np.array([0x1FB5, 0x0000, 0x3F80], np.uint16)     # ..., inf * 0, 1 * 1
    bits, flags = multiply(a, b, BF16, BF16, "rne")

    def again(select, mode, rand, sr_bits):
        return multiply(a[select], b[select], BF16, BF16, mode, rand, sr_bits)

    got = coverage.situations(BF16, bits, flags, again, BF16, [a, b])
    assert coverage.situations(BF16, bits, flags, again, BF16, [a, b], "rne") == got
    assert got == {"tie": 0, "exponent_carry": 0, "overflow_by_rounding": 0, "tiny_rounded_up": 1,
                   "nan_from_snan": 0, "nan_from_qnan": 0, "nan_invalid_op": 1}
