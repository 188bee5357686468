"""fp32 matmul from bf16 passes on the RTL MXU, checked bit for bit against golden.multipass.

``python -m sim.experiments.multipass_rtl --rows 4 --cols 4 --k 64 --passes 1,3,6`` splits random,
wide-range and ill-conditioned fp32 matrices (``golden.experiments.multipass``) into bf16
parts, streams every pass through the compiled MXU (``sim.compiled.mxu``, with random
bubbles and backpressure) and compares the results and the sticky flags with golden.

Where the passes are summed. ``golden.multipass`` feeds the MXU model the passes as
consecutive weight tiles of ``rows`` products each, and the MXU's **output accumulators**
sum them: the first tile's result loads the accumulator, every later tile adds to it
(fp32, RNE; ``golden.mxu.accumulate_tiles``). The driver does the same on the RTL: an MXU
built with ``acc_depth`` accumulator rows, every X row tagged ``(addr, first, last)``: the
first tile of the first pass sets ``first``, the last tile of the last pass sets ``last``
(its sum leaves on ``y``). No add happens on the host.

Stream. For each block of ``cols`` output columns and each group of up to ``acc_depth`` X
rows: for each pass (golden's order) and each ``rows``-deep slice of K, the weight tile
``w_j[slice, block]`` is loaded through ``w`` and swapped in by the first X row of
``x_i[group, slice]`` (the ``swap`` field); X row ``m`` of the group uses accumulator ``m``.
"""

from __future__ import annotations

import time

import numpy as np

from golden.bits import to_float64
from golden.tools.cli import Parser, command
from golden.experiments.multipass import KINDS, make_matrices
from golden.formats import FP32
from golden.multipass import PASSES, multipass_matmul, pass_order, split
from golden.mxu import stream

from sim.compiled.mxu import MxuModel

__all__ = ["model_params", "feed", "run_multipass", "main"]


def model_params(rows: int, cols: int, acc_depth: int = 16, mul_stages: int = 1, add_stages: int = 1) -> dict:
    """``hdl.build`` parameters of a bf16-in, fp32-out MXU with output accumulators."""
    return dict(rows=rows, cols=cols, acc_depth=acc_depth, mul_stages=mul_stages, add_stages=add_stages)


def feed(x, w, passes: int, model: MxuModel, *, split=split, order=None):
    """The MXU stream computing ``x . w`` in ``passes`` passes (see the module notes).

    ``split`` and ``order`` (default ``pass_order(passes)``) are golden's unless a test
    substitutes a mutant. Returns ``(xs, tiles, swaps, control, blocks)``; ``blocks``
    lists, in ``y`` order, the output rows and columns each group's results go to.
    """
    order = pass_order(passes) if order is None else order
    x, w = np.asarray(x, np.uint32), np.asarray(w, np.uint32)
    (m, k), n = x.shape, w.shape[1]
    if w.shape[0] != k:
        raise ValueError(f"need x (M x K) and w (K x N), got shapes {x.shape} and {w.shape}")
    if k % model.k or n % model.n:
        raise ValueError(f"K = {k} must be a multiple of rows = {model.k} and N = {n} of cols = {model.n}")
    if not model.acc_depth:
        raise ValueError("the multipass driver needs an MXU with output accumulators (acc_depth > 0)")
    parts = 1 + max(max(p) for p in order)
    xp, wp = split(x, parts), split(w, parts)
    steps = [(i, j, t) for i, j in order for t in range(0, k, model.k)]
    xs, tiles, swaps, control, blocks = [], [], [], [], []
    for c in range(0, n, model.n):
        for g in range(0, m, model.acc_depth):
            size = min(model.acc_depth, m - g)
            for s, (i, j, t) in enumerate(steps):
                tiles.append(wp[j][t:t + model.k, c:c + model.n])
                xs.append(xp[i][g:g + size, t:t + model.k])
                swaps.append(np.arange(size) == 0)
                control.append(np.stack([np.arange(size), np.full(size, s == 0), np.full(size, s == len(steps) - 1)],
                                        axis=1))
            blocks.append((slice(g, g + size), slice(c, c + model.n)))
    return np.concatenate(xs), tiles, np.concatenate(swaps), np.concatenate(control).astype(np.int64), blocks


def _assemble(rows, blocks, shape):
    """``y`` rows (in stream order) placed at their output positions."""
    y = np.zeros(shape, np.uint32)
    at = 0
    for r, c in blocks:
        size = r.stop - r.start
        y[r, c] = rows[at:at + size]
        at += size
    return y


def run_multipass(model: MxuModel, x, w, passes: int, *, seed: int = 1, split=split, order=None, **handshakes):
    """``x . w`` (fp32 encodings) in ``passes`` passes on the RTL and in golden.

    ``split``/``order`` change only what the RTL is fed (mutants); golden always uses its
    own. ``seed`` seeds the handshake pattern; ``handshakes`` are ``MxuModel.run``'s rates.
    Returns ``y`` (RTL), ``golden`` (``multipass_matmul``), ``flags`` and
    ``golden_flags`` (sticky, 5 bits per column), ``mismatches`` and ``cycles``.
    """
    x, w = np.asarray(x, np.uint32), np.asarray(w, np.uint32)
    shape = (x.shape[0], w.shape[1])
    xs, tiles, swaps, control, blocks = feed(x, w, passes, model, split=split, order=order)
    out = model.run(xs, tiles, swaps, control=control, handshake_seed=seed, **handshakes)
    got = _assemble(out["y"].astype(np.uint32), blocks, shape) if out["transfers"] == len(out["y"]) == shape[0] * (
        shape[1] // model.n) else None
    want = multipass_matmul(x, w, passes, rows=model.k)
    # Golden's flags: the same stream (golden's split and order) through golden.mxu.stream.
    gxs, gtiles, gswaps, gcontrol, _ = feed(x, w, passes, model)
    ref = stream(gxs, gtiles, gswaps, control=[tuple(c) for c in gcontrol], acc_depth=model.acc_depth)
    if not np.array_equal(_assemble(ref.y, blocks, shape), want):
        raise AssertionError("golden.mxu.stream and golden.multipass disagree")   # a golden bug, not the RTL's
    sticky = np.bitwise_or.reduce(ref.row_flags, axis=0)
    golden_flags = sum(int(f) << (5 * j) for j, f in enumerate(sticky))
    mismatches = int(shape[0] * shape[1]) if got is None else int((got != want).sum())
    return {"y": got, "golden": want, "mismatches": mismatches, "flags": out["flags"],
            "golden_flags": golden_flags, "cycles": out["cycles"], "transfers": out["transfers"]}


def _passes(text: str) -> list[int]:
    values = [int(v) for v in text.split(",") if v]
    bad = [v for v in values if v not in PASSES]
    if bad or not values:
        raise ValueError(f"--passes must list values of {', '.join(map(str, PASSES))}, not {text!r}")
    return values


@command("python -m sim.experiments.multipass_rtl")
def main(argv=None) -> int:
    parser = Parser(prog="python -m sim.experiments.multipass_rtl", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4, help="the MXU's rows (K per tile), 1..64 (default 4)")
    parser.add_argument("--cols", type=int, default=4, help="the MXU's columns, 1..64 (default 4)")
    parser.add_argument("--k", type=int, default=64, help="K, an even multiple of --rows up to 4096 (default 64)")
    parser.add_argument("--size", type=int, default=8,
                        help="X is SIZE x K, W is K x SIZE; a multiple of --cols up to 256 (default 8)")
    parser.add_argument("--passes", default="1,3,6", help="comma-separated passes, of 1, 3, 6 (default 1,3,6)")
    parser.add_argument("--seed", type=int, default=1, help="seed of matrices and handshakes, 0..2**20 (default 1)")
    args = parser.parse_args(argv)
    for name, value, lo, hi in (("--rows", args.rows, 1, 64), ("--cols", args.cols, 1, 64),
                                ("--k", args.k, 2, 4096), ("--size", args.size, 1, 256),
                                ("--seed", args.seed, 0, 1 << 20)):
        if not lo <= value <= hi:
            parser.error(f"{name} must be in {lo}..{hi}, not {value}")
    if args.k % args.rows or args.k % 2:
        parser.error(f"--k must be an even multiple of --rows = {args.rows}, not {args.k}")
    if args.size % args.cols:
        parser.error(f"--size must be a multiple of --cols = {args.cols}, not {args.size}")
    passes = _passes(args.passes)
    model = MxuModel(model_params(args.rows, args.cols, acc_depth=1 << max(1, (args.size - 1).bit_length())))
    print(f"{model.name}: {args.size}x{args.k} . {args.k}x{args.size}, RTL vs golden.multipass")
    print(f"{'matrices':<16} {'passes':>6} {'mismatches':>10} {'flags':>8} {'median rel err':>14} {'cycles':>9}")
    failed = 0
    start = time.perf_counter()
    for kind in KINDS:
        x, w = make_matrices(kind, args.size, args.k, np.random.default_rng([args.seed, KINDS.index(kind), args.k]))
        exact = x.astype(np.float64) @ w.astype(np.float64)
        for p in passes:
            r = run_multipass(model, x.view(np.uint32), w.view(np.uint32), p, seed=args.seed + 1)
            ok = r["mismatches"] == 0 and r["flags"] == r["golden_flags"]
            failed += not ok
            rel = np.abs(to_float64(r["golden"], FP32) - exact) / np.abs(exact)
            print(f"{kind:<16} {p:>6} {r['mismatches']:>10} {'match' if r['flags'] == r['golden_flags'] else 'DIFFER':>8} "
                  f"{np.median(rel):>14.2e} {r['cycles']:>9}")
    print(f"{'all match' if not failed else f'{failed} runs DIFFER'} ({time.perf_counter() - start:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
