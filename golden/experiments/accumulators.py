"""``python -m golden.experiments accumulators``: column accumulators against the exact sum.

accumulators: one column of ``K`` bf16 products ``x[k] * w[k]`` (inputs rounded to bf16
with RNE; a tile of one column, each trial its own column) summed by

* ``fp32``: the sequential accumulator, every add rounded to fp32 (RNE), from +0;
* ``column:w=W,g=G,sticky,anchor=A`` (golden.column): a fixed-point window of ``W`` bits,
  normalised and rounded to fp32 every ``G`` terms and at the end (``G = 0``: once),
  truncation toward minus infinity or sticky round-to-odd, a running, bound or exact anchor;

against the exact sum of the products, computed with integers: a bf16 product has at most
16 significant bits, so it is exact in float64, and every product and fp32 result is an
integer multiple of ``2**-320``: scaled by ``2**320`` they sum exactly as Python integers.

Data kinds (``--trials`` columns each, ``K`` = 16 .. 4,096 as prefixes of the same rows):
``normal`` (x, w standard normal), ``positive`` (their absolute values), ``cancelling``
(pairs of products of opposite signs that differ by a few percent: ``x[2i+1] = x[2i]``,
``w[2i+1] = -w[2i] (1 + d)``, ``d`` uniform in +-2^-5), ``wide`` (magnitudes
``2**u``, ``u`` uniform in -20..20, random signs).

Reported per (data, K, accumulator): the relative error ``|y - s| / |s|`` (median, 99th
percentile and max over the trials; 0 when ``y = s = 0``, inf when only ``s`` is 0), its
signed mean (the bias), and the error relative to ``sum |x[k] w[k]|`` (what error bounds
speak of); and two properties of the data: the median condition ``sum |x w| / |sum x w|``
and the median and 99th percentile of the bits by which the bound anchor exceeds the
largest product's exponent. The tables pick, per anchor, the smallest window whose median and
99th percentile are at most sequential fp32's at ``normal`` data and K = 128, and at every
data kind and K. About 10 minutes on one core (``--quick``: seconds); an interrupted run,
restarted with the same options and ``--out``, reuses the accumulators it finished.
"""

from __future__ import annotations

import json
import math
import os
import time

import numpy as np

from ..bits import to_float64, unpack
from ..column import ANCHORS, MAX_TERMS, WINDOW_RANGE, ColumnAccumulator, reduce_column
from ..formats import BF16, FP32
from ..ops import convert, multiply
from ..tools.cli import progress
from .accumulator_tables import plot, print_tables
from .common import check_ranges, write_csv
from .sr_dot import fp32_accumulate

NAME = "accumulators"
HELP = "column accumulators (window W, normalisation every G) against the exact dot product"
KINDS = ("normal", "positive", "cancelling", "wide")
K_VALUES = (16, 64, 128, 256, 1024, 4096)
WINDOWS = (16, 20, 22, 24, 26, 28, 30, 32)
GROUPS = (0, 8, 32)
#: Every bf16 product and fp32 value used here is an integer multiple of 2**-SCALE.
SCALE = 320
#: Where the choice of window is made (the criterion: median and 99th percentile of the
#: relative error at most sequential fp32's).
PROGRESS_FILE = ".accumulators-progress.json"


def bf16_inputs(values) -> np.ndarray:
    """float64 ``values`` as bf16 encodings: to float32, then to bf16 with RNE (golden.convert)."""
    return convert(np.asarray(values, np.float32).view(np.uint32), FP32, BF16)[0]


def make_inputs(kind: str, trials: int, k: int, rng: np.random.Generator):
    """bf16 encodings ``x``, ``w`` of shape ``[trials, k]`` (``k`` even) of one data kind."""
    if kind in ("normal", "positive"):
        x, w = rng.standard_normal((2, trials, k))
        return (bf16_inputs(np.abs(x)), bf16_inputs(np.abs(w))) if kind == "positive" else \
            (bf16_inputs(x), bf16_inputs(w))
    if kind == "cancelling":
        x = np.repeat(rng.standard_normal((trials, k // 2)), 2, axis=1)
        w = bf16_inputs(rng.standard_normal((trials, k // 2)))
        partner = -to_float64(w, BF16) * (1 + rng.uniform(-2 ** -5, 2 ** -5, w.shape))
        return bf16_inputs(x), np.stack([w, bf16_inputs(partner)], axis=2).reshape(trials, k)
    if kind == "wide":
        x, w = (rng.choice((-1.0, 1.0), (trials, k)) * 2.0 ** rng.uniform(-20, 20, (trials, k)) for _ in range(2))
        return bf16_inputs(x), bf16_inputs(w)
    raise ValueError(f"data kind must be one of {', '.join(KINDS)}, not {kind!r}")


def scaled_integers(values) -> np.ndarray:
    """Finite float64 ``values`` times ``2**SCALE``, as exact Python integers (an object array).

    ``values = m 2**(e - 53)`` with ``m`` an integer of at most 53 bits (``np.frexp``
    scaled by ``2**53``, exact), so the result is ``m << (e - 53 + SCALE)``.
    """
    mantissa, exponent = np.frexp(np.asarray(values, np.float64))
    shift = exponent.astype(np.int64) - 53 + SCALE
    if (shift < 0).any() or not np.isfinite(mantissa).all():
        raise ValueError(f"a value is not finite or not a multiple of 2**-{SCALE}")
    return (mantissa * 2.0 ** 53).astype(np.int64).astype(object) << shift.astype(object)


def exact_sums(x, w, ks):
    """The exact sums of the first ``K`` products ``x[:, k] * w[:, k]`` (bf16), and of their
    magnitudes, for each ``K`` in ``ks``: object arrays ``[lanes, len(ks)]`` of integers in
    units of ``2**-SCALE``. Each product is exact in float64 (two 8-bit significands) and
    equals the fp32 product the MXU's multiplier makes (checked)."""
    products = to_float64(x, BF16) * to_float64(w, BF16)
    if not np.array_equal(products, to_float64(multiply(x, w, BF16, FP32)[0], FP32)):
        raise RuntimeError("a product is not exact in fp32 (out of range): the exact sum would not be the MXU's")
    scaled = scaled_integers(products)
    columns = np.asarray(ks) - 1
    return np.cumsum(scaled, axis=1)[:, columns], np.cumsum(np.abs(scaled), axis=1)[:, columns]


def ratios(numerators, denominators) -> np.ndarray:
    """``numerators / denominators`` of integer object arrays, each correctly rounded to
    float64 (Python's integer division); ``0 / 0`` is 0 and ``n / 0`` infinite."""
    return np.array([n / d if d else (0.0 if n == 0 else math.copysign(math.inf, n))
                     for n, d in zip(numerators.ravel(), denominators.ravel())]).reshape(numerators.shape)


def bound_slack(x, w, ks) -> np.ndarray:
    """Per lane and ``K``: bits by which the bound anchor (golden.column.product_anchor: the
    row's and the column's largest exponents, plus one) exceeds the largest product's exponent."""
    ex, ew = (np.where(unpack(a, BF16).is_zero_daz, -(1 << 20), unpack(a, BF16).exponent) for a in (x, w))
    columns = np.asarray(ks) - 1
    bound = np.maximum.accumulate(ex, axis=1)[:, columns] + np.maximum.accumulate(ew, axis=1)[:, columns] + 1
    _, exponent = np.frexp(to_float64(x, BF16) * to_float64(w, BF16))     # |p| in [2**(e-1), 2**e)
    largest = np.maximum.accumulate(np.where(exponent == 0, -(1 << 20), exponent - 1), axis=1)[:, columns]
    return bound - 2 * BF16.bias - largest


def configurations(windows, groups, anchors=ANCHORS):
    """None (sequential fp32), then every column accumulator of the grid."""
    return [None] + [ColumnAccumulator(window=w, group=g, sticky=s, anchor=a)
                     for a in anchors for s in (False, True) for g in groups for w in windows]


def _name(acc) -> str:
    return "fp32" if acc is None else str(acc)


def _quantile(values, q):
    return float(np.quantile(values, q, method="inverted_cdf"))


def _rows(acc, y, exact, abs_sum, kinds, ks):
    """Rows of one accumulator's errors: ``y`` fp32 encodings ``[lanes, len(ks)]``."""
    error = scaled_integers(to_float64(y, FP32)) - exact
    signed, of_abs = ratios(error, np.abs(exact)), np.abs(ratios(error, abs_sum))
    trials = len(y) // len(kinds)
    rows = []
    for i, kind in enumerate(kinds):
        lanes = slice(i * trials, (i + 1) * trials)
        for j, k in enumerate(ks):
            rel, bounded = np.abs(signed[lanes, j]), of_abs[lanes, j]
            rows.append({
                "data": kind, "k": int(k), "accumulator": _name(acc),
                "window": "" if acc is None else acc.window, "group": "" if acc is None else acc.group,
                "sticky": "" if acc is None else int(acc.sticky), "anchor": "" if acc is None else acc.anchor,
                "trials": trials,
                "rel_median": _quantile(rel, 0.5), "rel_p99": _quantile(rel, 0.99), "rel_max": float(rel.max()),
                "rel_mean_signed": float(signed[lanes, j].mean()),
                "abs_sum_rel_median": _quantile(bounded, 0.5), "abs_sum_rel_p99": _quantile(bounded, 0.99),
                "abs_sum_rel_max": float(bounded.max()),
            })
    return rows


def sum_columns(acc, x, w, ks):
    """fp32 encodings ``[lanes, len(ks)]``: lane ``l``'s first ``K`` products summed by
    ``acc`` (None: sequential fp32), one column of a single tile (golden.column.reduce_column,
    as golden.mxu.matmul; the sequential sums are prefixes of one NumPy float32 chain, which
    golden.experiments.fp32_accumulate checks against golden.add)."""
    if acc is None:
        return fp32_accumulate(multiply(x, w, BF16, FP32)[0], np.asarray(ks))
    return np.stack([reduce_column(x[:, :k], w[:, :k, None], BF16, FP32, acc)[0][:, 0] for k in ks], axis=1)


def accumulators(trials: int, seed: int, ks=K_VALUES, windows=WINDOWS, groups=GROUPS, done=None, on_config=None,
                 on_terms=None, anchors=ANCHORS):
    """Rows of results (dicts). ``done`` maps accumulator names to rows already computed
    (reused); ``on_config(name, rows)`` is called after each accumulator, ``on_terms(n)``
    after each ``n`` terms summed (progress)."""
    rng = np.random.default_rng(seed)
    inputs = [make_inputs(kind, trials, max(ks), rng) for kind in KINDS]
    x = np.concatenate([i[0] for i in inputs])
    w = np.concatenate([i[1] for i in inputs])
    exact, abs_sum = exact_sums(x, w, ks)
    condition = np.abs(ratios(abs_sum, exact))
    slack = bound_slack(x, w, ks)
    data = {(kind, k): {"condition_median": _quantile(condition[i * trials:(i + 1) * trials, j], 0.5),
                        "bound_slack_median": _quantile(slack[i * trials:(i + 1) * trials, j], 0.5),
                        "bound_slack_p99": _quantile(slack[i * trials:(i + 1) * trials, j], 0.99)}
            for i, kind in enumerate(KINDS) for j, k in enumerate(ks)}
    done = dict(done or {})
    for acc in configurations(windows, groups, anchors):
        name = _name(acc)
        if name not in done:
            done[name] = _rows(acc, sum_columns(acc, x, w, ks), exact, abs_sum, KINDS, ks)
            if on_config:
                on_config(name, done[name])
        if on_terms:
            on_terms(sum(ks))
    return [{key: _significant(value) for key, value in dict(row, **data[row["data"], row["k"]]).items()}
            for acc in configurations(windows, groups, anchors) for row in done[_name(acc)]]


def _significant(value):
    """A float to 4 significant digits (more than the tables show; a smaller CSV)."""
    return float(f"{value:.4g}") if isinstance(value, float) else value


def _integers(p, flag, text, lo, hi):
    try:
        values = tuple(sorted({int(v) for v in text.split(",") if v.strip()}))
    except ValueError:
        p.error(f"{flag} must be comma-separated integers, not {text!r}")
    if not values:
        p.error(f"{flag} must name at least one value, not {text!r}")
    check_ranges(p, [(flag, v, lo, hi) for v in values])
    return values


def add_arguments(p):
    """The sub-command's options."""
    p.add_argument("--trials", type=int, default=500, help="columns per data kind, 10..5000 (default 500)")
    p.add_argument("--seed", type=int, default=1, help="seed of the data, 0..2**20 (default 1)")
    p.add_argument("--windows", default=",".join(map(str, WINDOWS)),
                   help=f"windows W, 16..{WINDOW_RANGE[1]} (default {','.join(map(str, WINDOWS))})")
    p.add_argument("--anchors", default=",".join(ANCHORS),
                   help=f"anchors, some of {','.join(ANCHORS)} (default all)")
    p.add_argument("--groups", default=",".join(map(str, GROUPS)),
                   help=f"normalisation intervals G, 0 (at the end only)..{MAX_TERMS} "
                        f"(default {','.join(map(str, GROUPS))})")


def run(args, p) -> int:
    """Run with parsed ``args``; ``p.error`` reports a bad option."""
    windows = _integers(p, "--windows", args.windows, 2 * BF16.precision, WINDOW_RANGE[1])
    groups = _integers(p, "--groups", args.groups, 0, MAX_TERMS)
    anchors = tuple(a for a in ANCHORS if a in {v.strip() for v in args.anchors.split(",")})
    if not anchors or {v.strip() for v in args.anchors.split(",") if v.strip()} - set(ANCHORS):
        p.error(f"--anchors must name some of {','.join(ANCHORS)}, not {args.anchors!r}")
    ks = K_VALUES
    if args.quick:
        args.trials, ks = min(args.trials, 40), tuple(k for k in K_VALUES if k <= 256)
        windows, groups = windows[::2], groups[:2]
    check_ranges(p, (("--trials", args.trials, 10, 5000), ("--seed", args.seed, 0, 1 << 20)))
    args.out.mkdir(parents=True, exist_ok=True)
    # Finished accumulators are kept in a progress file, so an interrupted run resumes.
    progress_file = args.out / PROGRESS_FILE
    config = {"trials": args.trials, "seed": args.seed, "ks": list(ks), "windows": list(windows),
              "groups": list(groups), "anchors": list(anchors)}
    done = {}
    if progress_file.exists():
        saved = json.loads(progress_file.read_text())
        if saved.get("config") == config:
            done = saved["accumulators"]

    def save(name, rows):
        done[name] = rows
        tmp = progress_file.with_name(progress_file.name + ".tmp")
        tmp.write_text(json.dumps({"config": config, "accumulators": done}))
        os.replace(tmp, progress_file)

    start = time.process_time()
    with progress(len(configurations(windows, groups, anchors)) * sum(ks), "accumulators", "term") as bar:
        rows = accumulators(args.trials, args.seed, ks, windows, groups, done, save, bar.update, anchors)
    write_csv(rows, args.out / "accumulators.csv")
    print(f"accumulators: {args.trials} columns per data kind, seed {args.seed}, K = {', '.join(map(str, ks))} "
          f"({time.process_time() - start:.0f} s CPU)")
    chosen = print_tables(rows, ks, windows, groups, anchors)
    plot(rows, args.out / "accumulators.png", windows, chosen)
    progress_file.unlink(missing_ok=True)
    print(f"wrote {args.out / 'accumulators.csv'} and {args.out / 'accumulators.png'}")
    return 0
