"""Mixed-precision training of a small MLP on the MXU's arithmetic.

The model: ``64 -> hidden -> 10`` with ReLU and softmax cross-entropy (mean over the
batch), biases as weights on a constant-one input, plain SGD. The three matrix products
of a step (forward ``x . W``, backward ``d . W^T`` and ``x^T . d``) run through
:func:`golden.mxu.mxu`: operands rounded to the input format with RNE (the SR unit's
``convert``, TPU mode: FTZ), exact products, fp32 accumulation in the MXU's order.
Element-wise work (ReLU, softmax, the loss, scaling by powers of two) is NumPy float32.

Weight updates ``w <- w - lr g``: the fp32 sum ``w + (-lr g)`` is golden ``add`` (RNE);
variants with bf16 weights then round it to bf16 with golden ``convert`` in RNE, ``sr``
(mode 1) or ``sr-half`` (mode 2), the random bits from one xorshift lane per weight
(stepping once per update), as the SR unit would be fed.

Every variant draws the same initial weights and batch order from ``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import xorshift
from ..formats import BF16, FP16, FP32, FloatFormat
from ..mxu import mxu
from ..ops import add, convert, convert_sr_bits
from ..params import int_param
from ..rounding import Flags, Rounding

__all__ = ["Variant", "VARIANTS", "Weights", "Counters", "initial_weights", "load_digits_split", "train"]

#: Largest loss scale the dynamic scaler reaches.
MAX_SCALE = 2.0 ** 24
#: Good steps before the dynamic scaler doubles the scale.
GROWTH_INTERVAL = 100


@dataclass(frozen=True)
class Variant:
    """One way to train.

    Parameters
    ----------
    in_fmt : FloatFormat or None
        MXU input format; None: NumPy float32 matmuls (the reference).
    weights : Rounding or None
        None: fp32 (master) weights; else bf16 weights updated with this rounding.
    loss_scale : str
        ``none``, ``static`` (:data:`STATIC_SCALE`) or ``dynamic`` (start
        :data:`DYNAMIC_START`, halve and skip the step on inf/NaN gradients, double after
        :data:`GROWTH_INTERVAL` good steps).
    """

    name: str
    in_fmt: FloatFormat | None
    weights: Rounding | None = None
    loss_scale: str = "none"


#: Loss scale of the static variant.
STATIC_SCALE = 2.0 ** 10
#: First loss scale of the dynamic variant.
DYNAMIC_START = 2.0 ** 15

VARIANTS = (
    Variant("fp32", None),
    Variant("bf16-mxu", BF16),
    Variant("bf16-rne", BF16, Rounding.NEAREST_EVEN),
    Variant("bf16-sr", BF16, Rounding.STOCHASTIC),
    Variant("bf16-sr-half", BF16, Rounding.STOCHASTIC_HALF),
    Variant("fp16", FP16),
    Variant("fp16-static", FP16, loss_scale="static"),
    Variant("fp16-dynamic", FP16, loss_scale="dynamic"),
)


def load_digits_split(seed: int, test_fraction: float = 0.25):
    """scikit-learn's bundled 8x8 digits: ``(x_train, y_train, x_test, y_test)``.

    Pixels scaled to [0, 1] plus a constant-one column (float32); a seeded shuffle.
    """
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise ImportError("the train experiment needs scikit-learn: pip install 'tpu-arith[experiments]'") from None
    digits = load_digits()
    x = np.hstack([digits.data / 16.0, np.ones((len(digits.data), 1))]).astype(np.float32)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(round(test_fraction * len(x)))
    test, tr = order[:n_test], order[n_test:]
    return x[tr], digits.target[tr], x[test], digits.target[test]


class Counters:
    """Lost updates and underflowing gradients, summed over a run.

    ``applied`` / ``intended`` is the share of the intended update ``delta`` the weights
    received (``sum (w_new - w) delta / sum delta^2``): 1 in expectation for an unbiased
    rounding, below 1 when small updates are lost.
    """

    def __init__(self):
        self.updates = self.lost = self.gradients = self.underflows = 0
        self.applied = self.intended = 0.0


def _to_input(a, fmt: FloatFormat, counters: Counters | None = None):
    """fp32 array -> ``fmt`` encodings (RNE, FTZ); counts gradients flushed to zero."""
    bits, flags = convert(np.ascontiguousarray(a, np.float32).view(np.uint32), FP32, fmt)
    if counters is not None:
        nonzero = a != 0
        counters.gradients += int(nonzero.sum())
        counters.underflows += int((nonzero & ((flags & Flags.UNDERFLOW) != 0)).sum())
    return bits


def _matmul(variant: Variant, a, b, counters=None, grad_operand=None):
    """``a . b`` (float32 arrays) in the variant's numerics, as float32.

    ``grad_operand`` (0 or 1) names the operand that is a gradient: its underflows count.
    """
    if variant.in_fmt is None:
        return a @ b
    ops = [_to_input(m, variant.in_fmt, counters if i == grad_operand else None) for i, m in enumerate((a, b))]
    return mxu(ops[0], ops[1], in_fmt=variant.in_fmt).view(np.float32)


class Weights:
    """One weight matrix and its update rule."""

    def __init__(self, w, variant: Variant, seed: int):
        self.rounding = variant.weights
        self.reference = variant.in_fmt is None
        if self.rounding is None:
            self.w = w.astype(np.float32)
        else:
            self.w = self._widen(convert(w.astype(np.float32).view(np.uint32), FP32, BF16)[0])
            rand_bits = convert_sr_bits(FP32, BF16, self.rounding)
            self.rand_bits = rand_bits
            if rand_bits is not None:
                self.states = xorshift.lane_seeds(seed, w.size).reshape(w.shape)

    @staticmethod
    def _widen(bf16):
        return (bf16.astype(np.uint32) << 16).view(np.float32)

    def update(self, delta, counters: Counters):
        """``w <- round(w + delta)``; counts nonzero deltas that leave ``w`` unchanged."""
        delta = delta.astype(np.float32)
        if self.reference:
            new = self.w + delta
        else:
            new = add(self.w.view(np.uint32), delta.view(np.uint32), FP32)[0].view(np.float32)
            if self.rounding is not None:
                rand = None
                if self.rand_bits is not None:
                    outputs, self.states = xorshift.stream(self.states, 1)
                    rand = xorshift.top_bits(outputs[0], self.rand_bits)
                new = self._widen(convert(new.view(np.uint32), FP32, BF16, self.rounding, rand)[0])
        moved = delta != 0
        counters.updates += int(moved.sum())
        counters.lost += int((moved & (new == self.w)).sum())
        d64 = delta.astype(np.float64)
        counters.applied += float(((new.astype(np.float64) - self.w) * d64).sum())
        counters.intended += float((d64 * d64).sum())
        self.w = new


def initial_weights(rng: np.random.Generator, n_in: int, hidden: int, variant: Variant, seed: int):
    """The MLP's two weight matrices drawn from ``rng`` (normal, scaled by ``sqrt(2 / n_in)``
    and ``sqrt(1 / hidden)``; the bias rows start at 0), each updated as ``variant`` says
    with its own xorshift lanes (from ``seed``)."""
    init1 = rng.standard_normal((n_in, hidden)) * np.sqrt(2.0 / n_in)
    init2 = rng.standard_normal((hidden + 1, 10)) * np.sqrt(1.0 / hidden)
    init1[-1], init2[-1] = 0, 0           # biases start at 0
    return Weights(init1, variant, seed * 2 + 1), Weights(init2, variant, seed * 2 + 2)


def _forward(variant, w1, w2, x):
    z1 = _matmul(variant, x, w1)
    h = np.hstack([np.maximum(z1, 0), np.ones((len(x), 1), np.float32)])
    return z1, h, _matmul(variant, h, w2)


def _loss_and_probs(logits, y):
    logits = logits.astype(np.float32)
    shifted = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(shifted)
    p /= p.sum(axis=1, keepdims=True)
    loss = -np.log(np.maximum(p[np.arange(len(y)), y], np.float32(1e-30))).mean()
    return float(loss), p


def evaluate(variant, w1, w2, x, y):
    """``(loss, accuracy)`` of the variant's forward pass on ``(x, y)``."""
    _, _, logits = _forward(variant, w1, w2, x)
    if not np.isfinite(logits).all():
        return float("nan"), float((np.nan_to_num(logits).argmax(axis=1) == y).mean())
    loss, p = _loss_and_probs(logits, y)
    return loss, float((p.argmax(axis=1) == y).mean())


def minibatches(rng, count: int, batch: int):
    """One epoch's minibatches: the indices of each full ``batch`` of a permutation of
    ``range(count)`` drawn from ``rng`` (a last partial batch is left out)."""
    order = rng.permutation(count)
    for start in range(0, count - batch + 1, batch):
        yield order[start:start + batch]


def train(variant: Variant, data, *, hidden: int = 32, batch: int = 32, epochs: int = 10,
          lr: float = 0.1, seed: int = 1, on_step=None):
    """Train one variant; return one dict per epoch (losses, accuracy, counters so far).

    ``on_step()`` is called after every step (a progress bar's update).
    """
    x_train, y_train, x_test, y_test = data
    hidden = int_param("hidden", hidden, 1, 1 << 16)
    batch = int_param("batch", batch, 1, len(x_train))
    epochs = int_param("epochs", epochs, 1, 1 << 20)
    if not 0 < lr < float("inf"):
        raise ValueError(f"lr must be positive and finite, not {lr}")
    rng = np.random.default_rng(seed)
    w1, w2 = initial_weights(rng, x_train.shape[1], hidden, variant, seed)
    counters = Counters()
    scale = {"none": 1.0, "static": STATIC_SCALE, "dynamic": DYNAMIC_START}[variant.loss_scale]
    good_steps = skipped = 0
    rows = []
    for epoch in range(1, epochs + 1):
        losses = []
        for idx in minibatches(rng, len(x_train), batch):
            x, y = x_train[idx], y_train[idx]
            z1, h, logits = _forward(variant, w1.w, w2.w, x)
            loss, p = _loss_and_probs(logits, y)
            losses.append(loss)
            d2 = p.copy()
            d2[np.arange(batch), y] -= 1
            d2 *= np.float32(scale / batch)
            g2 = _matmul(variant, h.T, d2, counters, grad_operand=1)
            dh = np.where(z1 > 0, _matmul(variant, d2, w2.w[:-1].T, counters, grad_operand=0), np.float32(0))
            g1 = _matmul(variant, x.T, dh, counters, grad_operand=1)
            finite = np.isfinite(g1).all() and np.isfinite(g2).all() and np.isfinite(dh).all()
            if variant.loss_scale == "dynamic" and not finite:
                scale, good_steps, skipped = scale / 2, 0, skipped + 1
            else:
                w1.update(g1 * np.float32(-lr / scale), counters)
                w2.update(g2 * np.float32(-lr / scale), counters)
                good_steps += 1
                if variant.loss_scale == "dynamic" and good_steps == GROWTH_INTERVAL:
                    scale, good_steps = min(scale * 2, MAX_SCALE), 0
            if on_step is not None:
                on_step()
        test_loss, test_acc = evaluate(variant, w1.w, w2.w, x_test, y_test)
        rows.append({
            "variant": variant.name, "epoch": epoch, "train_loss": float(np.mean(losses)),
            "test_loss": test_loss, "test_accuracy": test_acc,
            "lost_update_fraction": counters.lost / max(counters.updates, 1),
            "update_retained": counters.applied / counters.intended if counters.intended else 1.0,
            "underflow_fraction": counters.underflows / max(counters.gradients, 1),
            "loss_scale": scale, "skipped_steps": skipped,
        })
    return rows
