"""Generate Verilog: ``python -m hdl.build [UNIT] [--flags]`` (``--help``, ``--list``).

Without a unit it writes the default configuration of every unit into ``build/``. Next to
each ``NAME.v`` goes ``NAME.json``: parameters, latency and ports.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from amaranth.back import verilog

from golden.formats import NAMED_FORMATS, FloatFormat
from golden.rounding import Rounding

from .adder import FPAdder
from .multiplier import FPMultiplier
from .mxu import MXU
from .stochastic_rounder import StochasticRounder
from .xorshift import Xorshift32

__all__ = ["UNITS", "Unit", "module_name", "to_verilog", "manifest", "write", "emit", "add_unit_arguments", "main"]


@dataclass(frozen=True)
class Param:
    name: str          # keyword of the component
    kind: str          # "format", "rounding", "optional-rounding", "int", "optional-int", "bool"
    default: object
    help: str


@dataclass(frozen=True)
class Unit:
    key: str           # subcommand
    cls: type
    prefix: str        # module name prefix
    params: tuple = field(default_factory=tuple)
    help: str = ""

    def build(self, **kwargs):
        values = {p.name: kwargs.get(p.name, p.default) for p in self.params}
        return self.cls(**values), values


_FMT = "a name (" + ", ".join(NAMED_FORMATS) + ") or eXmY"
_ROUND = "/".join(r.value for r in Rounding)
_STAGES = Param("stages", "int", 0, "register stages 0..16 (0: combinational)")
UNITS = {
    "mul": Unit("mul", FPMultiplier, "fpmul", (
        Param("in_fmt", "format", "bf16", f"operand format: {_FMT} (default bf16)"),
        Param("out_fmt", "format", "fp32", "result format (default fp32)"),
        Param("rounding", "rounding", "rne", f"{_ROUND} (default rne)"),
        Param("sr_bits", "optional-int", None, "random bits for sr, 1..32 (default: all discarded bits)"),
        _STAGES), "floating-point multiplier"),
    "add": Unit("add", FPAdder, "fpadd", (
        Param("fmt", "format", "fp32", f"operand and result format: {_FMT} (default fp32)"),
        Param("rounding", "rounding", "rne", f"{_ROUND} (default rne)"),
        Param("sr_bits", "optional-int", None, "random bits for sr, 1..32 (default: the precision)"),
        _STAGES), "floating-point adder"),
    "rounder": Unit("rounder", StochasticRounder, "fpround", (
        Param("in_fmt", "format", "fp32", f"input format: {_FMT} (default fp32)"),
        Param("out_fmt", "format", "bf16", "output format (default bf16)"),
        Param("rounding", "rounding", "sr", f"{_ROUND} (default sr)"),
        Param("sr_bits", "optional-int", None, "random bits for sr, 1..32 (default: all discarded bits)"),
        _STAGES,
        Param("rng", "bool", True, "built-in xorshift32 lane (default); --no-rng: external rand port")),
        "stochastic rounding unit (format conversion)"),
    "mxu": Unit("mxu", MXU, "mxu", (
        Param("rows", "int", 4, "rows K (reduction depth), 1..256 (default 4)"),
        Param("cols", "int", 4, "columns N, 1..256 (default 4)"),
        Param("in_fmt", "format", "bf16", f"multiplier input format: {_FMT} (default bf16)"),
        Param("acc_fmt", "format", "fp32", "accumulation format (default fp32)"),
        Param("convert_inputs", "bool", False, "x and w arrive in acc_fmt, RNE to in_fmt on entry (default off)"),
        Param("out_rounding", "optional-rounding", None, f"none (y in acc_fmt; default) or {_ROUND}: y rounded "
              "to in_fmt by one rounder lane per column"),
        Param("sr_bits", "optional-int", None, "random bits per sr output rounding, 1..32 (default: all discarded bits)"),
        Param("acc_depth", "int", 0, "output accumulator rows: 0 (none; default) or a power of two, 2..65536"),
        Param("mul_stages", "int", 0, "multiplier register stages 0..16 (default 0)"),
        Param("add_stages", "int", 0, "adder register stages 0..16 (default 0)")),
        "weight-stationary systolic matrix unit"),
    "xorshift": Unit("xorshift", Xorshift32, "xorshift32", (
        Param("lanes", "int", 1, "generators, 1..1024 (default 1)"),), "xorshift32 generator lanes"),
}


def _value(value):
    """A parameter as the command line spells it (formats and roundings by name)."""
    if isinstance(value, FloatFormat):
        return value.name
    if isinstance(value, Rounding):
        return value.value
    return value


def _name_part(value) -> str:
    return str(_value(value)).replace("-", "")


def module_name(unit: Unit, component) -> str:
    """A Verilog module name that encodes every parameter, e.g. ``fpmul_bf16_bf16_sr8_s2``."""
    if unit.key == "xorshift":
        return f"{unit.prefix}_x{component.lanes}"
    if unit.key == "mxu":
        parts = [f"{unit.prefix}_{component.rows}x{component.cols}", component.in_fmt.name, component.acc_fmt.name,
                 f"m{component.mul_stages}a{component.add_stages}"]
        if component.convert_inputs:
            parts.append("cvt")
        if component.out_rounding is not None:
            parts.append(f"o{_name_part(component.out_rounding)}{component.rand_bits or ''}")
        if component.acc_depth:
            parts.append(f"acc{component.acc_depth}")
        return "_".join(parts)
    fmts = [getattr(component, n) for n in ("in_fmt", "out_fmt", "fmt") if hasattr(component, n)]
    rounding = _name_part(component.rounding)
    if component.rand_bits is not None and component.rounding is Rounding.STOCHASTIC:
        rounding += str(component.rand_bits)
    parts = [unit.prefix, *map(_name_part, fmts), rounding, f"s{component.latency}"]
    if unit.key == "rounder" and component.rand_bits is not None:
        parts.append("rng" if component.rng else "ext")
    return re.sub(r"[^A-Za-z0-9_]", "_", "_".join(parts))


def to_verilog(component, name: str) -> str:
    return verilog.convert(component, name=name, emit_src=False)


# Yosys escapes names that are SystemVerilog keywords: ``\rand `` is the identifier ``rand``.
_PORT = re.compile(r"^\s*(input|output)\s+(?:\[(\d+):0\]\s+)?\\?(\w+)\s*;", re.M)


def ports_of(text: str, name: str) -> list[dict]:
    """The top module's ports, read from its Verilog."""
    start = text.index(f"module {name}(")
    body = text[start:text.index("endmodule", start)]
    return [{"name": n, "direction": d, "width": int(msb) + 1 if msb else 1}
            for d, msb, n in _PORT.findall(body)]


def manifest(unit: Unit, component, values: dict, name: str, text: str) -> dict:
    # Formats and rounding as the component resolved them (``e5m10`` is ``fp16``).
    resolved = {k: getattr(component, k) if k in ("in_fmt", "out_fmt", "fmt", "acc_fmt", "rounding", "out_rounding") else v
                for k, v in values.items()}
    params = {k: _value(v) for k, v in resolved.items()}
    facts = {"latency": getattr(component, "latency", 0)}
    if hasattr(component, "rand_bits"):
        facts["rand_bits"] = component.rand_bits
    return {"module": name, "unit": unit.key, "class": unit.cls.__name__, "parameters": params,
            **facts, "ports": ports_of(text, name)}


def write(unit: Unit, out_dir: Path, **kwargs) -> tuple[Path, Path]:
    """Elaborate one configuration and write ``NAME.v`` and ``NAME.json`` into ``out_dir``."""
    component, values = unit.build(**kwargs)
    return emit(unit, component, values, out_dir)


def emit(unit: Unit, component, values: dict, out_dir: Path) -> tuple[Path, Path]:
    """Write an elaborated configuration's ``NAME.v`` and ``NAME.json`` into ``out_dir``."""
    name = module_name(unit, component)
    text = to_verilog(component, name)
    out_dir.mkdir(parents=True, exist_ok=True)
    v_path, j_path = out_dir / f"{name}.v", out_dir / f"{name}.json"
    v_path.write_text(text)
    j_path.write_text(json.dumps(manifest(unit, component, values, name, text), indent=2) + "\n")
    return v_path, j_path


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m hdl.build", description=__doc__.split("\n\n")[0],
        epilog="Without a unit: the default configuration of every unit, into build/.")
    parser.add_argument("-o", "--out-dir", type=Path, default=Path("build"), help="output folder (default build/)")
    parser.add_argument("--list", action="store_true", help="list the units and their parameters")
    sub = parser.add_subparsers(dest="unit", metavar="UNIT")
    for unit in UNITS.values():
        p = sub.add_parser(unit.key, help=unit.help, description=f"{unit.help} ({unit.cls.__name__})")
        p.add_argument("-o", "--out-dir", type=Path, default=argparse.SUPPRESS, help="output folder (default build/)")
        add_unit_arguments(p, unit)
    return parser


def add_unit_arguments(parser: argparse.ArgumentParser, unit: Unit) -> None:
    """One ``--flag`` per parameter of ``unit`` (for every CLI that takes a configuration)."""
    for param in unit.params:
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


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.list:
        for unit in UNITS.values():
            print(f"{unit.key:<9} {unit.cls.__name__}: {unit.help}")
            for param in unit.params:
                print(f"    --{param.name.replace('_', '-'):<10} {param.help}")
        return 0
    jobs = [(UNITS[args.unit], {p.name: getattr(args, p.name) for p in UNITS[args.unit].params})] \
        if args.unit else [(unit, {}) for unit in UNITS.values()]
    for unit, kwargs in jobs:
        try:
            v_path, j_path = write(unit, args.out_dir, **kwargs)
        except (TypeError, ValueError) as error:
            parser.exit(2, f"python -m hdl.build {unit.key}: error: {error}\n")
        print(f"wrote {v_path} and {j_path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
