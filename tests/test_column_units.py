"""The column accumulator's units alone (``window_add``, ``window_round``, ``norm_point``),
bit for bit against golden.column's model of each (``window_add``, ``window_round``), flags
included: sim.configs' configurations in Amaranth's simulator (fp8 products exhaustively),
a few through cocotb (``python -m sim.regress``), and a planted mutant of each unit that the
same check catches."""

import warnings

import pytest
from amaranth.hdl import Const, UnusedElaboratable

from golden.rounding import Rounding
from hdl.units import UNITS, module_name
from hdl.mxu.accumulation import window_adder, window_rounder
from sim import regress
from sim.configs import COLUMN_EXHAUSTIVE, COLUMN_REGRESSIONS, COLUMN_UNITS
from sim.testbenches import runner
from sim.testbenches.column import check_amaranth


def _id(config):
    unit, params = config
    with warnings.catch_warnings():         # built for its name only (window_add and norm_point have no plan)
        warnings.simplefilter("ignore", UnusedElaboratable)
        component, _ = UNITS[unit].build(**params)
        name = module_name(UNITS[unit], component)
        del component
    return name


#: The widest window over the deepest column (W=48, 8192 terms: a slow Amaranth simulation):
#: with ``--thorough``; its Verilog's lint runs by default.
@pytest.mark.parametrize("config", [pytest.param(c, marks=pytest.mark.thorough) if c[1].get("terms") == 8192 else c
                                    for c in COLUMN_UNITS], ids=_id)
def test_unit_matches_golden(config):
    """The corners and 1000 random vectors (about 2300 with the adder's corner products)."""
    count, first, total = check_amaranth(*config, n=1000)
    assert total >= 1000 and count == 0, first


@pytest.mark.parametrize("config", COLUMN_EXHAUSTIVE, ids=_id)
def test_every_fp8_product_and_window_sum(config):
    """Every distinct product of every fp8 E4M3 pair (1791 of them) against each window of
    a set (anchors at and around the product's exponent), or every sum of the 8-bit window at
    a set of anchors."""
    count, first, total = check_amaranth(*config, exhaustive=True)
    assert total > 8000 and count == 0, first


def _flags(params: dict) -> list[str]:
    """``params`` as ``hdl.build``'s (and ``sim.regress``') flags."""
    flags = []
    for name, value in params.items():
        flag = "--" + name.replace("_", "-")
        flags += ([flag] if value else ["--no-" + flag[2:]]) if isinstance(value, bool) else [flag, str(value)]
    return flags


@pytest.mark.parametrize("simulator, config", COLUMN_REGRESSIONS, ids=lambda c: c if isinstance(c, str) else _id(c))
def test_regression_passes(simulator, config, capsys):
    """``python -m sim.regress UNIT [flags]``: the cocotb testbench on the generated Verilog."""
    reason = runner.available(simulator)
    if reason:
        pytest.skip(reason)
    unit, params = config
    assert regress.main([unit, *_flags(params), "--simulator", simulator, "--vectors", "1000"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"PASS  {_id(config)} (RTL) on {simulator}"), out


def _losing_nothing(*args, **kwargs):
    """``shift_steps`` that never reports a lost bit: the alignment's ``dropped`` (and with
    ``sticky`` its sticky bit) gone."""
    value, _ = _shift_steps(*args, **kwargs)
    return value, Const(0, 1)


_shift_steps = window_adder.shift_steps


def _halves_without_bit_0(n):
    """The alignment shifter ignores its shift amount's lowest bit: every odd gap off by one."""
    upper, lower = _halves(n)
    return upper, lower[:-1]


_halves = window_adder.halves


class _TruncatingRounder(window_rounder.Rounder):
    """The window's rounding toward zero instead of to nearest even."""

    def __init__(self, **kwargs):
        super().__init__(**{**kwargs, "rounding": Rounding.TOWARD_ZERO})


@pytest.mark.parametrize("unit, params, module, name, mutant", [
    ("window_add", COLUMN_UNITS[1][1], window_adder, "halves", _halves_without_bit_0),
    ("window_round", COLUMN_UNITS[6][1], window_rounder, "Rounder", _TruncatingRounder),
    ("norm_point", COLUMN_UNITS[9][1], window_adder, "shift_steps", _losing_nothing),
], ids=["adder-gap-off-by-one", "rounder-truncates", "point-lost-bits-dropped"])
def test_planted_mutant_is_caught(unit, params, module, name, mutant, monkeypatch):
    """The unit built with one part broken on purpose: the check reports mismatches."""
    monkeypatch.setattr(module, name, mutant)
    count, first, total = check_amaranth(unit, params, n=300)
    assert count > 0, f"the {name} mutant passed {total} vectors"
