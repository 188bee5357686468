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


#: Icarus is much slower on the larger arrays: it runs the small ones.
RUNS = [("verilator", p) for p in SIZES] + [("icarus", p) for p in SIZES if p["rows"] * p["cols"] <= 6]


@pytest.mark.parametrize("simulator, params", RUNS,
                         ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}{x}" for k, x in v.items()))
def test_mxu_matches_golden(simulator, params, scale):
    reason = runner.available(simulator)
    if reason:
        pytest.skip(reason)
    summary = runner.run("mxu", params, simulator, vectors=2000 * scale)
    assert summary["tests"] == 2
