"""cocotb regressions: every unit configuration x stages x simulator, bit for bit against golden.

Vectors per configuration: 2000 corner-weighted random ones plus every corner pair, times
``--scale`` (``--scale 500``: a million).
"""

import pytest

from hdl.build import UNITS, module_name
from sim.testbenches import runner
from sim.configs import CONFIGS, DEEP, every_depth

VECTORS = 2000


def _id(config):
    unit, params = config
    component, _ = UNITS[unit].build(**params)
    return module_name(UNITS[unit], component)


def _simulate(simulator, unit, params, scale):
    reason = runner.available(simulator)
    if reason:
        pytest.skip(reason)
    summary = runner.run(unit, params, simulator, vectors=VECTORS * scale)
    assert summary["tests"] >= 1
    if unit != "xorshift":          # the regression reports what it covered, every vector once
        kinds = ("zero", "subnormal", "normal", "inf", "nan")
        assert sum(summary["coverage"][k] for k in kinds) == summary["vectors"]


@pytest.mark.parametrize("config", CONFIGS, ids=_id)
@pytest.mark.parametrize("simulator", runner.SIMULATORS)
def test_unit_matches_golden(simulator, config, scale):
    _simulate(simulator, *config, scale)


def pytest_generate_tests(metafunc):
    if "deep_config" in metafunc.fixturenames:
        configs = every_depth() if metafunc.config.getoption("--every-depth") else DEEP
        metafunc.parametrize("deep_config", configs, ids=_id)


def test_deep_pipelines_match_golden(deep_config, scale):
    """``DEEP``'s sample of depths; with ``--every-depth`` every configuration at every depth."""
    _simulate("verilator", *deep_config, scale)
