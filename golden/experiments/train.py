"""``python -m golden.experiments train``: mixed-precision training on the MXU's arithmetic.

train: an MLP ``64 -> HIDDEN -> 10`` on scikit-learn's bundled 8x8 digits (1347 training,
450 test images; no download) with plain SGD, every variant from the same seed
(golden.experiments.mlp has the details):

* ``fp32``: NumPy float32 throughout (the reference);
* ``bf16-mxu``: matmuls on the MXU with bf16 inputs, fp32 master weights;
* ``bf16-rne``, ``bf16-sr``, ``bf16-sr-half``: the same, weights kept in bf16 and
  updated through the SR unit's rounding (RNE, mode 1, mode 2; xorshift lanes);
* ``fp16``, ``fp16-static``, ``fp16-dynamic``: fp16 (e5m10) MXU inputs, TPU mode
  (no subnormals), fp32 master weights; no loss scaling, a static 2^10, dynamic scaling.

Reported per epoch: training and test loss, test accuracy, the fraction of nonzero weight
updates that left the weight unchanged ("lost"), the share of the intended update the
weights received ("retained"), the fraction of nonzero gradients flushed to zero on
entry to the MXU ("underflow"), the loss scale. Needs scikit-learn (the
``experiments`` extra). An interrupted run, restarted with the same options and
``--out``, reuses the variants it finished.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .mlp import VARIANTS, load_digits_split, train
from ..tools.cli import progress
from .common import add_training_arguments, plot_training, training_variants, write_csv

NAME = "train"
HELP = "mixed-precision MLP training on the MXU's numerics (digits)"
BY_NAME = {v.name: v for v in VARIANTS}
#: Rows of the variants a run has finished, with its options (removed when it completes).
PROGRESS_FILE = "train.progress.json"


def print_table(rows):
    """The last epoch of each variant."""
    last = {}
    for r in rows:
        last[r["variant"]] = r
    print(f"{'variant':<13} {'test acc':>8} {'test loss':>9} {'train loss':>10} {'lost upd':>8} "
          f"{'retained':>8} {'underflow':>9} {'scale':>7}")
    for name, r in last.items():
        print(f"{name:<13} {r['test_accuracy']:>8.4f} {r['test_loss']:>9.4f} {r['train_loss']:>10.4f} "
              f"{r['lost_update_fraction']:>8.4f} {r['update_retained']:>8.3f} {r['underflow_fraction']:>9.2e} "
              f"{r['loss_scale']:>7.0f}")


def plot(rows, path: Path):
    plot_training(rows, path, "MLP on digits, matmuls in the golden MXU's numerics; same seed for every variant",
                  dashed=lambda name: name.startswith("fp16"))


def add_arguments(p):
    """The sub-command's options."""
    add_training_arguments(p, epochs=12, variants=BY_NAME)


def run(args, p) -> int:
    """Run with parsed ``args``; ``p.error`` reports a bad option."""
    names = training_variants(args, p, BY_NAME)
    try:
        data = load_digits_split(args.seed)
    except ImportError as exc:
        p.error(str(exc))
    steps = len(data[0]) // args.batch
    start = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    # Finished variants are kept in a progress file, so an interrupted run resumes.
    progress_file = args.out / PROGRESS_FILE
    config = {k: getattr(args, k) for k in ("epochs", "hidden", "batch", "lr", "seed")}
    done = {}
    if progress_file.exists():
        saved = json.loads(progress_file.read_text())
        if saved.get("config") == config:
            done = saved["variants"]
    with progress(len(names) * args.epochs * steps, "train (steps)") as bar:
        for name in names:
            if name in done:
                bar.update(args.epochs * steps)
                continue
            bar.set_postfix_str(name)
            done[name] = train(BY_NAME[name], data, hidden=args.hidden, batch=args.batch, epochs=args.epochs,
                               lr=args.lr, seed=args.seed, on_step=lambda: bar.update(1))
            tmp = progress_file.with_name(progress_file.name + ".tmp")
            tmp.write_text(json.dumps({"config": config, "variants": done}))
            os.replace(tmp, progress_file)
    rows = [row for name in names for row in done[name]]
    write_csv(rows, args.out / "train.csv")
    plot(rows, args.out / "train.png")
    print(f"train: MLP 64-{args.hidden}-10 on digits, {args.epochs} epochs, batch {args.batch}, lr {args.lr}, "
          f"seed {args.seed} ({time.perf_counter() - start:.0f} s); last epoch:")
    print_table(rows)
    progress_file.unlink()
    print(f"wrote {args.out / 'train.csv'} and {args.out / 'train.png'}")
    return 0
