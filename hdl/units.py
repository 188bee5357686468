"""The units ``hdl.build`` generates (``UNITS``), their module names, Verilog and manifests.

``emit`` writes one elaborated configuration's files: ``NAME.v``, ``NAME.json`` (parameters,
latency and ports), ``NAME.vlt`` (the Verilator lint waivers, each with its reason:
``hdl.verilator_config``), ``NAME_inst.v`` and, for an MXU, its floorplan script and top.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from amaranth.back import verilog

from golden.column import SEQUENTIAL, accumulation_arg, accumulation_param
from golden.tools.cli import write_text
from golden.formats import NAMED_FORMATS, FloatFormat
from golden.rounding import Rounding

from .adder import FPAdder
from .board import Board
from .ecp5_bram import MODEL as BRAM_MODEL
from .ecp5_dsp import MODEL as DSP_MODEL
from .multiplier import FPMultiplier
from .mxu import MXU
from .mxu.config import OPTION as MXU_OPTION, OPTIONS as MXU_OPTIONS
from .params import Param
from .mxu.accumulation import COLUMN_SPELLING, resolve_accumulation, window_adder_for
from .mxu.accumulation.normalisation_point import NormalisationPoint
from .mxu.accumulation.window_adder import TERMS, WindowAdderPlan
from .mxu.accumulation.window_rounder import WindowRounder, WindowRounderPlan
from .floorplan import write_scripts
from .keep import kept_verilog
from .fmax_top import write_top
from .ports import escaped_ports, instantiation_template, order_ports, ports_of, signature_ports, unindexed_names
from .product import ExactProduct
from .product_adder import ProductAdder
from .stochastic_rounder import StochasticRounder
from .verilator_config import verilator_config
from .xorshift import Xorshift32

__all__ = ["UNITS", "Unit", "module_name", "to_verilog", "manifest", "write", "emit"]


@dataclass(frozen=True)
class Unit:
    key: str           # subcommand
    cls: type
    prefix: str        # module name prefix
    params: tuple = field(default_factory=tuple)
    help: str = ""

    def build(self, **kwargs):
        """The component and its parameter values; a stochastic rounding that never
        rounds (an exact product, a widening conversion) is an error, not a silent rne."""
        values = self._values(kwargs)
        return self._checked(self.cls(**{p.name: _resolved(p, values[p.name]) for p in self.params})), values

    def plan(self, **kwargs):
        """``build``'s plan instead of its component (``cls.plan``: an arithmetic unit's or
        the MXU's), checked alike, and the parameter values."""
        values = self._values(kwargs)
        return self._checked(self.cls.plan(**{p.name: _resolved(p, values[p.name]) for p in self.params})), values

    def _values(self, kwargs: dict) -> dict:
        """Every parameter's value: ``kwargs``' or the default (a TypeError for any other;
        ``accumulator``: the old name of ``accumulation``)."""
        if "accumulator" in kwargs and "accumulation" in {p.name for p in self.params}:
            kwargs = dict(kwargs)
            kwargs["accumulation"] = accumulation_arg(kwargs.get("accumulation"), kwargs.pop("accumulator"))
        unknown = set(kwargs) - {p.name for p in self.params}
        if unknown:
            raise TypeError(f"{self.key} takes no parameter {', '.join(sorted(unknown))} "
                            f"(parameters: {', '.join(p.name for p in self.params)})")
        return {p.name: kwargs.get(p.name, p.default) for p in self.params}

    def _checked(self, design):
        """``design`` (a component or plan), unless its stochastic rounding never rounds."""
        rounding = getattr(design, "rounding", None)
        if rounding is not None and rounding.is_stochastic and design.rand_bits is None:
            raise ValueError(f"rounding {rounding.value}: this {self.key} never rounds (every result is exact "
                             "in the output format); use rne")
        return design


def _resolved(param: Param, value):
    """``value`` as the component takes it: a ``column`` spec string as its
    ``ColumnAccumulator`` (the column units have no sequential default)."""
    if param.kind != "column":
        return value
    accumulation = accumulation_param(param.name, value)
    if accumulation is None:
        raise ValueError(f"{param.name} {value!r}: a column unit needs {COLUMN_SPELLING}, not {SEQUENTIAL}")
    return accumulation


_FMT = "a name (" + ", ".join(NAMED_FORMATS) + ") or eXmY"
_ROUND = "/".join(r.value for r in Rounding)
_STAGES = Param("stages", "int", 0, "register stages, 0 (combinational) up to one per cut point (the unit's "
                "max_stages: multiplier 9, fp32 adder 21 (23 with sr), SR unit 4)")
_DSP = MXU_OPTION["mul_dsp"]            # the multiplier units' option is the MXU's
#: The column units' shared parameters (hdl/mxu/accumulation/).
_COLUMN = (
    Param("in_fmt", "format", "bf16", f"the products' operand format: {_FMT} (default bf16)"),
    Param("acc_fmt", "format", "fp32", "the window's exponent and the sum's format (default fp32)"),
    Param("accumulation", "column", "column:w=26", f"{COLUMN_SPELLING} "
          "(golden.column; default column:w=26): the window's width, truncation and anchor"),
    Param("terms", "int", 4, "most terms one window sums, 1..8192: its headroom (default 4)"))
_COLUMN_STAGES = Param("stages", "int", 0, "register stages, 0 (combinational) up to the unit's max_stages")
UNITS = {
    "mul": Unit("mul", FPMultiplier, "fpmul", (
        Param("in_fmt", "format", "bf16", f"operand format: {_FMT} (default bf16)"),
        Param("out_fmt", "format", "fp32", "result format (default fp32)"),
        Param("rounding", "rounding", "rne", f"{_ROUND} (default rne)"),
        Param("sr_bits", "optional-int", None, "random bits for sr, 1..32 (default: all discarded bits)"),
        _STAGES, _DSP), "floating-point multiplier"),
    "add": Unit("add", FPAdder, "fpadd", (
        Param("fmt", "format", "fp32", f"operand and result format: {_FMT} (default fp32)"),
        Param("rounding", "rounding", "rne", f"{_ROUND} (default rne)"),
        Param("sr_bits", "optional-int", None, "random bits for sr, 1..32 (default: the precision)"),
        _STAGES), "floating-point adder"),
    "product": Unit("product", ExactProduct, "fpprod", (
        Param("in_fmt", "format", "bf16", f"operand format: {_FMT} (default bf16)"),
        Param("acc_fmt", "format", "fp32", "the format whose range classifies the product, holding it exactly "
              "(default fp32)"),
        _STAGES, _DSP), "exact product as a raw float (the fused processing element's multiplier)"),
    "product_add": Unit("product_add", ProductAdder, "fpprodadd", (
        Param("in_fmt", "format", "bf16", f"the product's operand format: {_FMT} (default bf16)"),
        Param("acc_fmt", "format", "fp32", "operand a's and the sum's format (default fp32)"),
        _STAGES), "accumulator + raw exact product, RNE (the fused processing element's adder)"),
    "rounder": Unit("rounder", StochasticRounder, "fpround", (
        Param("in_fmt", "format", "fp32", f"input format: {_FMT} (default fp32)"),
        Param("out_fmt", "format", "bf16", "output format (default bf16)"),
        Param("rounding", "rounding", "sr", f"{_ROUND} (default sr)"),
        Param("sr_bits", "optional-int", None, "random bits for sr, 1..32 (default: all discarded bits)"),
        _STAGES,
        Param("rng", "bool", True, "built-in xorshift32 lane (default); --no-rng: external rand port")),
        "stochastic rounding unit (format conversion)"),
    "mxu": Unit("mxu", MXU, "mxu", MXU_OPTIONS,
        "weight-stationary systolic matrix unit"),
    "board": Unit("board", Board, "board", (
        Param("rows", "int", 2, "MXU rows K, 1..16 (default 2)"),
        Param("cols", "int", 2, "MXU columns N, 1..16 (default 2)"),
        Param("mul_stages", "int", 1, "multiplier register stages 0..7 (default 1)"),
        Param("add_stages", "int", 1, "adder register stages 0..21 (default 1)"),
        Param("divisor", "int", 217, "clock cycles per UART bit, 4..1048576 (default 217: 115200 baud at 25 MHz)")),
        "the MXU behind a UART link (the board top; python -m hdl.board builds its bitstream)"),
    "window_add": Unit("window_add", window_adder_for, "winadd", (
        *_COLUMN,
        Param("term", "str", "product", f"what is added: {' or '.join(TERMS)} (an exact product, or an acc_fmt "
              "encoding: a normalisation point's rounded sum; default product)"),
        Param("late_sum", "bool", False, "the window joins at the add, sum_wait cycles after the term, the anchor "
              "on its own port (anchor=bound, term=product only; default off)"),
        _COLUMN_STAGES), "a column accumulator's step: window + term -> window"),
    "window_round": Unit("window_round", WindowRounder, "winround", (*_COLUMN, _COLUMN_STAGES),
                         "a column accumulator's window rounded to acc_fmt (RNE, FTZ)"),
    "norm_point": Unit("norm_point", NormalisationPoint, "normpt", (
        *_COLUMN,
        Param("round_stages", "int", 0, "the rounder's register stages (default 0)"),
        Param("add_stages", "int", 0, "the adder's register stages (default 0)")),
        "a normalisation point: the window rounded and started afresh"),
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
    if unit.key == "board":
        return (f"{unit.prefix}_{component.rows}x{component.cols}_m{component.mul_stages}a{component.add_stages}"
                f"_d{component.divisor}")
    if isinstance(component, (WindowAdderPlan, WindowRounderPlan, NormalisationPoint)):
        return "_".join(_column_parts(unit, component))
    if unit.key == "mxu":
        parts = [f"{unit.prefix}_{component.rows}x{component.cols}", component.in_fmt.name, component.acc_fmt.name,
                 f"m{component.mul_stages}a{component.add_stages}"]
        if component.convert_inputs:
            parts.append("cvt")
        if component.out_rounding is not None:
            parts.append(f"o{_name_part(component.out_rounding)}{component.rand_bits or ''}")
        if component.acc_depth:
            parts.append(f"acc{component.acc_depth}")
        if not component.fused_pe:
            parts.append("unfused")
        if component.axi_stream:
            parts.append("axis")
        parts.append(component.accumulation.key)
        return "_".join([p for p in parts if p] + _dsp_part(component)
                        + ([f"{component.fifo_ram}fifo"] if component.fifo_ram != "block" else []))
    fmts = [getattr(component, n) for n in ("in_fmt", "out_fmt", "fmt") if hasattr(component, n)]
    rounding = _name_part(component.rounding)
    if component.rand_bits is not None and component.rounding is Rounding.STOCHASTIC:
        rounding += str(component.rand_bits)
    parts = [unit.prefix, *map(_name_part, fmts), rounding, f"s{component.latency}"]
    if unit.key == "rounder" and component.rand_bits is not None:
        parts.append("rng" if component.rng else "ext")
    return re.sub(r"[^A-Za-z0-9_]", "_", "_".join(parts + _dsp_part(component)))


def _column_parts(unit: Unit, component) -> list[str]:
    """A column unit's name parts, e.g. ``winadd_bf16_fp32_colw26b_t16_product_late_s3``."""
    parts = [unit.prefix, component.in_fmt.name, component.acc_fmt.name, component.accumulation.key,
             f"t{component.terms}"]
    if isinstance(component, NormalisationPoint):
        return parts + [f"r{component.round_stages}a{component.add_stages}"]
    if isinstance(component, WindowAdderPlan):
        parts += [component.term] + (["late"] if component.late_sum else [])
    return parts + [f"s{component.latency}"]


def _dsp_part(component) -> list[str]:
    """The module name's part for an instantiated multiplier block (``ecp5dsp``), if any."""
    dsp = getattr(component, "mul_dsp", "inferred")
    return [] if dsp == "inferred" else [f"{dsp}dsp"]


def to_verilog(component, name: str) -> str:
    """The component as Verilog module ``name``, its ports in signature order. An MXU's
    repeated parts (``MXU.shared_parts``: the processing elements, any normalisation points)
    are one module each, ``NAME_pe``, ``NAME_point``, instantiated where they are used and
    written after the array's own modules; its replicated registers are marked ``keep``
    (``hdl.keep``)."""
    parts_text = ""
    for part, (build, use) in (component.shared_parts() if isinstance(component, MXU) else {}).items():
        built = build()
        text = kept_verilog(built, f"{name}_{part}")
        use(f"{name}_{part}", reset=_has_port(text, f"{name}_{part}", "rst"), signature=built.signature)
        parts_text += text
    convert = kept_verilog if isinstance(component, MXU) else partial(verilog.convert, emit_src=False)
    text = unindexed_names(convert(component, name=name) + parts_text)
    return order_ports(text, name, [p["name"] for p in signature_ports(component, _clocked(text, name))])


def _has_port(text: str, name: str, port: str) -> bool:
    return any(p["name"] == port for p in ports_of(text, name))


def _clocked(text: str, name: str) -> bool:
    return _has_port(text, name, "clk")


def _parameters(component, values: dict) -> dict:
    """The parameters as the manifest records them: formats and rounding as the component
    resolved them (``e5m10`` is ``fp16``)."""
    resolved = {k: getattr(component, k) if k in ("in_fmt", "out_fmt", "fmt", "acc_fmt", "rounding", "out_rounding") else v
                for k, v in values.items()}
    params = {k: _value(v) for k, v in resolved.items()}
    if "accumulation" in params:        # as golden.column spells it: one design, one manifest
        params["accumulation"] = resolve_accumulation("accumulation", component.accumulation).spec
    if Rounding.STOCHASTIC_HALF in (resolved.get("rounding"), resolved.get("out_rounding")):
        params["sr_bits"] = None        # one random bit whatever was asked: one design, one manifest
    return params


def manifest(unit: Unit, component, values: dict, name: str, text: str, timing: dict | None = None) -> dict:
    params = _parameters(component, values)
    facts = {"latency": getattr(component, "latency", 0)}
    if isinstance(component, MXU):
        facts["round_stages"] = component.round_stages
        facts["point_latency"] = component.point_latency
        facts["fifo_latency"] = component.fifo_latency
        facts["psum_latency"] = component.psum_latency
        facts["sum_wait"] = component.sum_wait
        facts["anchor_wait"] = component.anchor_wait
        facts["result_register"] = component.result_register
    if isinstance(component, WindowAdderPlan) and component.late_sum:
        facts["sum_wait"] = component.sum_wait      # the window ``a`` joins this many cycles after the term
    if hasattr(component, "rand_bits"):
        facts["rand_bits"] = component.rand_bits
    models = _models(component)
    if models:
        facts["sim_sources"] = [model.name for model in models]   # the simulators' models of the instantiated blocks
    if timing is not None:
        facts["timing"] = timing
    return {"module": name, "unit": unit.key, "class": type(component).__name__, "parameters": params,
            **facts, "ports": signature_ports(component, _clocked(text, name))}


def _models(component) -> list[Path]:
    """The simulation models of the ECP5 blocks ``component`` instantiates."""
    return [model for model, used in ((DSP_MODEL, getattr(component, "mul_dsp", "inferred") == "ecp5"),
                                      (BRAM_MODEL, getattr(component, "fifo_ram", "block") == "ecp5")) if used]


def write(unit: Unit, out_dir: Path, **kwargs) -> tuple[Path, Path]:
    """Elaborate one configuration and write ``NAME.v`` and ``NAME.json`` into ``out_dir``."""
    component, values = unit.build(**kwargs)
    return emit(unit, component, values, out_dir)


def emit(unit: Unit, component, values: dict, out_dir: Path, timing: dict | None = None) -> tuple[Path, Path]:
    """Write an elaborated configuration's ``NAME.v``, ``NAME.json`` (manifest; ``timing``:
    the ``build_for`` facts), ``NAME_inst.v`` (instantiation template) and ``NAME.vlt`` (lint
    waivers) into ``out_dir``;
    an MXU's also its floorplan script (``floorplan.write_scripts``) and a top that measures
    its clock (``fmax_top.write_top``); a design with an instantiated MULT18X18D or DP16KD also
    the simulators' models of them (the manifest's ``sim_sources``)."""
    name = module_name(unit, component)
    text = to_verilog(component, name)
    v_path, j_path = out_dir / f"{name}.v", out_dir / f"{name}.json"
    facts = manifest(unit, component, values, name, text, timing)
    write_text(v_path, text)
    write_text(j_path, json.dumps(facts, indent=2) + "\n")
    write_text(out_dir / f"{name}.vlt", verilator_config(text, name, tuple(m.name for m in _models(component))))
    for model in _models(component):
        write_text(out_dir / model.name, model.read_text())
    about = {k: facts[k] for k in ("latency", "rand_bits") if facts.get(k) is not None}
    write_text(out_dir / f"{name}_inst.v",
               instantiation_template(name, facts["ports"], about, escaped_ports(text, name)))
    if isinstance(component, MXU):
        write_scripts(component.rows, component.cols, name, out_dir)
        write_top(name, facts["ports"], escaped_ports(text, name), out_dir)
    return v_path, j_path
