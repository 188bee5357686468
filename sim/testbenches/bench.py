"""Vectors per second through cocotb for each unit on each simulator: ``python -m sim.testbenches.bench``.

Each figure is the streaming loop only (one vector per clock, golden check excluded), the
median of ``--repeat`` simulations of the same build (Verilator models compiled optimised).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from golden.tools.cli import Parser, build_dir, check_output, command, progress, write_results

from . import runner

UNITS = [
    ("mul", dict(in_fmt="bf16", out_fmt="fp32", stages=2)),
    ("mul", dict(in_fmt="bf16", out_fmt="bf16", rounding="sr", stages=2)),
    ("add", dict(fmt="fp32", rounding="rne", stages=2)),
    ("rounder", dict(in_fmt="fp32", out_fmt="bf16", rounding="sr", stages=2)),
]


@command("python -m sim.testbenches.bench")
def main(argv=None) -> int:
    parser = Parser(prog="python -m sim.testbenches.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=20000, help="random vectors per run, 100..10000000 (default 20000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, 1..20; the median is quoted (default 3)")
    parser.add_argument("--simulators", nargs="+", default=list(runner.SIMULATORS), choices=runner.SIMULATORS,
                        help="simulators to measure (default: both; a missing one is reported and skipped)")
    out = build_dir("results", "sim_bench.json")
    parser.add_argument("--out", type=Path, default=out, help=f"JSON file for the figures (default {out})")
    args = parser.parse_args(argv)
    if not 100 <= args.vectors <= 10_000_000:
        parser.error(f"--vectors must be in 100..10000000, not {args.vectors}")
    if not 1 <= args.repeat <= 20:
        parser.error(f"--repeat must be in 1..20, not {args.repeat}")
    check_output(args.out, "--out")
    simulators = [s for s in args.simulators if not runner.available(s)]
    if not simulators:
        parser.error("; ".join(runner.available(s) for s in args.simulators))

    rows = []
    print(f"cocotb throughput, {args.vectors} random vectors per run, median of {args.repeat}")
    print(f"{'simulator':<10} {'module':<34} {'vectors/s':>10} {'cycles/s':>10} {'all runs, s':>12}")
    for simulator in args.simulators:
        if simulator not in simulators:
            print(f"{simulator:<10} skipped: {runner.available(simulator)}")
    bar = progress(len(simulators) * len(UNITS) * args.repeat, "sim.testbenches.bench", "run")
    for simulator in simulators:
        for unit, params in UNITS:
            start = time.perf_counter()
            runs = []
            for i in range(args.repeat):
                runs.append(runner.run(unit, params, simulator, vectors=args.vectors, seed=1 + i, optimize=True))
                bar.update()
            first = time.perf_counter() - start
            rate = statistics.median(r["vectors"] / r["seconds"] for r in runs)
            cycles = statistics.median(r["cycles"] / r["seconds"] for r in runs)
            rows.append({"simulator": simulator, "module": runs[0]["module"], "vectors_per_s": rate,
                         "cycles_per_s": cycles, "vectors": runs[0]["vectors"]})
            bar.write(f"{simulator:<10} {runs[0]['module']:<34} {rate:10.0f} {cycles:10.0f} {first:12.1f}")
    bar.close()
    write_results(args.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
