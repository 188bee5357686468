"""The MXU's numerics inside a JAX model: ``golden.jax.dot(x, w, precision=...)``.

``dot`` stands in for ``jnp.dot`` / ``jax.lax.dot`` on float32 arrays: the product runs
on the host through :func:`golden.matmul` (``jax.pure_callback``), bit for bit what the
MXU computes for that precision, and its gradient is two more such products (``g . w^T``
and ``x^T . g``, as a TPU computes them at the same precision: ``jax.custom_vjp``). So a
model trains with the precision chosen per call. Needs the ``jax`` extra
(``pip install -e '.[jax]'``, CPU wheels).

Supported: 2-D ``x`` (M x K) and ``w`` (K x N), or ``x`` with leading batch axes (``... x
K``, flattened for the product), float32 in and out; precisions with fp32 accumulation
(``golden.tiled.PRESETS``, ``jax.lax.Precision`` members, ``jax.lax.DotAlgorithmPreset``
members of those names); ``jax.jit`` and ``jax.grad`` around it. Not supported: ``vmap``
over the callback, other dtypes, higher-order derivatives; and speed: every call is a host
round trip (``jit`` does not make the product itself faster).
"""

from __future__ import annotations

import functools

import numpy as np

from .column import accumulation_arg, accumulation_param
from .formats import FP32
from .tiled import matmul, resolve_precision

try:
    import jax
    import jax.numpy as jnp
except ImportError as error:          # the extra is optional: say how to get it
    raise ImportError("golden.jax needs JAX: pip install -e '.[jax]'") from error

__all__ = ["dot", "precision_name"]


def precision_name(precision):
    """The precision as :func:`golden.matmul` takes it (a preset name, or an ``(in_fmt,
    acc_fmt)`` pair of format names), from a preset name, a ``jax.lax.Precision``, a
    ``jax.lax.DotAlgorithmPreset`` or a pair; a ValueError without fp32 accumulation."""
    name = getattr(precision, "name", precision)
    if not isinstance(name, (str, tuple)):
        raise TypeError(f"precision must be a preset name, jax.lax.Precision, DotAlgorithmPreset or "
                        f"(in_fmt, acc_fmt), not {precision!r}")
    in_fmt, acc_fmt, _ = resolve_precision(name)
    if acc_fmt != FP32:
        raise ValueError(f"precision {name}: golden.jax.dot works on float32, not {acc_fmt.name} accumulation")
    return name.upper() if isinstance(name, str) else (in_fmt.name, acc_fmt.name)


def _host_product(x, w, precision: str, array, accumulation):
    x = np.ascontiguousarray(x, np.float32)
    w = np.ascontiguousarray(w, np.float32)
    return matmul(x.view(np.uint32), w.view(np.uint32), precision=precision, array=array,
                  accumulation=accumulation).y.view(np.float32)


def _product(x, w, precision: str, array, accumulation):
    shape = jax.ShapeDtypeStruct((x.shape[0], w.shape[1]), jnp.float32)
    return jax.pure_callback(functools.partial(_host_product, precision=precision, array=array,
                                               accumulation=accumulation), shape, x, w)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3, 4))
def _dot(x, w, precision, array, accumulation):
    return _product(x, w, precision, array, accumulation)


def _dot_forward(x, w, precision, array, accumulation):
    return _product(x, w, precision, array, accumulation), (x, w)


def _dot_backward(precision, array, accumulation, saved, g):
    x, w = saved
    return (_product(g, w.T, precision, array, accumulation),
            _product(x.T, g, precision, array, accumulation))


_dot.defvjp(_dot_forward, _dot_backward)


def dot(x, w, *, precision="BF16_BF16_F32", array: tuple[int, int] | None = None, accumulation=None,
        accumulator=None):
    """``x . w`` in the MXU's numerics for ``precision`` (default one bf16 pass), tiled for
    ``array`` (rows, cols) and summed by ``accumulation`` (``"sequential"`` or a column
    accumulator; ``accumulator``: its old name) as :func:`golden.matmul`; differentiable in
    ``x`` and ``w``."""
    name = precision_name(precision)
    accumulation = accumulation_param("accumulation", accumulation_arg(accumulation, accumulator))
    x, w = jnp.asarray(x), jnp.asarray(w)
    if x.dtype != jnp.float32 or w.dtype != jnp.float32:
        raise TypeError(f"golden.jax.dot takes float32 arrays, not {x.dtype} and {w.dtype}")
    if w.ndim != 2 or x.ndim < 1 or x.shape[-1] != w.shape[0]:
        raise ValueError(f"need x (..., K) and w (K x N) with the same K, got shapes {x.shape} and {w.shape}")
    lead = x.shape[:-1]
    out = _dot(x.reshape(-1, x.shape[-1]), w, name, array, accumulation)
    return out.reshape(*lead, w.shape[1])
