"""MXU regressions (issue 4): streams, tile swaps, bubbles, backpressure, input conversion,
output rounding lanes, tile accumulation, latency and full-rate throughput, bit for bit
against golden.mxu."""

import pytest

from sim import runner

SIZES = [
    dict(rows=1, cols=1),
    dict(rows=1, cols=1, out_rounding="sr-half", acc_depth=2),
    dict(rows=2, cols=3, convert_inputs=True, out_rounding="sr"),
    dict(rows=3, cols=2, mul_stages=1, add_stages=2, acc_depth=4),
    dict(rows=4, cols=4, add_stages=1, out_rounding="rne", acc_depth=8),
    dict(rows=8, cols=8, mul_stages=1, add_stages=1, convert_inputs=True, out_rounding="sr", sr_bits=8,
         acc_depth=16),
]
#: Only under ``--scale`` above 1 (nightly-style runs): the 16x16 array takes minutes to build.
SCALED = [dict(rows=16, cols=16, add_stages=1, out_rounding="sr", acc_depth=32)]

#: Icarus is much slower on the larger arrays: it runs the small ones.
RUNS = [("verilator", p) for p in SIZES] + [("icarus", p) for p in SIZES if p["rows"] * p["cols"] <= 6]


def _id(value):
    return value if isinstance(value, str) else "-".join(f"{k}{x}" for k, x in value.items())


def pytest_generate_tests(metafunc):
    runs = RUNS + ([("verilator", p) for p in SCALED] if metafunc.config.arith_scale > 1 else [])
    metafunc.parametrize("simulator, params", runs, ids=_id)


def test_mxu_matches_golden(simulator, params, scale):
    reason = runner.available(simulator)
    if reason:
        pytest.skip(reason)
    summary = runner.run("mxu", params, simulator, vectors=2000 * scale)
    assert summary["tests"] == 3
