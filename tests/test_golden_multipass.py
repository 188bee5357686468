"""fp32 from bf16 passes: the split against ml_dtypes and Fractions, the pass sums against
sequential float32 sums written from the definition (independent of golden/)."""

import csv
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import golden.multipass
from golden import BF16, FP32, experiments, to_float64
from golden.multipass import multipass_matmul, split

#: The passes by the definition: products x_i . w_j with i + j <= level, smallest weight
#: 2^-8(i+j) first, within a weight the larger index of x first.
EXPECTED_ORDER = {
    1: [(0, 0)],
    3: [(1, 0), (0, 1), (0, 0)],
    6: [(2, 0), (1, 1), (0, 2), (1, 0), (0, 1), (0, 0)],
}


def _fp32(values):
    return np.asarray(values, np.float32)


def _reference_split(a):
    """a0 = bf16(a), a1 = bf16(a - a0), a2 = bf16(a - a0 - a1): ml_dtypes RNE, float64 residuals."""
    parts, residual = [], a.astype(np.float64)
    for _ in range(3):
        part = residual.astype(np.float32).astype(ml_dtypes.bfloat16)
        parts.append(part)
        residual = residual - part.astype(np.float64)
    assert not residual.any(), "three bf16 parts hold 24 bits"
    return parts


def _random_fp32(rng, n, lo=-103, hi=126):
    """Normal fp32 values with |a| in [2^lo, 2^(hi+1)), random signs and mantissas."""
    bits = (rng.integers(lo + 127, hi + 128, n, dtype=np.uint32) << 23) | rng.integers(0, 1 << 23, n, dtype=np.uint32)
    return (bits | (rng.integers(0, 2, n, dtype=np.uint32) << 31)).view(np.float32)


def test_split_matches_rne_definition_and_sums_back_exactly(rng):
    a = _random_fp32(rng, 200_000)
    parts = split(a.view(np.uint32))
    assert parts.dtype == np.uint16 and parts.shape == (3,) + a.shape
    for got, want in zip(parts, _reference_split(a)):
        assert np.array_equal(got, want.view(np.uint16))
    total = sum(to_float64(p, BF16) for p in parts)     # <= 25-bit span: exact in float64
    assert np.array_equal(total, a.astype(np.float64))
    for value, p in zip(a[:500], parts[:, :500].T):     # and in exact rationals
        assert sum(Fraction(float(v)) for v in to_float64(p, BF16)) == Fraction(float(value))


def test_split_of_tiny_values_flushes_parts_below_the_smallest_normal():
    tiny = 2.0 ** -126
    cases = {
        2.0 ** -110 * (1 + 2.0 ** -20): (2.0 ** -110, 0.0, 0.0),   # residual 2^-130: FTZ
        2.0 ** -103 * (1 + 2.0 ** -23): (2.0 ** -103, 2.0 ** -126, 0.0),  # exact at the edge
        2.0 ** -100 * (1 + 2.0 ** -9 + 2.0 ** -23): (2.0 ** -100, 2.0 ** -109, 2.0 ** -123),
        2.0 ** -130: (0.0, 0.0, 0.0),                           # fp32 subnormal: DAZ
    }
    a = _fp32(list(cases))
    parts = to_float64(split(a.view(np.uint32)), BF16).T
    for value, got in zip(a, parts):
        assert tuple(got) == cases[float(value)]
        assert abs(sum(got) - float(value)) < tiny


def test_split_edges_overflow_inf_nan():
    big = np.finfo(np.float32).max
    a = _fp32([big, -big, np.inf, -np.inf, np.nan, 0.0, -0.0])
    parts = split(a.view(np.uint32))
    values = to_float64(parts, BF16)
    # fp32 max would round to bf16 inf: a0 is truncated to bf16 max instead, still exact.
    assert parts[0, 0] == 0x7F7F and parts[0, 1] == 0xFF7F
    assert values[:, 0].sum() == float(big) and values[:, 1].sum() == -float(big)
    assert list(parts[0, 2:5]) == [0x7F80, 0xFF80, 0x7FC0]
    assert not parts[1:, 2:].any()


def _sequential_fp32(x, w):
    """y[m, n] = ((+0 + x0 w0) + x1 w1) + ... in float32 (IEEE RNE); bf16 products are exact."""
    y = np.zeros((x.shape[0], w.shape[1]), np.float32)
    for k in range(x.shape[1]):
        y = y + (x[:, k, None].astype(np.float32) * w[None, k, :].astype(np.float32))
    return y


def _reference_multipass(x, w, passes, rows):
    xs, ws = _reference_split(x), _reference_split(w)
    acc = None
    for i, j in EXPECTED_ORDER[passes]:
        for t in range(0, x.shape[1], rows):
            tile = _sequential_fp32(xs[i][:, t:t + rows], ws[j][t:t + rows])
            acc = tile if acc is None else acc + tile
    return acc


@pytest.mark.parametrize("rows", [16, 2], ids=["one-tile", "eight-tiles"])
@pytest.mark.parametrize("passes", [1, 3, 6])
def test_multipass_matmul_equals_sequential_reference(passes, rows, rng):
    # Swapping two passes of the same weight changes the last bit of about 1% of the
    # results (their sum is rounded at 2^-8 of the result's scale): 64 x 64 outputs over
    # eight tiles make such a swap fail. Scales 2^-20..2^20 keep every sum normal.
    x = (rng.standard_normal((64, 16)) * 2.0 ** rng.integers(-20, 21, (64, 16))).astype(np.float32)
    w = (rng.standard_normal((16, 64)) * 2.0 ** rng.integers(-20, 21, (16, 64))).astype(np.float32)
    got = multipass_matmul(x.view(np.uint32), w.view(np.uint32), passes, rows=rows)
    want = _reference_multipass(x, w, passes, rows)
    assert np.array_equal(got, want.view(np.uint32))


@pytest.mark.parametrize("passes", [1, 3, 6])
def test_mxu_is_fed_the_parts_in_pass_order(passes, rng, monkeypatch):
    # Passes of the smallest weight rarely change a result bit (their sum is rounded at
    # 2^-16 of the result's scale), so their order is checked on the MXU's operands.
    fed = {}

    def record(x, w, rows):
        fed.update(x=x, w=w, rows=rows)
        return np.zeros((x.shape[0], w.shape[1]), np.uint32)

    monkeypatch.setattr(golden.multipass, "mxu", record)
    x, w = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    golden.multipass.multipass_matmul(x.view(np.uint32), w.view(np.uint32), passes)
    xs, ws = _reference_split(x), _reference_split(w)
    order = EXPECTED_ORDER[passes]
    assert np.array_equal(fed["x"], np.hstack([xs[i] for i, _ in order]).view(np.uint16))
    assert np.array_equal(fed["w"], np.vstack([ws[j] for _, j in order]).view(np.uint16))
    assert fed["rows"] == 4


def test_more_passes_are_more_accurate(rng):
    x = rng.standard_normal((8, 64)).astype(np.float32)
    w = rng.standard_normal((64, 8)).astype(np.float32)
    exact = x.astype(np.float64) @ w.astype(np.float64)
    err = {p: np.median(np.abs(to_float64(multipass_matmul(x.view(np.uint32), w.view(np.uint32), p), FP32)
                               - exact) / np.abs(exact)) for p in (1, 3, 6)}
    assert err[1] > 2.0 ** -12 > err[3] > 2.0 ** -20 > err[6]


@pytest.mark.parametrize("kwargs, message", [
    ({"passes": 2}, "passes must be one of 1, 3, 6, not 2"),
    ({"rows": 3}, "rows must be a positive divisor of K = 8, not 3"),
    ({"rows": 0}, "rows must be a positive divisor of K = 8, not 0"),
])
def test_multipass_bad_arguments(kwargs, message):
    x = np.zeros((2, 8), np.uint32)
    with pytest.raises(ValueError, match=message):
        multipass_matmul(x, x.T, **kwargs)


def test_float_arrays_are_refused_not_cast():
    with pytest.raises(TypeError, match="a must hold fp32 encodings .* not float32"):
        split(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="w must hold fp32 encodings .* not float64"):
        multipass_matmul(np.zeros((2, 2), np.uint32), np.ones((2, 2)))
    with pytest.raises(ValueError, match="parts must be in 1..3, not 4"):
        split(np.ones(3, np.uint32), 4)


def test_multipass_cli_writes_csv_and_plot(tmp_path, capsys):
    out = tmp_path / "mp"
    assert experiments.main(["multipass", "--k-max", "32", "--size", "4", "--out", str(out)]) == 0
    rows = list(csv.DictReader((out / "multipass.csv").open()))
    assert len(rows) == 3 * 2 * 4     # matrix kinds x K (16, 32) x methods
    assert (out / "multipass.png").stat().st_size > 10_000
    median = {(r["matrices"], r["k"], r["method"]): float(r["median_rel_error"]) for r in rows}
    for kind in ("random", "wide-range"):
        assert median[(kind, "32", "bf16x1")] > 2.0 ** -12 > median[(kind, "32", "bf16x3")] > 2.0 ** -22
    cond = {r["matrices"]: float(r["median_condition"]) for r in rows if r["k"] == "32"}
    assert cond["ill-conditioned"] > 1000 * cond["random"]
    assert "K=32 median" in capsys.readouterr().out
