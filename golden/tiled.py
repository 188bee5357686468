"""Any-size matrix products as the MXU computes them: ``golden.matmul``.

``matmul(x, w, precision=..., array=(rows, cols))`` multiplies an ``M x K`` by a ``K x N``
matrix of bit patterns in the hardware's order (docs/matmul.md):

* **Precision** (:data:`PRESETS`): the JAX algorithm presets the MXU implements exactly,
  ``BF16_BF16_F32`` (one bf16 pass), ``BF16_BF16_F32_X3`` and ``BF16_BF16_F32_X6`` (3 and 6
  bf16 passes of an fp32 product, ``golden.multipass``), their ``jax.lax.Precision`` names
  ``DEFAULT``, ``HIGH``, ``HIGHEST``, ``F16_F16_F32``, and ``(in_fmt, acc_fmt)`` for any other
  configuration of the array (fp8 inputs, bf16 or fp16 accumulation).
* **Tiling.** ``K`` is cut into weight tiles of ``rows`` (the array's depth); a shorter
  last tile is zero-padded to ``rows``, as the hardware is fed it (its +0 products turn a
  ``-0`` sum into ``+0``, and a column accumulator's normalisation points among them round
  the sum again). Each tile is one chain of exact products and RNE adds from +0
  (``golden.mxu.matmul``) or a column accumulator's; the output accumulators load the
  first tile's result and add every later one (RNE), all tiles of a pass before the next
  pass. ``cols`` cuts ``N`` into column blocks, which changes no bit.
* **Output rounding** (``out_rounding``) of the sums to the input format by the rounder
  lanes of ``golden.mxu.round_outputs`` (``seed``: their xorshift seed).
* **Flags**: per element of ``y``, the OR of the flags of every multiply, add, accumulator
  add and output rounding that made it.

Tiles reduce on the machine's float32 where ``golden.fast`` proves that equal to the
integer model (``fast=False``: the integer model throughout).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import fast
from .column import accumulation_arg, accumulation_param
from .formats import BF16, FP16, FP32, FloatFormat, format_param
from .multipass import pass_order, split
from .mxu import _round_flags, matmul_flags
from .ops import add, convert
from .params import bits_param, int_param
from .rounding import Rounding

__all__ = ["PRESETS", "Product", "resolve_precision", "input_parts", "matmul"]

#: Precision name -> (input format, accumulation format, bf16 passes of an fp32 product or 1).
PRESETS = {
    "BF16_BF16_F32": (BF16, FP32, 1),
    "BF16_BF16_F32_X3": (BF16, FP32, 3),
    "BF16_BF16_F32_X6": (BF16, FP32, 6),
    "F16_F16_F32": (FP16, FP32, 1),
    "DEFAULT": (BF16, FP32, 1),
    "HIGH": (BF16, FP32, 3),
    "HIGHEST": (BF16, FP32, 6),
}
#: The array's largest side (``hdl.mxu``'s limit).
MAX_SIDE = 256


class Product(NamedTuple):
    """``y``: the result's encodings (M x N, ``acc_fmt``, or the input format after output
    rounding); ``flags``: per element, the OR of its operations' flags (``golden.Flags``)."""

    y: np.ndarray
    flags: np.ndarray


def resolve_precision(precision) -> tuple[FloatFormat, FloatFormat, int]:
    """``(in_fmt, acc_fmt, passes)`` of a :data:`PRESETS` name or an ``(in_fmt, acc_fmt)`` pair."""
    if isinstance(precision, str):
        key = precision.strip().upper()
        if key in PRESETS:
            return PRESETS[key]
        raise ValueError(f"precision {precision!r}: use one of {', '.join(PRESETS)} or (in_fmt, acc_fmt)")
    if isinstance(precision, tuple) and len(precision) == 2:
        return format_param("precision[0] (in_fmt)", precision[0]), format_param("precision[1] (acc_fmt)",
                                                                                 precision[1]), 1
    raise TypeError(f"precision must be a preset name or an (in_fmt, acc_fmt) pair, not {precision!r}")


def input_parts(name: str, a: np.ndarray, in_fmt: FloatFormat, acc_fmt: FloatFormat, passes: int,
            fast_path: bool) -> np.ndarray:
    """``a`` as the bf16/input-format parts of each pass: shape ``(parts,) + a.shape``."""
    width = a.dtype.itemsize * 8
    if passes > 1:
        if width != 32:
            raise TypeError(f"{name}: {passes} passes split fp32 values: give fp32 encodings (uint32), "
                            f"not {a.dtype}")
        parts = 1 + max(max(p) for p in pass_order(passes))
        return fast.split(a, parts, split) if fast_path else split(a, parts)
    if width == acc_fmt.width and width != in_fmt.width:
        return convert(a, acc_fmt, in_fmt)[0][None]          # rounded on entry (RNE), as convert_inputs
    if width == 8 * np.dtype(in_fmt.dtype).itemsize:
        if np.any(a >> in_fmt.width):
            raise ValueError(f"{name} holds values wider than {in_fmt.name}'s {in_fmt.width} bits")
        return a.astype(in_fmt.dtype)[None]
    raise TypeError(f"{name} has dtype {a.dtype}: give {in_fmt.name} encodings ({np.dtype(in_fmt.dtype).name}) "
                    f"or {acc_fmt.name} encodings ({np.dtype(acc_fmt.dtype).name}, rounded on entry)")


def matmul(x, w, *, precision="BF16_BF16_F32", array: tuple[int, int] | None = None, out_rounding=None,
           seed: int = 0, sr_bits=None, fast_path: bool = True, accumulation=None, accumulator=None) -> Product:
    """``x . w`` for ``x`` (M x K) and ``w`` (K x N) bit patterns, as the MXU computes it.

    Parameters
    ----------
    precision : str or (in_fmt, acc_fmt)
        A :data:`PRESETS` name. One-pass presets take input-format encodings (bf16:
        ``uint16``) or accumulation-format ones (fp32: ``uint32``), rounded to the input
        format with RNE on entry; ``_X3``/``_X6``/``HIGH``/``HIGHEST`` take fp32 encodings.
    array : (rows, cols), optional
        The array it is tiled for, 1..256 each; default one tile of all ``K``.
    out_rounding : str or Rounding, optional
        Round the results to the input format (``rne``, ``rtz``, ``sr``, ``sr-half``).
    seed, sr_bits
        The output rounders' xorshift seed and random bits per ``sr`` rounding.
    fast_path : bool
        Reduce tiles on float32 where ``golden.fast`` proves it exact (default), else on
        the integer model only. The bits are the same.
    accumulation : str or ColumnAccumulator, optional
        How each tile's columns sum their products: ``"sequential"`` (default: every add
        rounded, RNE) or a column accumulator (``"column:w=W,..."``, docs/semantics.md),
        which the integer model computes (no float32 path). ``accumulator``: its old name.
    """
    in_fmt, acc_fmt, passes = resolve_precision(precision)
    accumulation = accumulation_param("accumulation", accumulation_arg(accumulation, accumulator))
    x, w = bits_param("x", x, ndim=2), bits_param("w", w, ndim=2)
    if x.shape[1] != w.shape[0]:
        raise ValueError(f"x (M x K) has K = {x.shape[1]} columns but w (K x N) has {w.shape[0]} rows "
                         f"(shapes {x.shape} and {w.shape})")
    k = x.shape[1]
    if k == 0:
        raise ValueError("K must be at least 1 (x has no columns)")
    if array is None:
        rows = k
    else:
        if not isinstance(array, tuple) or len(array) != 2:
            raise TypeError(f"array must be (rows, cols), not {array!r}")
        rows = int_param("array rows", array[0], 1, MAX_SIDE)
        int_param("array cols", array[1], 1, MAX_SIDE)
    rounding = None if out_rounding is None else Rounding.parse(out_rounding)
    if passes > 1 and rounding is not None:
        raise ValueError(f"out_rounding rounds to the input format: {precision} gives fp32 results")
    xs, ws = (input_parts(name, a, in_fmt, acc_fmt, passes, fast_path) for name, a in (("x", x), ("w", w)))

    def reference(a, b):
        return matmul_flags(a, b, in_fmt, acc_fmt, accumulation)

    def tile(a, b):
        # The hardware reduces a short last tile zero-padded to the array's rows: the zero
        # products change a -0 sum to +0, and normalisation points among them round again.
        short = rows - a.shape[1]
        if short:
            a, b = np.pad(a, ((0, 0), (0, short))), np.pad(b, ((0, short), (0, 0)))
        if fast_path and accumulation is None:
            return fast.reduce_tile(a, b, in_fmt, acc_fmt, reference)
        return reference(a, b)

    y = flags = None
    for i, j in pass_order(passes):
        for t in range(0, k, rows):
            tile_y, tile_flags = tile(xs[i][:, t:t + rows], ws[j][t:t + rows])
            if y is None:
                y, flags = tile_y, tile_flags
            else:
                y, acc_flags = (fast.add if fast_path else add)(y, tile_y, acc_fmt)
                flags = flags | tile_flags | acc_flags
    if rounding is not None:
        y, round_flags = _round_flags(y, acc_fmt, in_fmt, rounding, seed, sr_bits)
        flags = flags | round_flags
    return Product(y, flags.astype(np.uint8))

