"""The pages' result tables, generated from the CSVs: ``python -m synth.tables``.

A table sits in its page between ``<!-- table: NAME (python -m synth.tables) -->`` and
``<!-- end table -->``. This command generates every table from docs/mxu-pnr.csv and
docs/timing.csv, current rows only (``hdl.designs``: a row of a design the generator no
longer emits is history and is not shown), writes them under build/tables/ and names the
pages that differ; ``--publish`` rewrites those blocks in the pages, ``--check`` writes
nothing and exits 1 where a page differs (a test checks the same). Tables:

- ``arrays``: the arrays placed in the shipped flow, per configuration: the median over
  seeds (min-max), GMAC/s at the median, LUT4 and FF (medians), multipliers, latency;
- ``arrays-short``: the same, fewer columns (the README);
- ``units``: docs/timing.csv's rows (nextpnr seed 1), as ``synth.timing`` prints them.
"""

from __future__ import annotations

import csv
import re
import statistics
from pathlib import Path

from golden.tools.cli import Parser, build_dir, check_output, command, write_text
from hdl.array_timing import FLOORPLAN, FLOW
from hdl.designs import CURRENT

from .stale import ARRAY_CONFIG, array_status, timing_status
from .timing import ROOT, csv_rows, markdown

__all__ = ["PAGES", "tables", "render", "main"]

#: The pages that hold generated tables.
PAGES = ("README.md", "docs/mxu-pnr.md", "docs/timing.md")
_BLOCK = re.compile(r"(<!-- table: ([\w-]+) \(python -m synth\.tables\) -->\n)(.*?)(<!-- end table -->)", re.S)


def _current_arrays(docs: Path) -> list[list[dict]]:
    """The shipped flow's current array rows, one list per configuration, largest first."""
    groups: dict[tuple, list[dict]] = {}
    for row in csv.DictReader((docs / "mxu-pnr.csv").open()):
        shipped = row["floorplan"] == FLOORPLAN.get(row["arch"]) and all(row[k] == v for k, v in FLOW.items())
        if shipped and array_status(row) == CURRENT:
            groups.setdefault(tuple(row[k] for k in ARRAY_CONFIG), []).append(row)
    return sorted(groups.values(), key=lambda g: (g[0]["arch"], -int(g[0]["rows"]) * int(g[0]["cols"]),
                                                  g[0]["accumulation"], g[0]["mul_stages"], g[0]["add_stages"]))


def _label(row: dict) -> str:
    flags = [f"--mul-dsp {row['mul_dsp']}" if row["mul_dsp"] != "inferred" else "",
             f"--fifo-ram {row['fifo_ram']}" if row["fifo_ram"] != "block" else "",
             "--no-fused-pe" if row["pe"] != "fused" else ""]
    return (f"{row['rows']}x{row['cols']} `{row['accumulation']}`, `m{row['mul_stages']}a{row['add_stages']}`"
            + "".join(f", `{f}`" for f in flags if f))


def _figures(group: list[dict]) -> dict:
    """A configuration's figures over its seeds (None where it does not fit)."""
    fitted = [r for r in group if r["fits"] == "True"]
    if not fitted:
        return {}
    mhz = [float(r["fmax_mhz"]) for r in fitted]
    median = statistics.median(mhz)
    spread = f" ({min(mhz):.1f}-{max(mhz):.1f})" if len(mhz) > 1 else ""
    lut = statistics.median_low(int(r["lut"]) for r in fitted)
    util = statistics.median_low(float(r["util_pct"]) for r in fitted)
    return {"seeds": ", ".join(sorted((r["seed"] for r in fitted), key=int)), "fmax": f"**{median:.1f}**{spread}",
            "gmac": f"{int(fitted[0]['rows']) * int(fitted[0]['cols']) * median / 1000:.1f}",
            "lut": f"{lut:,} ({util:.0f} %)", "ff": f"{statistics.median_low(int(r['ff']) for r in fitted):,}",
            "dsp": fitted[0]["dsp"], "latency": fitted[0]["latency"]}


def _arrays(docs: Path, short: bool) -> str:
    head = (["array", "Fmax MHz", "GMAC/s", "LUT4", "FF", "MULT18X18D"] if short else
            ["part", "array", "seeds", "Fmax MHz", "GMAC/s", "LUT4", "FF", "MULT18X18D", "latency"])
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for group in _current_arrays(docs):
        f = _figures(group)
        cells = ([f["fmax"], f["gmac"], f["lut"], f["ff"], f["dsp"]] if f else
                 ["does not fit: " + group[0]["note"], "", "", "", ""])
        if short:
            out.append("| " + " | ".join([_label(group[0]), *cells]) + " |")
        else:
            out.append("| " + " | ".join([group[0]["arch"], _label(group[0]), f.get("seeds", ""), *cells,
                                          f.get("latency", "")]) + " |")
    return "\n".join(out) + "\n"


def tables(docs: Path) -> dict[str, str]:
    """Every table's text, by name, from the CSVs in ``docs``."""
    units = [r for r in csv_rows(docs / "timing.csv")
             if timing_status({**r, "stages": _stages(r["stages"])}) == CURRENT]
    for r in units:
        r.update(lut=int(r["lut"]), ff=int(r["ff"]))
    return {"arrays": _arrays(docs, short=False), "arrays-short": _arrays(docs, short=True),
            "units": markdown(units) + "\n"}


def _stages(stages) -> str:
    return "m{}a{}".format(*stages) if isinstance(stages, list) else str(stages)


def render(text: str, generated: dict[str, str], page: str) -> str:
    """``text`` with each table block replaced by its generated table."""
    def block(match):
        if match.group(2) not in generated:
            raise ValueError(f"{page}: no table named {match.group(2)!r} ({', '.join(generated)})")
        return match.group(1) + generated[match.group(2)] + match.group(4)
    return _BLOCK.sub(block, text)


@command("python -m synth.tables")
def main(argv=None) -> int:
    parser = Parser(prog="python -m synth.tables", description=__doc__.split("\n\n")[0])
    out = build_dir("tables")
    parser.add_argument("--out", type=Path, default=out, help=f"folder the tables are written to, one NAME.md "
                        f"each (default {out})")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--publish", action="store_true", help="rewrite the pages' tables (README.md, docs/)")
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page's table differs")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository whose pages and docs/ CSVs to use")
    args = parser.parse_args(argv)
    if not (args.root / "docs" / "mxu-pnr.csv").exists():
        parser.error(f"--root {args.root}: no docs/mxu-pnr.csv there")
    if not (args.check or args.publish):
        check_output(args.out, "--out", folder=True)
    generated = tables(args.root / "docs")
    differ = {}
    for page in PAGES:
        old = (args.root / page).read_text()
        new = render(old, generated, page)
        if new != old:
            differ[page] = new
    if args.publish:
        for page, new in differ.items():
            write_text(args.root / page, new)
        print(f"rewrote {', '.join(differ)}" if differ else "every table was already its CSV's")
        return 0
    if not args.check:
        for name, text in generated.items():
            write_text(args.out / f"{name}.md", text)
        print(f"wrote {len(generated)} tables into {args.out}")
    print("every table is its CSV's" if not differ else f"tables differ from the CSVs in {', '.join(differ)} "
          "(python -m synth.tables --publish rewrites them)")
    return 1 if args.check and differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
