"""``python -m golden.experiments jax-train``: a JAX model trained on the MXU's numerics.

jax-train: the MLP ``64 -> HIDDEN -> 10`` of the train experiment (scikit-learn's digits,
softmax cross-entropy, plain SGD, the same seed for every variant), written in JAX with
``jax.grad``; its two matrix products call ``golden.jax.dot`` (forward and, through its
custom VJP, backward) in place of ``jnp.dot``:

* ``jax-f32``: ``jnp.dot`` at ``Precision.HIGHEST`` on the CPU (float32, the reference);
* ``mxu-x1``, ``mxu-x3``, ``mxu-x6``: ``golden.jax.dot`` with ``BF16_BF16_F32``, ``_X3``,
  ``_X6`` (1, 3, 6 bf16 passes), float32 weights;
* ``mxu-x1-bf16-rne``, ``mxu-x1-bf16-sr``: one pass, weights kept in bf16 and updated
  through the SR unit's rounding (RNE or ``sr``, xorshift lanes: ``golden.experiments.mlp.Weights``).

``--accumulation`` chooses how the ``mxu-*`` variants' products sum (``sequential``, the default,
or a column accumulator ``column:w=W,...``: golden.column; slower, on the integer model).

Reported per epoch: training and test loss, test accuracy. Also measured: what JAX on the
CPU does with the BF16 presets (``jax.lax.dot(..., precision=DotAlgorithmPreset...)``),
as the largest difference from its float32 product. Needs the ``jax`` and
``experiments`` extras. About a minute on one core (``--quick``: seconds).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..column import SEQUENTIAL, accumulation_arg, accumulation_param, spelling
from ..tools.cli import progress
from ..rounding import Rounding
from .mlp import BF16, Counters, Variant, initial_weights, load_digits_split, minibatches
from .common import add_training_arguments, plot_training, training_variants, write_csv

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


def train_variant(name: str, data, *, hidden: int, batch: int, epochs: int, lr: float, seed: int, on_step=None,
                  accumulation=None, accumulator=None):
    """One variant: a dict per epoch (losses, accuracy); ``accumulation`` sums the
    products of ``golden.jax.dot`` (``"sequential"`` or a column accumulator; ``accumulator``:
    its old name)."""
    accumulation = accumulation_arg(accumulation, accumulator)
    jax, jnp, golden_jax = _jax()
    precision, rounding = VARIANTS[name]
    x_train, y_train, x_test, y_test = data

    def dot(a, b):
        if precision is None:
            return jnp.dot(a, b, precision=jax.lax.Precision.HIGHEST)
        return golden_jax.dot(a, b, precision=precision, accumulation=accumulation)

    def logits_of(w1, w2, x):
        h = jnp.maximum(dot(x, w1), 0)
        return dot(jnp.concatenate([h, jnp.ones((x.shape[0], 1), jnp.float32)], axis=1), w2)

    def loss_of(w1, w2, x, y):
        logp = jax.nn.log_softmax(logits_of(w1, w2, x))
        return -jnp.mean(logp[jnp.arange(x.shape[0]), y])

    step = jax.jit(jax.value_and_grad(loss_of, argnums=(0, 1)))
    rng = np.random.default_rng(seed)
    weights = initial_weights(rng, x_train.shape[1], hidden, Variant(name, BF16, rounding), seed)
    counters = Counters()
    rows = []
    for epoch in range(1, epochs + 1):
        losses = []
        for idx in minibatches(rng, len(x_train), batch):
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
    plot_training(rows, path, "JAX MLP on digits; products through golden.jax.dot (the MXU's numerics) or jnp.dot",
                  dashed=lambda name: name == "jax-f32")


def add_arguments(p):
    """The sub-command's options."""
    add_training_arguments(p, epochs=10, variants=VARIANTS)
    p.add_argument("--accumulation", default=SEQUENTIAL,
                   help=f"how the mxu-* variants' products sum: {SEQUENTIAL} (default: every add rounded) or "
                        + spelling())


def run(args, p) -> int:
    """Run with parsed ``args``; ``p.error`` reports a bad option."""
    names = training_variants(args, p, VARIANTS)
    try:
        accumulation = accumulation_param("--accumulation", args.accumulation)
    except (TypeError, ValueError) as error:
        p.error(str(error))
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
                                  seed=args.seed, on_step=lambda: bar.update(1), accumulation=accumulation)
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, args.out / "jax-train.csv")
    plot(rows, args.out / "jax-train.png")
    print(f"jax-train: MLP 64-{args.hidden}-10 on digits, {args.epochs} epochs, batch {args.batch}, lr {args.lr}, "
          f"seed {args.seed}, accumulation {accumulation or SEQUENTIAL} ({time.perf_counter() - start:.0f} s); "
          "last epoch:")
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
