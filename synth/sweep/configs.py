"""The sweep's configurations: (a) mantissa widths 2..23 at exponents 8 and 5, (b) the named
formats, (c) the fp32 adder, the SR unit, the MXU's processing elements (with each accumulator) and
MXU sizes; and
the component each one builds."""

from __future__ import annotations

import functools

from golden.formats import NAMED_FORMATS, parse_format

from .. import flows as yosys_flows

__all__ = ["ALL_FLOWS", "GROUPS", "SERIES", "NAMING", "configurations", "component", "verilog", "configuration_of"]

ALL_FLOWS = tuple(yosys_flows.FLOWS)
GROUPS = ("a", "b", "c")
MANTISSAS = range(2, 24)
SERIES = {          # kind -> plot label
    "bare": "bare (m+1)x(m+1) significand multiplier",
    "mul_rne_e8": "same-format RNE multiplier, exponent 8",
    "mul_rne_e5": "same-format RNE multiplier, exponent 5",
    "mul_exact_e8": "exact-product multiplier, exponent 8",
}


def _fmt(exp: int, man: int) -> str:
    """The format's name (``bf16`` for e8m7), so a design in two sweeps is one configuration."""
    return parse_format(f"e{exp}m{man}").name


#: The columns of a synth.csv row that name its configuration.
NAMING = ("group", "kind", "label", "exp", "man")


def _config(group, kind, unit, params, man=None, exp=None, label=""):
    return {"group": group, "kind": kind, "unit": unit, "params": params, "man": man, "exp": exp,
            "label": label, "flows": list(ALL_FLOWS)}


def configurations(quick: bool = False) -> list[dict]:
    """Every configuration of the sweep (``quick``: a few small ones)."""
    if quick:
        return [*(_config("a", "bare", "bare", {"width": m + 1}, man=m) for m in (3, 7, 10)),
                _config("b", "mul_rne", "mul", {"in_fmt": "bf16", "out_fmt": "bf16"}, 7, 8, "bf16"),
                _config("b", "mul_rne", "mul", {"in_fmt": "fp16", "out_fmt": "fp16"}, 10, 5, "fp16")]
    out = []
    for m in MANTISSAS:                                            # (a)
        out.append(_config("a", "bare", "bare", {"width": m + 1}, man=m))
        for e in (8, 5):
            f = _fmt(e, m)
            out.append(_config("a", f"mul_rne_e{e}", "mul", {"in_fmt": f, "out_fmt": f}, m, e))
        if 2 * m + 1 <= 23:                                         # the product fits a format
            out.append(_config("a", "mul_exact_e8", "mul", {"in_fmt": _fmt(8, m), "out_fmt": _fmt(8, 2 * m + 1)}, m, 8))
    for name in ("fp8_e4m3", "fp8_e4m3fn", "fp8_e5m2", "bf16", "fp16", "tf32", "fp32"):  # (b)
        f = NAMED_FORMATS[name]
        out.append(_config("b", "mul_rne", "mul", {"in_fmt": name, "out_fmt": name}, f.man_bits, f.exp_bits, name))
        if name != "fp32":
            out.append(_config("b", "mul_exact", "mul", {"in_fmt": name, "out_fmt": "fp32"}, f.man_bits,
                               f.exp_bits, f"{name} -> fp32"))
    for stages in (0, 3):                                           # (c)
        out.append(_config("c", "adder", "add", {"fmt": "fp32", "stages": stages}, label=f"fp32 adder s{stages}"))
    for sr_bits in (4, 8, 16):
        for stages in (0, 2):
            out.append(_config("c", "sr", "rounder", {"rounding": "sr", "sr_bits": sr_bits, "stages": stages},
                               label=f"SR fp32->bf16 sr_bits {sr_bits} s{stages}"))
    out.append(_config("c", "sr", "rounder", {"rounding": "sr-half", "stages": 0}, label="SR fp32->bf16 sr-half s0"))
    for fused, kind, name in ((False, "pe", "MXU PE"), (True, "pe_fused", "MXU PE, fused")):
        for mul, add in ((0, 0), (1, 1)):
            out.append(_config("c", kind, "pe", {"mul_stages": mul, "add_stages": add, "fused": fused},
                               label=f"{name} m{mul}a{add}"))
        out.append(_config("c", kind.replace("pe", "pe_fp8"), "pe",
                           {"in_fmt": "fp8_e4m3fn", "mul_stages": 0, "add_stages": 0, "fused": fused},
                           label=f"{name} fp8_e4m3fn inputs m0a0"))
    # The accumulator as an axis: the column accumulator's element against W (running and
    # bound anchor) and its column rounder, beside the fp32 elements above (synth.timing's designs).
    for kind in ("pe_colw16", "pe_colw24", "pe_colw32", "pe_colw24b", "pe_colw32b"):
        out.append(_config("c", kind, "timing", {"kind": kind, "stages": [0, 0]}, label=f"{_timing_label(kind)} m0a0"))
    out.append(_config("c", "colround_w24", "timing", {"kind": "colround_w24", "stages": 0},
                       label=f"{_timing_label('colround_w24')} s0"))
    for size in (1, 2, 4, 8):
        for mul, add in ((0, 0), (1, 1)):
            out.append(_config("c", "mxu", "mxu", {"rows": size, "cols": size, "mul_stages": mul, "add_stages": add},
                               label=f"MXU {size}x{size} m{mul}a{add}"))
    return out


def _timing_label(kind: str) -> str:
    from ..timing.designs import UNITS as TIMED
    return TIMED[kind][0]


def component(config):
    """The configuration's component and Verilog module name (``module``)."""
    from hdl.units import UNITS
    from hdl.mxu.element import ProcessingElement

    from ..significand import SignificandMultiplier

    unit, params = config["unit"], config["params"]
    if unit == "bare":
        built = SignificandMultiplier(**params)
    elif unit == "timing":
        from ..timing.designs import component as timed_component
        built, _ = timed_component(params["kind"], params["stages"])
    elif unit == "pe":
        built = ProcessingElement(**params)
    else:
        built, _ = UNITS[unit].build(**params)
    return built, module(config)


def module(config) -> str:
    """The configuration's Verilog module name, from its plan: no hardware is built."""
    from hdl.units import UNITS, module_name
    from hdl.mxu.element import ElementPlan

    unit, params = config["unit"], config["params"]
    if unit == "bare":
        return f"sigmul_{params['width']}x{params['width']}"
    if unit == "timing":
        from ..timing.designs import component as timed_component
        return timed_component(params["kind"], params["stages"], plan=True)[1]
    if unit == "pe":
        pe = ElementPlan(**params)
        return f"mxu_pe_{pe.in_fmt}_fp32_m{pe.mul.latency}a{pe.add.latency}" + "_fused" * pe.fused
    plan, _ = UNITS[unit].plan(**params)
    return module_name(UNITS[unit], plan)


def verilog(config) -> tuple[str, str]:
    """The Verilog the sweep synthesises for the configuration (``hdl.units.to_verilog`` of
    its component) and its top module's name."""
    from hdl.units import to_verilog
    unit, top = component(config)
    return to_verilog(unit, top), top


def _name(config: dict) -> tuple[str, ...]:
    return tuple("" if config[k] is None else str(config[k]) for k in NAMING)


@functools.cache
def _by_name() -> dict:
    return {_name(c): c for c in configurations()}


def configuration_of(row: dict) -> dict | None:
    """The full sweep's configuration a synth.csv row measured (by its ``NAMING`` columns),
    or None where the sweep no longer has it."""
    return _by_name().get(_name(row))
