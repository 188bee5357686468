"""The proofs' command line: ``python -m sim.formal UNIT ...`` (``--help``).

``UNIT --stages N``: pipelining changes no bit (``--method bmc``: ``sim.formal.pipelining``;
``--method structural``: ``sim.formal.structural``; by default the one that finishes for the
unit, ``choose_method``); ``pe``: the fused processing element equals the generic one; ``fifo``
and ``mxu``: the stream contract (``sim.formal.stream_proof``). The method and each step are
announced on stderr, with a line every ``HEARTBEAT_SECONDS`` while a tool runs.
Exit status: 0 proved, 1 counterexample or timeout, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path

from golden.column import SEQUENTIAL, accumulation_param
from golden.tools.cli import Parser, check_output, command, write_text
from hdl.units import module_name
from hdl.build import add_unit_arguments
from hdl.mxu.config import OPTION as MXU_OPTION

from .pipelining import FORMAL_UNITS, MAX_DEPTH, _configure, _yosys, check, check_pe
from .structural import check_structural

__all__ = ["BMC_MAX_SIGNIFICAND", "choose_method", "main"]

#: The widest significand (hidden bit included) of a multiplier whose bounded check finishes:
#: with a register in front of one of the two significand products only, SAT has to prove
#: them equal. bf16's 8 bits take seconds (docs/formal.md); fp16's 11 had no answer in 150 s,
#: fp32's 24 none in 10 minutes, while the structural method proves both in seconds.
BMC_MAX_SIGNIFICAND = 8
_MULTIPLIERS = ("mul", "product")


def choose_method(key: str, component, *, bmc_options: bool = False) -> tuple[str, str]:
    """``(method, why)`` for ``--method auto``: ``structural`` for a multiplier (``mul``,
    ``product``) whose significand is wider than ``BMC_MAX_SIGNIFICAND`` bits, ``bmc`` for
    everything else and whenever an option of the bounded check is given (``bmc_options``)."""
    if bmc_options:
        return "bmc", "--depth and --input-delay are options of the bounded check"
    precision = component.in_fmt.precision if key in _MULTIPLIERS else None
    if precision is not None and precision > BMC_MAX_SIGNIFICAND:
        return "structural", (f"the bounded check of a {precision}-bit significand multiplier may not finish "
                              f"(fp32 at 3 stages: not in 10 minutes); the structural proof takes seconds")
    return "bmc", "the bounded check from reset finishes for this unit (docs/formal.md)"


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m sim.formal", description="Formal proofs: pipelining changes no bit (UNIT --stages N), "
                    "the fused PE equals the generic one (pe), the MXU's stream contract (fifo, mxu).")
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
        p.add_argument("--method", choices=("auto", "bmc", "structural"), default="auto",
                       help="bmc: bounded model checking of the miter from reset; structural: every path a "
                            "delay of N, and the netlist with wires for registers equal to stages=0 "
                            f"(sim.formal.structural); auto (default): structural for a multiplier whose "
                            f"significand is wider than {BMC_MAX_SIGNIFICAND} bits (its bounded check may not "
                            "finish), bmc otherwise; the choice is printed first")
    return parser


def _stream_parsers(sub) -> None:
    """``fifo`` and ``mxu``: the stream proofs (sim.formal.stream_proof)."""
    from hdl.mxu.output_fifo import RAMS

    from .stream_fifo import FIFO_MUTANTS
    from .stream_mxu import MXU_MUTANTS
    p = sub.add_parser("fifo", help="the MXU's output FIFO: order, no loss, latency (k-induction)")
    p.add_argument("--width", type=int, default=3, help="bits per row (default 3: the data is tracked, "
                   "so its width does not matter beyond distinguishing rows)")
    p.add_argument("--depth", dest="fifo_depth", type=int, default=8, help="memory rows, a power of two (default 8: the queue and the head full behind it)")
    p.add_argument("--ram", choices=RAMS, default="block", help="the memory: block or lut (one read register, "
                   "default block) or ecp5 (the blocks' output registers too: a second read stage)")
    p.add_argument("--mutant", choices=FIFO_MUTANTS, default=None, help="test only: a planted bug")
    p = sub.add_parser("mxu", help="the MXU's stream contract: credits, swap rule, order, no loss (k-induction)")
    for name, default in (("rows", 2), ("cols", 2), ("mul_stages", 0), ("add_stages", 0)):
        p.add_argument("--" + name.replace("_", "-"), dest=name, type=int, default=default, help=f"default {default}")
    p.add_argument("--acc-depth", dest="acc_depth", type=int, default=0,
                   help="output accumulator rows, 0 or a power of two (default 0: none)")
    p.add_argument("--in-fmt", default="fp8_e4m3", help="input format: only its width matters, the "
                   "products are abstracted to row tags (default fp8_e4m3)")
    p.add_argument("--acc-fmt", default="bf16", help="accumulation format, likewise (default bf16)")
    p.add_argument("--accumulation", default=SEQUENTIAL, help=MXU_OPTION["accumulation"].help + "; here the elements' "
                   "and column units' registers, the sums being tags as well")
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
        params = {"width": args.width, "depth": args.fifo_depth, **({"ram": args.ram} if args.ram != "block" else {})}
    else:
        params = {n: getattr(args, n) for n in ("rows", "cols", "mul_stages", "add_stages", "in_fmt", "acc_fmt")}
        if args.acc_depth:
            params["acc_depth"] = args.acc_depth
        if accumulation_param("--accumulation", args.accumulation) is not None:
            params["accumulation"] = args.accumulation
    report = check_stream(args.unit, params, mutant=args.mutant, depth=args.k, timeout=args.timeout,
                          progress=_progress)
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
    """A line of progress on stderr (the results go to stdout)."""
    print(line, file=sys.stderr, flush=True)


def _announcing(first: str):
    """``_progress``, with ``first`` before its first line: said when the work starts, after
    the arguments are checked (a bad one gets its one-line error alone)."""
    pending = [first]

    def progress(line: str) -> None:
        while pending:
            _progress(pending.pop())
        _progress(line)
    return progress


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
    bmc_options = args.depth is not None or args.input_delay is not None
    plan, _ = unit.plan(**params, stages=args.stages)
    name = module_name(unit, plan)
    method, progress = args.method, _progress
    if method == "auto":
        method, why = choose_method(args.unit, plan, bmc_options=bmc_options)
        progress = _announcing(f"{name}: method {method} ({why}; --method bmc or structural to choose)")
    if method == "structural":
        if bmc_options:
            raise ValueError("--depth and --input-delay are options of --method bmc")
        pipelined, dut, ref, values = _configure(args.unit, params, args.stages, args.mutant)
        progress(f"{name}: structural proof, {args.stages} stages against 0 (Yosys)...")
        report = check_structural(args.unit, pipelined, dut, ref, values,
                                  yosys=functools.partial(_yosys, progress=progress), timeout=args.timeout)
    else:
        report = check(args.unit, params, stages=args.stages, depth=args.depth, mutant=args.mutant,
                       timeout=args.timeout, input_delay=args.input_delay, progress=progress)
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
    report = check_pe(args.in_fmt, args.acc_fmt, mutant=args.mutant, timeout=args.timeout, progress=_progress)
    if args.report is not None:
        write_text(args.report, json.dumps(report, indent=2) + "\n")
    print(f"{report['module']}: {report['result']} ({report['pairs']} signal pairs) in {report['seconds']} s")
    for name in report["unproven"]:
        print(f"  unproven: {name}")
    return 0 if report["result"] == "proved" else 1


if __name__ == "__main__":
    sys.exit(main())
