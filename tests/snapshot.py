"""Every published and tested design's generated files, written or compared byte for byte:
``python -m tests.snapshot write DIR`` then, after a change, ``python -m tests.snapshot
compare DIR``.

A refactoring of hdl/ that claims "no bit changes" is checked with it: the designs are every
configuration of docs/mxu-pnr.csv (and its earlier designs') and docs/timing.csv (so their published figures stay the
designs' figures), the configurations the tests build (sim/configs.py), and a matrix over
the column sum's datapaths (anchors, normalisation points, sticky, fp8 and bf16 inputs,
pipeline depths, the MXU's optional parts).
"""

from __future__ import annotations

import filecmp
import sys
from pathlib import Path

from golden.tools.cli import Parser, command, progress, read_csv

ROOT = Path(__file__).resolve().parent.parent

#: The column sum's matrix: (accumulation, in_fmt, acc_fmt, rows, cols, mul_stages, add_stages).
_COLUMN_SPECS = ("column:w=26,anchor=bound", "column:w=26", "column:w=20,g=2", "column:w=20,g=2,sticky",
                 "column:w=18,g=2,anchor=bound", "column:w=16,sticky,anchor=bound", "column:w=28,g=3,sticky",
                 "column:w=8", "column:w=8,anchor=bound", "column:w=8,g=2", "column:w=8,g=2,anchor=bound,sticky")


def _matrix() -> list[dict]:
    designs = []
    for spec in _COLUMN_SPECS:
        fmt = "fp8_e4m3" if "w=8," in spec + "," else "bf16"
        for rows, cols, m, a in ((3, 2, 0, 0), (5, 2, 1, 1), (4, 3, 4, 4), (7, 2, 5, 3)):
            designs.append(dict(rows=rows, cols=cols, in_fmt=fmt, mul_stages=m, add_stages=a, accumulation=spec))
    extras = dict(rows=4, cols=2, mul_stages=2, add_stages=2)
    for spec in ("sequential", "column:w=26,anchor=bound", "column:w=24,g=2,sticky"):
        designs += [dict(**extras, accumulation=spec, acc_depth=4, out_rounding="sr"),
                    dict(**extras, accumulation=spec, convert_inputs=True, out_rounding="rne", axi_stream=True),
                    dict(**extras, accumulation=spec, mul_dsp="ecp5", fifo_ram="ecp5"),
                    dict(**extras, accumulation=spec, fifo_ram="lut", in_fmt="fp8_e5m2", acc_fmt="fp16")]
    designs += [dict(rows=3, cols=2, in_fmt="fp8_e4m3", acc_fmt="bf16", mul_stages=1, add_stages=2),
                dict(rows=3, cols=2, mul_stages=3, add_stages=4, fused_pe=False, acc_depth=2)]
    return designs


def _published_arrays() -> list[dict]:
    """docs/mxu-pnr.csv's and mxu-pnr-earlier.csv's distinct designs as ``hdl.build mxu``
    parameters."""
    seen, designs = set(), []
    for r in read_csv(ROOT / "docs" / "mxu-pnr.csv") + read_csv(ROOT / "docs" / "mxu-pnr-earlier.csv"):
        design = dict(rows=int(r["rows"]), cols=int(r["cols"]), mul_stages=int(r["mul_stages"]),
                      add_stages=int(r["add_stages"]), fused_pe=r["pe"] == "fused", accumulation=r["accumulation"],
                      mul_dsp=r["mul_dsp"], fifo_ram=r["fifo_ram"])
        key = tuple(sorted(design.items()))
        if key not in seen:
            seen.add(key)
            designs.append(design)
    return designs


def jobs() -> list[tuple]:
    """``(kind, arguments)``: ``("unit", (unit key, parameters))`` or ``("timing", (arch,
    kind, stages))``."""
    from sim.configs import CONFIGS, MXUS

    from synth.timing.designs import PLAN
    units = [("unit", (u, p)) for u, p in CONFIGS + MXUS]
    units += [("unit", ("mxu", p)) for p in _published_arrays() + _matrix()]
    timed = sorted({(kind, stages if not isinstance(stages, list) else tuple(stages))
                    for plan in PLAN.values() for kind, stages in plan})
    return units + [("timing", t) for t in timed]


def _write(job, out: Path) -> None:
    from hdl.units import UNITS, emit, to_verilog
    from golden.tools.cli import write_text
    kind, args = job
    if kind == "unit":
        unit, params = args
        emit(UNITS[unit], *UNITS[unit].build(**params), out)
        return
    from synth.timing.designs import component
    design, name = component(*args)
    write_text(out / f"timing_{name}.v", to_verilog(design, name))


def write(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    todo = jobs()
    with progress(len(todo), desc="designs", unit="design") as bar:
        for job in todo:
            _write(job, out)
            bar.update()
    return len(todo)


def compare(reference: Path, work: Path) -> list[str]:
    """The files that differ between ``reference`` and a fresh ``write`` into ``work``."""
    write(work)
    names = sorted({p.name for p in reference.iterdir()} | {p.name for p in work.iterdir()})
    return [n for n in names if not ((reference / n).exists() and (work / n).exists()
                                     and filecmp.cmp(reference / n, work / n, shallow=False))]


def _parser() -> Parser:
    parser = Parser(prog="python -m tests.snapshot", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("write", "compare"))
    parser.add_argument("folder", type=Path, help="where the reference snapshot is (or goes)")
    return parser


@command("python -m tests.snapshot")
def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.action == "write":
        print(f"{write(args.folder)} designs written into {args.folder}")
        return 0
    work = args.folder.with_name(args.folder.name + "-now")
    differ = compare(args.folder, work)
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(differ)} files differ ({work} against {args.folder})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
