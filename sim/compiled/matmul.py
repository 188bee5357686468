"""``golden.matmul`` on the RTL: any-size products streamed through the compiled MXU.

``matmul(x, w, precision=..., array=(rows, cols))`` takes what ``golden.matmul`` takes,
builds (once, cached) the MXU of that shape with output accumulators, and streams the
product through it as a host would: the inputs rounded or split on the host (the same
``golden.tiled.input_parts``), ``N`` in blocks of ``cols`` columns, ``M`` in blocks of
``acc_depth`` rows; for each block every pass's every weight tile (``K`` cut into ``rows``,
the last tile zero-padded) is loaded and swapped in, and the block's rows stream through it
with ``(addr, first, last)``: the first tile of the first pass loads the accumulators, the
last tile of the last pass sends the sums out on ``y``. Every ``y`` row is compared with
``golden.matmul`` bit for bit, and each block's sticky flags with the OR of golden's
per-element flags over the block; a mismatch raises.

``python -m sim.compiled.matmul --rows 8 --cols 8 --m 256 --k 256 --n 256 [--workers 2]`` is
the benchmark: MAC/s checked, with the time split into simulation and golden; ``--workers``
simulates column blocks in that many processes.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from pathlib import Path

import numpy as np

from golden.column import SEQUENTIAL, accumulation_arg, accumulation_param
from golden.tools.cli import Parser, build_dir, check_output, command, write_text
from golden.params import int_param
from golden.tiled import MAX_SIDE, Product, input_parts, matmul as golden_matmul, resolve_precision
from golden.multipass import pass_order
from hdl.mxu.config import OPTION as MXU_OPTION

from .mxu import MxuModel

__all__ = ["RtlMismatch", "matmul", "main"]

#: Accumulator rows of the MXU it builds: rows of ``x`` per block.
ACC_DEPTH = 256


class RtlMismatch(AssertionError):
    """The RTL's result or flags differ from golden's."""


_MODELS: dict[tuple, MxuModel] = {}


def _model(rows: int, cols: int, in_fmt, acc_fmt, mul_stages: int, add_stages: int, accumulation: str) -> MxuModel:
    """The compiled MXU of that shape with ``ACC_DEPTH`` accumulators (one per process)."""
    key = (rows, cols, in_fmt.name, acc_fmt.name, mul_stages, add_stages, accumulation)
    if key not in _MODELS:
        _MODELS[key] = MxuModel(dict(rows=rows, cols=cols, in_fmt=in_fmt.name, acc_fmt=acc_fmt.name,
                                     acc_depth=ACC_DEPTH, mul_stages=mul_stages, add_stages=add_stages,
                                     out_rounding=None, convert_inputs=False, sr_bits=None, fused_pe=True,
                                     accumulation=accumulation))
    return _MODELS[key]


def _padded(a: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    out = np.zeros(shape, a.dtype)
    out[:a.shape[0], :a.shape[1]] = a
    return out


#: What the column-block runs share: set before the worker processes fork, read in them.
_JOB: dict = {}


def _column_block(n0: int) -> tuple[float, list]:
    """Run columns ``n0..`` of ``_JOB``'s product through its model, every block of rows:
    (seconds simulating, [(m0, y rows, sticky flags word)])."""
    job = _JOB
    rows, cols, steps, xs, ws = job["rows"], job["cols"], job["steps"], job["xs"], job["ws"]
    model = _model(*job["model"])
    tiles = [_padded(ws[j][t:t + rows, n0:n0 + cols], (rows, cols)) for i, j, t in steps]
    simulated, out = 0.0, []
    for m0 in range(0, xs.shape[1], ACC_DEPTH):
        count = min(ACC_DEPTH, xs.shape[1] - m0)
        xs_rows = np.concatenate([_padded(xs[i][m0:m0 + count, t:t + rows], (count, rows)) for i, j, t in steps])
        swaps = np.zeros(len(xs_rows), bool)
        swaps[::count] = True
        step = np.repeat(np.arange(len(steps)), count)
        control = np.stack([np.tile(np.arange(count), len(steps)), step == 0, step == len(steps) - 1], axis=1)
        begin = time.perf_counter()
        result = model.run(xs_rows, tiles, swaps, control=control, x_bubbles=0, w_bubbles=0, y_stalls=0)
        simulated += time.perf_counter() - begin
        out.append((m0, result["y"], result["flags"]))
    return simulated, out


def matmul(x, w, *, precision="BF16_BF16_F32", array: tuple[int, int] = (8, 8), mul_stages: int = 0,
           add_stages: int = 0, workers: int = 1, timing: dict | None = None, accumulation=None,
           accumulator=None) -> Product:
    """``golden.matmul(x, w, precision=precision, array=array, accumulation=accumulation)``
    computed by the compiled RTL MXU (``mul_stages``, ``add_stages``: its pipelining) and
    checked against it: the
    same ``Product`` (golden's per-element flags, the RTL's agreeing per block), or an
    ``RtlMismatch``. ``workers`` > 1 simulates column blocks in that many forked processes
    (one model each). ``timing``, if given, receives the seconds spent per part
    (``simulation``: summed over the workers). ``accumulator``: the old name of ``accumulation``."""
    in_fmt, acc_fmt, passes = resolve_precision(precision)
    if not isinstance(array, tuple) or len(array) != 2:
        raise TypeError(f"array must be (rows, cols), not {array!r}")
    rows, cols = (int_param(f"array {n}", v, 1, MAX_SIDE) for n, v in zip(("rows", "cols"), array))
    workers = int_param("workers", workers, 1, 64)
    start = time.perf_counter()
    column = accumulation_param("accumulation", accumulation_arg(accumulation, accumulator))
    accumulation = SEQUENTIAL if column is None else str(column)
    want = golden_matmul(x, w, precision=precision, array=(rows, cols), accumulation=column)
    golden_done = time.perf_counter()
    x, w = np.asarray(x), np.asarray(w)
    xs, ws = (input_parts(n, a, in_fmt, acc_fmt, passes, True) for n, a in (("x", x), ("w", w)))
    key = (rows, cols, in_fmt, acc_fmt, mul_stages, add_stages, accumulation)
    name = _model(*key).name                      # built (or loaded) before any fork
    k, n = x.shape[1], w.shape[1]
    _JOB.update(rows=rows, cols=cols, model=key, xs=xs, ws=ws,
                steps=[(i, j, t) for i, j in pass_order(passes) for t in range(0, k, rows)])
    starts = list(range(0, n, cols))
    if workers > 1 and len(starts) > 1:
        with multiprocessing.get_context("fork").Pool(min(workers, len(starts))) as pool:
            results = pool.map(_column_block, starts)
    else:
        results = [_column_block(n0) for n0 in starts]
    _JOB.clear()
    simulated = 0.0
    for n0, (seconds, blocks) in zip(starts, results):
        simulated += seconds
        block_cols = min(cols, n - n0)
        for m0, y, flags in blocks:
            got, expected = y[:, :block_cols], want.y[m0:m0 + len(y), n0:n0 + block_cols]
            if got.shape != expected.shape or not np.array_equal(got, expected):
                bad = np.argwhere(got != expected) if got.shape == expected.shape else []
                raise RtlMismatch(f"{name}: y block rows {m0}.., columns {n0}..: {len(bad)} elements differ "
                                  f"(first at {[int(v) for v in bad[0]] if len(bad) else got.shape})")
            sticky = [int(f) for f in np.bitwise_or.reduce(want.flags[m0:m0 + len(y), n0:n0 + block_cols], axis=0)]
            rtl = [(flags >> (5 * c)) & 0x1F for c in range(block_cols)]
            if sticky != rtl:
                raise RtlMismatch(f"{name}: flags of rows {m0}.., columns {n0}..: RTL {rtl}, golden {sticky}")
    if timing is not None:
        total = time.perf_counter() - start
        timing.update(golden=golden_done - start, simulation=simulated, total=total)
    return want


@command("python -m sim.compiled.matmul")
def main(argv=None) -> int:
    parser = Parser(prog="python -m sim.compiled.matmul", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=8, help="array rows, 1..256 (default 8)")
    parser.add_argument("--cols", type=int, default=8, help="array columns, 1..256 (default 8)")
    for name, default in (("m", 512), ("k", 512), ("n", 512)):
        parser.add_argument(f"--{name}", type=int, default=default, help=f"{name.upper()}, 1..4096 (default {default})")
    parser.add_argument("--precision", default="BF16_BF16_F32", help="golden.matmul preset (default BF16_BF16_F32)")
    parser.add_argument("--workers", type=int, default=1, help="processes simulating column blocks, 1..64 (default 1)")
    parser.add_argument("--accumulation", default=SEQUENTIAL, help=MXU_OPTION["accumulation"].help)
    parser.add_argument("--out", type=Path, default=None, help="JSON report (default build/results/compiled_matmul.json)")
    args = parser.parse_args(argv)
    for name in ("rows", "cols"):
        if not 1 <= getattr(args, name) <= MAX_SIDE:
            parser.error(f"--{name} must be in 1..{MAX_SIDE}, not {getattr(args, name)}")
    if not 1 <= args.workers <= 64:
        parser.error(f"--workers must be in 1..64, not {args.workers}")
    for name in ("m", "k", "n"):
        if not 1 <= getattr(args, name) <= 4096:
            parser.error(f"--{name} must be in 1..4096, not {getattr(args, name)}")
    try:
        resolve_precision(args.precision)
        accumulation_param("--accumulation", args.accumulation)
    except ValueError as error:
        parser.error(str(error))
    out = args.out or build_dir("results", "compiled_matmul.json")
    check_output(out, "--out")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((args.m, args.k)).astype(np.float32).view(np.uint32)
    w = rng.standard_normal((args.k, args.n)).astype(np.float32).view(np.uint32)
    run = dict(precision=args.precision, array=(args.rows, args.cols), accumulation=args.accumulation)
    matmul(x[:1, :1], w[:1, :1], **run)    # build first
    timing = {}
    matmul(x, w, **run, workers=args.workers, timing=timing)
    macs = args.m * args.k * args.n
    report = {"array": [args.rows, args.cols], "shape": [args.m, args.k, args.n], "precision": args.precision,
              "accumulation": args.accumulation,
              "workers": args.workers,
              "macs": macs, "macs_checked_per_s": macs / timing["total"], "seconds": timing}
    print(f"{args.rows}x{args.cols} MXU, {args.m}x{args.k} . {args.k}x{args.n} {args.precision}, "
          f"{args.workers} worker(s): "
          f"{report['macs_checked_per_s']:.3g} MACs checked/s; seconds: "
          + ", ".join(f"{k} {v:.2f}" for k, v in timing.items()))
    write_text(out, json.dumps(report, indent=2) + "\n")
    print(f"report: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
