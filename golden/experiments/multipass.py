"""``python -m golden.experiments multipass``: fp32 matmul from 1, 3 and 6 bf16 passes.

multipass: ``Y = X . W`` for fp32 ``X`` (S x K) and ``W`` (K x S) through the golden MXU
with each fp32 value split into bf16 parts (golden.multipass: "bf16x1" = one pass of
the RNE-rounded inputs, "bf16x3", "bf16x6"), beside NumPy's float32 matmul (BLAS).
Error: ``|y - r| / |r|`` per element against ``r``, the float64 product of the same fp32
inputs; max and median over the S x S elements, at K = 16, 32, ..., ``--k-max``.

Matrices (normal entries, seed ``--seed``):

* ``random``: standard normal;
* ``wide-range``: each entry also scaled by 2^e, e uniform in -30..30;
* ``ill-conditioned``: the second half of K cancels the first,
  ``x[:, K/2 + k] = fp32(-x[:, k] (1 + 2^-12 u))``, ``w[K/2 + k] = w[k]`` (u normal), so
  each ``|y|`` is about 2^-12 of ``sum |x w|`` (the condition number is in the CSV).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from ..bits import to_float64
from ..formats import FP32
from ..multipass import PASSES, multipass_matmul
from ..tools.cli import progress, save_figure
from .common import check_ranges, write_csv

NAME = "multipass"
HELP = "fp32 matmul from bf16 passes through the MXU (1, 3, 6 passes)"
KINDS = ("random", "wide-range", "ill-conditioned")
METHODS = tuple(f"bf16x{p}" for p in PASSES) + ("numpy-fp32",)


def make_matrices(kind: str, size: int, k: int, rng: np.random.Generator):
    """fp32 ``X`` (size x k) and ``W`` (k x size) as float32 arrays."""
    x = rng.standard_normal((size, k))
    w = rng.standard_normal((k, size))
    if kind == "wide-range":
        x *= 2.0 ** rng.integers(-30, 31, x.shape)
        w *= 2.0 ** rng.integers(-30, 31, w.shape)
    elif kind == "ill-conditioned":
        half = k // 2
        x[:, half:] = -x[:, :half].astype(np.float32) * (1 + 2.0 ** -12 * rng.standard_normal((size, half)))
        w[half:] = w[:half].astype(np.float32)
    elif kind != "random":
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    return x.astype(np.float32), w.astype(np.float32)


def measure(kind: str, size: int, k: int, seed: int):
    """Rows (one per method) for one matrix kind and K."""
    rng = np.random.default_rng([seed, KINDS.index(kind), k])
    x, w = make_matrices(kind, size, k, rng)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    reference = x64 @ w64
    condition = (np.abs(x64) @ np.abs(w64)) / np.abs(reference)
    results = {f"bf16x{p}": to_float64(multipass_matmul(x.view(np.uint32), w.view(np.uint32), p), FP32)
               for p in PASSES}
    results["numpy-fp32"] = (x @ w).astype(np.float64)
    rows = []
    for method in METHODS:
        rel = np.abs(results[method] - reference) / np.abs(reference)
        rows.append({"matrices": kind, "k": k, "size": size, "method": method,
                     "max_rel_error": float(rel.max()), "median_rel_error": float(np.median(rel)),
                     "median_condition": float(np.median(condition)), "seed": seed})
    return rows


def multipass_experiment(k_max: int, size: int, seed: int, bar=None):
    """All rows: every kind at K = 16, 32, ..., k_max."""
    ks = [16 << i for i in range(int(np.log2(k_max // 16)) + 1)]
    rows = []
    for kind in KINDS:
        for k in ks:
            rows += measure(kind, size, k, seed)
            if bar is not None:
                bar.update(k)
    return rows


def print_table(rows):
    """Median (max) relative error per method and K."""
    ks = sorted({r["k"] for r in rows})
    shown = [k for k in ks if k in (16, 256) or k == ks[-1]]
    print(f"{'matrices':<16} {'method':<11} " + " ".join(f"{'K=' + str(k) + ' median':>15} {'max':>9}"
                                                         for k in shown))
    for kind in KINDS:
        for method in METHODS:
            cells = {r["k"]: r for r in rows if (r["matrices"], r["method"]) == (kind, method)}
            print(f"{kind:<16} {method:<11} " + " ".join(
                f"{cells[k]['median_rel_error']:>15.2e} {cells[k]['max_rel_error']:>9.2e}" for k in shown))


def plot(rows, path: Path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(KINDS), figsize=(15, 5), sharey=True)
    colours = {"bf16x1": "tab:red", "bf16x3": "tab:orange", "bf16x6": "tab:blue", "numpy-fp32": "black"}
    for ax, kind in zip(axes, KINDS):
        for method in METHODS:
            sel = sorted((r for r in rows if (r["matrices"], r["method"]) == (kind, method)), key=lambda r: r["k"])
            k = [r["k"] for r in sel]
            ax.plot(k, [max(r["median_rel_error"], 1e-18) for r in sel], "-o", color=colours[method],
                    markersize=3, label=f"{method} median")
            ax.plot(k, [max(r["max_rel_error"], 1e-18) for r in sel], ":", color=colours[method],
                    label=f"{method} max")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        condition = np.median([r["median_condition"] for r in rows if r["matrices"] == kind])
        ax.set_title(f"{kind} (median condition ~{condition:.0e})", fontsize=10)
        ax.set_xlabel("K")
    axes[0].set_ylabel("relative error vs float64 (per element)")
    axes[0].legend(fontsize=7, ncol=2)
    size = rows[0]["size"]
    fig.suptitle(f"fp32 {size}xK . Kx{size} from bf16 passes through the golden MXU, beside NumPy float32")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def add_arguments(p):
    """The sub-command's options."""
    p.add_argument("--k-max", type=int, default=4096, help="largest K, a power of two in 16..16384 (default 4096)")
    p.add_argument("--size", type=int, default=32, help="X is SIZE x K, W is K x SIZE; 1..256 (default 32)")
    p.add_argument("--seed", type=int, default=1, help="seed of the matrices, 0..2**20 (default 1)")


def run(args, p) -> int:
    """Run with parsed ``args``; ``p.error`` reports a bad option."""
    if args.quick:
        args.k_max, args.size = min(args.k_max, 512), min(args.size, 8)
    check_ranges(p, (("--k-max", args.k_max, 16, 16384), ("--size", args.size, 1, 256),
                     ("--seed", args.seed, 0, 1 << 20)))
    if args.k_max & (args.k_max - 1):
        p.error(f"--k-max must be a power of two, not {args.k_max}")
    start = time.perf_counter()
    with progress(len(KINDS) * (2 * args.k_max - 16), "multipass (K done)") as bar:
        rows = multipass_experiment(args.k_max, args.size, args.seed, bar)
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, args.out / "multipass.csv")
    plot(rows, args.out / "multipass.png")
    print(f"multipass: relative error vs float64, {args.size}xK . Kx{args.size} "
          f"(seed {args.seed}, {time.perf_counter() - start:.0f} s)", file=sys.stdout)
    print_table(rows)
    print(f"wrote {args.out / 'multipass.csv'} and {args.out / 'multipass.png'}")
    return 0
