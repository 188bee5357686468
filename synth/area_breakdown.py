"""Where the bf16 multipliers' transistors go: ``python -m synth.area_breakdown`` (``--help``).

The sweep's area flow (Yosys ``synth``, ``stat -tech cmos``, stages 0) on the bf16 x bf16 ->
fp32 exact multiplier and the bf16 RNE multiplier, twice: flattened (the unit's figure, as in
``docs/synth.csv``) and with the hierarchy kept, whose modules are the sub-blocks. The shared
rounder is a module of its own; the multiplier's own module holds the significand product,
which is measured alone too (the bare 8x8 multiply), and the rest: operand classification,
exponent add and the normalising mux. Writes a CSV (default ``docs/area-breakdown.csv``; each
row's ``design``: the identity of the Verilog it measured, ``hdl.designs``) and prints the
table beside the area targets.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from golden.tools.cli import Parser, build_dir, check_output, command, write_text

from . import flows


#: Unit -> (label, ``hdl.build``'s ``mul`` options).
UNITS = {
    "mul_exact": ("bf16 x bf16 -> fp32 exact", dict(in_fmt="bf16", out_fmt="fp32")),
    "mul_rne": ("bf16 RNE multiplier", dict(in_fmt="bf16", out_fmt="bf16", rounding="rne")),
}
#: The area targets, transistors: the exact multiplier at most 1.35x the bare 8x8 product,
#: the RNE multiplier at most 3,600.
TARGET_RATIO_EXACT, TARGET_RNE = 1.35, 3600
COLUMNS = ["unit", "block", "transistors", "design"]


def breakdown(work: Path) -> list[dict]:
    """The rows: per unit the product alone, the rest of the multiplier's own module, the
    rounder, their sum, the flattened unit and its target."""
    from hdl.designs import identity
    from hdl.units import to_verilog

    from .significand import SignificandMultiplier

    bare = to_verilog(SignificandMultiplier(width=8), "sigmul_8x8")
    product = flows.transistors(flows.run_stats(bare, "sigmul_8x8", ["generic"], work / "sigmul_8x8")["generic"]["design"])
    rows = []
    for unit in UNITS:
        label, top, verilog = unit_verilog(unit)
        stats = flows.run_stats(verilog, top, ["generic", "generic_hierarchy"], work / top)
        modules = {name.lstrip("\\"): flows.transistors(m) for name, m in stats["generic_hierarchy"]["modules"].items()}
        if set(modules) != {top, f"{top}.rounder"}:
            raise RuntimeError(f"{top}: expected the multiplier and its rounder as modules, got {sorted(modules)}")
        rounder = modules[f"{top}.rounder"]
        own = modules[top] - rounder           # a module's figure includes its submodules'
        whole = flows.transistors(stats["generic"]["design"])
        target = int(TARGET_RATIO_EXACT * product) if unit == "mul_exact" else TARGET_RNE
        rows += [dict(unit=label, block=block, transistors=n,
                      design=identity(bare if block.startswith("significand product") else verilog)) for block, n in [
            ("significand product 8x8 (alone)", product),
            ("classification, exponent add, normalising mux (own module minus the product alone)", own - product),
            ("rounder (range checks, rounding, special-case output)", rounder),
            ("sum of the sub-blocks (hierarchy kept)", modules[top]),
            ("whole unit (flattened: the unit's figure)", whole),
            ("target", target),
            ("left beside the product within the target", target - product),
        ]]
    return rows


def unit_verilog(unit: str) -> tuple[str, str, str]:
    """``UNITS[unit]``'s label, module name and the Verilog the breakdown (and the sweep)
    synthesises."""
    from hdl.units import UNITS as BUILD
    from hdl.units import module_name, to_verilog

    label, options = UNITS[unit]
    # The sweep's module name: Yosys's result depends (slightly) on the names it reads.
    component, _ = BUILD["mul"].build(**options)
    top = module_name(BUILD["mul"], component)
    return label, top, to_verilog(component, top)


def to_csv(rows) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def markdown(rows) -> str:
    units = list(dict.fromkeys(r["unit"] for r in rows))
    blocks = list(dict.fromkeys(r["block"] for r in rows))
    value = {(r["unit"], r["block"]): r["transistors"] for r in rows}
    lines = [f"| sub-block | {' | '.join(units)} |", "|---" * (len(units) + 1) + "|"]
    lines += [f"| {b} | {' | '.join(f'{value[u, b]:,}' for u in units)} |" for b in blocks]
    return "\n".join(lines)


@command("python -m synth.area_breakdown")
def main(argv=None) -> int:
    parser = Parser(prog="python -m synth.area_breakdown", description=__doc__.split("\n\n")[0])
    out = build_dir("results", "area-breakdown.csv")
    parser.add_argument("--out", type=Path, default=out,
                        help=f"CSV to write (default {out}; --out docs/area-breakdown.csv publishes)")
    args = parser.parse_args(argv)
    check_output(args.out, "--out")
    rows = breakdown(build_dir("area-breakdown"))
    write_text(args.out, to_csv(rows))
    print(markdown(rows))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
