"""Generate Verilog: ``python -m hdl.build [UNIT] [--flags]`` (``--help``, ``--list``).

Without a unit it writes the default configuration of every unit into ``build/``. Next to
each ``NAME.v`` goes ``NAME.json``: parameters, latency and ports, and ``NAME.vlt``: the
Verilator lint waivers, each with its reason (``hdl.verilator_config``). ``--target-mhz F --arch
ecp5|ice40`` picks the smallest pipeline predicted to reach F (hdl/timing.py); with
``--arch`` the manifest records the predicted Fmax and, when docs/timing.csv has a
place-and-route figure for that exact module, the achieved one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from golden.rounding import Rounding
from golden.tools.cli import Parser, build_dir, check_output, command

from . import timing
from .floorplan import script_paths
from .fmax_top import top_paths
from .mxu import MXU
from .target import DEPTH, build_for
from .units import UNITS, Unit, emit

__all__ = ["add_unit_arguments", "main"]


def _parser() -> argparse.ArgumentParser:
    out = build_dir("verilog")
    parser = Parser(
        prog="python -m hdl.build", description=__doc__.split("\n\n")[0],
        epilog=f"Without a unit: the default configuration of every unit, into {out}.")
    parser.add_argument("-o", "--out-dir", type=Path, default=out, help=f"output folder (default {out})")
    parser.add_argument("--list", action="store_true", help="list the units and their parameters")
    sub = parser.add_subparsers(dest="unit", metavar="UNIT")
    for unit in UNITS.values():
        p = sub.add_parser(unit.key, help=unit.help, description=f"{unit.help} ({unit.cls.__name__})")
        p.add_argument("-o", "--out-dir", type=Path, default=argparse.SUPPRESS, help=f"output folder (default {out})")
        add_unit_arguments(p, unit)
        if unit.key in DEPTH:
            # Depths default to None so an explicit one can be told from --target-mhz's choice.
            p.set_defaults(**{name: None for name in DEPTH[unit.key]})
            p.add_argument("--target-mhz", type=float, default=None, metavar="F",
                           help=f"pick the smallest {'/'.join(DEPTH[unit.key])} predicted to reach F MHz "
                                "(not with an explicit depth)")
            p.add_argument("--arch", choices=timing.ARCHES, default=None,
                           help="FPGA family of the delay model (default ecp5 with --target-mhz); the manifest "
                                "records predicted and measured Fmax")
    return parser


def add_unit_arguments(parser: argparse.ArgumentParser, unit: Unit, skip=()) -> None:
    """One ``--flag`` per parameter of ``unit`` (but those named in ``skip``), as ``hdl.build`` spells them."""
    for param in unit.params:
        if param.name in skip:
            continue
        flag = "--" + param.name.replace("_", "-")
        if param.kind == "bool":
            parser.add_argument(flag, dest=param.name, action=argparse.BooleanOptionalAction,
                                default=param.default, help=param.help)
        elif param.kind in ("rounding", "optional-rounding"):
            none = ["none"] if param.kind == "optional-rounding" else []
            parser.add_argument(flag, dest=param.name, choices=none + [r.value for r in Rounding],
                                default=param.default, help=param.help)
        elif param.kind in ("int", "optional-int"):
            parser.add_argument(flag, dest=param.name, type=int, default=param.default, help=param.help)
        else:
            parser.add_argument(flag, dest=param.name, default=param.default, help=param.help)


@command("python -m hdl.build")
def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.list:
        for unit in UNITS.values():
            print(f"{unit.key:<9} {unit.cls.__name__}: {unit.help}")
            for param in unit.params:
                print(f"    --{param.name.replace('_', '-'):<10} {param.help}")
        return 0
    check_output(args.out_dir, "--out-dir", folder=True)
    jobs = [(UNITS[args.unit], {p.name: getattr(args, p.name) for p in UNITS[args.unit].params})] \
        if args.unit else [(unit, {}) for unit in UNITS.values()]
    target, arch = getattr(args, "target_mhz", None), getattr(args, "arch", None)
    built = []
    for unit, kwargs in jobs:     # every configuration checked before anything is written
        explicit = [k for k in DEPTH.get(unit.key, ()) if kwargs.get(k) is not None]
        if target is not None and explicit:
            parser.error(f"{unit.key}: --target-mhz picks the depth: give it or "
                         f"--{explicit[0].replace('_', '-')}, not both")
        kwargs = {k: v for k, v in kwargs.items() if v is not None or k not in DEPTH.get(unit.key, ())}
        try:
            if target is None and arch is None:
                built.append((unit, *unit.build(**kwargs), None))
            else:
                built.append((unit, *build_for(unit, kwargs, arch or "ecp5", target)))
        except (TypeError, ValueError) as error:
            parser.error(f"{unit.key}: {error}")
    for unit, component, values, facts in built:
        v_path, j_path = emit(unit, component, values, args.out_dir, timing=facts)
        scripts = [*script_paths(component.rows, component.cols, v_path.stem, args.out_dir),
                   *top_paths(v_path.stem, args.out_dir)] if isinstance(component, MXU) else []
        scripts += [args.out_dir / s for s in json.loads(j_path.read_text()).get("sim_sources", [])]
        print(f"wrote {v_path}, {j_path.name}, {v_path.stem}_inst.v, {v_path.stem}.vlt"
              + "".join(f", {s.name}" for s in scripts))
        if facts is not None and "predicted_mhz" not in facts:       # an array (hdl.array_timing)
            figure = facts["achieved_mhz"]
            print(f"  {facts['arch']}: " + (f"{figure['mhz']:g} MHz measured ({figure['design']}, {figure['measured']}, "
                                            f"{figure['source']})" if "measured" in figure else
                                            f"{figure['mhz']:g} MHz predicted: {figure['predicted']}"))
        elif facts is not None:
            measured = facts["achieved_mhz"]
            print(f"  {facts['arch']}: predicted {facts['predicted_mhz']} MHz, measured "
                  + (f"{measured:g} MHz (docs/timing.csv)" if measured is not None else "- (not placed and routed)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
