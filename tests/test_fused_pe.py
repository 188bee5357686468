"""The fused processing element: proven equal to the generic multiplier + adder (and a
planted difference caught), its units' pipelining proven, their options checked, and the
MXU's choice between the two."""

import json
from pathlib import Path

import pytest

from hdl.mxu import MXU
from hdl.mxu.element import ProcessingElement
from hdl.product import ExactProduct
from hdl.product_adder import ProductAdder
from sim.formal.pipelining import check, check_pe

ONE = 0x38                         # fp8_e4m3fn 1.0: the mutant's trigger
ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("in_fmt, acc_fmt", [("bf16", "fp32"), ("fp8_e4m3fn", "fp16")])
def test_fused_pe_equals_the_generic_one(in_fmt, acc_fmt):
    report = check_pe(in_fmt, acc_fmt)
    assert report["result"] == "proved", report["unproven"]
    assert report["pairs"] > 500                    # the adders' signals were paired, not just the ports
    if (in_fmt, acc_fmt) == ("bf16", "fp32"):       # the published report and the README's count are today's
        published = json.loads((ROOT / "docs" / "formal" / "pe_bf16_fp32.json").read_text())["pairs"]
        assert report["pairs"] == published
        assert f"{published:,} signal pairs proven (`docs/formal/pe_bf16_fp32.json`)" in \
            (ROOT / "README.md").read_text().replace("\n  ", " ")


def test_a_planted_difference_is_not_proved():
    """On the fp8 element: the same check, a third of the bf16 one's time."""
    report = check_pe("fp8_e4m3fn", "fp16", mutant=ONE)
    assert report["result"] == "not equal" and report["unproven"] == ["psum_out"]


@pytest.mark.parametrize("key, stages", [("product", 4), pytest.param("product_add", 9, marks=pytest.mark.thorough)])
def test_fused_units_pipelining_proved(key, stages):
    report = check(key, {"in_fmt": "bf16", "acc_fmt": "fp32"}, stages=stages)
    assert report["result"] == "proved" and report["complete"]


def test_fused_pipelining_mutant_caught():
    report = check("product_add", {"in_fmt": "bf16", "acc_fmt": "fp32"}, stages=3, mutant=0x3F800000)
    assert report["result"] == "counterexample"


@pytest.mark.parametrize("make, message", [
    (lambda: ExactProduct(in_fmt="bf16", acc_fmt="bf16"), "acc_fmt bf16 must hold an exact bf16 product"),
    (lambda: ExactProduct(in_fmt="fp8_e5m2", acc_fmt="fp8_e4m3fn_sat"), "acc_fmt fp8_e4m3fn_sat must"),
    (lambda: ProductAdder(in_fmt="fp32", acc_fmt="fp32"), "acc_fmt fp32 must hold an exact fp32 product"),
    (lambda: ExactProduct(stages=8), "stages must be in 0..7, not 8"),
    (lambda: ProcessingElement(fused=1), "fused must be True or False, not 1"),
    (lambda: ProcessingElement(mul_stages=8), "mul_stages must be in 0..7, not 8"),
    (lambda: MXU(rows=2, cols=2, fused_pe="yes"), "fused_pe must be True or False, not 'yes'"),
    (lambda: MXU(rows=2, cols=2, mul_stages=9), "mul_stages must be in 0..7, not 9"),
])
def test_options_are_checked(make, message):
    with pytest.raises((ValueError, TypeError), match=message):
        make()


def test_mxu_default_is_fused_and_generic_is_kept():
    fused, generic = MXU.plan(rows=2, cols=2), MXU.plan(rows=2, cols=2, mul_stages=9, fused_pe=False)
    assert fused.fused_pe and not generic.fused_pe and generic.mul_stages == 9
    assert fused.latency == MXU.plan(rows=2, cols=2, fused_pe=False).latency       # the same timing


def test_reset_less_stages_keep_only_valid_reset():
    from amaranth.hdl import Module, Signal

    from hdl.pipeline import Delay, Stages
    cuts = [("input", Delay()), ("mid", Delay(1)), ("output", Delay(1))]
    for reset_less in (True, False):
        v = Stages(1, cuts, reset_less=reset_less).cut(Module(), "mid", valid=Signal(), data=Signal(8))
        assert not v["valid"].reset_less and v["data"].reset_less == reset_less
