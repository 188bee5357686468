"""The sr-dot experiment: its fast accumulators equal one golden.add per step; the CLI works."""

import csv
import math
from fractions import Fraction

import numpy as np
import pytest

import golden.mxu
from golden import BF16, FP32, TF32, Rounding, add, column, convert, experiments, multiply, xorshift
from golden.bench import main as bench_main
from golden.experiments import accumulators


def _products(fmt, mode, lanes, n, rng):
    a = rng.random((lanes, n), dtype=np.float32).view(np.uint32)
    b = rng.random((lanes, n), dtype=np.float32).view(np.uint32)
    b[0] = np.float32(0.1).view(np.uint32)
    a[0] = 0x3F800000
    rand_bits = 16 if fmt is BF16 else 13
    r = xorshift.lane_rand(3, lanes, n, rand_bits).T if mode.is_stochastic else None
    ra = convert(a, FP32, fmt, mode, None if r is None else r if mode is Rounding.STOCHASTIC else r & 1)[0]
    return multiply(ra, ra, fmt, FP32)[0]


@pytest.mark.parametrize("mode", list(Rounding), ids=lambda m: m.value)
@pytest.mark.parametrize("fmt", [BF16, TF32], ids=str)
def test_narrow_accumulate_equals_one_golden_add_per_step(fmt, mode, rng):
    lanes, n = 4, 3000
    products = _products(fmt, mode, lanes, n, rng)
    rand_bits = {"sr": 32, "sr-half": 1}.get(mode.value)
    rand = None if rand_bits is None else xorshift.lane_rand(8, lanes, n, rand_bits).T
    checkpoints = np.arange(1, n + 1)
    fast = experiments.narrow_accumulate(products, rand, fmt, mode, checkpoints)
    s = np.zeros(lanes, fmt.dtype)
    pad = 32 - fmt.width
    for i in range(n):
        s, _ = add(s.astype(np.uint32) << pad, products[:, i], FP32, mode,
                   None if rand is None else rand[:, i], rand_bits if mode is Rounding.STOCHASTIC else None,
                   out_fmt=fmt)
        assert np.array_equal(fast[:, i], s), f"step {i + 1}"


def test_fp32_accumulate_equals_golden_adds(rng):
    products = _products(BF16, Rounding.NEAREST_EVEN, 3, 2000, rng)
    checkpoints = np.array([1, 10, 1999, 2000])
    fast = experiments.fp32_accumulate(products, checkpoints)
    s = np.zeros(3, np.uint32)
    sums = []
    for i in range(2000):
        s, _ = add(s, products[:, i], FP32)
        sums.append(s)
    assert np.array_equal(fast, np.stack(sums, axis=1)[:, checkpoints - 1])


def test_sr_dot_cli_writes_csv_and_plot(tmp_path, capsys):
    out = tmp_path / "sr"
    assert experiments.main(["sr-dot", "--n-max", "2000", "--trials", "2", "--points", "4",
                             "--out", str(out)]) == 0
    rows = list(csv.DictReader((out / "sr-dot.csv").open()))
    assert len(rows) == 2 * 2 * 3 * 2 * 4   # accumulators x formats x modes x vectors x N
    assert sorted({int(r["n"]) for r in rows}) == [10, 58, 342, 2000]  # 10**(1 + k * 0.767)
    assert (out / "sr-dot.png").stat().st_size > 10_000
    by_key = {(r["accumulator"], r["format"], r["vectors"], r["rounding"], r["n"]): float(r["mean_rel_error"])
              for r in rows}
    # RNE keeps bf16(0.1)'s error, 2^-10 relative, at every N of the ones-tenths dot product.
    assert by_key[("fp32", "bf16", "ones-tenths", "rne", "10")] == pytest.approx(0.1 / 0.1 * 2 ** -10, rel=0.01)
    assert "N=2,000" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["sr-dot", "--n-max", "5"], "--n-max must be in 10..10000000, not 5"),
    (["sr-dot", "--trials", "0"], "--trials must be in 1..1000, not 0"),
    (["sr-dot", "--accumulator", "column:w=20"], "window w must be at least the products' 22 significand bits"),
    (["sr-dot", "--accumulator", "column:w=24"], "at most 8191 terms between normalisation points"),
    (["sr-dot", "--accumulation", "sum"], "--accumulation 'sum': use sequential or column"),
    (["sr-dot", "--accumulation", "sequential", "--accumulator", "column:w=26"], "--accumulation sequential and "
     "--accumulator column:w=26 differ"),
    (["accumulators", "--trials", "5"], "--trials must be in 10..5000, not 5"),
    (["accumulators", "--windows", "12,24"], "--windows must be in 16..48, not 12"),
    (["accumulators", "--groups", "8,x"], "--groups must be comma-separated integers, not '8,x'"),
    (["accumulators", "--windows", ","], "--windows must name at least one value"),
    (["accumulators", "--anchors", "exact,best"], "--anchors must name some of running,bound,exact, not 'exact,best'"),
    (["jax-train", "--accumulation", "column:w=99"], "column window w must be from the products' significand bits (twice the input precision: 16 for bf16, 8 for fp8) to 48, not 99"),
    (["bogus"], "invalid choice"),
])
def test_cli_errors_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        experiments.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_bench_rejects_small_size(capsys):
    with pytest.raises(SystemExit) as exc:
        bench_main(["--size", "10"])
    assert exc.value.code == 2
    assert "--size must be in 65536..33554432, not 10" in capsys.readouterr().err


def _bf16(values):
    return accumulators.bf16_inputs(np.asarray(values, np.float64))


def test_exact_sums_are_exact_where_float64_is_not():
    # Products 2^60, 1, -2^60, 2^-40: float64 loses the 1 (cumsum: 2^60, 2^60, 0, 2^-40), and
    # math.fsum of the first two, exact to one rounding, still gives 2^60; the sums are
    # 2^60 + 1, 1 and 1 + 2^-40.
    x = _bf16([[2 ** 30, 1, 2 ** 30, 2 ** -20]])
    w = _bf16([[2 ** 30, 1, -2 ** 30, 2 ** -20]])
    products = [2.0 ** 60, 1.0, -2.0 ** 60, 2.0 ** -40]
    assert np.cumsum(products)[2] == 0 and math.fsum(products[:2]) == 2.0 ** 60
    exact, magnitudes = accumulators.exact_sums(x, w, [2, 3, 4])
    unit = Fraction(1, 2 ** accumulators.SCALE)
    assert [Fraction(s) * unit for s in exact[0]] == [2 ** 60 + 1, 1, 1 + Fraction(1, 2 ** 40)]
    assert Fraction(magnitudes[0, 1]) * unit == 2 ** 61 + 1
    # The error of an fp32 result is computed exactly too: 1 (fp32) against 1 + 2^-40.
    error = accumulators.ratios(accumulators.scaled_integers(np.array([[1.0]])) - exact[:, 2:], exact[:, 2:])
    assert error[0, 0] == float(Fraction(-1, 2 ** 40 + 1))
    assert accumulators.ratios(np.array([[0, 3]], object), np.array([[0, 0]], object)).tolist() == [[0.0, math.inf]]


@pytest.mark.parametrize("acc", [None, "column:w=20,g=8,sticky,anchor=bound", "column:w=24",
                                 "column:w=20,g=8,anchor=exact"])
def test_accumulators_sums_are_golden_matmuls(acc, rng):
    ks = [16, 64]
    x, w = accumulators.make_inputs("wide", 3, max(ks), rng)
    acc = None if acc is None else column.accumulation_param("accumulation", acc)
    sums = accumulators.sum_columns(acc, x, w, ks)
    for lane in range(3):
        for j, k in enumerate(ks):
            want = golden.mxu.matmul(x[lane:lane + 1, :k], w[lane, :k, None], accumulation=acc)
            assert sums[lane, j] == want[0, 0], (lane, k)


def test_cancelling_data_cancels(rng):
    x, w = accumulators.make_inputs("cancelling", 50, 256, rng)
    exact, magnitudes = accumulators.exact_sums(x, w, [256])
    assert np.median(np.abs(accumulators.ratios(magnitudes, exact))) > 100


def test_accumulators_quick_writes_csv_and_plot(tmp_path, capsys):
    out = tmp_path / "acc"
    assert experiments.main(["accumulators", "--quick", "--out", str(out)]) == 0
    rows = list(csv.DictReader((out / "accumulators.csv").open()))
    assert list(rows[0]) == ["data", "k", "accumulator", "window", "group", "sticky", "anchor", "trials",
                             "rel_median", "rel_p99", "rel_max", "rel_mean_signed", "abs_sum_rel_median",
                             "abs_sum_rel_p99", "abs_sum_rel_max", "condition_median", "bound_slack_median",
                             "bound_slack_p99"]
    # fp32 and 4 windows x 2 groups x sticky x 3 anchors, on 4 kinds of data at K = 16, 64, 128, 256.
    assert len(rows) == (1 + 4 * 2 * 2 * 3) * 4 * 4
    assert {r["accumulator"] for r in rows} >= {"fp32", "column:w=16", "column:w=30,g=8,sticky,anchor=bound",
                                                "column:w=30,g=8,anchor=exact"}
    assert (out / "accumulators.png").stat().st_size > 10_000
    assert not list(out.glob(".*"))                      # the progress file is gone
    assert "Smallest W with median and 99th percentile" in capsys.readouterr().out


def test_accumulators_resumes(tmp_path, monkeypatch):
    out = tmp_path / "acc"
    argv = ["accumulators", "--quick", "--windows", "24", "--groups", "0", "--out", str(out)]
    calls = []
    original = accumulators.sum_columns
    monkeypatch.setattr(accumulators, "sum_columns", lambda acc, *a: calls.append(acc) or original(acc, *a))
    monkeypatch.setattr(accumulators, "print_tables", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        experiments.main(argv)
    assert len(calls) == 7 and (out / accumulators.PROGRESS_FILE).exists()
    monkeypatch.undo()
    monkeypatch.setattr(accumulators, "sum_columns", lambda acc, *a: pytest.fail("recomputed"))
    assert experiments.main(argv) == 0


def test_sr_dot_with_a_column_accumulator(tmp_path):
    out = tmp_path / "sr"
    assert experiments.main(["sr-dot", "--n-max", "100", "--trials", "1", "--points", "2", "--workers", "1",
                             "--accumulator", "column:w=24", "--out", str(out)]) == 0
    rows = list(csv.DictReader((out / "sr-dot.csv").open()))
    assert {r["accumulator"] for r in rows} == {"column:w=24", "narrow"}
    by_key = {(r["accumulator"], r["format"], r["vectors"], r["rounding"], r["n"]): float(r["mean_rel_error"])
              for r in rows}
    # 100 equal products summed exactly, rounded once: bf16(0.1)'s error alone.
    assert by_key[("column:w=24", "bf16", "ones-tenths", "rne", "100")] == pytest.approx(2 ** -10, rel=0.01)
