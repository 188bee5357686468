"""Prove that pipelining cannot change a bit: ``python -m sim.formal UNIT [flags] --stages N``.

Bounded model checking from reset (Yosys ``sat -seq``) of a miter (``sim.miter``): the
unit at ``stages=N`` against the same unit at ``stages=0`` with its outputs delayed ``N``
cycles. ``depth`` defaults to the unit's longest register path plus one cycle (``N + 1``),
which is complete for a feed-forward pipeline (docs/formal.md says why); a unit with register
feedback is refused. Exit status: 0 proved, 1 counterexample or timeout,
2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from amaranth.back import rtlil

from golden.cli import Parser, build_dir, check_output, command, write_text
from hdl.build import UNITS, _value, add_unit_arguments, module_name
from synth.flows import yosys_command

from .equiv import equiv_script, equiv_verdict, tools
from .miter import Miter, Mutant, inputs_of, outputs_of
from .pipeline_proof import check_structural

__all__ = ["FORMAL_UNITS", "METHOD", "MAX_DEPTH", "register_depth", "check", "main"]

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


def _yosys(folder: str, script: str, timeout: float | None = None) -> subprocess.CompletedProcess | None:
    """Yosys's log, or None when it ran out of ``timeout`` seconds (then it is stopped)."""
    try:
        return subprocess.run([*yosys_command(), "-Q", "-p", script], cwd=folder, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


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
        Cycles of the reference's delay placed at its inputs (``sim.miter.Miter``), default
        the registers at the pipelined unit's ``input`` cut point (0 if it has none).
    progress : callable, optional
        Called with a line of text when the solver starts.
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
        proc = _yosys(folder, _script(depth), timeout)
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


def check_pe(in_fmt="bf16", acc_fmt="fp32", *, mutant: int | None = None, timeout: int = 3600) -> dict:
    """Prove the fused processing element (``ExactProduct`` into ``ProductAdder``) equal to
    the generic one (``FPMultiplier`` into ``FPAdder``), unpipelined, for every input and
    weight; return the report.

    The two share their adder's code, so their netlists share signal names: Yosys pairs
    them and proves each pair from the pairs before it (``equiv_simple``, ``equiv_induct``
    for the weight and output registers), outputs included. Pipelined depths follow from
    this and the units' own pipelining proofs (``check`` on ``product`` and ``product_add``,
    ``mul`` and ``add``): docs/formal.md.
    """
    from hdl.mxu_pe import ProcessingElement

    from .miter import PETop
    gate = ProcessingElement(in_fmt=in_fmt, acc_fmt=acc_fmt, fused=True)
    gold = ProcessingElement(in_fmt=in_fmt, acc_fmt=acc_fmt, fused=False)
    if mutant is not None and not 0 <= mutant < 1 << gate.in_fmt.width:
        raise ValueError(f"mutant must be an x_in of {gate.in_fmt.width} bits, not {mutant:#x}")
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
        proc = _yosys(folder, script, timeout)
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


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m sim.formal", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="unit", metavar="UNIT", required=True)
    p = sub.add_parser("pe", help="the fused processing element equals the generic one",
                       description=check_pe.__doc__.split("\n\n")[0])
    p.add_argument("--in-fmt", default="bf16", help="multiplier input format (default bf16)")
    p.add_argument("--acc-fmt", default="fp32", help="accumulation format (default fp32)")
    p.add_argument("--report", type=Path, default=None, help="write the JSON report there")
    p.add_argument("--timeout", type=int, default=3600, help="limit of the Yosys run, wall-clock seconds (default 3600)")
    p.add_argument("--mutant", type=lambda s: int(s, 0), default=None, metavar="X",
                   help="test only: flip psum_out bit 0 of the fused element after x_in == X")
    _stream_parsers(sub)
    for unit in FORMAL_UNITS.values():
        p = sub.add_parser(unit.key, help=unit.help, description=f"{unit.help} ({unit.cls.__name__})")
        add_unit_arguments(p, unit, skip=("stages",))
        p.add_argument("--stages", type=int, required=True, help="register stages of the unit checked, 0..16")
        p.add_argument("--depth", type=int, default=None,
                       help=f"cycles from reset, 1..{MAX_DEPTH} (default: the longest register path + 1, complete)")
        p.add_argument("--report", type=Path, default=None, help="write the JSON report there")
        p.add_argument("--input-delay", type=int, default=None, metavar="K",
                       help="delay the reference K cycles at its inputs, the rest at its outputs (default: "
                            "the pipelined unit's input registers, which Yosys then merges with them)")
        p.add_argument("--timeout", type=int, default=3600,
                       help="limit of the solver's Yosys run, wall-clock seconds (default 3600)")
        p.add_argument("--mutant", type=lambda s: int(s, 0), default=None, metavar="A",
                       help="test only: flip result bit 0 of the pipelined unit when operand a == A")
        p.add_argument("--method", choices=("bmc", "structural"), default="bmc",
                       help="bmc: bounded model checking of the miter from reset (default); structural: "
                            "every path a delay of N, and the netlist with wires for registers equal to "
                            "stages=0 (sim.pipeline_proof)")
    return parser


def _stream_parsers(sub) -> None:
    """``fifo`` and ``mxu``: the stream proofs (sim.stream_proof)."""
    from .stream_proof import FIFO_MUTANTS, MXU_MUTANTS
    p = sub.add_parser("fifo", help="the MXU's output FIFO: order, no loss, latency (k-induction)")
    p.add_argument("--width", type=int, default=3, help="bits per row (default 3: the data is tracked, "
                   "so its width does not matter beyond distinguishing rows)")
    p.add_argument("--depth", dest="fifo_depth", type=int, default=4, help="memory rows, a power of two (default 4)")
    p.add_argument("--mutant", choices=FIFO_MUTANTS, default=None, help="test only: a planted bug")
    p = sub.add_parser("mxu", help="the MXU's stream contract: credits, swap rule, order, no loss (k-induction)")
    for name, default in (("rows", 2), ("cols", 2), ("mul_stages", 0), ("add_stages", 0)):
        p.add_argument("--" + name.replace("_", "-"), dest=name, type=int, default=default, help=f"default {default}")
    p.add_argument("--in-fmt", default="fp8_e4m3", help="input format: only its width matters, the "
                   "products are abstracted to row tags (default fp8_e4m3)")
    p.add_argument("--acc-fmt", default="bf16", help="accumulation format, likewise (default bf16)")
    p.add_argument("--mutant", choices=MXU_MUTANTS, default=None, help="test only: a planted bug")
    for p in (sub.choices["fifo"], sub.choices["mxu"]):
        p.add_argument("--k", type=int, default=None, help="induction depth (default: latency + drain cycles + 3; fifo 8)")
        p.add_argument("--report", type=Path, default=None, help="write the JSON report there")
        p.add_argument("--timeout", type=int, default=3600, help="limit of each SymbiYosys run, seconds (default 3600)")


def _main_stream(args) -> int:
    from .stream_proof import check_stream
    if args.k is not None and not 1 <= args.k <= 200:
        raise ValueError(f"--k must be 1..200, not {args.k}")
    if args.unit == "fifo":
        params = {"width": args.width, "depth": args.fifo_depth}
    else:
        params = {n: getattr(args, n) for n in ("rows", "cols", "mul_stages", "add_stages", "in_fmt", "acc_fmt")}
    report = check_stream(args.unit, params, mutant=args.mutant, depth=args.k, timeout=args.timeout)
    if args.report is not None:
        write_text(args.report, json.dumps(report, indent=2) + "\n")
    print(f"{args.unit} {params}: {report['result']} at k = {report['depth']} in {report['seconds']} s")
    for line in report["failed_assertions"]:
        print(f"  failed: {line}")
    for trace in report["traces"]:
        print(f"  trace: {trace}")
    if "covers" in report:
        c = report["covers"]
        print(f"  covers: {c['reached']} reached, {c['unreached']} unreached within {c['depth']} cycles")
    if "ready_inputs" in report:
        print(f"  combinational inputs of the readies: {report['ready_inputs']}"
              f"{'' if report['ready_contract_holds'] else ' (the contract: x.ready on x.payload.swap only, w.ready on none)'}")
    ok = (report["result"] == "proved" and report.get("covers", {}).get("unreached", 0) == 0
          and report.get("ready_contract_holds", True))
    return 0 if ok else 1


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@command("python -m sim.formal")
def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    # Every command has these two: checked before any work starts.
    if args.timeout < 1:
        raise ValueError(f"--timeout must be >= 1 s, not {args.timeout}")
    if args.report is not None:
        check_output(args.report, "--report")
    if args.unit == "pe":
        return _main_pe(args)
    if args.unit in ("fifo", "mxu"):
        return _main_stream(args)
    unit = FORMAL_UNITS[args.unit]
    params = {p.name: getattr(args, p.name) for p in unit.params if p.name != "stages"}
    if args.method == "structural":
        if args.depth is not None or args.input_delay is not None:
            raise ValueError("--depth and --input-delay are options of --method bmc")
        pipelined, dut, ref, values = _configure(args.unit, params, args.stages, args.mutant)
        report = check_structural(args.unit, pipelined, dut, ref, values, yosys=_yosys, timeout=args.timeout)
    else:
        report = check(args.unit, params, stages=args.stages, depth=args.depth, mutant=args.mutant,
                       timeout=args.timeout, input_delay=args.input_delay,
                       progress=_progress if sys.stderr.isatty() else None)
    text = json.dumps(report, indent=2) + "\n"
    if args.report is not None:
        write_text(args.report, text)
    where = f"at depth {report['depth']}" if "depth" in report else f"({report['pairs']} signal pairs)"
    print(f"{report['module']}: {report['result']} {where} in {report['seconds']} s")
    if "trace" in report:
        for row in report["trace"]:
            print(f"  cycle {row['step']}: in {row['inputs']} dut {row['dut']} ref {row['ref']}")
    return 0 if report["result"] == "proved" or report["result"].startswith("no counterexample") else 1


def _main_pe(args) -> int:
    report = check_pe(args.in_fmt, args.acc_fmt, mutant=args.mutant, timeout=args.timeout)
    if args.report is not None:
        write_text(args.report, json.dumps(report, indent=2) + "\n")
    print(f"{report['module']}: {report['result']} ({report['pairs']} signal pairs) in {report['seconds']} s")
    for name in report["unproven"]:
        print(f"  unproven: {name}")
    return 0 if report["result"] == "proved" else 1


if __name__ == "__main__":
    sys.exit(main())
