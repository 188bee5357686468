"""Fmax against pipeline depth on real parts: ``python -m synth.timing`` (``--help``).

Places and routes (nextpnr, seed ``pnr.SEED``) the bare registered 8x8 significand multiply
and, at increasing ``stages``, the bf16 exact and RNE multipliers, the fp32 adder, the fp32 ->
bf16 SR unit and the MXU processing element, each in ``pnr.FmaxHarness`` (on iCE40 also the
fp32 adder's 28-bit significand add/subtract alone, the fabric's reference). One run at a time
(``--lock`` takes a file lock around each); every result is cached under ``--cache`` as it
comes, and ``docs/timing.csv`` / ``docs/timing-fmax-vs-stages.png`` are rewritten after each.
``--fit`` refits the delay model from the runs, ``--fit-only`` from docs/timing.csv: the model
goes to ``--model-out`` (under build/; ``--model-out hdl/timing_model.json`` publishes it).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from golden.tools.cli import (Parser, build_dir, check_output, command, csv_text, merge_csv, merged_rows, progress,
                              read_csv, write_text)
from hdl import timing
from hdl.target import TIMING_TERMS, unit_identity
from hdl.toolchain import tool_versions

ROOT = Path(__file__).resolve().parent.parent

#: (kind, label, stages per architecture) in the order they run: the bare multiply first
#: (the reference), then each unit's deepest useful pipelines, then the shallower ones.
UNITS = {
    "bare": ("bare 8x8 multiply", None),
    "bare_dsp": ("bare 8x8 multiply, SB_MAC16", None),
    "mul_exact": ("bf16 x bf16 -> fp32 exact", ("mul", dict(in_fmt="bf16", out_fmt="fp32"))),
    "mul_rne": ("bf16 RNE multiplier", ("mul", dict(in_fmt="bf16", out_fmt="bf16", rounding="rne"))),
    "add": ("fp32 adder", ("add", dict(fmt="fp32", rounding="rne"))),
    "sr": ("SR fp32 -> bf16", ("rounder", dict(in_fmt="fp32", out_fmt="bf16", rounding="sr"))),
    "pe": ("MXU PE", None),
    "pe_fused": ("MXU PE, fused", None),
    "pe_fused_nosr": ("MXU PE, fused, no inferred sync resets", None),
    "pe_dsp": ("MXU PE, SB_MAC16", None),
    "fabric_add": ("28-bit add/subtract alone", None),
    **{f"pe_colw{w}": (f"MXU PE, column accumulator, W={w}", None) for w in (16, 20, 24, 26, 28, 32)},
    **{f"pe_colw{w}b": (f"MXU PE, column accumulator, W={w}, bound anchor", None) for w in (24, 26, 28, 30, 32)},
    **{f"colround_w{w}": (f"column rounder, W={w}", None) for w in (24, 26, 28)},
    **{f"pe_colw{w}b_regdsp": (f"MXU PE, column accumulator, W={w}, bound anchor, MULT18X18D registers", None)
       for w in (26, 28)},
    "pe_colw30sx_regdsp": ("MXU PE, column accumulator, W=30, sticky, exact anchor, MULT18X18D registers", None),
}
#: Rows the column-accumulator designs are measured for (the window's headroom: 5 bits).
COLUMN_TERMS = TIMING_TERMS
#: Width of the ``fabric_add`` reference: the fp32 adder's significand sum.
FABRIC_ADD_WIDTH = 28
#: Kinds that are no unit of the library but references on the same part: the bare multiplies
#: (the ratios' denominator) and the adder's significand add/subtract with nothing around it.
REFERENCES = ("bare", "bare_dsp", "fabric_add")
PLAN = {
    "ecp5": [("bare", 0), ("mul_exact", 2), ("mul_rne", 4), ("add", 7), ("sr", 2), ("pe", (4, 7)),
             ("mul_exact", 1), ("add", 9), ("add", 5), ("pe", (6, 9)), ("mul_rne", 3), ("mul_exact", 4),
             ("mul_exact", 0), ("mul_rne", 0), ("add", 0), ("sr", 0), ("pe", (0, 0)),
             ("add", 3), ("sr", 1), ("mul_rne", 2), ("pe", (1, 1)), ("add", 10), ("pe", (6, 10)), ("pe", (9, 9)),
             ("pe_fused", (4, 10)), ("pe_fused", (4, 7)), ("pe_fused", (4, 5)), ("pe_fused", (4, 8)),
             ("pe_fused", (4, 6)), ("pe_fused", (3, 7)), ("pe_fused_nosr", (4, 6)), ("pe_fused_nosr", (4, 5)),
             ("pe_colw24", (4, 4)), ("pe_colw26", (4, 4)), ("pe_colw28", (4, 4)), ("pe_colw32", (4, 4)),
             ("pe_colw16", (4, 4)), ("pe_colw20", (4, 4)), ("pe_colw26", (4, 3)), ("pe_colw26", (4, 5)),
             ("colround_w26", 3), ("colround_w26", 5), ("colround_w24", 5), ("colround_w28", 5),
             ("pe_colw26b", (4, 4)), ("pe_colw28b", (4, 4)), ("pe_colw24b", (4, 4)), ("pe_colw30b", (4, 4)),
             ("pe_colw28b", (4, 3)), ("pe_colw28b", (4, 2)), ("pe_colw26b", (5, 4)), ("pe_colw26b", (6, 4)),
             ("pe_colw26b", (7, 4)), ("pe_colw28b", (6, 4)), ("pe_colw26b", (3, 3)), ("pe_colw26b", (4, 2)),
             ("pe_colw26b_regdsp", (4, 4)), ("pe_colw26b_regdsp", (4, 3)), ("pe_colw28b_regdsp", (4, 4)),
             ("pe_colw30sx_regdsp", (5, 5)), ("pe_colw30sx_regdsp", (5, 3)), ("pe_colw30sx_regdsp", (4, 3))],
    "ice40": [("bare", 0), ("bare_dsp", 0), ("pe", (4, 7)), ("pe_dsp", (4, 7)), ("pe", (6, 9)), ("pe", (0, 0)),
              ("pe_dsp", (6, 9)), ("pe_dsp", (9, 12)), ("pe_dsp", (9, 21)), ("fabric_add", 0)],
}
#: The sources a placed design depends on (not the CLI, the model or the MXU array).
HARDWARE = [*(f"hdl/{n}.py" for n in ("adder", "multiplier", "rounder", "stochastic_rounder", "pipeline", "unit",
                                      "float", "params", "mxu/element", "product", "product_adder", "ecp5_dsp",
                                      "xorshift", "mxu/accumulation/window_adder",
                                      "mxu/accumulation/window_rounder")),
            "golden/formats.py", "golden/column.py", "synth/pnr.py", "synth/significand.py"]
COLUMNS = ["arch", "kind", "label", "module", "stages", "latency", "fmax_mhz", "ratio_to_bare", "predicted_mhz", "lut",
           "ff", "lut_alone", "ff_alone", "dsp", "path_from", "path_to", "path_logic_ns", "path_route_ns", "seed", "design", "tools"]


def component(kind: str, stages, *, plan: bool = False):
    """The design of one run and its module name; with ``plan``, the design's plan instead
    (its segments and latency; ``None`` for a reference, which has none)."""
    from hdl.units import UNITS as BUILD
    from hdl.units import module_name
    from hdl.mxu.element import ElementPlan, ProcessingElement

    from .significand import SignificandAdder, SignificandMultiplier
    if kind.startswith("bare"):
        return None if plan else SignificandMultiplier(width=8), "sigmul_8x8"
    if kind == "fabric_add":
        return None if plan else SignificandAdder(width=FABRIC_ADD_WIDTH), f"sigadd_{FABRIC_ADD_WIDTH}"
    element = ElementPlan if plan else ProcessingElement
    if kind.startswith(("pe_colw", "colround_w")):
        from golden.column import ColumnAccumulator
        from hdl.mxu.accumulation.window_rounder import WindowRounder
        width, sticky, anchor, dsp = re.fullmatch(r".*w(\d+)(s?)([bx]?)(_regdsp)?", kind).groups()
        window = ColumnAccumulator(window=int(width), sticky=bool(sticky),
                                   anchor={"b": "bound", "x": "exact", "": "running"}[anchor])
        if kind.startswith("colround"):
            rounder = WindowRounder.plan if plan else WindowRounder
            return (rounder(accumulation=window, terms=COLUMN_TERMS, stages=stages),
                    f"colround_bf16_fp32_{window.key}_t{COLUMN_TERMS}_s{stages}")
        pe = element(mul_stages=stages[0], add_stages=stages[1], accumulation=window, terms=COLUMN_TERMS,
                     mul_dsp="ecp5" if dsp else "inferred")
        return pe, pe.module_name(COLUMN_TERMS)
    if kind.startswith("pe"):
        pe = element(mul_stages=stages[0], add_stages=stages[1], fused=kind.startswith("pe_fused"))
        # A flow variant's module name differs, so that no lookup by module takes its figure
        # for the default flow's (hdl.build --target-mhz).
        return pe, pe.module_name(COLUMN_TERMS) + "_nosr" * kind.endswith("_nosr")
    unit, params = UNITS[kind][1]
    design, _ = (BUILD[unit].plan if plan else BUILD[unit].build)(**params, stages=stages)
    return design, module_name(BUILD[unit], design)


def harness_ffs(unit, scramble: bool = False) -> int:
    """Flip-flops ``pnr.FmaxHarness`` adds around ``unit`` (input chain, scrambled inputs,
    output registers, XOR tree, reset synchroniser), subtracted from the placed total."""
    from amaranth.hdl import Value
    from amaranth.lib import wiring
    ports = [(m.flow, len(Value.cast(v))) for _, m, v in unit.signature.flatten(unit)]
    ins = sum(width for flow, width in ports if flow == wiring.In)
    outs = sum(width for flow, width in ports if flow == wiring.Out)
    tree, bits = 0, outs
    while bits > 1:
        bits = -(-bits // 4)
        tree += bits
    scrambled = ins if scramble and ins > 1 else 0     # FmaxHarness scrambles two or more bits
    return ins + scrambled + outs + tree + 2            # + the platform's 2-FF reset synchroniser


def size_alone(arch: str, unit, name: str, work: Path) -> dict:
    """On ECP5, ``lut_alone`` and ``ff_alone``: the design as ``synth_ecp5`` maps it on its
    own, its ports as ports (``synth.flows``): no harness whose registers Yosys could merge
    with the design's, nothing packed; a CCU2C counts as two LUTs, as in nextpnr's count.
    Elsewhere nothing (the iCE40 rows' DSP flows differ from ``synth.flows``')."""
    from amaranth.back import verilog

    from .flows import run_flows
    if arch != "ecp5":
        return {}
    figures = run_flows(verilog.convert(unit, name=name), name, ["ecp5_bits"], work)
    return {"lut_alone": figures["ecp5_lut4"] + 2 * figures["ecp5_ccu2c"], "ff_alone": figures["ecp5_ff"]}


@contextmanager
def _locked(path):
    if path is None:
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def run(arch: str, kind: str, stages, cache: Path, lock, seed: int | None = None) -> dict:
    """One place and route (cached by design, seed, source and tool versions). Runs with
    another seed than ``pnr.SEED`` are cached apart: the tables show seed ``pnr.SEED``."""
    from .pnr import SEED, place_and_route
    seed = SEED if seed is None else seed
    _, name = component(kind, stages, plan=True)
    key_text = json.dumps([arch, kind, stages, seed, tool_versions()])
    for path in HARDWARE if kind not in REFERENCES else ["synth/pnr.py", "synth/significand.py"]:
        key_text += (ROOT / path).read_text()
    key = hashlib.sha256(key_text.encode()).hexdigest()[:16]
    tag = "" if seed == SEED else f"seed{seed}_"
    path = cache / f"{arch}_{name}_{kind}_{tag}{key}.json"
    if path.exists():
        return json.loads(path.read_text())
    start = time.perf_counter()
    work = cache / "work" / f"{arch}_{kind}_{name}{'_' + tag[:-1] if tag else ''}"
    alone = size_alone(arch, *component(kind, stages), work / "alone")
    unit, _ = component(kind, stages)
    with _locked(lock):
        figures = place_and_route(unit, arch, work, synth_opts="-dsp" if kind.endswith("_dsp") else "",
                                  details=True, seed=seed, sync_resets=not kind.endswith("_nosr"))
    cells = figures.pop("cells")
    if arch == "ecp5":
        lut, ff, dsp = cells.get("TRELLIS_COMB", 0), cells.get("TRELLIS_FF", 0), cells.get("MULT18X18D", 0)
    else:
        rpt = (work / "top.rpt").read_text()
        lut = cells.get("ICESTORM_LC", 0)
        ff = sum(int(n) for n, cell in _rpt_cells(rpt) if cell.startswith("SB_DFF"))
        dsp = cells.get("ICESTORM_DSP", 0)
    result = {"arch": arch, "kind": kind, "label": UNITS[kind][0], "module": name,
              "stages": list(stages) if isinstance(stages, tuple) else stages,
              "latency": stages[0] + stages[1] + 1 if kind.startswith("pe") else getattr(unit, "latency", 0),
              "fmax_mhz": figures[f"{arch}_fmax_mhz"], "lut": lut, "ff": max(0, ff - harness_ffs(unit)), **alone,
              "dsp": dsp,
              **{k: figures.get(k) for k in ("path_from", "path_to", "path_logic_ns", "path_route_ns")},
              "seed": seed, "design": unit_identity(name, lambda: unit), "tools": tool_versions(),
              "seconds": round(time.perf_counter() - start, 1)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result))
    return result


def _latest(cache: Path, arch: str, kind: str, stages):
    """The newest cached run of a plan entry, or None."""
    _, name = component(kind, stages, plan=True)
    hits = sorted(cache.glob(f"{arch}_{name}_{kind}_" + "?" * 16 + ".json"), key=lambda p: p.stat().st_mtime)
    return json.loads(hits[-1].read_text()) if hits else None


def cached_rows(cache: Path) -> list[dict]:
    """Every plan entry of every architecture with a cached run (the outputs cover what
    several sweeps, one per architecture, have measured)."""
    found = (_latest(cache, arch, kind, stages) for arch in PLAN for kind, stages in PLAN[arch])
    # FF: at least 0 (Yosys drops the harness's registers on constant outputs, e.g. the exact
    # multiplier's flags).
    return [{**r, "latency": r["latency"] or 0, "ff": max(0, r["ff"])} for r in found if r is not None]


def _rpt_cells(rpt: str):
    import re
    return re.findall(r"^\s+(\d+)\s+.*?(SB_\w+)\s*$", rpt, re.M) or \
        [(n, c) for c, n in re.findall(r"^\s+(SB_\w+)\s+(\d+)\s*$", rpt, re.M)]


def _design(kind, stages):
    """The plan of a row's design, for the model's segments."""
    return component(kind, tuple(stages) if isinstance(stages, list) else stages, plan=True)[0]


def finish_rows(rows, model) -> list[dict]:
    """Ratios to the same part's bare multiply (the faster one on iCE40) and predictions."""
    bare = {}
    for r in rows:
        if r["kind"].startswith("bare"):
            bare[r["arch"]] = max(bare.get(r["arch"], 0), r["fmax_mhz"])
    out = []
    for r in rows:
        r = dict(r)
        r["ratio_to_bare"] = round(r["fmax_mhz"] / bare[r["arch"]], 3) if r["arch"] in bare else ""
        if r["kind"] not in REFERENCES:
            r["predicted_mhz"] = round(timing.predict_mhz(_design(r["kind"], r["stages"]), r["arch"], model), 1)
        out.append(r)
    return out


def write_outputs(rows, docs: Path, model: dict) -> list[dict]:
    """``rows`` merged into ``docs``'s timing.csv by part, kind and module (a rerun replaces
    its row, every other stays), ratios and predictions (``finish_rows``) over the merged
    table, the plot redrawn from it; returns the merged rows."""
    path = docs / "timing.csv"
    key = lambda r: (r["arch"], r["kind"], r["module"])       # noqa: E731
    old = {key(r): r for r in (csv_rows(path) if path.exists() else [])}

    def recorded(r):
        before = old.get(key(r), {})
        if not r.get("design") and before.get("fmax_mhz") == r["fmax_mhz"]:
            return {**r, "design": before.get("design", "")}     # a run cached before identities: the same one
        return r
    rows = sorted(finish_rows(merged_rows(old.values(), map(recorded, rows), key), model),
                  key=lambda r: (r["arch"], list(UNITS).index(r["kind"]), str(r["stages"])))
    write_text(path, csv_text(({**r, "stages": "m{}a{}".format(*r["stages"]) if isinstance(r["stages"], list)
                                else r["stages"]} for r in rows), COLUMNS))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    arches = sorted({r["arch"] for r in rows})
    fig, axes = plt.subplots(1, len(arches), figsize=(6.5 * len(arches), 4.5), squeeze=False)
    for ax, arch in zip(axes[0], arches):
        for kind in UNITS:
            pts = sorted((r["latency"], r["fmax_mhz"]) for r in rows if r["arch"] == arch and r["kind"] == kind)
            if not pts:
                continue
            if kind in REFERENCES:
                ax.axhline(pts[0][1], ls=":" if kind == "fabric_add" else "--",
                           color="grey" if kind == "bare" else "black", lw=1,
                           label=f"{UNITS[kind][0]}: {pts[0][1]:.0f} MHz")
                continue
            ax.plot(*zip(*pts), "o-", label=UNITS[kind][0])
        ax.set_xlabel("latency (register stages)")
        ax.set_ylabel("Fmax (MHz, nextpnr)")
        ax.set_title({"ecp5": "LFE5U-85F-6 (ULX3S 85F)", "ice40": "iCE40UP5K (iCEBreaker)"}[arch])
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(docs / "timing-fmax-vs-stages.png", dpi=110)
    plt.close(fig)
    return rows


def _seeds(parser, text):
    if text is None:
        return []
    try:
        seeds = sorted({int(s) for s in text.split(",")})
    except ValueError:
        parser.error(f"--seeds {text}: give integers, e.g. 1,2,3")
    if not all(0 <= s < 2 ** 31 for s in seeds):
        parser.error(f"--seeds {text}: each in 0..2147483647")
    return seeds


SEED_COLUMNS = ["arch", "module", "seed", "fmax_mhz", "lut", "ff", "path_from", "path_to", "design", "tools"]


def write_seeds(runs: list[dict], path: Path) -> str:
    """Merge ``runs`` into the per-seed CSV at ``path`` (a row per part, module and seed: a
    rerun replaces its row, the others stay); return each design's median, min and max."""
    key = lambda r: (r["arch"], r["module"], int(r["seed"]))       # noqa: E731
    merged = merge_csv(path, runs, SEED_COLUMNS, key, order=key)
    lines = ["| part | design | seeds | Fmax median MHz | min | max |", "|---|---|---|---|---|---|"]
    for arch, module in sorted({(r["arch"], r["module"]) for r in runs}):
        fmax = sorted(float(r["fmax_mhz"]) for r in merged if (r["arch"], r["module"]) == (arch, module))
        lines.append(f"| {arch} | {module} | {len(fmax)} | {float(np.median(fmax)):.1f} | {fmax[0]:.1f} | "
                     f"{fmax[-1]:.1f} |")
    return "\n".join(lines)


def markdown(rows) -> str:
    out = ["| part | design | stages | latency | Fmax MHz | x bare | predicted MHz | LUT | FF | LUT alone | FF alone | DSP |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["arch"], list(UNITS).index(r["kind"]), r["latency"] or 0)):
        stages = "m{}a{}".format(*r["stages"]) if isinstance(r["stages"], list) else r["stages"]
        out.append(f"| {r['arch']} | {r['label']} | {stages} | {r['latency']} | {r['fmax_mhz']:.1f} | "
                   f"{r['ratio_to_bare']} | {r.get('predicted_mhz') or '-'} | {r['lut']} | {r['ff']} | "
                   f"{r.get('lut_alone') or '-'} | {r.get('ff_alone') or '-'} | {r['dsp']} |")
    return "\n".join(out)


def csv_rows(path: Path) -> list[dict]:
    """The measured rows of a ``timing.csv`` as ``run`` returns them (stages ``m4a10`` as
    ``[4, 10]``, figures as numbers)."""
    rows = []
    for r in read_csv(path):
        pe = r["stages"].startswith("m")
        stages = [int(x) for x in r["stages"][1:].split("a")] if pe else int(r["stages"])
        rows.append({**r, "stages": stages, "fmax_mhz": float(r["fmax_mhz"]), "latency": int(r["latency"] or 0)})
    return rows


def fit(rows, model: dict) -> dict:
    """Least-squares fit of each architecture's coefficients to the measured periods; the
    critical segment is re-chosen under the new coefficients until it settles. With fewer
    runs than coefficients only ``t0`` moves (the slopes keep their values)."""
    from scipy.optimize import nnls
    new = {}
    for arch in model:
        # SB_MAC16 runs are left out: the iCE40 units' multiplies are LUTs; so are the runs of
        # another synthesis flow (_nosr) and the column accumulator's designs (measured after
        # the committed fit; a refit with them is a change of the model of its own). The references are one segment each, the adder's
        # ``sum`` segment for the add/subtract alone.
        reference = {"bare": [timing.Delay(mul=1)], "fabric_add": [timing.Delay(1, FABRIC_ADD_WIDTH)]}
        designs = [(reference.get(r["kind"]) or _design(r["kind"], r["stages"]).segments,
                    1000 / r["fmax_mhz"]) for r in rows
                   if r["arch"] == arch and not r["kind"].endswith(("_dsp", "_nosr"))
                   and not r["kind"].startswith(("pe_col", "colround"))]
        if not designs:
            new[arch] = model[arch]
            continue
        coeffs = dict(model[arch])
        full = len(designs) >= 2 * len(timing.COEFFICIENTS)
        for _ in range(10):
            a, y = [], []
            for delays, period in designs:
                worst = max(delays, key=lambda d: timing.period_ns([d], coeffs))
                a.append([1, worst.levels, worst.carry, worst.mul])
                y.append(period)
            a, y = np.array(a, float), np.array(y, float)
            if full:
                x, _ = nnls(a, y)
            else:
                slopes = np.array([coeffs[k] for k in timing.COEFFICIENTS[1:]])
                x = [max(0.0, float(np.mean(y - a[:, 1:] @ slopes))), *slopes]
            coeffs = {**coeffs, **dict(zip(timing.COEFFICIENTS, (round(float(v), 4) for v in x)))}
        err = [timing.period_ns(d, coeffs) / p - 1 for d, p in designs]
        coeffs.update(source=f"{'fitted' if full else 't0 fitted (slopes prior)'} to {len(designs)} nextpnr runs "
                             "in docs/timing.csv",
                      rms_error_pct=round(100 * float(np.sqrt(np.mean(np.square(err)))), 1))
        new[arch] = coeffs
    return new


def _parser() -> Parser:
    parser = Parser(prog="python -m synth.timing", description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", default="ecp5", help="ecp5, ice40 or ecp5,ice40 (default ecp5)")
    parser.add_argument("--cache", type=Path, default=build_dir("results", "timing"),
                        help="run cache (default build/results/timing)")
    out = build_dir("results", "timing-out")
    parser.add_argument("--docs", type=Path, default=out,
                        help=f"folder of timing.csv, timing-seeds.csv and the plot, merged by key (default {out}; "
                             "--docs docs publishes)")
    parser.add_argument("--lock", default=None, help="a file to flock around each place and route")
    parser.add_argument("--cached-only", action="store_true", help="write the outputs from cached runs only")
    parser.add_argument("--fit", action="store_true", help="refit the delay model from the runs (to --model-out)")
    parser.add_argument("--seeds", default=None, metavar="S,S,...",
                        help="also place and route with these nextpnr seeds (e.g. 1,2,3): each design's median, "
                             "min and max go to --docs/timing-seeds.csv (merged by part, module and seed)")
    parser.add_argument("--fit-only", action="store_true",
                        help="refit the delay model from every row of docs/timing.csv (the published "
                             "measurements) to --model-out, and write timing.csv with its predictions to "
                             "--docs; place and route nothing")
    model_out = build_dir("results", "timing-out", "timing_model.json")
    parser.add_argument("--model-out", type=Path, default=model_out,
                        help=f"where --fit and --fit-only write the model (default {model_out}; "
                             f"--model-out hdl/timing_model.json publishes the one hdl.build --target-mhz uses)")
    parser.add_argument("--only", default=None, help="run only these designs, e.g. add,pe or add:9,pe:6x9 (default all of "
                        f"{', '.join(UNITS)})")
    return parser


def _plan(parser, args) -> list[tuple]:
    """``(arch, kind, stages)`` of every design the options select; a bad one ends in
    ``parser.error``."""
    arches = args.arch.split(",")
    bad = [a for a in arches if a not in PLAN]
    if bad:
        parser.error(f"--arch {args.arch}: unknown architecture {bad[0]!r} (ecp5, ice40)")
    wanted = args.only.split(",") if args.only is not None else list(UNITS)
    bad = [w for w in wanted if w.split(":")[0] not in UNITS]
    if bad:
        parser.error(f"--only {args.only}: unknown design {bad[0]!r} ({', '.join(UNITS)})")

    def selected(kind, stages):
        depth = "{}x{}".format(*stages) if isinstance(stages, tuple) else str(stages)
        return kind in wanted or f"{kind}:{depth}" in wanted
    plan = [(arch, kind, stages) for arch in arches for kind, stages in PLAN[arch] if selected(kind, stages)]
    if not plan:
        parser.error(f"--only {args.only}: no design of the plan on {args.arch}")
    return plan


def _write_model(model: dict, path: Path) -> None:
    write_text(path, json.dumps(model, indent=2) + "\n")
    for arch, c in model.items():
        print(f"{arch}: " + ", ".join(f"{k} {c[k]}" for k in timing.COEFFICIENTS) + f" ({c['source']}, "
              f"rms error {c['rms_error_pct']} %)")
    if path.resolve() == timing.MODEL_PATH.resolve():
        print(f"wrote {path}: published")
    else:
        same = model == timing.load_model()
        print(f"wrote {path}: " + ("the same as hdl/timing_model.json" if same else
                                   "differs from hdl/timing_model.json (--model-out hdl/timing_model.json publishes)"))


@command("python -m synth.timing")
def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    check_output(args.docs, "--docs", folder=True)
    if args.fit or args.fit_only:
        check_output(args.model_out, "--model-out")
    if args.fit_only:
        model = fit(csv_rows(ROOT / "docs" / "timing.csv"), timing.load_model())
        _write_model(model, args.model_out)
        write_outputs(csv_rows(ROOT / "docs" / "timing.csv"), args.docs, model)
        print(f"wrote {args.docs / 'timing.csv'} with the model's predictions")
        return 0
    plan = _plan(parser, args)
    seeds = _seeds(parser, args.seeds)
    rows = []
    model = timing.load_model()
    with progress(len(plan), "place and route", "design") as bar:
        for arch, kind, stages in plan:
            bar.update()
            if args.cached_only:
                result = _latest(args.cache, arch, kind, stages)
                if result is None:
                    continue
            else:
                try:
                    result = run(arch, kind, stages, args.cache, args.lock)
                except Exception as error:          # one failed run is reported, the rest go on
                    bar.write(f"FAILED {arch} {kind} {stages}: {' '.join(str(error).split())[:300]}")
                    continue
            rows.append(result)
            bar.write(f"{arch} {result['module']}: {result['fmax_mhz']:.1f} MHz, latency {result['latency']}, "
                      f"LUT {result['lut']}, FF {result['ff']} (alone: LUT {result.get('lut_alone', '-')}, "
                      f"FF {result.get('ff_alone', '-')}), DSP {result['dsp']}")
            write_outputs(cached_rows(args.cache), args.docs, model)
    if not rows:
        raise ValueError("no results: " + ("nothing of the plan is cached" if args.cached_only else "every run failed"))
    if seeds:
        runs = [run(arch, kind, stages, args.cache, args.lock, seed)
                for arch, kind, stages in plan for seed in seeds]
        print(write_seeds(runs, args.docs / "timing-seeds.csv"))
    if args.fit:
        model = fit(cached_rows(args.cache), model)
        _write_model(model, args.model_out)
    rows = write_outputs(cached_rows(args.cache), args.docs, model)
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
