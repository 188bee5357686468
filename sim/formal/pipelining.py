"""Prove that pipelining cannot change a bit: ``python -m sim.formal UNIT [flags] --stages N``.

Bounded model checking from reset (Yosys ``sat -seq``) of a miter (``sim.formal.miter``): the
unit at ``stages=N`` against the same unit at ``stages=0`` with its outputs delayed ``N``
cycles. ``depth`` defaults to the unit's longest register path plus one cycle (``N + 1``),
which is complete for a feed-forward pipeline (docs/formal.md says why); a unit with register
feedback is refused. Exit status: 0 proved, 1 counterexample or timeout,
2 bad arguments.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import time
from pathlib import Path

from amaranth.back import rtlil

from golden.tools.cli import build_dir
from hdl.units import UNITS, _value, module_name
from hdl.toolchain import yosys_command

from .equiv import equiv_script, equiv_verdict, run_tool, tools
from .miter import Miter, Mutant, inputs_of, outputs_of

__all__ = ["FORMAL_UNITS", "METHOD", "MAX_DEPTH", "register_depth", "check", "check_pe", "PE_METHOD"]

#: Units with a ``stages`` parameter, whatever their cut points.
FORMAL_UNITS = {k: u for k, u in UNITS.items() if any(p.name == "stages" for p in u.params)}
METHOD = "yosys sat -seq: BMC from reset, one SAT problem (ezSAT, MiniSat)"
MAX_DEPTH = 64
_PREPARE = "proc; flatten; opt_clean"
#: A row of ``sat -show``'s model table: step, signal, decimal, hex, binary.
_ROW = re.compile(r"^\s+(\d+)\s+\\(\S+)\s+(-?\d+|-+)\s+([0-9a-fA-Fx-]+)\s+([01x]+)\s*$", re.M)


def _configure(key: str, params: dict, stages: int, mutant: int | None):
    """``(pipelined, dut, ref, values)``: the unit at ``stages``, the unit checked (it or its
    mutant), the combinational unit and the parameters."""
    if key not in FORMAL_UNITS:
        raise ValueError(f"unit must be one of {', '.join(FORMAL_UNITS)}, not {key!r}")
    unit = FORMAL_UNITS[key]
    dut, values = unit.build(**params, stages=stages)
    ref, _ = unit.build(**params, stages=0)
    if mutant is not None:
        width = inputs_of(dut)["a"].width
        if not 0 <= mutant < 1 << width:
            raise ValueError(f"mutant must be an operand a of {width} bits, 0..{(1 << width) - 1:#x}, not {mutant:#x}")
        return dut, Mutant(dut, mutant), ref, values
    return dut, dut, ref, values


def register_depth(netlist: dict) -> int:
    """The most registers on any path through a flattened module (a Yosys ``write_json`` module).

    Raises ``ValueError`` naming a cell on a loop: register feedback, not a pipeline.
    """
    names = list(netlist["cells"])
    cells = [netlist["cells"][n] for n in names]
    driver = {bit: i for i, c in enumerate(cells) for port, bits in c["connections"].items()
              if c["port_directions"].get(port) == "output" for bit in bits}
    fanin = [{driver[b] for port, bits in c["connections"].items()
              if c["port_directions"].get(port) == "input" and port != "CLK" for b in bits if b in driver}
             for c in cells]
    register = [c["type"] in ("$ff", "$dlatch") or "dff" in c["type"] for c in cells]
    depth: dict[int, int] = {}
    for root in range(len(cells)):           # depth-first, iterative: netlists can be deep
        stack, on_path = [(root, iter(fanin[root]))], {root}
        while stack and root not in depth:
            i, todo = stack[-1]
            j = next(todo, None)
            if j is None:
                stack.pop()
                on_path.discard(i)
                depth[i] = max((depth[k] for k in fanin[i]), default=0) + register[i]
            elif j in on_path:
                raise ValueError(f"a loop through {names[j]}: feedback, not a feed-forward pipeline, so bounded "
                                 "checking from reset is not complete (the rounder: check --no-rng)")
            elif j not in depth:
                stack.append((j, iter(fanin[j])))
                on_path.add(j)
    return max(depth.values(), default=0)


def _yosys(folder: str, script: str, timeout: float | None = None, progress=None) -> subprocess.CompletedProcess | None:
    """Yosys's log, or None when it ran out of ``timeout`` seconds (then it is stopped);
    ``progress`` gets a line now and then while it runs (``run_tool``)."""
    return run_tool([*yosys_command(), "-Q", "-p", script], cwd=folder, timeout=timeout, progress=progress)


def _script(depth: int) -> str:
    # No optimisation but merging identical cells: the two units keep the same structure, so
    # whatever both compute from the same signals becomes one cell before the SAT problem.
    return (f"read_rtlil miter.il; hierarchy -top miter; {_PREPARE}; opt_merge; "
            f"sat -seq {depth} -prove ok 1 -set-def-inputs -show-ports")


def _trace(log: str, inputs, outputs) -> list[dict]:
    """The counterexample of ``sat -show-ports``: per step the inputs, then both units' outputs (hex)."""
    steps: dict[int, dict] = {}
    for step, name, _, hexa, _ in _ROW.findall(log):
        row = steps.setdefault(int(step), {"step": int(step), "inputs": {}, "dut": {}, "ref": {}})
        if name in inputs:
            row["inputs"][name] = "0x" + hexa
        elif name.startswith(("dut_", "ref_")) and name[4:] in outputs:
            row[name[:3]][name[4:]] = "0x" + hexa
        elif name == "ok":
            row["ok"] = hexa == "1"
    return [steps[k] for k in sorted(steps)]


def check(key: str, params: dict | None = None, *, stages: int, depth: int | None = None,
          mutant: int | None = None, timeout: int = 3600, input_delay: int | None = None, progress=None) -> dict:
    """Check ``UNITS[key]`` at ``stages`` against itself at ``stages=0``; return the report.

    Parameters
    ----------
    params : dict
        The unit's other ``hdl.build`` parameters.
    depth : int, optional
        Cycles from reset to check, 1..64 (default: the unit's longest register path + 1,
        complete; ``stages + 1`` for a balanced pipeline).
    mutant : int, optional
        Test only: flip result bit 0 of the pipelined unit whenever operand ``a`` equals this.
    timeout : int
        Seconds the Yosys run with the SAT solver may take (wall clock).
    input_delay : int, optional
        Cycles of the reference's delay placed at its inputs (``sim.formal.miter.Miter``), default
        the registers at the pipelined unit's ``input`` cut point (0 if it has none).
    progress : callable, optional
        Called with a line of text when the solver starts, and now and then while it runs.
    """
    params = dict(params or {})
    pipelined, dut, ref, values = _configure(key, params, stages, mutant)
    latency = dut.latency
    if depth is not None and not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be 1..{MAX_DEPTH}, not {depth}")
    inputs, outputs = inputs_of(ref), outputs_of(ref)
    if input_delay is None:
        # Whatever the other cut points, registers at ``input`` come before any logic.
        input_delay = pipelined.cut_registers.get("input", 0)
    text = rtlil.convert(Miter(dut, ref, input_delay=input_delay), name="miter")
    work = build_dir("formal")                  # yowasp tools cannot see the host's /tmp
    work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work, prefix="formal_") as folder:
        (Path(folder) / "miter.il").write_text(text)
        (Path(folder) / "unit.il").write_text(rtlil.convert(dut, name="unit"))
        proc = _yosys(folder, f"read_rtlil unit.il; hierarchy -top unit; {_PREPARE}; write_json unit.json")
        if proc.returncode:
            raise RuntimeError(f"yosys failed (exit {proc.returncode}): {(proc.stderr or proc.stdout)[-2000:]}")
        read_log = proc.stdout
        registers = register_depth(json.loads((Path(folder) / "unit.json").read_text())["modules"]["unit"])
        # Complete: every register then holds a function of inputs only (docs/formal.md).
        depth = max(latency, registers) + 1 if depth is None else depth
        if progress:
            progress(f"{module_name(FORMAL_UNITS[key], pipelined)}: solving {depth} cycles from reset...")
        start = time.perf_counter()
        # A wall-clock limit: ``sat -timeout`` needs signals, which the WebAssembly Yosys lacks.
        proc = _yosys(folder, _script(depth), timeout, progress)
        seconds = time.perf_counter() - start
    result, trace = _verdict(proc, depth > max(latency, registers), depth, inputs, outputs)
    log = proc.stdout if proc else ""
    report = {
        "unit": key, "module": module_name(FORMAL_UNITS[key], pipelined),
        "parameters": {k: _value(getattr(pipelined, k, v)) for k, v in values.items() if k != "stages"},
        "stages": latency, "mutant": None if mutant is None else f"{mutant:#x}",
        "method": METHOD, "ref_input_delay": input_delay,
        "register_depth": registers, "depth": depth, "complete": depth > max(latency, registers),
        "result": result, "seconds": round(seconds, 2),
        "sat_problem": _problem_size(log),
        "tools": tools(read_log),
    }
    if trace is not None:
        report["trace"] = trace
    return report


def _verdict(proc, complete: bool, depth: int, inputs, outputs):
    """``(result, trace)`` from the solver's Yosys run (None: it timed out)."""
    log = proc.stdout if proc else ""
    if proc is None:
        return "timeout", None
    if "SAT proof finished - no model found: SUCCESS!" in log:
        return ("proved" if complete else f"no counterexample in {depth} cycles"), None
    if "SAT proof finished - model found: FAIL!" in log:
        return "counterexample", _trace(log, inputs, outputs)
    raise RuntimeError(f"yosys failed (exit {proc.returncode}): {(proc.stderr or log)[-2000:]}")


#: How ``check_pe`` proves: structural equivalence, the netlists' same-named signals paired.
PE_METHOD = "yosys equiv_make / equiv_simple / equiv_induct: every same-named signal pair proven equal"


def check_pe(in_fmt="bf16", acc_fmt="fp32", *, mutant: int | None = None, timeout: int = 3600,
             progress=None) -> dict:
    """Prove the fused processing element (``ExactProduct`` into ``ProductAdder``) equal to
    the generic one (``FPMultiplier`` into ``FPAdder``), unpipelined, for every input and
    weight; return the report.

    The two share their adder's code, so their netlists share signal names: Yosys pairs
    them and proves each pair from the pairs before it (``equiv_simple``, ``equiv_induct``
    for the weight and output registers), outputs included. Pipelined depths follow from
    this and the units' own pipelining proofs (``check`` on ``product`` and ``product_add``,
    ``mul`` and ``add``): docs/formal.md. ``progress``: as ``check``'s.
    """
    from hdl.mxu.element import ProcessingElement

    from .miter import PETop
    gate = ProcessingElement(in_fmt=in_fmt, acc_fmt=acc_fmt, fused=True)
    gold = ProcessingElement(in_fmt=in_fmt, acc_fmt=acc_fmt, fused=False)
    if mutant is not None and not 0 <= mutant < 1 << gate.in_fmt.width:
        raise ValueError(f"mutant must be an x_in of {gate.in_fmt.width} bits, not {mutant:#x}")
    if progress:
        progress(f"pe {gate.in_fmt} -> {gate.acc_fmt}: the fused element against the generic one (Yosys)...")
    work = build_dir("formal")
    work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work, prefix="formal_pe_") as folder:
        (Path(folder) / "gold.il").write_text(rtlil.convert(PETop(gold), name="gold"))
        (Path(folder) / "gate.il").write_text(rtlil.convert(PETop(gate, mutant), name="gate"))
        # The product between the units is an encoding in one and fields in the other: never
        # a pair, even where the widths happen to agree (fp8 products into fp16).
        link = "w:pe.mul.result w:pe.add.b w:pe.b$* w:pe.result$*"
        prepare = {n: f"read_rtlil {n}.il; hierarchy -top {n}; {_PREPARE}; rename -hide {link}"
                   for n in ("gold", "gate")}
        script = equiv_script(prepare["gold"], prepare["gate"], "equiv_simple -seq 2; equiv_induct -seq 2")
        start = time.perf_counter()
        proc = _yosys(folder, script, timeout, progress)
        seconds = time.perf_counter() - start
    result, pairs, unproven = equiv_verdict(proc)
    report = {
        "unit": "pe", "module": f"pe_{gate.in_fmt}_{gate.acc_fmt}_fused_vs_generic",
        "parameters": {"in_fmt": gate.in_fmt.name, "acc_fmt": gate.acc_fmt.name},
        "mutant": None if mutant is None else f"{mutant:#x}", "method": PE_METHOD,
        "pairs": pairs, "result": result, "unproven": unproven, "seconds": round(seconds, 2),
        "tools": tools(proc.stdout if proc else ""),
    }
    return report


def _problem_size(log: str) -> dict | None:
    found = re.search(r"Solving problem with (\d+) variables and (\d+) clauses", log)
    return {"variables": int(found[1]), "clauses": int(found[2])} if found else None
