"""The stochastic-rounding experiments on the RTL SR unit (compiled, built-in xorshift).

``python -m sim.experiments.sr_rtl --quick --out docs`` does two things:

* **sr-dot on the RTL.** ``golden.experiments.sr_dot`` with its inputs ``r(a)``, ``r(b)``
  rounded by the compiled ``StochasticRounder`` (fp32 to TF32 and bf16; ``rne``, ``sr``,
  ``sr-half``) instead of golden: each vector lane is one run of a unit seeded with that
  lane's xorshift seed (lane 0 of a unit starts from its seed, as the golden lane does),
  with random input bubbles. Every rounded value and flag is checked against golden as it
  is made, then the experiment's rows (accumulation, error statistics) must equal a golden
  run of the same seeds bit for bit. Writes ``sr-dot-rtl.csv`` and ``sr-dot-rtl.png``.
* **Bias at fixed discarded fractions.** fp32 values whose discarded 16 bits are a fixed
  fraction ``f`` of a bf16 ulp (random sign and kept bits, a few exponents) rounded by the
  RTL unit: the mean error of the magnitude, in ulps, against theory. ``sr`` (mode 1)
  rounds up with probability ``f``: mean 0, variance ``f(1 - f)`` per rounding. ``sr-half``
  (mode 2) rounds every inexact value up with probability 1/2 (its one random bit), whatever
  ``f``: mean ``1/2 - f``, variance ``1/4``. Writes ``sr-bias-rtl.csv``.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path

import numpy as np

from golden.tools.cli import Parser, build_dir, check_output, command, progress
from golden.experiments import sr_dot
from golden.experiments.common import check_ranges, write_csv
from golden.rounding import Rounding

from sim.compiled.model import Model

__all__ = ["rtl_round_inputs", "checked_round_inputs", "sr_dot_rtl", "FRACTIONS", "EXPONENTS", "bias", "main"]

#: Discarded fractions of a bf16 ulp measured: the lowest random bit's weight, then a few.
FRACTIONS = (2.0 ** -16, 1 / 8, 1 / 4, 1 / 2, 3 / 4)
#: Unbiased exponents of the rounded values.
EXPONENTS = (-100, 0, 100)


@functools.lru_cache(maxsize=None)
def _model(out_fmt: str, rounding: str, verilog=None) -> Model:
    """The SR unit fp32 -> ``out_fmt`` (built once per process)."""
    return Model("rounder", dict(in_fmt="fp32", out_fmt=out_fmt, rounding=rounding), verilog=verilog)


def rtl_round_inputs(values, fmt, rounding, seeds):
    """``golden.experiments.sr_dot.round_inputs`` on the RTL: lane ``l`` of ``values``
    streamed through the unit seeded with ``seeds[l]`` (20% bubbles)."""
    model = _model(fmt.name, Rounding.parse(rounding).value)
    out, flags = np.empty(values.shape, fmt.dtype), np.empty(values.shape, np.uint8)
    for lane, v in enumerate(values):
        out[lane], flags[lane], _ = model.run({"a": v}, seed=None if seeds is None else int(seeds[lane]),
                                              bubble_seed=lane + 1)
    return out, flags


def checked_round_inputs(values, fmt, rounding, seeds):
    """:func:`rtl_round_inputs`, raising AssertionError where it differs from golden."""
    got, want = rtl_round_inputs(values, fmt, rounding, seeds), sr_dot.round_inputs(values, fmt, rounding, seeds)
    for name, g, w in zip(("results", "flags"), got, want):
        if not np.array_equal(g, w):
            raise AssertionError(f"{fmt.name} {Rounding.parse(rounding).value}: RTL {name} differ from golden "
                                 f"at {int((g != w).sum())} of {g.size} roundings")
    return got


def sr_dot_rtl(n_max: int, trials: int, points: int, seed: int, workers: int = 1, progress=None):
    """sr-dot with RTL-rounded inputs and with golden's: ``(rtl_rows, golden_rows, roundings)``.
    ``progress(what)`` is called after each configuration of each run."""
    rtl = sr_dot.sr_dot(n_max, trials, points, seed, workers, progress, rounder=checked_round_inputs)
    golden = sr_dot.sr_dot(n_max, trials, points, seed, workers, progress)
    roundings = len(sr_dot.FORMATS) * len(sr_dot.MODES) * 2 * len(sr_dot.VECTORS) * trials * n_max
    return rtl, golden, roundings


def _positions(fraction: float, count: int, rng) -> np.ndarray:
    """``count`` fp32 encodings, discarded 16 bits ``fraction * 2^16``, spread over
    :data:`EXPONENTS`, random signs and kept mantissa bits."""
    low = round(fraction * (1 << 16))
    exponent = np.asarray(EXPONENTS)[np.arange(count) % len(EXPONENTS)] + 127
    kept = rng.integers(0, 1 << 7, count, dtype=np.uint32)
    sign = rng.integers(0, 2, count, dtype=np.uint32)
    return (sign << 31) | (exponent.astype(np.uint32) << 23) | (kept << 16) | np.uint32(low)


def theory(rounding, fraction: float) -> tuple[float, float]:
    """Mean and standard deviation (ulps) of one rounding's magnitude error at ``fraction``."""
    if Rounding.parse(rounding) is Rounding.STOCHASTIC:
        return 0.0, float(np.sqrt(fraction * (1 - fraction)))
    return 0.5 - fraction, 0.5


def bias(rounding, count: int = 1_050_000, seed: int = 1, verilog=None) -> list[dict]:
    """Per fraction of :data:`FRACTIONS`: ``count`` RTL roundings fp32 -> bf16, the measured
    mean magnitude error (ulps), its theory and ``z`` (the distance in standard errors)."""
    rounding = Rounding.parse(rounding)
    model = _model("bf16", rounding.value, verilog)
    rng = np.random.default_rng(seed)
    rows = []
    for i, fraction in enumerate(FRACTIONS):
        a = _positions(fraction, count, rng)
        result, _, _ = model.run({"a": a}, seed=seed + i, bubble_seed=seed + i)
        # The magnitude error in 2^-16 ulp: encodings are monotone in magnitude, and a carry
        # into the next binade is still one ulp of the input's.
        error = (result.astype(np.int64) & 0x7FFF) * (1 << 16) - (a.astype(np.int64) & 0x7FFFFFFF)
        mean = error.mean() / (1 << 16)
        want, sigma = theory(rounding, fraction)
        stderr = sigma / np.sqrt(count)
        rows.append({"rounding": rounding.value, "fraction": fraction, "roundings": count,
                     "mean_error_ulp": float(mean), "theory_ulp": want, "stderr_ulp": float(stderr),
                     "z_theory": float((mean - want) / stderr), "z_zero": float(mean / stderr), "seed": seed + i})
    return rows


def _print_bias(rows):
    print(f"{'rounding':<8} {'fraction':>9} {'roundings':>9} {'mean error':>11} {'theory':>8} {'stderr':>9} "
          f"{'z(theory)':>9} {'z(0)':>8}")
    for r in rows:
        print(f"{r['rounding']:<8} {r['fraction']:>9.3g} {r['roundings']:>9} {r['mean_error_ulp']:>11.3e} "
              f"{r['theory_ulp']:>8.4f} {r['stderr_ulp']:>9.2e} {r['z_theory']:>9.2f} {r['z_zero']:>8.1f}")


@command("python -m sim.experiments.sr_rtl")
def main(argv=None) -> int:
    parser = Parser(prog="python -m sim.experiments.sr_rtl", description=__doc__.splitlines()[0])
    sr_dot.add_arguments(parser)
    parser.add_argument("--roundings", type=int, default=1_050_000,
                        help="roundings per fraction in the bias table, 1000..10**8 (default 1050000)")
    out = build_dir("results", "sr-rtl")
    parser.add_argument("--out", type=Path, default=out, help=f"output folder (default {out})")
    parser.add_argument("--quick", action="store_true", help="sr-dot's reduced run (under a minute)")
    args = parser.parse_args(argv)
    if args.quick:
        args.n_max, args.trials, args.points = min(args.n_max, 20_000), min(args.trials, 3), min(args.points, 5)
    check_ranges(parser, [(f"--{name.replace('_', '-')}", getattr(args, name), lo, hi)
                          for name, (lo, hi) in sr_dot.LIMITS.items()] + [("--roundings", args.roundings, 1000, 10 ** 8)])
    check_output(args.out, "--out", folder=True)
    start = time.perf_counter()
    with progress(2 * len(sr_dot.FORMATS) * len(sr_dot.MODES), "sr-dot, RTL then golden", "config") as bar:
        def done(what):
            bar.set_postfix_str(what)
            bar.update()
        rtl, golden, roundings = sr_dot_rtl(args.n_max, args.trials, args.points, args.seed, args.workers, done)
    same = repr(rtl) == repr(golden)
    print(f"sr-dot on the RTL SR unit: {roundings} roundings equal golden's; {len(rtl)} rows "
          f"{'equal golden bit for bit' if same else 'DIFFER from golden'} (seed {args.seed}, "
          f"{time.perf_counter() - start:.0f} s)")
    sr_dot.print_table(rtl, args.n_max)
    rows = bias("sr", args.roundings, args.seed) + bias("sr-half", args.roundings, args.seed)
    print("\nmean magnitude error of fp32 -> bf16 on the RTL at fixed discarded fractions (ulps)")
    _print_bias(rows)
    write_csv(rtl, args.out / "sr-dot-rtl.csv")
    sr_dot.plot(rtl, args.out / "sr-dot-rtl.png")
    write_csv(rows, args.out / "sr-bias-rtl.csv")
    print(f"wrote {args.out / 'sr-dot-rtl.csv'}, {args.out / 'sr-dot-rtl.png'} and {args.out / 'sr-bias-rtl.csv'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
