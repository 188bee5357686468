"""cocotb regressions: every unit configuration x stages, bit for bit against golden.

Each configuration runs on one simulator, the two alternating so that every parameter set
meets both (and both depths); ``--every-simulator`` runs each on both. By default each
parameter set runs at one of its depths (``default_depths``), the other with ``--thorough``:
the registers come from one mechanism at every depth (hdl.pipeline), proved equivalent to
the combinational unit in tests/test_formal.py.

Vectors per configuration: 2000 corner-weighted random ones plus every corner pair, times
``--scale`` (``--scale 500``: a million).
"""

import pytest

from hdl.units import UNITS, module_name
from sim.testbenches import runner
from sim.configs import CONFIGS, DEEP, DEEP_DEFAULT, ECP5_DSP, STAGES, every_depth

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


def default_depths(configs) -> list[bool]:
    """Whether each configuration runs without ``--thorough``: every parameter set at one
    depth of ``STAGES``, the depth changing every second set, so that with
    ``simulator_runs``' alternation the default meets each depth on each simulator."""
    n, chosen = len(STAGES), []
    for i, (_, params) in enumerate(configs):
        chosen.append("stages" not in params or i % n == (i // n // 2) % n)
    return chosen


def test_default_runs_cover_each_parameter_set_once_each_depth_on_each_simulator():
    runs = simulator_runs(CONFIGS, every_simulator=False)
    default = [(s, u, p) for (s, (u, p)), chosen in zip(runs, default_depths(CONFIGS)) if chosen and "stages" in p]

    def parameter_set(unit, params):
        return str((unit, {k: v for k, v in params.items() if k != "stages"}))
    every_set = {parameter_set(u, p) for u, p in CONFIGS if "stages" in p}
    assert sorted(parameter_set(u, p) for _, u, p in default) == sorted(every_set)
    assert {(s, p["stages"]) for s, _, p in default} == {(s, d) for s in runner.SIMULATORS for d in STAGES}
    assert all(chosen for (_, p), chosen in zip(CONFIGS, default_depths(CONFIGS)) if "stages" not in p)


def test_unit_matches_golden(simulator, config, scale):
    _simulate(simulator, *config, scale)


def pytest_generate_tests(metafunc):
    if "config" in metafunc.fixturenames:
        runs = simulator_runs(CONFIGS, metafunc.config.getoption("--every-simulator"))
        chosen = default_depths(CONFIGS) * (len(runs) // len(CONFIGS))
        metafunc.parametrize("simulator, config", [
            pytest.param(s, c, marks=[] if keep else [pytest.mark.thorough], id=f"{s}-{_id(c)}")
            for (s, c), keep in zip(runs, chosen)])
    if "dsp_config" in metafunc.fixturenames:
        # Each simulator once by default, the other two with --thorough.
        runs = [pytest.param(runner.SIMULATORS[i % 2], c, marks=[pytest.mark.thorough] if i >= 2 else [],
                             id=f"{runner.SIMULATORS[i % 2]}-{_id(c)}") for i, c in enumerate(ECP5_DSP)]
        metafunc.parametrize("simulator, dsp_config", runs)
    if "deep_config" in metafunc.fixturenames:
        if metafunc.config.getoption("--every-depth"):
            configs = every_depth()
        else:       # by default those with a register at every cut point (DEEP_DEFAULT)
            configs = [pytest.param(c, marks=[] if c in DEEP_DEFAULT else [pytest.mark.thorough]) for c in DEEP]
        metafunc.parametrize("deep_config", configs, ids=_id)


def test_ecp5_dsp_matches_golden(simulator, dsp_config, scale):
    """The MULT18X18D's registers as the multiplier's (``sim.configs.ECP5_DSP``), simulated
    with hdl/ecp5_mult18x18d_sim.v."""
    _simulate(simulator, *dsp_config, scale)


def test_deep_pipelines_match_golden(deep_config, scale):
    """``DEEP``'s sample of depths; with ``--every-depth`` every configuration at every depth."""
    _simulate("verilator", *deep_config, scale)
