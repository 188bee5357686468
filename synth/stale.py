"""Which published figures still measure what the generator emits, and re-measuring the rest.

``python -m synth.stale`` reads docs/timing.csv, docs/mxu-pnr.csv and the area sweep's
docs/synth.csv (``--published``; ``--tables`` picks them) and gives each row its status
(``hdl.designs``): *current* (its recorded ``design`` is what the generator emits for its
configuration now), *stale* (another design now) or *unrecorded* (measured before identities
were recorded). It prints the counts, every row that is not current and, per configuration,
the command that re-measures it; ``--remeasure`` runs those commands, one at a time (each
merges into build/results/; publish as the command's help says). ``--archive`` moves the
array rows that are not current from mxu-pnr.csv into mxu-pnr-earlier.csv beside it: history,
read by nothing that quotes a figure, and no longer generated on every check. The first check
of a large array generates its Verilog (seconds each; cached under build/).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from golden.tools.cli import Parser, build_dir, command, csv_text, merge_csv, progress, read_csv, write_text
from hdl.designs import CURRENT, STALE, UNRECORDED, status
from hdl.target import array_status, mxu_row_config, unit_identity
from hdl.units import UNITS, module_name

from . import ROOT
from .sweep.cache import row_status as sweep_status
from .sweep.configs import module as sweep_module
from .sweep.configs import configuration_of
from .mxu_pnr import COLUMNS as ARRAY_COLUMNS
from .mxu_pnr import run_key
from .timing.designs import component

__all__ = ["TABLES", "timing_status", "sweep_status", "main"]

#: The published tables, by their CSV's name in ``--published``.
TABLES = ("timing", "mxu-pnr", "synth")
#: How each table's re-measured rows are published.
PUBLISH = {"timing": "python -m synth.timing --cached-only --docs docs",
           "mxu-pnr": "the arrays' commands again with --csv docs/mxu-pnr.csv (from their cache)",
           "synth": "the sweep's commands again with --cached-only --csv docs/synth.csv"}

#: Where ``--archive`` moves mxu-pnr.csv's rows that are not current (beside it). Only the
#: arrays are archived: every timing.csv row feeds the delay model's fit, and a sweep's
#: re-measurement replaces its row.
EARLIER = "mxu-pnr-earlier.csv"
#: An array row's seeds are re-measured together; these columns name its configuration.
ARRAY_CONFIG = ("arch", "rows", "cols", "mul_stages", "add_stages", "pe", "accumulation", "mul_dsp", "fifo_ram",
                "source", "floorplan", "keep", "sync_resets", "clock_mhz")
#: The flows an array row can be re-measured in: hdl.build's Verilog (which keeps the weight
#: path and the tag apart) with or without its floorplan; the runs made in other flows are
#: history, whatever their design.
REMEASURABLE = {"source": ("verilog",), "harness": ("scrambled",), "keep": ("weight path, tag",)}


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
    if any(row.get(k) not in v for k, v in REMEASURABLE.items()):
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


def _sweep_commands(rows: list[dict]) -> list[list[list[str]]]:
    """``synth.sweep`` of the modules of ``rows``' configurations, one command with ``--pnr`` for
    those a row had placed and routed and one without for the others (a module in one only)."""
    placed, plain = {}, {}
    for row in rows:
        module = sweep_module(configuration_of(row))
        (placed if row.get("ice40_fmax_mhz") else plain)[module] = None
    plain = [m for m in plain if m not in placed]
    return [[[sys.executable, "-m", "synth.sweep", "--modules", ",".join(modules)] + (["--pnr"] if pnr else [])]
            for modules, pnr in ((plain, False), (list(placed), True)) if modules]


def _parser() -> Parser:
    parser = Parser(prog="python -m synth.stale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--published", type=Path, default=None,
                        help="the folder whose timing.csv, mxu-pnr.csv and synth.csv are checked (read; "
                             "written only by --archive, which asks for it by name; default docs)")
    parser.add_argument("--tables", default=None,
                        help=f"some of {', '.join(TABLES)} (synth: the area sweep), comma-separated (default: "
                             "each whose CSV --published holds)")
    parser.add_argument("--remeasure", action="store_true",
                        help="run the commands that re-measure every row that is not current (place and route and "
                             "the area sweep: hours for large arrays)")
    parser.add_argument("--archive", action="store_true",
                        help=f"move mxu-pnr.csv's rows that are not current into {EARLIER} beside it (merged by "
                             "key; needs the mxu-pnr table)")
    return parser


def _show(config: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in config.items())


def _check(table: str, rows: list[dict]) -> tuple[list[list[list[str]]], list[dict]]:
    """Print each row of ``table`` that is not current and the counts of each status; return
    the commands that re-measure those rows (each a list of steps) and the rows."""
    counts = {CURRENT: 0, STALE: 0, UNRECORDED: 0}
    commands: list[list[list[str]]] = []
    earlier: list[dict] = []
    array_seeds: dict[tuple, list[dict]] = {}
    swept: list[dict] = []
    judge = {"timing": timing_status, "mxu-pnr": array_status, "synth": sweep_status}[table]
    with progress(len(rows), f"{table}.csv: generating designs", "row") as bar:
        for row in rows:
            verdict = judge(row)
            counts[verdict] += 1
            bar.update()
            if verdict == CURRENT:
                continue
            earlier.append(row)
            if table == "timing":
                bar.write(f"{verdict:<10} {row['arch']} {row['module']} ({row['kind']}): {row['fmax_mhz']} MHz")
                commands.append([_timing_command(row)])
            elif table == "synth":
                gone = configuration_of(row) is None
                bar.write(f"{verdict:<10} {row['group']} {row['kind']} {row['module']}: "
                          f"{row.get('sky130_um2') or '-'} um^2" + ("; no longer swept" if gone else ""))
                if not gone:
                    swept.append(row)
            else:
                config = tuple(row.get(k, "") for k in ARRAY_CONFIG)
                bar.write(f"{verdict:<10} {_show({k: row.get(k, '') for k in ARRAY_CONFIG[:9]})} "
                          f"seed {row['seed']}: {row['fmax_mhz'] or 'does not fit'}")
                array_seeds.setdefault(config, []).append(row)
    for config_rows in array_seeds.values():
        found = _array_commands(config_rows[0], sorted({r["seed"] for r in config_rows}, key=int))
        if found is not None:
            commands.append(found)
    commands += _sweep_commands(swept)
    print(f"{table}.csv: {counts[CURRENT]} current, {counts[STALE]} stale, {counts[UNRECORDED]} unrecorded "
          f"of {len(rows)} rows")
    return commands, earlier


def archive(published: Path, rows: list[dict]) -> None:
    """Move ``rows`` from ``published``'s mxu-pnr.csv into ``EARLIER`` (written first: a
    failure leaves a row in both, never in neither)."""
    moved = {run_key(r) for r in rows}
    merge_csv(published / EARLIER, rows, ARRAY_COLUMNS, run_key)
    kept = [r for r in read_csv(published / "mxu-pnr.csv") if run_key(r) not in moved]
    write_text(published / "mxu-pnr.csv", csv_text(kept, ARRAY_COLUMNS))
    print(f"moved {len(rows)} rows of mxu-pnr.csv into {published / EARLIER}")


@command("python -m synth.stale")
def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.archive and args.published is None:
        parser.error("--archive writes into the folder it checks: name it, e.g. --published docs")
    args.published = ROOT / "docs" if args.published is None else args.published
    tables = (args.tables.split(",") if args.tables is not None else
              [t for t in TABLES if (args.published / f"{t}.csv").exists()] or list(TABLES))
    bad = [t for t in tables if t not in TABLES]
    if bad:
        parser.error(f"--tables {args.tables}: unknown table {bad[0]!r} ({', '.join(TABLES)})")
    for table in tables:
        if not (args.published / f"{table}.csv").exists():
            parser.error(f"--published {args.published}: no {table}.csv there")
    if args.archive and "mxu-pnr" not in tables:
        parser.error(f"--archive moves mxu-pnr.csv's rows: --tables {args.tables} leaves it out")
    commands: list[list[list[str]]] = []
    remeasured = []
    for table in tables:
        found, earlier = _check(table, read_csv(args.published / f"{table}.csv"))
        if args.archive and table == "mxu-pnr" and earlier:
            archive(args.published, earlier)
        commands += found
        if found:
            remeasured.append(table)
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
    print("publish: " + "; ".join(PUBLISH[t] for t in remeasured))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
