"""MXU regressions (first step of issue 4): streams, tile swaps, bubbles, backpressure and
latency, bit for bit against golden.mxu."""

import pytest

from sim import runner

SIZES = [
    dict(rows=1, cols=1),
    dict(rows=2, cols=3),
    dict(rows=3, cols=2, mul_stages=1, add_stages=2),
    dict(rows=4, cols=4, add_stages=1),
]


@pytest.mark.parametrize("params", SIZES, ids=lambda p: "-".join(f"{k}{v}" for k, v in p.items()))
@pytest.mark.parametrize("simulator", runner.SIMULATORS)
def test_mxu_matches_golden(simulator, params, scale):
    reason = runner.available(simulator)
    if reason:
        pytest.skip(reason)
    if simulator == "icarus" and params["rows"] * params["cols"] > 6:
        pytest.skip("the larger arrays run on Verilator only (Icarus is slow for them)")
    summary = runner.run("mxu", params, simulator, vectors=2000 * scale)
    assert summary["tests"] == 2
