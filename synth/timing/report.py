"""``synth.timing``'s outputs: timing.csv merged by key with ratios and predictions, the plot,
the per-seed table and the Markdown table."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from golden.tools.cli import csv_text, merge_csv, merged_rows, read_csv, write_text
from hdl import timing

from .designs import REFERENCES, UNITS, design_plan

COLUMNS = ["arch", "kind", "label", "module", "stages", "latency", "fmax_mhz", "ratio_to_bare", "predicted_mhz", "lut",
           "ff", "lut_alone", "ff_alone", "dsp", "path_from", "path_to", "path_logic_ns", "path_route_ns", "seed", "design", "tools"]


def stages_text(stages) -> str:
    """A run's stages as timing.csv writes them: ``m4a10`` for an element, ``7`` for a unit."""
    return "m{}a{}".format(*stages) if isinstance(stages, list) else str(stages)


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
            r["predicted_mhz"] = round(timing.predict_mhz(design_plan(r["kind"], r["stages"]), r["arch"], model), 1)
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
    write_text(path, csv_text(({**r, "stages": stages_text(r["stages"])} for r in rows), COLUMNS))
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
        out.append(f"| {r['arch']} | {r['label']} | {stages_text(r['stages'])} | {r['latency']} | {r['fmax_mhz']:.1f} | "
                   f"{r['ratio_to_bare']} | {r.get('predicted_mhz') or '-'} | {r['lut']} | {r['ff']} | "
                   f"{r.get('lut_alone') or '-'} | {r.get('ff_alone') or '-'} | {r['dsp']} |")
    return "\n".join(out)


def fastest(rows) -> list[dict]:
    """Per part and design, its row of the highest Fmax."""
    best = {}
    for r in rows:
        key = (r["arch"], r["kind"])
        if key not in best or r["fmax_mhz"] > best[key]["fmax_mhz"]:
            best[key] = r
    return list(best.values())


def csv_rows(path: Path) -> list[dict]:
    """The measured rows of a ``timing.csv`` as ``run`` returns them (stages ``m4a10`` as
    ``[4, 10]``, figures as numbers)."""
    rows = []
    for r in read_csv(path):
        pe = r["stages"].startswith("m")
        stages = [int(x) for x in r["stages"][1:].split("a")] if pe else int(r["stages"])
        rows.append({**r, "stages": stages, "fmax_mhz": float(r["fmax_mhz"]), "latency": int(r["latency"] or 0)})
    return rows
