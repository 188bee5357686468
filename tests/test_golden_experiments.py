"""The sr-dot experiment: its fast accumulators equal one golden.add per step; the CLI works."""

import csv

import numpy as np
import pytest

from golden import BF16, FP32, TF32, Rounding, add, convert, experiments, multiply, xorshift
from golden.bench import main as bench_main


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
