"""One place and route of a ``synth.timing`` design (``run``), cached by design, seed, source
and tool versions, with the element's size alone beside the placed harness's."""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import time
from contextlib import contextmanager
from pathlib import Path

from hdl.target import unit_identity
from hdl.toolchain import tool_versions

from .. import ROOT
from .designs import PLAN, REFERENCES, UNITS, component

#: The sources a placed design depends on (not the CLI, the model or the MXU array).
HARDWARE = [*(f"hdl/{n}.py" for n in ("adder", "multiplier", "rounder", "stochastic_rounder", "pipeline", "unit",
                                      "float", "params", "mxu/element", "product", "product_adder", "ecp5_dsp",
                                      "xorshift", "mxu/accumulation/window_adder",
                                      "mxu/accumulation/window_rounder")),
            "golden/formats.py", "golden/column.py", "synth/pnr.py", "synth/significand.py"]


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

    from ..flows import run_flows
    if arch != "ecp5":
        return {}
    figures = run_flows(verilog.convert(unit, name=name), name, ["ecp5_bits"], work)
    return {"lut_alone": figures["ecp5_lut4"] + 2 * figures["ecp5_ccu2c"], "ff_alone": figures["ecp5_ff"]}


@contextmanager
def locked(path):
    """A context holding an exclusive ``flock`` on ``path`` (nothing with ``None``)."""
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
    from ..pnr import SEED, place_and_route
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
    with locked(lock):
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


def latest(cache: Path, arch: str, kind: str, stages):
    """The newest cached run of a plan entry, or None."""
    _, name = component(kind, stages, plan=True)
    hits = sorted(cache.glob(f"{arch}_{name}_{kind}_" + "?" * 16 + ".json"), key=lambda p: p.stat().st_mtime)
    return json.loads(hits[-1].read_text()) if hits else None


def cached_rows(cache: Path) -> list[dict]:
    """Every plan entry of every architecture with a cached run (the outputs cover what
    several sweeps, one per architecture, have measured)."""
    found = (latest(cache, arch, kind, stages) for arch in PLAN for kind, stages in PLAN[arch])
    # FF: at least 0 (Yosys drops the harness's registers on constant outputs, e.g. the exact
    # multiplier's flags).
    return [{**r, "latency": r["latency"] or 0, "ff": max(0, r["ff"])} for r in found if r is not None]


def _rpt_cells(rpt: str):
    return re.findall(r"^\s+(\d+)\s+.*?(SB_\w+)\s*$", rpt, re.M) or \
        [(n, c) for c, n in re.findall(r"^\s+(SB_\w+)\s+(\d+)\s*$", rpt, re.M)]
