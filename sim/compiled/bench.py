"""Checked vectors per second through the compiled path: ``python -m sim.compiled.bench``.

End to end (compiled simulation, golden, comparison, class counts; with and without the
rounding situations), on ``--chunks`` chunks of 2**24 exhaustive vectors, on ``--workers``
local processes (default 2: one per core); the median of ``--repeat`` runs (models built beforehand).
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from golden.tools.cli import Parser, build_dir, check_output, command, write_results

from . import exhaustive
from .chunks import check_chunk

CONFIGS = [
    ("mul", dict(in_fmt="bf16", out_fmt="fp32")),
    ("mul", dict(in_fmt="bf16", out_fmt="bf16", rounding="rne")),
    ("rounder", dict(rounding="rne")),
]


@command("python -m sim.compiled.bench")
def main(argv=None) -> int:
    parser = Parser(prog="python -m sim.compiled.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=8, help="chunks of 2**24 vectors per run, 2..256 (default 8)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, 1..20; the median is quoted (default 3)")
    parser.add_argument("--out", type=Path, default=build_dir("results", "compiled_bench.json"),
                        help="JSON file for the figures (default build/results/compiled_bench.json)")
    parser.add_argument("--workers", type=int, nargs="+", default=[2], help="worker processes to measure (default 2)")
    args = parser.parse_args(argv)
    if not 2 <= args.chunks <= 256:
        parser.error(f"--chunks must be in 2..256, not {args.chunks}")
    if not all(1 <= w <= 64 for w in args.workers):
        parser.error(f"--workers must be in 1..64, not {args.workers}")
    if not 1 <= args.repeat <= 20:
        parser.error(f"--repeat must be in 1..20, not {args.repeat}")
    check_output(args.out, "--out")
    rows = []
    print(f"compiled path, end to end, {args.chunks} x 2**24 vectors per run, median of {args.repeat}")
    print(f"{'module':<28} {'situations':>10} {'workers':>7} {'vectors/s':>11}")
    with tempfile.TemporaryDirectory() as scratch:
        for c, (unit, params) in enumerate(CONFIGS):
            for situations in (False, True):
                plan = exhaustive.plan_of(unit, params, situations=situations)
                check_chunk(plan, 0)                  # builds the model outside the timing
                for workers in args.workers:
                    rates = []
                    for r in range(args.repeat):
                        report = Path(scratch) / f"{c}_{situations}_{workers}_{r}.json"
                        chunks = range(64 + r * args.chunks, 64 + (r + 1) * args.chunks)
                        out = exhaustive.run(plan, chunks, report, workers=workers, progress=False)
                        assert out["mismatches"] == 0, out["first_mismatches"]
                        rates.append(out["vectors_per_s"])
                    rate = statistics.median(rates)
                    module = out["configuration"]["module"]
                    rows.append({"module": module, "situations": situations, "workers": workers,
                                 "vectors_per_s": rate, "runs": rates, "vectors_per_run": out["vectors"]})
                    print(f"{module:<28} {str(situations):>10} {workers:>7} {rate:11.3g}")
    write_results(args.out, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
