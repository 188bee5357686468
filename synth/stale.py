"""Which published figures still measure what the generator emits, and re-measuring the rest.

``python -m synth.stale`` reads docs/timing.csv and docs/mxu-pnr.csv (``--published``) and gives
each row its status (``hdl.designs``): *current* (its recorded ``design`` is what the
generator emits for its configuration now), *stale* (another design now) or *unrecorded*
(measured before identities were recorded). It prints the counts, every row that is not
current and, per configuration, the command that re-measures it; ``--remeasure`` runs those
commands, one at a time (each merges into build/results/; publish as the command's help says).
The first check of a large array generates its Verilog (seconds each; cached under build/).
"""

from __future__ import annotations

import csv
import shlex
import subprocess
import sys
from pathlib import Path

from golden.tools.cli import Parser, build_dir, command, progress
from hdl.designs import CURRENT, STALE, UNRECORDED, status
from hdl.target import array_status, mxu_row_config, unit_identity
from hdl.units import UNITS, module_name

from .timing import ROOT, component

__all__ = ["timing_status", "main"]

#: An array row's seeds are re-measured together; these columns name its configuration.
ARRAY_CONFIG = ("arch", "rows", "cols", "mul_stages", "add_stages", "pe", "accumulation", "mul_dsp", "fifo_ram",
                "source", "floorplan", "keep", "sync_resets", "clock_mhz")
#: The flow every array row can be re-measured in: hdl.build's Verilog with its scripts
#: (the runs made in other flows are history, whatever their design).
REMEASURABLE = {"source": "verilog", "harness": "scrambled", "keep": "weight path, tag"}


def _depth(stages: str) -> tuple[int, int] | int:
    """docs/timing.csv's ``stages`` (``m4a3`` or ``7``) as ``synth.timing``'s plan has it."""
    return tuple(int(x) for x in stages[1:].split("a")) if stages.startswith("m") else int(stages)


def timing_status(row: dict) -> str:
    """A docs/timing.csv row's status: its recorded design against synth.timing's design of
    its kind and depth now (stale where that design has another module name)."""
    depth = _depth(row["stages"])

    def now():
        _, name = component(row["kind"], depth, plan=True)
        return (unit_identity(name, lambda: component(row["kind"], depth)[0]) if name == row["module"]
                else "another module")
    return status(row.get("design"), now)


def _timing_command(row: dict) -> list[str]:
    depth = row["stages"][1:].replace("a", "x") if row["stages"].startswith("m") else row["stages"]
    return [sys.executable, "-m", "synth.timing", "--arch", row["arch"], "--only", f"{row['kind']}:{depth}"]


def _array_commands(row: dict, seeds: list[str]) -> list[list[str]] | None:
    """``hdl.build mxu`` of the row's array into build/stale/, then ``synth.mxu_pnr`` of it with
    ``seeds``; None for a row of a flow that is not re-measured (``REMEASURABLE``)."""
    if any(row.get(k) != v for k, v in REMEASURABLE.items()):
        return None
    config = mxu_row_config(row)
    out = build_dir("stale", "verilog")
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in config.items() if k != "fused_pe"]
    flags.append("--fused-pe" if config["fused_pe"] else "--no-fused-pe")
    name = module_name(UNITS["mxu"], UNITS["mxu"].plan(**config)[0])
    return [[sys.executable, "-m", "hdl.build", "mxu", *flags, "-o", str(out)],
            [sys.executable, "-m", "synth.mxu_pnr", "--arch", row["arch"], "--verilog", str(out / f"{name}.json"),
             "--floorplan", row["floorplan"], "--clock-mhz", row["clock_mhz"], "--seeds", ",".join(seeds)]
            + ([] if row["sync_resets"] == "inferred" else ["--no-sync-resets"])]


def _parser() -> Parser:
    parser = Parser(prog="python -m synth.stale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--published", type=Path, default=ROOT / "docs",
                        help="the folder whose timing.csv and mxu-pnr.csv are checked (read, never written; "
                             "default docs)")
    parser.add_argument("--tables", default="timing,mxu-pnr", help="timing, mxu-pnr or both (default both)")
    parser.add_argument("--remeasure", action="store_true",
                        help="run the commands that re-measure every row that is not current (place and route: "
                             "hours for large arrays)")
    return parser


def _show(config: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in config.items())


@command("python -m synth.stale")
def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    tables = args.tables.split(",")
    bad = [t for t in tables if t not in ("timing", "mxu-pnr")]
    if bad:
        parser.error(f"--tables {args.tables}: unknown table {bad[0]!r} (timing, mxu-pnr)")
    for table in tables:
        if not (args.published / f"{table}.csv").exists():
            parser.error(f"--published {args.published}: no {table}.csv there")
    commands: list[list[list[str]]] = []
    for table in tables:
        rows = list(csv.DictReader((args.published / f"{table}.csv").open()))
        counts = {CURRENT: 0, STALE: 0, UNRECORDED: 0}
        array_seeds: dict[tuple, list[str]] = {}
        with progress(len(rows), f"{table}.csv: generating designs", "row") as bar:
            for row in rows:
                verdict = timing_status(row) if table == "timing" else array_status(row)
                counts[verdict] += 1
                bar.update()
                if verdict == CURRENT:
                    continue
                if table == "timing":
                    bar.write(f"{verdict:<10} {row['arch']} {row['module']} ({row['kind']}): {row['fmax_mhz']} MHz")
                    commands.append([_timing_command(row)])
                else:
                    config = tuple(row.get(k, "") for k in ARRAY_CONFIG)
                    bar.write(f"{verdict:<10} {_show({k: row.get(k, '') for k in ARRAY_CONFIG[:9]})} "
                              f"seed {row['seed']}: {row['fmax_mhz'] or 'does not fit'}")
                    array_seeds.setdefault(config, []).append(row)
        for config_rows in array_seeds.values():
            found = _array_commands(config_rows[0], sorted({r["seed"] for r in config_rows}, key=int))
            if found is not None:
                commands.append(found)
        print(f"{table}.csv: {counts[CURRENT]} current, {counts[STALE]} stale, {counts[UNRECORDED]} unrecorded "
              f"of {len(rows)} rows")
    if not commands:
        return 0
    print("re-measured by:" if args.remeasure else "to re-measure (--remeasure runs these):")
    for steps in commands:
        print("  " + " && ".join(shlex.join(["python", *step[1:]]) for step in steps))
    if not args.remeasure:
        return 0
    failed = 0
    with progress(len(commands), "re-measure", "design") as bar:
        for steps in commands:
            for step in steps:
                if subprocess.run(step, cwd=ROOT).returncode:
                    failed += 1
                    bar.write(f"FAILED: {shlex.join(['python', *step[1:]])}")
                    break
            bar.update()
    print("publish: python -m synth.timing --cached-only --docs docs; the arrays' commands again with "
          "--csv docs/mxu-pnr.csv (from their cache)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
