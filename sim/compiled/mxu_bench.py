"""MXU throughput on Verilator: ``python -m sim.compiled.mxu_bench`` (``--help``).

For each array, one weight tile, then ``M`` rows of X at full rate with ``y`` always ready
(cocotb test ``sustains_one_row_per_cycle``, results checked against golden). Printed per M:
cycles from the first row accepted to the last row out, multiply-accumulates per cycle,
utilisation ``M * rows * cols / (cycles * rows * cols)``, the latency measured (cycles - M)
against the datasheet's (the manifest's ``latency``), and simulated
cycles per second (Verilator model compiled optimised, cocotb driving every cycle). Each row
names its array's design (``hdl.designs``: the hash of the NAME.v ``hdl.build mxu`` writes);
``--csv docs/mxu-bench.csv`` publishes, merged by array, M and design.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from golden.tools.cli import Parser, build_dir, check_output, command, merge_csv, progress, write_results
from hdl.target import mxu_identity

from sim.testbenches import runner

DEFAULT_SIZES = ["4x4", "4x4:m1a1", "8x8:m1a1"]
DEFAULT_ROWS = [1, 16, 64, 256, 1024, 4096]
#: docs/mxu-bench.csv's columns; a row is replaced by a run of the same array, M and design.
COLUMNS = ["array", "rows", "cols", "mul_stages", "add_stages", "M", "cycles", "macs_per_cycle", "utilisation",
           "latency", "latency_formula", "cycles_per_s", "design"]
KEY = ("rows", "cols", "mul_stages", "add_stages", "M", "design")


def publish(path: Path, table: list[dict]) -> None:
    """``table``'s rows into the CSV at ``path``, replacing rows of the same ``KEY``."""
    merge_csv(path, table, COLUMNS, lambda r: tuple(str(r[k]) for k in KEY))
    print(f"merged {len(table)} rows into {path}")


def parse_size(text: str) -> dict:
    """``RxC`` or ``RxC:mMaA`` (multiplier / adder stages) as MXU parameters."""
    match = re.fullmatch(r"(\d+)x(\d+)(?::m(\d+)a(\d+))?", text)
    if not match:
        raise argparse.ArgumentTypeError(f"size {text!r}: use RxC or RxC:mMaA, e.g. 8x8 or 8x8:m1a2")
    rows, cols, mul, add = (int(g) if g else 0 for g in match.groups())
    return dict(rows=rows, cols=cols, mul_stages=mul, add_stages=add)


@command("python -m sim.compiled.mxu_bench")
def main(argv=None) -> int:
    parser = Parser(prog="python -m sim.compiled.mxu_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=parse_size, default=[parse_size(s) for s in DEFAULT_SIZES],
                        help=f"arrays as RxC or RxC:mMaA (default {' '.join(DEFAULT_SIZES)})")
    parser.add_argument("--rows", nargs="+", type=int, default=DEFAULT_ROWS, metavar="M",
                        help=f"X rows per run, 1..1000000 (default {' '.join(map(str, DEFAULT_ROWS))})")
    out = build_dir("results", "mxu_bench.json")
    parser.add_argument("--out", type=Path, default=out, help=f"JSON file for the figures (default {out})")
    parser.add_argument("--csv", type=Path, help="also merge the rows into this CSV by array, M and design "
                        "(--csv docs/mxu-bench.csv publishes)")
    args = parser.parse_args(argv)
    for m in args.rows:
        if not 1 <= m <= 1_000_000:
            parser.error(f"--rows must be in 1..1000000, not {m}")
    for params in args.sizes:
        try:
            runner.UNITS["mxu"].build(**params)
        except (TypeError, ValueError) as error:
            parser.error(f"--sizes: {error}")
    check_output(args.out, "--out")
    if args.csv:
        check_output(args.csv, "--csv")
    reason = runner.available("verilator")
    if reason:
        parser.error(reason)

    table = []
    print(f"{'array':<18} {'M':>6} {'cycles':>7} {'MAC/cycle':>10} {'util':>7} {'latency':>8} "
          f"{'formula':>8} {'cycles/s':>9}")
    bar = progress(len(args.sizes), "sim.compiled.mxu_bench", "array")
    for params in args.sizes:
        summary = runner.run("mxu", params, "verilator", optimize=True, testcase="sustains_one_row_per_cycle",
                             extra_env={"UNIT_MXU_ROWS": " ".join(map(str, args.rows))})
        bar.update()
        manifest = json.loads((runner.BUILD_ROOT / "verilator" / (summary["module"] + "_opt") /
                               (summary["module"] + ".json")).read_text())
        k, n, formula = params["rows"], params["cols"], manifest["latency"]
        label = f"{k}x{n} m{params['mul_stages']}a{params['add_stages']}"
        design = mxu_identity(params)
        for run in summary["throughput"]:
            m, cycles = run["rows"], run["cycles"]
            row = {"array": label, "rows": k, "cols": n, "mul_stages": params["mul_stages"],
                   "add_stages": params["add_stages"], "M": m, "cycles": cycles, "macs_per_cycle": m * k * n / cycles,
                   "utilisation": m / cycles, "latency": cycles - m, "latency_formula": formula,
                   "cycles_per_s": round(cycles / run["seconds"]), "design": design}
            table.append(row)
            bar.write(f"{label:<18} {m:>6} {cycles:>7} {row['macs_per_cycle']:>10.2f} {row['utilisation']:>7.3f} "
                  f"{row['latency']:>8} {formula:>8} {row['cycles_per_s']:>9.0f}")
    bar.close()
    write_results(args.out, table)
    if args.csv:
        publish(args.csv, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
