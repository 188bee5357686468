"""``python -m golden.experiments sr-dot``: stochastic rounding in dot products.

sr-dot: the dot product ``s = sum r(a_i) * r(b_i)`` where ``r`` rounds fp32 inputs to a
narrow format (TF32, bf16) by RNE, stochastic rounding ("mode 1", ``sr``) or stochastic
half rounding ("mode 2", ``sr-half``) with xorshift bits. Two accumulators:

* ``fp32``: the running sum is fp32, every add rounded with RNE (the MXU's way); or,
  with ``--accumulation column:w=W,...``, the products are one column of a column
  accumulator (golden.column; a column holds at most 8,191 terms between normalisation
  points, so a longer ``--n-max`` needs ``g=G``);
* ``narrow``: the running sum is kept in the narrow format, each add's exact result
  rounded once by the same mode (``sr`` with all 32 random bits).

Relative error against the float64 dot product of the unrounded (fp32) vectors, at N
log-spaced from 10 to ``--n-max``, mean and spread over ``--trials`` trials.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

from .. import xorshift
from ..bits import to_float64
from ..column import (MAX_TERMS, SEQUENTIAL, ColumnAccumulator, accumulation_arg, accumulation_param, reduce_column,
                      spelling)
from ..formats import BF16, FP32, TF32, FloatFormat
from ..ops import add, convert, convert_sr_bits, multiply
from ..tools.cli import progress, save_figure
from ..params import int_param
from ..rounding import Flags, Rounding
from .common import check_ranges, write_csv

FORMATS = (TF32, BF16)
MODES = (Rounding.NEAREST_EVEN, Rounding.STOCHASTIC, Rounding.STOCHASTIC_HALF)
VECTORS = ("ones-tenths", "uniform")
#: sr_bits of the narrow accumulator's stochastic adds: all 32 the hardware offers, so
#: that tiny addends still move the sum with the right probability.
NARROW_SR_BITS = 32
#: Steps of the fp32 accumulation replayed one golden add at a time as a cross-check.
SPOT_CHECK_STEPS = 1000


def make_vectors(kind: str, trials: int, n: int, rng: np.random.Generator):
    """fp32 encodings ``a``, ``b`` of shape ``[trials, n]``."""
    if kind == "ones-tenths":
        a = np.full((trials, n), 0x3F800000, np.uint32)                     # 1.0
        b = np.full((trials, n), np.float32(0.1).view(np.uint32), np.uint32)  # fp32(0.1)
        return a, b
    a = rng.random((trials, n), dtype=np.float32).view(np.uint32)
    b = rng.random((trials, n), dtype=np.float32).view(np.uint32)
    return a, b


def exact_prefix_sums(a, b, checkpoints):
    """float64 dot products of the first N elements (fp32 products are exact in float64)."""
    products = a.view(np.float32).astype(np.float64) * b.view(np.float32).astype(np.float64)
    return np.cumsum(products, axis=1)[:, checkpoints - 1]


def fp32_accumulate(products, checkpoints):
    """Sequential fp32 RNE sums of exact fp32 products, at the checkpoints.

    NumPy's float32 ``add.accumulate`` adds strictly in order with IEEE RNE, which is
    golden.add bit for bit while no operand or sum is subnormal, inf or NaN (the test
    suite compares the two on millions of vectors); both are checked here, and the first
    steps are replayed with golden.add.
    """
    sums = np.add.accumulate(products.view(np.float32), axis=1).view(np.uint32)
    for name, bits in (("product", products), ("partial sum", sums)):
        exponent = (bits >> 23) & 0xFF
        if ((exponent == 0) & ((bits & 0x7FFFFF) != 0)).any() or (exponent == 0xFF).any():
            raise RuntimeError(f"a {name} is subnormal or not finite: NumPy would differ from golden")
    s = np.zeros(products.shape[0], np.uint32)
    for i in range(min(SPOT_CHECK_STEPS, products.shape[1])):
        s, _ = add(s, products[:, i], FP32)
        if not np.array_equal(s, sums[:, i]):
            raise RuntimeError(f"NumPy float32 accumulation differs from golden.add at step {i}")
    return sums[:, checkpoints - 1]


def column_accumulate(a, b, fmt: FloatFormat, acc: ColumnAccumulator, checkpoints):
    """fp32 sums of the first N products ``a[:, i] * b[:, i]`` (``fmt`` encodings) by the
    column accumulator ``acc``, one column each (golden.column.reduce_column), at the checkpoints."""
    return np.stack([reduce_column(a[:, :n], b[:, :n, None], fmt, FP32, acc)[0][:, 0] for n in checkpoints], axis=1)


def check_accumulator(acc: ColumnAccumulator | None, n_max: int) -> None:
    """A ValueError if ``acc`` cannot sum the products of every format in ``n_max`` terms."""
    if acc is None:
        return
    for fmt in FORMATS:
        acc.check(FP32, 2 * fmt.precision)
    if (acc.group or n_max) >= MAX_TERMS:
        raise ValueError(f"a column accumulator sums at most {MAX_TERMS - 1} terms between normalisation points: "
                         f"give g=G (at most {MAX_TERMS - 1}) or n_max below {MAX_TERMS}, not {n_max} terms with {acc}")


def narrow_accumulate(products, rand, fmt: FloatFormat, rounding: Rounding, checkpoints):
    """Sums kept in ``fmt``: ``s = round(s + p_i)`` with golden.add, one rounding per add.

    Exact event skipping. A window of the next adds is evaluated with golden.add for
    ``s`` and the ``k - 1`` encodings above it as candidate states; the first add whose
    result differs from the state is that state's next change. Chaining through the
    table while the new state is a candidate reproduces one golden.add per step exactly
    (the random bits belong to the step, not the state), with far fewer calls: windows
    grow while the sum stagnates (RNE) or moves rarely (``sr`` on tiny addends), and
    candidates cover dense moves (``sr-half``).
    """
    if fmt.exp_bits != FP32.exp_bits:
        raise ValueError(f"the narrow accumulator widens {fmt} to fp32 by padding: needs 8 exponent bits")
    pad = FP32.width - fmt.width
    lanes, n = products.shape
    max_window = 1 << 14
    products = np.concatenate([products, np.zeros((lanes, max_window), np.uint32)], axis=1)  # + 0: no change
    if rand is not None:
        rand = np.concatenate([rand, np.zeros((lanes, max_window), rand.dtype)], axis=1)
    sr_bits = NARROW_SR_BITS if rounding is Rounding.STOCHASTIC else None
    s = np.zeros(lanes, np.int64)  # narrow encodings of non-negative sums, +0 first
    pos = np.zeros(lanes, np.int64)
    out = np.zeros((lanes, len(checkpoints)), np.int64)
    lane = np.arange(lanes)
    window, dense = 8, False
    while (pos < n).any():
        k = 8 if dense else 1
        states = np.minimum(s[:, None] + np.arange(k), fmt.inf)                   # [lanes, k]
        idx = pos[:, None] + np.arange(window)                                    # [lanes, window]
        result, _ = add((states.astype(np.uint32) << pad)[:, :, None], products[lane[:, None], idx][:, None, :],
                        FP32, rounding, None if rand is None else rand[lane[:, None], idx][:, None, :],
                        sr_bits, out_fmt=fmt)
        result = result.astype(np.int64)
        # next_change[l, c, i]: first step >= i where candidate c changes (window if none).
        steps = np.where(result != states[:, :, None], np.arange(window), window)
        next_change = np.minimum.accumulate(steps[:, :, ::-1], axis=2)[:, :, ::-1]
        next_change = np.concatenate([next_change, np.full((lanes, k, 1), window)], axis=2)
        cand = np.zeros(lanes, np.int64)      # which candidate holds now
        cur = np.zeros(lanes, np.int64)       # steps of the window done
        active = pos < n
        moves = np.zeros(lanes, np.int64)
        for _ in range(k):
            i = next_change[lane, cand, cur]
            # the state holds after every count of adds in [pos + cur, pos + i]
            held = states[lane, cand]
            first, last = pos + cur, np.minimum(pos + i, n)
            holds = active[:, None] & (checkpoints >= first[:, None]) & (checkpoints <= last[:, None])
            out = np.where(holds, held[:, None], out)
            changed = active & (i < window)
            new = result[lane, cand, np.minimum(i, window - 1)]
            step = new - s
            chain = changed & (step >= 0) & (step < k) & (states[lane, np.clip(step, 0, k - 1)] == new)
            # A lane leaves the chain at the window's end or on a state outside the candidates.
            leave = active & ~chain
            s = np.where(leave & changed, new, np.where(leave, held, s))
            pos = np.where(leave, np.minimum(pos + np.where(changed, i + 1, window), n), pos)
            moves += changed
            cand = np.where(chain, step, cand)
            cur = np.where(chain, i + 1, cur)
            active &= chain
            if not active.any():
                break
        # Lanes still chaining after k moves continue from their current candidate.
        s = np.where(active, states[lane, cand], s)
        pos = np.where(active, np.minimum(pos + cur, n), pos)
        # Next window, set by the lane that limits progress (the one that moves soonest):
        # candidates and a short window when it moves within a few steps, else a few times
        # its distance to a move, never so small that the per-call cost dominates.
        first_move = next_change[:, 0, 0][pos < n] if (pos < n).any() else np.array([window])
        soonest = int(first_move.min())
        dense = soonest < 4 or (k > 1 and moves.max() >= 2)
        if dense:
            window = 16
        else:
            floor = max(8, 4096 // lanes)
            window = int(np.clip(2 * window if soonest >= window / 2 else 4 * soonest, floor, max_window))
    out[:, checkpoints == n] = s[:, None]  # a change at the last step holds at count n
    return out.astype(fmt.dtype)


def round_inputs(values, fmt: FloatFormat, rounding: Rounding, seeds):
    """``r(values)``: fp32 encodings ``[lanes, n]`` rounded to ``fmt``, lane ``l`` taking
    the stream of an SR unit seeded with ``seeds[l]`` (lane 0 of a unit starts from its
    seed), one step per value; ``seeds`` is None under RNE. Returns ``(encodings, flags)``."""
    rand = None
    if seeds is not None:
        outputs, _ = xorshift.stream(np.asarray(seeds, np.uint32), values.shape[1])
        rand = xorshift.top_bits(outputs.T, convert_sr_bits(FP32, fmt, rounding))
    return convert(values, FP32, fmt, rounding, rand)


def _sr_dot_config(fmt: FloatFormat, rounding: Rounding, config: int, n_max: int, trials: int,
                   seed: int, checkpoints, rounder=round_inputs, accumulation=None):
    """Rows of one (format, mode): both vector kinds run as lanes of the same calls.
    ``rounder`` is :func:`round_inputs` or a stand-in with its signature (the RTL);
    ``accumulation`` (a ColumnAccumulator) replaces the sequential fp32 sum."""
    rng = np.random.default_rng(seed)
    vectors = {kind: make_vectors(kind, trials, n_max, rng) for kind in VECTORS}
    a = np.concatenate([vectors[kind][0] for kind in VECTORS])
    b = np.concatenate([vectors[kind][1] for kind in VECTORS])
    lanes = len(a)
    seeds, sum_rand = [None] * 3, None
    if rounding.is_stochastic:
        # Independent xorshift lanes per vector for r(a), r(b) and the narrow sum.
        lane_seeds = xorshift.lane_seeds(seed * 1000 + config, 3 * lanes)
        seeds = [lane_seeds[i * lanes:(i + 1) * lanes] for i in range(3)]
        outputs = xorshift.stream(seeds[2], n_max)[0].T
        sum_rand = xorshift.top_bits(outputs, 1) if rounding is Rounding.STOCHASTIC_HALF else outputs
    ra, _ = rounder(a, fmt, rounding, seeds[0])
    rb, _ = rounder(b, fmt, rounding, seeds[1])
    products, flags = multiply(ra, rb, fmt, FP32)
    assert not (flags & (Flags.INEXACT | Flags.INVALID)).any(), "narrow products are exact in fp32"
    sums = {
        "fp32": to_float64(fp32_accumulate(products, checkpoints), FP32) if accumulation is None else
        to_float64(column_accumulate(ra, rb, fmt, accumulation, checkpoints), FP32),
        "narrow": to_float64(narrow_accumulate(products, sum_rand, fmt, rounding, checkpoints), fmt),
    }
    reference = {kind: exact_prefix_sums(*vectors[kind], checkpoints) for kind in VECTORS}
    rows = []
    for name, values in sums.items():
        if name == "fp32" and accumulation is not None:
            name = str(accumulation)
        for v, kind in enumerate(VECTORS):
            with np.errstate(invalid="ignore"):
                rel = np.abs(values[v * trials:(v + 1) * trials] - reference[kind]) / reference[kind]
            for j, n in enumerate(checkpoints):
                finite = rel[:, j][np.isfinite(rel[:, j])]
                rows.append({
                    "accumulator": name, "format": fmt.name, "vectors": kind,
                    "rounding": rounding.value, "n": int(n), "trials": trials,
                    "mean_rel_error": float(rel[:, j].mean()),
                    "std_rel_error": float(finite.std()) if len(finite) == trials else float("inf"),
                    "min_rel_error": float(rel[:, j].min()),
                    "max_rel_error": float(rel[:, j].max()),
                })
    return rows


#: Allowed values of the experiment's parameters (and command-line flags).
LIMITS = {"n_max": (10, 10_000_000), "trials": (1, 1000), "points": (2, 100), "seed": (0, 1 << 20),
          "workers": (1, 64)}


def sr_dot(n_max: int, trials: int, points: int, seed: int, workers: int = 1, progress=None,
           rounder=round_inputs, accumulation=None, accumulator=None):
    """Run the experiment on ``workers`` processes; return rows of results (dicts).
    ``rounder`` rounds the inputs (see :func:`_sr_dot_config`; picklable with workers);
    ``accumulation`` (``"sequential"``, the default, or a column accumulator; ``accumulator``:
    its old name) sums the products in place of the sequential fp32 chain."""
    n_max, trials, points, seed, workers = (int_param(name, value, *LIMITS[name]) for name, value in
                                            zip(LIMITS, (n_max, trials, points, seed, workers)))
    accumulation = accumulation_param("accumulation", accumulation_arg(accumulation, accumulator))
    check_accumulator(accumulation, n_max)
    checkpoints = np.unique(np.round(np.logspace(1, np.log10(n_max), points)).astype(np.int64))
    configs = [(fmt, rounding) for fmt in FORMATS for rounding in MODES]
    # Every configuration draws the same vectors (same seed) and its own xorshift lanes.
    jobs = [(fmt, rounding, i + 1, n_max, trials, seed, checkpoints, rounder, accumulation)
            for i, (fmt, rounding) in enumerate(configs)]
    results = {}
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            # The slowest first: sr-half in the widest format moves most often.
            futures = {pool.submit(_sr_dot_config, *job): job[:2]
                       for job in sorted(jobs, key=lambda j: (j[1] is not Rounding.STOCHASTIC_HALF, j[0] is not TF32))}
            for future in as_completed(futures):
                results[futures[future]] = future.result()
                if progress:
                    progress(f"{futures[future][0].name} {futures[future][1].value}")
    else:
        for job in jobs:
            results[job[:2]] = _sr_dot_config(*job)
            if progress:
                progress(f"{job[0].name} {job[1].value}")
    return [row for config in configs for row in results[config]]


def print_table(rows, n_max):
    """Mean relative error per configuration at a few N."""
    shown = sorted({r["n"] for r in rows if r["n"] in (10, 100, 1000, 10000, 100000, 1000000) or r["n"] == n_max})
    accumulators = list(dict.fromkeys(r["accumulator"] for r in rows))
    width = max(len("accumulator"), *map(len, accumulators))
    header = f"{'accumulator':<{width}} {'vectors':<12} {'format':<5} {'rounding':<8} " + \
        " ".join(f"{'N=' + format(n, ','):>10}" for n in shown)
    print(header)
    print("-" * len(header))
    table = {}
    for r in rows:
        table.setdefault((r["accumulator"], r["vectors"], r["format"], r["rounding"]), {})[r["n"]] = r["mean_rel_error"]
    for key in sorted(table, key=lambda k: (accumulators.index(k[0]), VECTORS.index(k[1]), k[2], k[3])):
        print(f"{key[0]:<{width}} {key[1]:<12} {key[2]:<5} {key[3]:<8} "
              + " ".join(f"{table[key][n]:>10.2e}" for n in shown))


def plot(rows, path: Path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(12, 9), sharex=True)
    colours = {"rne": "tab:red", "sr": "tab:blue", "sr-half": "tab:green"}
    styles = {"tf32": "-", "bf16": "--"}
    titles = {"fp32": "fp32 accumulator (RNE)", "narrow": "accumulator in the narrow format"}
    vector_names = {"ones-tenths": "a = 1, b = 0.1", "uniform": "a, b uniform in [0, 1)"}
    for i, accumulator in enumerate(dict.fromkeys(r["accumulator"] for r in rows)):
        for j, kind in enumerate(VECTORS):
            ax = axes[i, j]
            for fmt in FORMATS:
                for rounding in MODES:
                    sel = [r for r in rows if (r["accumulator"], r["vectors"], r["format"], r["rounding"])
                           == (accumulator, kind, fmt.name, rounding.value)]
                    n = np.array([r["n"] for r in sel])
                    mean = np.array([r["mean_rel_error"] for r in sel])
                    low = np.array([r["min_rel_error"] for r in sel])
                    high = np.array([r["max_rel_error"] for r in sel])
                    ok = np.isfinite(mean)
                    ax.plot(n[ok], np.maximum(mean[ok], 1e-12), styles[fmt.name], color=colours[rounding.value],
                            label=f"{fmt.name} {rounding.value}", marker="o", markersize=3)
                    ax.fill_between(n[ok], np.maximum(low[ok], 1e-12), np.maximum(high[ok], 1e-12),
                                    color=colours[rounding.value], alpha=0.12)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_ylim(1e-9, 1e3)
            ax.grid(True, which="major", alpha=0.3)
            ax.set_title(f"{titles.get(accumulator, 'accumulator ' + accumulator)}; {vector_names[kind]}", fontsize=10)
            if i == 1:
                ax.set_xlabel("N (vector length)")
            if j == 0:
                ax.set_ylabel("relative error (mean; band: min..max over trials)")
    axes[0, 0].legend(fontsize=8, ncol=2)
    fig.suptitle("Dot products of inputs rounded to TF32 / bf16 by RNE, SR (mode 1), SR-half (mode 2)")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


NAME = "sr-dot"
HELP = "stochastic rounding in dot products (TF32, bf16)"


def add_arguments(p):
    """The sub-command's options."""
    p.add_argument("--n-max", type=int, default=1_000_000, help="longest vector, 10..10000000 (default 1000000)")
    p.add_argument("--trials", type=int, default=10, help="trials per configuration, 1..1000 (default 10)")
    p.add_argument("--points", type=int, default=11, help="log-spaced N values, 2..100 (default 11)")
    p.add_argument("--seed", type=int, default=1, help="seed of vectors and xorshift lanes, 0..2**20 (default 1)")
    p.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1),
                   help="processes, 1..64 (default: 2, or 1 on a single core)")
    p.add_argument("--accumulation", default=SEQUENTIAL,
                   help=f"how the MXU's column sums: {SEQUENTIAL} (default: every add rounded) or "
                        f"{spelling()} (at most {MAX_TERMS - 1} terms "
                        "between normalisation points)")


def run(args, p) -> int:
    """Run with parsed ``args``; ``p.error`` reports a bad option."""
    if args.quick:
        args.n_max, args.trials, args.points = min(args.n_max, 20_000), min(args.trials, 3), min(args.points, 5)
    check_ranges(p, [(f"--{name.replace('_', '-')}", getattr(args, name), lo, hi)
                     for name, (lo, hi) in LIMITS.items()])
    try:
        accumulation = accumulation_param("--accumulation", args.accumulation)
        check_accumulator(accumulation, args.n_max)
    except (TypeError, ValueError) as error:
        p.error(str(error))
    start = time.perf_counter()
    with progress(len(FORMATS) * len(MODES), "sr-dot", "config") as bar:
        def done(what):
            bar.set_postfix_str(what)
            bar.update()
        rows = sr_dot(args.n_max, args.trials, args.points, args.seed, args.workers, done,
                      accumulation=accumulation)
    write_csv(rows, args.out / "sr-dot.csv")
    plot(rows, args.out / "sr-dot.png")
    print(f"sr-dot: mean relative error over {args.trials} trials "
          f"(seed {args.seed}, {time.perf_counter() - start:.0f} s)")
    print_table(rows, args.n_max)
    print(f"wrote {args.out / 'sr-dot.csv'} and {args.out / 'sr-dot.png'}")
    return 0
