"""Vectors per second through cocotb for each unit on each simulator: ``python -m sim.bench``.

Each figure is the streaming loop only (one vector per clock, golden check excluded), the
median of ``--repeat`` simulations of the same build (Verilator models compiled optimised).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from . import runner

UNITS = [
    ("mul", dict(in_fmt="bf16", out_fmt="fp32", stages=2)),
    ("mul", dict(in_fmt="bf16", out_fmt="bf16", rounding="sr", stages=2)),
    ("add", dict(fmt="fp32", rounding="rne", stages=2)),
    ("rounder", dict(in_fmt="fp32", out_fmt="bf16", rounding="sr", stages=2)),
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sim.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=20000, help="random vectors per run, 100..10000000 (default 20000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, 1..20; the median is quoted (default 3)")
    parser.add_argument("--simulators", nargs="+", default=list(runner.SIMULATORS), choices=runner.SIMULATORS,
                        help="simulators to measure (default: both; a missing one is reported and skipped)")
    parser.add_argument("--out", type=Path, default=Path("results/sim_bench.json"),
                        help="JSON file for the figures (default results/sim_bench.json)")
    args = parser.parse_args(argv)
    if not 100 <= args.vectors <= 10_000_000:
        parser.error(f"--vectors must be in 100..10000000, not {args.vectors}")
    if not 1 <= args.repeat <= 20:
        parser.error(f"--repeat must be in 1..20, not {args.repeat}")

    rows = []
    print(f"cocotb throughput, {args.vectors} random vectors per run, median of {args.repeat}")
    print(f"{'simulator':<10} {'module':<34} {'vectors/s':>10} {'cycles/s':>10} {'all runs, s':>12}")
    for simulator in args.simulators:
        reason = runner.available(simulator)
        if reason:
            print(f"{simulator:<10} skipped: {reason}")
            continue
        for unit, params in UNITS:
            start = time.perf_counter()
            runs = [runner.run(unit, params, simulator, vectors=args.vectors, seed=1 + i, optimize=True)
                    for i in range(args.repeat)]
            first = time.perf_counter() - start
            rate = statistics.median(r["vectors"] / r["seconds"] for r in runs)
            cycles = statistics.median(r["cycles"] / r["seconds"] for r in runs)
            rows.append({"simulator": simulator, "module": runs[0]["module"], "vectors_per_s": rate,
                         "cycles_per_s": cycles, "vectors": runs[0]["vectors"]})
            print(f"{simulator:<10} {runs[0]['module']:<34} {rate:10.0f} {cycles:10.0f} {first:12.1f}")
    write_results(args.out, rows)
    return 0


def write_results(path: Path, rows: list[dict]) -> None:
    """A benchmark's figures as JSON (the folder made if needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    raise SystemExit(main())
