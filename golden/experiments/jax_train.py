"""``python -m golden.experiments jax-train``: a JAX model trained on the MXU's numerics.

jax-train: the MLP ``64 -> HIDDEN -> 10`` of the train experiment (scikit-learn's digits,
softmax cross-entropy, plain SGD, the same seed for every variant), written in JAX with
``jax.grad``; its two matrix products call ``golden.jax.dot`` (forward and, through its
custom VJP, backward) in place of ``jnp.dot``:

* ``jax-f32``: ``jnp.dot`` at ``Precision.HIGHEST`` on the CPU (float32, the reference);
* ``mxu-x1``, ``mxu-x3``, ``mxu-x6``: ``golden.jax.dot`` with ``BF16_BF16_F32``, ``_X3``,
  ``_X6`` (1, 3, 6 bf16 passes), float32 weights;
* ``mxu-x1-bf16-rne``, ``mxu-x1-bf16-sr``: one pass, weights kept in bf16 and updated
  through the SR unit's rounding (RNE or ``sr``, xorshift lanes: ``golden.train.Weights``).

Reported per epoch: training and test loss, test accuracy. Also measured: what JAX on the
CPU does with the BF16 presets (``jax.lax.dot(..., precision=DotAlgorithmPreset...)``),
as the largest difference from its float32 product. Needs the ``jax`` and
``experiments`` extras. About a minute on one core (``--quick``: seconds).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..cli import progress, save_figure
from ..rounding import Rounding
from ..train import BF16, Counters, Variant, Weights, load_digits_split
from .common import check_ranges, write_csv

NAME = "jax-train"
HELP = "a JAX MLP trained through golden.jax.dot (1, 3, 6 passes; bf16 weights RNE vs SR)"
#: Variant -> (precision of golden.jax.dot or None for jnp.dot, bf16 weight rounding or None).
VARIANTS = {
    "jax-f32": (None, None),
    "mxu-x1": ("BF16_BF16_F32", None),
    "mxu-x3": ("BF16_BF16_F32_X3", None),
    "mxu-x6": ("BF16_BF16_F32_X6", None),
    "mxu-x1-bf16-rne": ("BF16_BF16_F32", Rounding.NEAREST_EVEN),
    "mxu-x1-bf16-sr": ("BF16_BF16_F32", Rounding.STOCHASTIC),
}


def _jax():
    try:
        import jax
        import jax.numpy as jnp

        from .. import jax as golden_jax
    except ImportError as error:
        raise ImportError(f"jax-train needs JAX: pip install -e '.[jax]' ({error})") from None
    return jax, jnp, golden_jax


def cpu_presets() -> dict[str, float]:
    """Largest |difference| between ``jax.lax.dot`` at each BF16 preset and at
    ``F32_F32_F32`` on the CPU (64 x 64 normal data): 0 means the CPU computes float32."""
    jax, jnp, _ = _jax()
    rng = np.random.default_rng(0)
    a, b = (jnp.asarray(rng.standard_normal((64, 64)).astype(np.float32)) for _ in range(2))
    presets = jax.lax.DotAlgorithmPreset
    f32 = jax.lax.dot(a, b, precision=presets.F32_F32_F32)
    return {name: float(jnp.abs(jax.lax.dot(a, b, precision=getattr(presets, name)) - f32).max())
            for name in ("BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6")}


def train_variant(name: str, data, *, hidden: int, batch: int, epochs: int, lr: float, seed: int, on_step=None):
    """One variant: a dict per epoch (losses, accuracy)."""
    jax, jnp, golden_jax = _jax()
    precision, rounding = VARIANTS[name]
    x_train, y_train, x_test, y_test = data

    def dot(a, b):
        if precision is None:
            return jnp.dot(a, b, precision=jax.lax.Precision.HIGHEST)
        return golden_jax.dot(a, b, precision=precision)

    def logits_of(w1, w2, x):
        h = jnp.maximum(dot(x, w1), 0)
        return dot(jnp.concatenate([h, jnp.ones((x.shape[0], 1), jnp.float32)], axis=1), w2)

    def loss_of(w1, w2, x, y):
        logp = jax.nn.log_softmax(logits_of(w1, w2, x))
        return -jnp.mean(logp[jnp.arange(x.shape[0]), y])

    step = jax.jit(jax.value_and_grad(loss_of, argnums=(0, 1)))
    rng = np.random.default_rng(seed)
    n_in = x_train.shape[1]
    init1 = rng.standard_normal((n_in, hidden)) * np.sqrt(2.0 / n_in)
    init2 = rng.standard_normal((hidden + 1, 10)) * np.sqrt(1.0 / hidden)
    init1[-1], init2[-1] = 0, 0
    variant = Variant(name, BF16, rounding)
    weights = [Weights(init1, variant, seed * 2 + 1), Weights(init2, variant, seed * 2 + 2)]
    counters = Counters()
    rows = []
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(x_train))
        losses = []
        for start in range(0, len(order) - batch + 1, batch):
            idx = order[start:start + batch]
            loss, grads = step(weights[0].w, weights[1].w, x_train[idx], y_train[idx])
            losses.append(float(loss))
            for wt, g in zip(weights, grads):
                wt.update(np.asarray(g, np.float32) * np.float32(-lr), counters)
            if on_step is not None:
                on_step()
        logits = np.asarray(logits_of(weights[0].w, weights[1].w, x_test))
        test_loss = float(-np.mean(np.asarray(jax.nn.log_softmax(logits))[np.arange(len(y_test)), y_test]))
        rows.append({"variant": name, "epoch": epoch, "train_loss": float(np.mean(losses)), "test_loss": test_loss,
                     "test_accuracy": float((logits.argmax(axis=1) == y_test).mean())})
    return rows


def plot(rows, path: Path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    for i, name in enumerate(dict.fromkeys(r["variant"] for r in rows)):
        sel = [r for r in rows if r["variant"] == name]
        for ax, key in zip(axes, ("train_loss", "test_loss", "test_accuracy")):
            ax.plot([r["epoch"] for r in sel], [r[key] for r in sel], "--" if name == "jax-f32" else "-",
                    color=plt.get_cmap("tab10")(i), marker="o", markersize=3, label=name)
    for ax, title in zip(axes, ("training loss (mean over the epoch)", "test loss", "test accuracy")):
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("epoch")
        ax.grid(True, alpha=0.3)
    axes[0].set_yscale("log")
    axes[1].set_yscale("log")
    axes[0].legend(fontsize=8)
    fig.suptitle("JAX MLP on digits; products through golden.jax.dot (the MXU's numerics) or jnp.dot")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def add_arguments(p):
    """The sub-command's options."""
    p.add_argument("--epochs", type=int, default=10, help="epochs, 1..1000 (default 10)")
    p.add_argument("--hidden", type=int, default=32, help="hidden units, 1..1024 (default 32)")
    p.add_argument("--batch", type=int, default=32, help="batch size, 1..1024 (default 32)")
    p.add_argument("--lr", type=float, default=0.05, help="SGD learning rate, 1e-6..10 (default 0.05)")
    p.add_argument("--seed", type=int, default=1, help="seed of data split, weights, batches, xorshift, 0..2**20")
    p.add_argument("--variants", default=",".join(VARIANTS),
                   help=f"comma-separated subset of {','.join(VARIANTS)} (default: all)")


def run(args, p) -> int:
    """Run with parsed ``args``; ``p.error`` reports a bad option."""
    if args.quick:
        args.epochs, args.hidden = min(args.epochs, 2), min(args.hidden, 16)
    check_ranges(p, (("--epochs", args.epochs, 1, 1000), ("--hidden", args.hidden, 1, 1024),
                     ("--batch", args.batch, 1, 1024), ("--lr", args.lr, 1e-6, 10.0),
                     ("--seed", args.seed, 0, 1 << 20)))
    names = [n.strip() for n in args.variants.split(",") if n.strip()]
    if not names or any(n not in VARIANTS for n in names):
        p.error(f"--variants must name some of {','.join(VARIANTS)}, not {args.variants!r}")
    try:
        _jax()
        data = load_digits_split(args.seed)
    except ImportError as error:
        p.error(str(error))
    start = time.perf_counter()
    steps = len(data[0]) // args.batch
    rows = []
    with progress(len(names) * args.epochs * steps, "jax-train (steps)") as bar:
        for name in names:
            bar.set_postfix_str(name)
            rows += train_variant(name, data, hidden=args.hidden, batch=args.batch, epochs=args.epochs, lr=args.lr,
                                  seed=args.seed, on_step=lambda: bar.update(1))
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, args.out / "jax-train.csv")
    plot(rows, args.out / "jax-train.png")
    print(f"jax-train: MLP 64-{args.hidden}-10 on digits, {args.epochs} epochs, batch {args.batch}, lr {args.lr}, "
          f"seed {args.seed} ({time.perf_counter() - start:.0f} s); last epoch:")
    print(f"{'variant':<16} {'test acc':>8} {'test loss':>9} {'train loss':>10}")
    last = {r["variant"]: r for r in rows}
    for name, r in last.items():
        print(f"{name:<16} {r['test_accuracy']:>8.4f} {r['test_loss']:>9.5f} {r['train_loss']:>10.5f}")
    differences = cpu_presets()
    print("JAX on the CPU, jax.lax.dot at each preset vs F32_F32_F32, largest difference: "
          + ", ".join(f"{k} {v:g}" for k, v in differences.items())
          + (" (the CPU computes float32: no X3/X6 to compare with)" if not any(differences.values()) else ""))
    print(f"wrote {args.out / 'jax-train.csv'} and {args.out / 'jax-train.png'}")
    return 0
