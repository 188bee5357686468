"""The sweep's report: power-law and overhead fits, the bf16 ratio claims, the CSV, the
Markdown tables and the plots."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from golden.formats import NAMED_FORMATS
from golden.tools.cli import csv_text, merge_csv, merged_rows, save_figure, write_text

from .configs import SERIES

__all__ = ["COLUMNS", "fit_power_law", "fit_overhead", "claims", "fits", "fit_lines", "write_csv", "typed",
           "mantissa_table", "units_table", "markdown", "plot"]


def fit_power_law(ms, areas) -> tuple[float, float]:
    """``area ~ c * m^k`` by least squares in log-log: ``(k, c)``."""
    k, log_c = np.polyfit(np.log(np.asarray(ms, float)), np.log(np.asarray(areas, float)), 1)
    return float(k), float(math.exp(log_c))


def fit_overhead(ms, overheads) -> tuple[float, float]:
    """``overhead ~ a + b * m`` by least squares: ``(a, b)``. The floating-point overhead over
    the bare product (exponents, specials: fixed; normalisation, rounding: grow with m)."""
    b, a = np.polyfit(np.asarray(ms, float), np.asarray(overheads, float), 1)
    return float(a), float(b)


def _area(row):
    return row.get("sky130_um2")


def claims(rows) -> list[str]:
    """bf16 against fp16 and fp32 (same-format RNE multipliers and bare significand products)."""
    mul = {r["label"]: r for r in rows if r["kind"] == "mul_rne"}
    bare = {r["man"]: r for r in rows if r["kind"] == "bare"}
    lines = []
    for other, claim, value in (("fp16", "1/2", 0.5), ("fp32", "1/8", 0.125)):
        if "bf16" in mul and other in mul:
            a, b = mul["bf16"], mul[other]
            lines.append(f"bf16/{other} multiplier: sky130 area {_area(a) / _area(b):.3f}, transistors "
                         f"{a['transistors'] / b['transistors']:.3f}, iCE40 LUT4 {a['ice40_lut4'] / b['ice40_lut4']:.3f}"
                         f" (claim: {claim} = {value:.3f})")
        m_other = NAMED_FORMATS[other].man_bits
        if 7 in bare and m_other in bare:
            lines.append(f"bf16/{other} bare significand multiplier (8x8 / {m_other + 1}x{m_other + 1}): sky130 area "
                         f"{_area(bare[7]) / _area(bare[m_other]):.3f} (ideal ((m+1)^2 ratio) "
                         f"{64 / (m_other + 1) ** 2:.3f})")
    return lines


def _series(rows, kind):
    pts = sorted((r["man"], _area(r)) for r in rows if r["kind"] == kind and _area(r))
    return [p[0] for p in pts], [p[1] for p in pts]


def fits(rows) -> dict:
    out = {}
    for kind in SERIES:
        ms, areas = _series(rows, kind)
        if len(ms) >= 3:
            out[kind] = fit_power_law(ms, areas)
    return out


def fit_lines(rows, fitted) -> list[str]:
    """Both fits of each series, as the report and the console print them."""
    bare = dict(zip(*_series(rows, "bare")))
    lines = []
    for kind, (k, _) in fitted.items():
        ms, areas = _series(rows, kind)
        line = f"{SERIES[kind]} (m = {min(ms)}..{max(ms)}): area ~ m^k with k = {k:.2f}"
        over = [(m, area - bare[m]) for m, area in zip(ms, areas) if m in bare]
        if kind != "bare" and len(over) >= 3:
            a, b = fit_overhead(*zip(*over))
            line += (f"; area - bare ~ a + b m with a = {a:,.0f} um^2, b = {b:.1f} um^2 per mantissa bit "
                     f"({min(o for _, o in over):,.0f}..{max(o for _, o in over):,.0f} um^2 measured)")
        lines.append(line)
    return lines


COLUMNS = ["group", "kind", "label", "exp", "man", "module", "gates", "transistors", "sky130_um2", "sky130_cells",
           "sky130_ffs", "ice40_lut4", "ice40_carry", "ice40_ff", "ice40_dsp", "ecp5_lut4", "ecp5_ccu2c", "ecp5_ff",
           "ecp5_dsp", "ecp5_nodsp_lut4", "ecp5_nodsp_ccu2c", "ecp5_nodsp_ff", "ice40_fmax_mhz", "ice40_pnr_cells",
           "ice40_util_pct", "ecp5_fmax_mhz", "ecp5_pnr_cells", "ecp5_util_pct", "seconds", "design", "tools"]
#: The columns that hold text; the others hold numbers.
TEXT = ("group", "kind", "label", "module", "design", "tools")


#: What identifies a row of synth.csv: a rerun replaces its own rows only.
KEY = ("group", "kind", "module")


def write_csv(rows, path: Path, merge: bool = False):
    """``rows`` as the CSV at ``path``; with ``merge``, into the rows already there by ``KEY``
    (new keys appended, the others kept in their order)."""
    key = lambda r: tuple(str(r.get(k) or "") for k in KEY)      # noqa: E731
    if merge:
        merge_csv(path, rows, COLUMNS, key)
    else:
        write_text(path, csv_text(merged_rows([], rows, key), COLUMNS))


def typed(row: dict) -> dict:
    """A synth.csv row as the sweep's rows hold it: numbers as numbers, empty cells left out."""
    def value(k, v):
        if k in TEXT:
            return v
        return float(v) if any(c in v for c in ".eE") else int(v)
    return {k: value(k, v) for k, v in row.items() if v not in ("", None)}


def _cell(value):
    if value is None or value == "":
        return "-"
    return f"{value:,.0f}" if isinstance(value, float) else str(value)


def markdown(rows, fitted, claim_lines) -> str:
    out = []
    if any(r["group"] == "a" for r in rows):
        out += ["### Multiplier area against mantissa width (sky130 um^2; iCE40 LUT4 in brackets)", "",
                *mantissa_table(rows), ""]
    if fitted:
        out += ["Fits to the sky130 area (power law; floating-point overhead over the bare product, linear in m):",
                ""]
        out += [f"- {line}" for line in fit_lines(rows, fitted)]
        out.append("")
    named = [r for r in rows if r["group"] in ("b", "c")]
    if named:
        out += ["### Named formats and other units", "", *units_table(named), ""]
    out += _mxu_table(rows)
    if claim_lines:
        out += ["### The claims", ""] + [f"- {line}" for line in claim_lines] + [""]
    return "\n".join(out)


def mantissa_table(rows) -> list[str]:
    """The table of the mantissa-width sweep's (group a) rows, one line per width: each
    series' sky130 area (iCE40 LUT4), RNE e8 over the bare product and, where placed and
    routed, Fmax."""
    by_man = {}
    for r in rows:
        if r["group"] == "a":
            by_man.setdefault(r["man"], {})[r["kind"]] = r
    fmax = any("ice40_fmax_mhz" in r for d in by_man.values() for r in d.values())
    out = ["| m | bare (m+1)^2 | RNE e8 | RNE e5 | exact e8 | RNE e8 / bare |"
           + (" Fmax MHz iCE40 / ECP5: bare; RNE e8 |" if fmax else ""),
           "|---|---|---|---|---|---|" + ("---|" if fmax else "")]
    for m in sorted(by_man):
        d = by_man[m]
        cells = [f"{_cell(_area(d[k]))} ({d[k].get('ice40_lut4', '-')})" if k in d else "-"
                 for k in ("bare", "mul_rne_e8", "mul_rne_e5", "mul_exact_e8")]
        ratio = f"{_area(d['mul_rne_e8']) / _area(d['bare']):.2f}" if "mul_rne_e8" in d and "bare" in d else "-"
        if fmax:
            ratio += " | " + "; ".join(f"{d[k].get('ice40_fmax_mhz', '-')} / {d[k].get('ecp5_fmax_mhz', '-')}"
                                       if k in d else "-" for k in ("bare", "mul_rne_e8"))
        out.append(f"| {m} | " + " | ".join(cells) + f" | {ratio} |")
    return out


def units_table(rows) -> list[str]:
    """The table of named formats and other units: one line per row, in order."""
    out = ["| configuration | module | gates | transistors | sky130 um^2 | iCE40 LUT4 / carry / FF | "
           "ECP5 LUT4 / carry / DSP | ECP5 no DSP: LUT4 / carry | Fmax MHz iCE40 / ECP5 |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        label = r["label"] if r["kind"] != "mul_exact" else f"{r['label']} (exact)"
        if r["kind"] == "mul_rne":
            label = f"{r['label']} x {r['label']} -> {r['label']} (RNE)"
        out.append(
            f"| {label} | `{r['module']}` | {_cell(r.get('gates'))} | {_cell(r.get('transistors'))} | "
            f"{_cell(_area(r))} | {r.get('ice40_lut4', '-')} / {r.get('ice40_carry', '-')} / {r.get('ice40_ff', '-')} | "
            f"{r.get('ecp5_lut4', '-')} / {r.get('ecp5_ccu2c', '-')} / {r.get('ecp5_dsp', '-')} | "
            f"{r.get('ecp5_nodsp_lut4', '-')} / {r.get('ecp5_nodsp_ccu2c', '-')} | "
            f"{r.get('ice40_fmax_mhz', '-')} / {r.get('ecp5_fmax_mhz', '-')} |")
    return out


def _mxu_table(rows) -> list[str]:
    """MXU sizes against the standalone PE of the same pipelining: what the array adds."""
    pe = {(r["params"]["mul_stages"], r["params"]["add_stages"]): r for r in rows if r["kind"] == "pe"}
    mxu = sorted((r for r in rows if r["kind"] == "mxu"),
                 key=lambda r: (r["params"]["mul_stages"], r["params"]["rows"] * r["params"]["cols"]))
    if not mxu:
        return []
    out = ["### MXU size against one processing element", "",
           "| array | sky130 um^2 | per PE | per PE / one PE | gates | iCE40 LUT4 / FF | "
           "ECP5 LUT4 / DSP | ECP5 no DSP: LUT4 |", "|---|---|---|---|---|---|---|---|"]
    for r in mxu:
        p = r["params"]
        n = p["rows"] * p["cols"]
        one = pe.get((p["mul_stages"], p["add_stages"]))
        per_pe = _area(r) / n
        ratio = f"{per_pe / _area(one):.2f}" if one else "-"
        out.append(f"| {r['label']} | {_cell(_area(r))} | {_cell(per_pe)} | {ratio} | {_cell(r.get('gates'))} | "
                   f"{r.get('ice40_lut4', '-')} / {r.get('ice40_ff', '-')} | {r.get('ecp5_lut4', '-')} / "
                   f"{r.get('ecp5_dsp', '-')} | {r.get('ecp5_nodsp_lut4', '-')} |")
    return out + [""]


def plot(rows, fitted, out_dir: Path) -> list[Path]:
    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    fig, ax = plt.subplots(figsize=(7, 5))
    for kind, label in SERIES.items():
        ms, areas = _series(rows, kind)
        if not ms:
            continue
        line, = ax.plot(ms, areas, "o", label=label if kind not in fitted else f"{label}: k = {fitted[kind][0]:.2f}")
        if kind in fitted:
            k, c = fitted[kind]
            grid = np.linspace(min(ms), max(ms), 50)
            ax.plot(grid, c * grid ** k, "-", color=line.get_color(), alpha=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks([2, 3, 4, 6, 8, 12, 16, 23], labels=["2", "3", "4", "6", "8", "12", "16", "23"])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel("mantissa bits m")
    ax.set_ylabel("sky130 cell area (um^2)")
    ax.set_title("Multiplier area against mantissa width, fitted area ~ m^k")
    if ax.lines:
        ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    path = out_dir / "area_vs_mantissa.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)

    bare = dict(zip(*_series(rows, "bare")))
    fig, ax = plt.subplots(figsize=(7, 4))
    for kind in ("mul_rne_e8", "mul_rne_e5", "mul_exact_e8"):
        ms, areas = _series(rows, kind)
        pts = [(m, a / bare[m]) for m, a in zip(ms, areas) if m in bare]
        if pts:
            ax.plot(*zip(*pts), "o-", label=SERIES[kind])
    if ax.lines:
        ax.axhline(1, color="grey", lw=0.8)
        ax.set_xlabel("mantissa bits m")
        ax.set_ylabel("area / bare significand multiplier")
        ax.set_title("Floating-point overhead over the bare significand product")
        ax.legend(fontsize=8)
        ax.grid(True, alpha=0.3)
        path = out_dir / "fp_overhead.png"
        fig.tight_layout()
        save_figure(fig, path)
        written.append(path)
    plt.close(fig)
    return written
