"""The training experiment: update rounding and gradient underflow from the definitions,
loss scaling, and a short run whose variants differ in the expected direction."""

import csv
import json

import numpy as np
import pytest

import golden.experiments.mlp
from golden import BF16, FP16, experiments
from golden.experiments.mlp import VARIANTS, Counters, Weights, _to_input, load_digits_split, train

BY_NAME = {v.name: v for v in VARIANTS}


@pytest.mark.parametrize("name, moved, retained", [
    ("bf16-rne", 0.0, 0.0),        # 2^-10 is below half an ulp (2^-8) of 1.0: always lost
    ("bf16-sr", 1 / 8, 1.0),       # mode 1: up with probability 2^-10 / 2^-7
    ("bf16-sr-half", 1 / 2, 4.0),  # mode 2: up with probability 1/2, by 2^-7 = 8 x 2^-10 ...
])
def test_bf16_weight_update_rounding(name, moved, retained):
    n = 1 << 14
    weights = Weights(np.ones((128, n // 128)), BY_NAME[name], seed=5)
    counters = Counters()
    delta = np.full(weights.w.shape, 2.0 ** -10, np.float32)
    weights.update(delta, counters)
    changed = weights.w != 1
    assert set(np.unique(weights.w)) <= {1.0, 1.0 + 2.0 ** -7}
    sigma = np.sqrt(moved * (1 - moved) / n)
    assert abs(changed.mean() - moved) <= 4 * sigma
    assert counters.updates == n and counters.lost == n - changed.sum()
    assert counters.applied / counters.intended == pytest.approx(retained, abs=4 * 8 * sigma + 1e-12)  # retained = 8 x moved


def test_fp32_master_weights_keep_small_updates():
    weights = Weights(np.ones((4, 4)), BY_NAME["bf16-mxu"], seed=1)
    counters = Counters()
    weights.update(np.full((4, 4), 2.0 ** -10, np.float32), counters)
    assert (weights.w == np.float32(1 + 2.0 ** -10)).all() and counters.lost == 0


def test_underflow_counts_gradients_flushed_on_entry():
    counters = Counters()
    grads = np.array([[2.0 ** -20, -2.0 ** -15, 2.0 ** -14, 0.0, 1.0 + 2.0 ** -12]], np.float32)
    fp16 = _to_input(grads, FP16, counters)
    assert list(fp16[0]) == [0, 0x8000, 0x0400, 0, 0x3C00]   # fp16 min normal is 2^-14; FTZ
    assert (counters.gradients, counters.underflows) == (4, 2)   # inexact is not underflow
    _to_input(grads, BF16, counters)                           # bf16 flushes none of them
    assert (counters.gradients, counters.underflows) == (8, 2)


def test_dynamic_loss_scale_backs_off_on_overflow(monkeypatch):
    # 2^30 / batch overflows fp16 (max 65504): steps are skipped and the scale halves.
    monkeypatch.setattr(golden.experiments.mlp, "DYNAMIC_START", 2.0 ** 30)
    data = [a[:256] for a in load_digits_split(3)]
    rows = train(BY_NAME["fp16-dynamic"], data, hidden=8, epochs=1, seed=3)
    assert rows[-1]["skipped_steps"] >= 1
    assert rows[-1]["loss_scale"] == 2.0 ** (30 - rows[-1]["skipped_steps"])
    assert np.isfinite(rows[-1]["train_loss"])


@pytest.mark.parametrize("kwargs, message", [
    ({"batch": 0}, "batch must be in 1..64, not 0"),
    ({"hidden": 2.5}, "hidden must be an integer, not 2.5"),
    ({"lr": -1.0}, "lr must be positive and finite, not -1.0"),
])
def test_train_rejects_bad_options(kwargs, message):
    data = [a[:64] for a in load_digits_split(1)]
    with pytest.raises((ValueError, TypeError), match=message):
        train(BY_NAME["fp32"], data, **kwargs)


@pytest.mark.thorough
def test_train_quick_variants_differ_as_expected(tmp_path, capsys):
    out = tmp_path / "train"
    names = ["fp32", "bf16-mxu", "bf16-rne", "bf16-sr", "bf16-sr-half", "fp16", "fp16-static"]
    # lr 0.02: updates small enough that round-to-nearest loses a visible share of them.
    assert experiments.main(["train", "--quick", "--epochs", "1", "--lr", "0.02", "--variants", ",".join(names),
                             "--out", str(out)]) == 0
    rows = {r["variant"]: {k: float(v) for k, v in r.items() if k != "variant"}
            for r in csv.DictReader((out / "train.csv").open())}
    assert list(rows) == names and (out / "train.png").stat().st_size > 10_000
    # bf16 matmuls with fp32 master weights track the fp32 reference.
    assert rows["bf16-mxu"]["train_loss"] == pytest.approx(rows["fp32"]["train_loss"], rel=0.01)
    # Round-to-nearest bf16 weights lose more updates than SR, and most of their size.
    assert rows["bf16-rne"]["lost_update_fraction"] > rows["bf16-sr"]["lost_update_fraction"] + 0.02
    assert rows["bf16-rne"]["update_retained"] < 0.95
    assert rows["bf16-sr"]["update_retained"] == pytest.approx(1, abs=0.02)
    assert rows["bf16-sr-half"]["update_retained"] > 1.05
    assert rows["bf16-rne"]["train_loss"] > rows["bf16-sr"]["train_loss"]
    # fp16 without subnormals flushes gradients; a loss scale of 2^10 recovers them.
    assert rows["fp16"]["underflow_fraction"] > 10 * rows["fp16-static"]["underflow_fraction"]
    assert rows["bf16-mxu"]["underflow_fraction"] == 0
    assert "fp16-static" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["train", "--variants", "fp32,bogus"], "--variants must name some of fp32,"),
    (["train", "--lr", "0"], "--lr must be in 1e-06..10.0, not 0.0"),
    (["train", "--epochs", "0"], "--epochs must be in 1..1000, not 0"),
    (["multipass", "--k-max", "100"], "--k-max must be a power of two, not 100"),
    (["multipass", "--k-max", "8"], "--k-max must be in 16..16384, not 8"),
    (["multipass", "--size", "0"], "--size must be in 1..256, not 0"),
    (["multipass", "--bogus"], "unrecognized arguments: --bogus"),
])
def test_cli_errors_exit_2_with_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        experiments.main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert message in err and err.count("\n") == 1


def test_train_resumes_finished_variants(tmp_path):
    # A progress file with the run's options stands for a finished variant: it is reused.
    out = tmp_path / "train"
    out.mkdir()
    config = {"epochs": 1, "hidden": 4, "batch": 64, "lr": 0.05, "seed": 2}
    saved = [{"variant": "fp32", "epoch": 1, "train_loss": 9.0, "test_loss": 9.0, "test_accuracy": 0.5,
              "lost_update_fraction": 0.0, "update_retained": 1.0, "underflow_fraction": 0.0,
              "loss_scale": 1.0, "skipped_steps": 0}]
    (out / "train.progress.json").write_text(json.dumps({"config": config, "variants": {"fp32": saved}}))
    argv = ["train", "--epochs", "1", "--hidden", "4", "--batch", "64", "--lr", "0.05", "--seed", "2",
            "--variants", "fp32,bf16-mxu", "--out", str(out)]
    assert experiments.main(argv) == 0
    rows = list(csv.DictReader((out / "train.csv").open()))
    assert [r["variant"] for r in rows] == ["fp32", "bf16-mxu"]
    assert float(rows[0]["train_loss"]) == 9.0 and float(rows[1]["train_loss"]) < 3
    assert not (out / "train.progress.json").exists()
