"""Shared fixtures. ``--scale N`` (or ``ARITH_SCALE=N``) multiplies every random vector count."""

import os

import numpy as np
import pytest
from hypothesis.configuration import set_hypothesis_home_dir

from golden.tools.cli import build_dir

# Hypothesis keeps its examples in the build folder, with everything else the tests write.
set_hypothesis_home_dir(build_dir("hypothesis").absolute())
# Compiled models (sim.compiled) built at -O0 unless asked otherwise: the C++ compile is most of
# a short run's time (sim.compiled.model.cxx_flags); the CLIs the tests start inherit it.
os.environ.setdefault("ARITH_CXX_OPT", "-O0")


#: Largest --scale: 20 million vectors per configuration, already days of simulation.
MAX_SCALE = 10_000


def pytest_addoption(parser):
    parser.addoption(
        "--scale", type=int, default=None,
        help="multiply random vector counts by N (default: $ARITH_SCALE or 1); "
             "e.g. --scale 100 for a nightly-style run")
    parser.addoption(
        "--every-depth", action="store_true",
        help="run the deep-pipeline regression (Verilator) on every unit configuration at every "
             "depth 0..max_stages instead of the sample in sim/configs.py's DEEP")
    parser.addoption(
        "--every-simulator", action="store_true",
        help="run every unit configuration and every small MXU on both simulators (Verilator and "
             "Icarus); by default each unit configuration runs on one of them, the two alternating, and "
             "Icarus runs two of the small MXUs")
    parser.addoption(
        "--formal-large", action="store_true",
        help="also prove the MXU's stream contract at the larger sizes of docs/formal-streams.md (1x3, 2x2 m1a1, "
             "1x4, 1x3 m2a2, 3x3, 4x4: about 10 minutes on one core; tests/test_stream_proof.py)")
    parser.addoption(
        "--regress-large", action="store_true",
        help="also run the larger regressions: sim.regress on the 4x4 MXU's ECP5 netlist and the 3x5 MXU "
             "(tests/test_regress.py), the 8x8 MXU's cocotb regression, golden.matmul on the compiled 8x4 MXU "
             "with 2 workers and with fp8 inputs, and the documented user flow's place and route "
             "(tests/test_mxu_user_flow.py): minutes each")
    parser.addoption(
        "--thorough", action="store_true",
        help="also run the default checks' slow half (about 12 minutes more on 2 cores): the 2x2 MXU's stream "
             "proof, the column accumulator's matmuls, normalisation-point streams and its anchor and "
             "point-flag mutants on the compiled MXU, the 2x2 MXU's ECP5 netlist, the quick sweep's place and "
             "route, the 8x8 MXU's lint, the fused adder's 9-stage pipelining proof, the MXU through Yosys's "
             "ABC9 and the quick training variants")
    parser.addoption(
        "--docs-slow", action="store_true",
        help="run the docs' slow commands as written (place and route, 2^32 runs, the suite "
             "itself: hours); without it they run their check only (tests/test_docs.py)")


def pytest_configure(config):
    config.addinivalue_line("markers", "docs_slow: a doc's slow command (tests/test_docs.py), "
                                       "run as written only with --docs-slow")
    config.addinivalue_line("markers", "formal_large: a proof of minutes to half an hour, collected only with "
                                       "--formal-large")
    config.addinivalue_line("markers", "thorough: a check of half a minute or more that the default samples, "
                                       "collected only with --thorough")
    config.addinivalue_line("markers", "regress_large: a regression of minutes, collected only with "
                                       "--regress-large")
    # Kept on the config too, so test modules can choose what to collect by it.
    value = config.getoption("--scale")
    if value is None:
        text = os.environ.get("ARITH_SCALE", "1")
        try:
            value = int(text)
        except ValueError:
            raise pytest.UsageError(f"ARITH_SCALE must be an integer in 1..{MAX_SCALE}, not {text!r}") from None
    if not 1 <= value <= MAX_SCALE:
        raise pytest.UsageError(f"--scale (ARITH_SCALE) must be in 1..{MAX_SCALE}, not {value}")
    config.arith_scale = value


@pytest.fixture(scope="session")
def scale(pytestconfig) -> int:
    return pytestconfig.arith_scale


@pytest.fixture
def refused(capsys):
    """``refused(main, argv)``: a command's ``main`` run in this process must end with status
    2 and one line on stderr, no traceback; returns that line."""
    def run(main, argv):
        try:
            status = main(argv)
        except SystemExit as exit_:
            status = exit_.code
        out, err = capsys.readouterr()
        assert status == 2, (argv, out, err)
        assert len(err.strip().splitlines()) == 1, (argv, err)
        assert "Traceback" not in err and "error" in err, (argv, err)
        return err
    return run


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A generator seeded from the test's name: reproducible, different per test."""
    return np.random.default_rng(list(request.node.nodeid.encode()))


# Longest tests first: with -n 2, a long simulator build or synthesis that starts last
# leaves one core idle until it ends. Each run records every test's duration in pytest's
# cache (build/pytest-cache); the next run starts with the longest (a fresh clone keeps
# the collection order). Tests are independent, so the order changes no result.
_DURATIONS_KEY = "tpu-arith/durations"


def pytest_collection_modifyitems(config, items):
    """Longest first; without ``--formal-large`` (``--regress-large``, ``--thorough``), the
    ``formal_large`` proofs (``regress_large`` runs, ``thorough`` checks) deselected (not
    skipped: they were not asked for)."""
    for option, marker in (("--formal-large", "formal_large"), ("--regress-large", "regress_large"),
                           ("--thorough", "thorough")):
        if not config.getoption(option):
            large = [item for item in items if item.get_closest_marker(marker)]
            if large:
                config.hook.pytest_deselected(items=large)
                items[:] = [item for item in items if not item.get_closest_marker(marker)]
    cache = getattr(config, "cache", None)       # absent under -p no:cacheprovider
    durations = cache.get(_DURATIONS_KEY, {}) if cache else {}
    if durations:
        items.sort(key=lambda item: -durations.get(item.nodeid, 0.0))


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and report.skipped):
        _measured[report.nodeid] = report.duration


_measured: dict[str, float] = {}


def pytest_sessionfinish(session):
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config, "cache", None) or not _measured:
        return
    durations = config.cache.get(_DURATIONS_KEY, {})
    durations.update(_measured)
    config.cache.set(_DURATIONS_KEY, durations)
