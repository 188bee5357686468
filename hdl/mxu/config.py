"""What an MXU computes (``MXUFunction``) and how it is built (``MXUImplementation``): two
frozen descriptions, resolved and checked once (``resolve``) and passed down as objects.

``OPTIONS`` describes every option once: ``hdl.build mxu``'s flags and ``--help``, every
command that takes an MXU's options, the manifest's parameters and the datasheet's table
(``parameter_table``, docs/mxu.md) all come from it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from golden.column import SEQUENTIAL, accumulation_arg
from golden.formats import BF16, FP32, NAMED_FORMATS, FloatFormat
from golden.ops import convert_sr_bits
from golden.rounding import Rounding

from ..ecp5_bram import MODEL as BRAM_MODEL
from ..ecp5_dsp import MODEL as DSP_MODEL, dsp_param
from ..params import Param, bool_param, check_exact_products, choice_param, format_param, int_param, rounding_param
from .accumulation import COLUMN_SPELLING, Accumulation, resolve_accumulation
from .element import check_pe_stages
from .output_fifo import RAMS as FIFO_RAMS

__all__ = ["MXUFunction", "MXUImplementation", "resolve", "OPTIONS", "OPTION", "parameter_table", "describes", "MAX_SIZE", "MAX_ACC_DEPTH"]

MAX_SIZE = 256
MAX_ACC_DEPTH = 65536

_FMT = "a name (" + ", ".join(NAMED_FORMATS) + ") or eXmY"
_ROUND = "/".join(r.value for r in Rounding)

#: Every option, in the order the command lines and the manifest list them; what each
#: describes, what the MXU computes or how it is built, is ``MXUFunction``'s or
#: ``MXUImplementation``'s field of that name.
OPTIONS = (
    Param("rows", "int", 4, "rows K (reduction depth), 1..256 (default 4)", "1..256"),
    Param("cols", "int", 4, "columns N, 1..256 (default 4)", "1..256"),
    Param("in_fmt", "format", "bf16", f"multiplier input format: {_FMT} (default bf16)", "formats"),
    Param("acc_fmt", "format", "fp32", "accumulation format, holding every product exactly (default fp32)",
          "formats"),
    Param("convert_inputs", "bool", False, "x and w arrive in acc_fmt, RNE to in_fmt on entry (default off)", "bool"),
    Param("out_rounding", "optional-rounding", None, f"none (y in acc_fmt; default) or {_ROUND}: y rounded "
          "to in_fmt by one rounder lane per column", "none, " + ", ".join(r.value for r in Rounding)),
    Param("sr_bits", "optional-int", None, "random bits per sr output rounding, 1..32 (default: all discarded bits)",
          "1..32"),
    Param("acc_depth", "int", 0, "output accumulator rows: 0 (none; default) or a power of two, 2..65536",
          "0, 2..65536"),
    Param("mul_stages", "int", 0, "multiplier register stages 0..7 (0..9 with --no-fused-pe; default 0)",
          "0..7 (0..9 unfused)"),
    Param("add_stages", "int", 0, "adder register stages 0..21 (default 0)", "0..21 (fp32 acc_fmt)"),
    Param("fused_pe", "bool", True, "processing elements whose multiplier hands the adder its raw exact "
          "product (default); --no-fused-pe: the generic multiplier and adder, the same bits", "bool"),
    Param("axi_stream", "bool", False, "AXI4-Stream port names: s_axis_w_*, s_axis_x_* (tuser: the x "
          "control fields), m_axis_y_* (default off: w__*, x__*, y__*)", "bool"),
    Param("accumulation", "str", SEQUENTIAL, f"how a column sums its products: {SEQUENTIAL} (default: every add "
          f"rounded to acc_fmt, RNE) or {COLUMN_SPELLING}: a W-bit fixed-point window per column (W from the "
          "product's width to 48; 26 by default), rounded at the array's edge and after every G rows "
          "(docs/semantics.md)", f"{SEQUENTIAL}, {COLUMN_SPELLING}"),
    Param("mul_dsp", "str", "inferred", "inferred (default: the significand product a * that synthesis maps) or "
          "ecp5: an instantiated MULT18X18D with its input and output registers, an ECP5-only design "
          "simulated with the model written beside it (" + DSP_MODEL.name + ")", "inferred, ecp5"),
    Param("fifo_ram", "str", "block", "the output FIFO's memory: block (default: the synthesis tool's "
          "choice, block RAM on large arrays), lut: LUT RAM, off the block RAM's clock-to-out, or ecp5: "
          "DP16KD block RAMs with their output registers (latency + 1), an ECP5-only design simulated "
          "with the model written beside it (" + BRAM_MODEL.name + ")", "block, lut, ecp5"),
)


@dataclass(frozen=True)
class MXUFunction:
    """What an MXU computes: its shape, formats, input conversion, output rounding, output
    accumulators and how a column sums (``accumulation``). ``rand_bits``: the random bits
    per stochastic output rounding (None without one)."""

    rows: int
    cols: int
    in_fmt: FloatFormat
    acc_fmt: FloatFormat
    convert_inputs: bool
    out_rounding: Rounding | None
    sr_bits: int | None
    acc_depth: int
    accumulation: Accumulation
    rand_bits: int | None

    @property
    def out_fmt(self) -> FloatFormat:
        """The format of ``y``: ``in_fmt`` with output rounding, else ``acc_fmt``."""
        return self.acc_fmt if self.out_rounding is None else self.in_fmt

    @property
    def acc_addr_width(self) -> int:
        """Width of ``x.payload.addr`` (``log2(acc_depth)``)."""
        return max(self.acc_depth - 1, 0).bit_length()


@dataclass(frozen=True)
class MXUImplementation:
    """How an MXU is built: pipeline depths, element kind, the multiplier's and the FIFO's
    blocks, the ports' naming."""

    mul_stages: int
    add_stages: int
    fused_pe: bool
    axi_stream: bool
    mul_dsp: str
    fifo_ram: str


def _function(rows, cols, in_fmt, acc_fmt, convert_inputs, out_rounding, sr_bits, acc_depth, accumulation
              ) -> MXUFunction:
    rows, cols = int_param("rows", rows, 1, MAX_SIZE), int_param("cols", cols, 1, MAX_SIZE)
    in_fmt, acc_fmt = format_param("in_fmt", in_fmt), format_param("acc_fmt", acc_fmt)
    check_exact_products(in_fmt, acc_fmt)
    bool_param("convert_inputs", convert_inputs)
    out_rounding = None if out_rounding in (None, "none") else rounding_param(out_rounding, name="out_rounding")
    if out_rounding is None and sr_bits is not None:
        raise ValueError(f"sr_bits={sr_bits} needs a stochastic out_rounding (sr, sr-half), not none")
    rand_bits = None if out_rounding is None else convert_sr_bits(acc_fmt, in_fmt, out_rounding, sr_bits)
    acc_depth = int_param("acc_depth", acc_depth, 0, MAX_ACC_DEPTH)
    if acc_depth == 1 or acc_depth & (acc_depth - 1):
        raise ValueError(f"acc_depth must be 0 or a power of two in 2..{MAX_ACC_DEPTH}, not {acc_depth}")
    return MXUFunction(rows, cols, in_fmt, acc_fmt, convert_inputs, out_rounding, sr_bits, acc_depth,
                       resolve_accumulation("accumulation", accumulation), rand_bits)


def resolve(*, rows, cols, in_fmt=BF16, acc_fmt=FP32, convert_inputs=False, out_rounding=None, sr_bits=None,
            acc_depth=0, accumulation=None, mul_stages=0, add_stages=0, fused_pe=True, axi_stream=False,
            mul_dsp="inferred", fifo_ram="block", accumulator=None) -> tuple[MXUFunction, MXUImplementation]:
    """The options (``OPTIONS``; ``accumulation`` also an ``Accumulation``; ``accumulator``: its
    old name) checked, as the two descriptions: a ValueError or TypeError naming the first bad
    option and its value."""
    bool_param("fused_pe", fused_pe)
    bool_param("axi_stream", axi_stream)
    function = _function(rows, cols, in_fmt, acc_fmt, convert_inputs, out_rounding, sr_bits, acc_depth,
                         accumulation_arg(accumulation, accumulator))
    function.accumulation.check(function.in_fmt, function.acc_fmt, fused_pe)
    mul_stages, add_stages = check_pe_stages(function.in_fmt, function.acc_fmt, mul_stages, add_stages, fused_pe,
                                             function.accumulation, function.rows)
    implementation = MXUImplementation(mul_stages, add_stages, fused_pe, axi_stream,
                                       dsp_param(mul_dsp, function.in_fmt),
                                       choice_param("fifo_ram", fifo_ram, FIFO_RAMS))
    return function, implementation


#: The options by name.
OPTION = {p.name: p for p in OPTIONS}
_GROUPS = {MXUFunction: "what it computes", MXUImplementation: "how it is built"}


def describes(option: Param):
    """Which description an option belongs to: ``MXUFunction`` or ``MXUImplementation``."""
    return MXUFunction if option.name in {f.name for f in fields(MXUFunction)} else MXUImplementation


def _shown(value) -> str:
    """A default as the datasheet shows it."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def parameter_table() -> str:
    """The datasheet's parameter table (docs/mxu.md), in Markdown: one row per option, what
    the MXU computes, then how it is built."""
    rows = ["| option | describes | values | default | what it does |", "|---|---|---|---|---|"]
    for group in (MXUFunction, MXUImplementation):
        rows += ["| " + " | ".join(cell.replace("|", "\\|") for cell in (
                    f"`{p.name}`", _GROUPS[group], p.values, _shown(p.default), p.help)) + " |"
                 for p in OPTIONS if describes(p) is group]
    return "\n".join(rows) + "\n"
