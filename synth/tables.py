"""The pages' result tables, generated from the CSVs: ``python -m synth.tables``.

A table sits in its page between ``<!-- table: NAME (python -m synth.tables) -->`` and
``<!-- end table -->``. This command generates every table from docs/mxu-pnr.csv,
docs/timing.csv and docs/synth.csv, current rows only (``hdl.designs``: a row of a design
the generator no longer emits is history and is not shown), writes them under build/tables/
and names the pages that differ; ``--publish`` rewrites those blocks in the pages,
``--check`` writes nothing and exits 1 where a page differs (a test checks the same). Tables:

- ``arrays``: the arrays placed in the shipped flow, per configuration: the median over
  seeds (min-max), GMAC/s at the median, LUT4 and FF (medians), multipliers, latency;
- ``arrays-short``: the same, fewer columns (the README);
- ``units``: docs/timing.csv's rows (nextpnr seed 1), as ``synth.timing`` prints them;
- ``area-widths``, ``area-units``: docs/synth.csv's rows as ``synth.sweep`` reports them
  (``AREA_WIDTHS``, ``AREA_UNITS``); ``area-elements``: its processing elements
  (``AREA_ELEMENTS``); ``area-fp8``: the fp8 multipliers and element beside bf16's, docs/fp8.md
  (``AREA_FP8``); ``throughput``: docs/mxu-bench.csv's rows (``sim.compiled.mxu_bench``) at
  ``THROUGHPUT_M`` rows, docs/results.md. Where no row is current, a block says so in one line.
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from golden.tools.cli import Parser, build_dir, check_output, command, read_csv, write_text
from hdl.array_timing import FLOORPLAN, FLOW
from hdl.designs import CURRENT, status
from hdl.target import mxu_identity

from . import ROOT
from .stale import ARRAY_CONFIG, array_status, sweep_status, timing_status
from .sweep.report import mantissa_table, typed, units_table
from .timing.report import csv_rows, fastest, markdown, stages_text

__all__ = ["PAGES", "AREA_WIDTHS", "AREA_UNITS", "AREA_ELEMENTS", "AREA_FP8", "THROUGHPUT_M", "NO_CURRENT",
           "NO_CURRENT_ARRAY", "NO_CURRENT_BENCH", "tables", "render", "main"]

#: The pages that hold generated tables.
PAGES = ("README.md", "docs/area.md", "docs/fp8.md", "docs/mxu-pnr.md", "docs/timing.md", "docs/results.md")
#: docs/area.md's rows of docs/synth.csv: the mantissa widths; the named formats' and other
#: units' modules, in order; the processing elements' modules with their labels.
AREA_WIDTHS = (2, 7, 10, 23)
AREA_UNITS = ("fpmul_bf16_bf16_rne_s0", "fpmul_bf16_fp32_rne_s0", "fpmul_fp16_fp16_rne_s0", "fpmul_fp32_fp32_rne_s0",
              "fpadd_fp32_rne_s0", "mxu_pe_bf16_fp32_m0a0", "mxu_8x8_bf16_fp32_m0a0", "mxu_8x8_bf16_fp32_m1a1")
AREA_ELEMENTS = {"mxu_pe_bf16_fp32_m0a0": "generic fp32 `m0a0`",
                 "mxu_pe_bf16_fp32_m0a0_fused": "fused fp32 `m0a0` (the default)",
                 "mxu_pe_bf16_fp32_m0a0_colw24_t16": "column, W=24 `m0a0`",
                 "mxu_pe_bf16_fp32_m0a0_colw24b_t16": "column, W=24, bound anchor `m0a0`",
                 "colround_bf16_fp32_colw24_t16_s0": "the column rounder, W=24 (one per column)"}
#: docs/fp8.md's rows of docs/synth.csv: the fp8 multipliers and elements beside bf16's.
AREA_FP8 = {"fpmul_fp8_e4m3fn_fp8_e4m3fn_rne_s0": "fp8_e4m3fn x fp8_e4m3fn -> fp8_e4m3fn (RNE)",
            "fpmul_fp8_e4m3fn_fp32_rne_s0": "fp8_e4m3fn x fp8_e4m3fn -> fp32 (exact)",
            "fpmul_fp8_e5m2_fp8_e5m2_rne_s0": "fp8_e5m2 x fp8_e5m2 -> fp8_e5m2 (RNE)",
            "fpmul_fp8_e5m2_fp32_rne_s0": "fp8_e5m2 x fp8_e5m2 -> fp32 (exact)",
            "fpmul_fp8_e4m3_fp8_e4m3_rne_s0": "fp8_e4m3 (IEEE-like) -> fp8_e4m3 (RNE), for comparison",
            "fpmul_bf16_fp32_rne_s0": "bf16 x bf16 -> fp32 (exact), for comparison",
            "mxu_pe_fp8_e4m3fn_fp32_m0a0_fused": "MXU PE, fp8_e4m3fn inputs, fp32 accumulation, `m0a0`",
            "mxu_pe_bf16_fp32_m0a0_fused": "MXU PE, bf16 inputs, fp32 accumulation, `m0a0`"}
#: docs/results.md's throughput rows: these numbers of rows per run.
THROUGHPUT_M = (1, 64, 4096)
#: A throughput block without a current row.
NO_CURRENT_BENCH = "no current measurement: `python -m sim.compiled.mxu_bench --csv docs/mxu-bench.csv`\n"
#: An area block without a current row.
NO_CURRENT = "no current measurement: `python -m synth.stale --tables synth --remeasure`\n"
#: An array table without a current row.
NO_CURRENT_ARRAY = "no current measurement: `python -m synth.stale --tables mxu-pnr` names the commands\n"
_BLOCK = re.compile(r"(<!-- table: ([\w-]+) \(python -m synth\.tables\) -->\n)(.*?)(<!-- end table -->)", re.S)


def _current_arrays(docs: Path) -> list[list[dict]]:
    """The shipped flow's current array rows, one list per configuration, largest first."""
    groups: dict[tuple, list[dict]] = {}
    for row in read_csv(docs / "mxu-pnr.csv"):
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
    groups = _current_arrays(docs)
    if not groups:
        return NO_CURRENT_ARRAY
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for group in groups:
        f = _figures(group)
        cells = ([f["fmax"], f["gmac"], f["lut"], f["ff"], f["dsp"]] if f else
                 ["does not fit: " + group[0]["note"], "", "", "", ""])
        if short:
            out.append("| " + " | ".join([_label(group[0]), *cells]) + " |")
        else:
            out.append("| " + " | ".join([group[0]["arch"], _label(group[0]), f.get("seeds", ""), *cells,
                                          f.get("latency", "")]) + " |")
    return "\n".join(out) + "\n"


def _number(row: dict, key: str, form: str) -> str:
    return format(row[key], form) if key in row else "-"


def _elements(rows: list[dict]) -> list[str]:
    out = ["| processing element | module | gates | transistors | sky130 um^2 | ECP5 LUT4 / CCU2C / FF | "
           "ECP5 Fmax MHz |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {AREA_ELEMENTS[r['module']]} | `{r['module']}` | {_number(r, 'gates', 'd')} | "
                   f"{_number(r, 'transistors', ',')} | {_number(r, 'sky130_um2', ',.0f')} | "
                   + " / ".join(_number(r, k, "d") for k in ("ecp5_lut4", "ecp5_ccu2c", "ecp5_ff"))
                   + f" | {_number(r, 'ecp5_fmax_mhz', '.1f')} |")
    return out


def _fp8(rows: list[dict]) -> list[str]:
    out = ["| design | transistors | sky130 um^2 | iCE40 LUT4 | ECP5 LUT4 (+ MULT18X18D) |", "|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {AREA_FP8[r['module']]} | {_number(r, 'transistors', ',')} | {_number(r, 'sky130_um2', ',.0f')} | "
                   f"{_number(r, 'ice40_lut4', ',')} | {_number(r, 'ecp5_lut4', ',')} (+{_number(r, 'ecp5_dsp', 'd')}) |")
    return out


def _area(docs: Path) -> dict[str, str]:
    """docs/area.md's tables from ``docs``'s synth.csv, current rows only."""
    shown = {*AREA_UNITS, *AREA_ELEMENTS, *AREA_FP8}
    # Only the rows a table can show have their designs generated (a second each).
    rows = [typed(r) for r in read_csv(docs / "synth.csv")
            if (r["module"] in shown if r["group"] in ("b", "c") else r["group"] == "a" and int(r["man"]) in AREA_WIDTHS)
            and sweep_status(r) == CURRENT]
    named = {r["module"]: r for r in rows if r["group"] in ("b", "c")}
    widths = [r for r in rows if r["group"] == "a"]
    units = [named[m] for m in AREA_UNITS if m in named]
    elements = [named[m] for m in AREA_ELEMENTS if m in named]
    fp8 = [named[m] for m in AREA_FP8 if m in named]
    return {"area-widths": _block(widths and mantissa_table(widths)),
            "area-units": _block(units and units_table(units)),
            "area-elements": _block(elements and _elements(elements)), "area-fp8": _block(fp8 and _fp8(fp8))}


def _throughput(docs: Path) -> str:
    """docs/results.md's table: docs/mxu-bench.csv's current rows at ``THROUGHPUT_M`` rows."""
    rows = [r for r in read_csv(docs / "mxu-bench.csv") if int(r["M"]) in THROUGHPUT_M]
    rows = [r for r in rows if status(r["design"], lambda r=r: mxu_identity(
        {k: int(r[k]) for k in ("rows", "cols", "mul_stages", "add_stages")})) == CURRENT]
    if not rows:
        return NO_CURRENT_BENCH
    out = ["| array | M | cycles | MAC/cycle | utilisation | latency measured | formula | cycles/s |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['array']} | {r['M']} | {r['cycles']} | {float(r['macs_per_cycle']):.2f} | "
                   f"{float(r['utilisation']):.3f} | {r['latency']} | {r['latency_formula']} | "
                   f"{int(r['cycles_per_s']):,} |")
    return "\n".join(out) + "\n"


def _block(lines: list) -> str:
    """A table's lines as a block's text, ``NO_CURRENT`` for none."""
    return "\n".join(lines) + "\n" if lines else NO_CURRENT


def tables(docs: Path, unit_status=timing_status) -> dict[str, str]:
    """Every table's text, by name, from the CSVs in ``docs``; ``unit_status(row)`` gives a
    docs/timing.csv row's status (``synth.stale.timing_status``, generating each row's design)."""
    units = [r for r in csv_rows(docs / "timing.csv")
             if unit_status({**r, "stages": stages_text(r["stages"])}) == CURRENT]
    for r in units:
        r.update(lut=int(r["lut"]), ff=int(r["ff"]))
    return {"arrays": _arrays(docs, short=False), "arrays-short": _arrays(docs, short=True),
            "units": markdown(fastest(units)) + "\n", "throughput": _throughput(docs), **_area(docs)}


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
    missing = [name for name in ("mxu-pnr.csv", "timing.csv", "synth.csv") if not (args.root / "docs" / name).exists()]
    if missing:
        parser.error(f"--root {args.root}: no docs/{missing[0]} there")
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
