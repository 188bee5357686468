"""cocotb regressions: every unit configuration x stages, bit for bit against golden.

Each configuration runs on one simulator, the two alternating so that every parameter set
meets both (and both depths); ``--every-simulator`` runs each on both.

Vectors per configuration: 2000 corner-weighted random ones plus every corner pair, times
``--scale`` (``--scale 500``: a million).
"""

import pytest

from hdl.build import UNITS, module_name
from sim.testbenches import runner
from sim.configs import CONFIGS, DEEP, ECP5_DSP, STAGES, every_depth

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


def simulator_runs(configs, every_simulator: bool) -> list:
    """(simulator, config) pairs: each config on both simulators, or on one, alternating so
    that consecutive depths of one parameter set (``STAGES``) use different simulators."""
    if every_simulator:
        return [(simulator, config) for simulator in runner.SIMULATORS for config in configs]
    n = len(STAGES)
    return [(runner.SIMULATORS[(i // n + i % n) % 2], config) for i, config in enumerate(configs)]


def test_default_runs_cover_each_configuration_once_and_both_simulators():
    runs = simulator_runs(CONFIGS, every_simulator=False)
    assert [config for _, config in runs] == CONFIGS
    for unit, params in CONFIGS:
        if "stages" in params:      # each parameter set meets both simulators over its depths
            sims = {s for s, (u, p) in runs if u == unit and {**p, "stages": 0} == {**params, "stages": 0}}
            assert sims == set(runner.SIMULATORS), (unit, params)
    assert len(simulator_runs(CONFIGS, every_simulator=True)) == 2 * len(CONFIGS)


def test_unit_matches_golden(simulator, config, scale):
    _simulate(simulator, *config, scale)


def pytest_generate_tests(metafunc):
    if "config" in metafunc.fixturenames:
        runs = simulator_runs(CONFIGS, metafunc.config.getoption("--every-simulator"))
        metafunc.parametrize("simulator, config", runs, ids=[f"{s}-{_id(c)}" for s, c in runs])
    if "dsp_config" in metafunc.fixturenames:
        # Each simulator once by default, the other two with --thorough.
        runs = [pytest.param(runner.SIMULATORS[i % 2], c, marks=[pytest.mark.thorough] if i >= 2 else [],
                             id=f"{runner.SIMULATORS[i % 2]}-{_id(c)}") for i, c in enumerate(ECP5_DSP)]
        metafunc.parametrize("simulator, dsp_config", runs)
    if "deep_config" in metafunc.fixturenames:
        configs = every_depth() if metafunc.config.getoption("--every-depth") else DEEP
        metafunc.parametrize("deep_config", configs, ids=_id)


def test_ecp5_dsp_matches_golden(simulator, dsp_config, scale):
    """The MULT18X18D's registers as the multiplier's (``sim.configs.ECP5_DSP``), simulated
    with hdl/ecp5_mult18x18d_sim.v."""
    _simulate(simulator, *dsp_config, scale)


def test_deep_pipelines_match_golden(deep_config, scale):
    """``DEEP``'s sample of depths; with ``--every-depth`` every configuration at every depth."""
    _simulate("verilator", *deep_config, scale)
