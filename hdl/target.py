"""``hdl.build --target-mhz``: the depth that reaches a clock, from measured figures that
are still the generator's designs (``hdl.designs``) or, where none is, from predictions."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Callable

from amaranth.back import verilog

from golden.tools.cli import read_csv

from . import array_timing, timing
from .designs import CURRENT, cached_identity, status
from .mxu.element import ElementPlan, ProcessingElement
from .units import UNITS, Unit, _parameters, _value, module_name, to_verilog

__all__ = ["DEPTH", "TIMING_TERMS", "build_for", "array_status", "mxu_identity", "unit_identity"]


#: The depth parameters ``--target-mhz`` chooses, per unit (MXU: the adder's stages cost
#: ``rows`` cycles of latency each, the multiplier's one, so adder stages are added last).
DEPTH = {"mul": ("stages",), "add": ("stages",), "rounder": ("stages",), "mxu": ("mul_stages", "add_stages")}
TIMING_CSV = Path(__file__).resolve().parent.parent / "docs" / "timing.csv"
#: The rows docs/timing.csv's column elements are built for (their window's headroom).
TIMING_TERMS = 16


def _depth_choices(unit: Unit, kwargs: dict):
    """Candidate depth settings, cheapest latency first."""
    if unit.key != "mxu":
        plan, _ = unit.plan(**kwargs, stages=0)
        return [{"stages": n} for n in range(plan.max_stages + 1)]
    element = ElementPlan(fused=kwargs.get("fused_pe", True), terms=kwargs.get("rows", 4),
                          accumulation=kwargs.get("accumulation"))
    mul_max, add_max = element.mul.max_stages, element.add.max_stages
    rows = kwargs.get("rows", 4)
    pairs = [(m, a) for m in range(mul_max + 1) for a in range(add_max + 1)]
    return [{"mul_stages": m, "add_stages": a} for m, a in sorted(pairs, key=lambda p: (rows * p[1] + p[0], p))]


def unit_identity(module: str, build: Callable[[], object]) -> str:
    """docs/timing.csv's identity of a unit or element (``hdl.designs``): Amaranth's Verilog
    of ``build()`` as module ``module``, without source locations (``build`` is called only
    where the cache has no identity for the sources as they stand)."""
    return cached_identity("unit", {"module": module},
                           lambda: verilog.convert(build(), name=module, emit_src=False))


def mxu_identity(config: dict) -> str:
    """docs/mxu-pnr.csv's identity of an array (``hdl.designs``): the ``NAME.v`` ``hdl.build
    mxu`` writes for ``config`` (parameters; the others at their defaults)."""
    def generate():
        component, _ = UNITS["mxu"].build(**config)
        return to_verilog(component, module_name(UNITS["mxu"], component))
    return cached_identity("mxu", config, generate)


def mxu_row_config(row: dict) -> dict:
    """The ``hdl.build mxu`` parameters a docs/mxu-pnr.csv row records."""
    return {**{k: int(row[k]) for k in ("rows", "cols", "mul_stages", "add_stages")},
            "fused_pe": row["pe"] == "fused", "accumulation": row["accumulation"], "mul_dsp": row["mul_dsp"],
            "fifo_ram": row["fifo_ram"]}


def array_status(row: dict) -> str:
    """A docs/mxu-pnr.csv row's status (``hdl.designs``): its recorded design against the
    ``NAME.v`` ``hdl.build mxu`` writes for its parameters now."""
    return status(row.get("design"), lambda: mxu_identity(mxu_row_config(row)))


def _current_array(row: dict) -> bool:
    return array_status(row) == CURRENT


def achieved_mhz(arch: str, module: str, build: Callable[[], object], path: Path | None = None):
    """The place-and-route Fmax of exactly ``module`` on ``arch`` in ``path`` (default
    ``TIMING_CSV``), or None (also where that row measured another design than ``build()``,
    the component, is now)."""
    path = TIMING_CSV if path is None else path
    for row in read_csv(path):
        if row["arch"] == arch and row["module"] == module:
            current = status(row.get("design"), lambda: unit_identity(module, build)) == CURRENT
            return float(row["fmax_mhz"]) if current else None
    return None


def _measured_mhz(unit: Unit, kwargs: dict, arch: str):
    """docs/timing.csv's Fmax of exactly the design ``unit.build(**kwargs)`` gives, or None."""
    plan, _ = unit.plan(**kwargs)
    return achieved_mhz(arch, module_name(unit, plan), lambda: unit.build(**kwargs)[0])


def _array_mhz(component, values: dict, arch: str) -> dict:
    """An MXU's (or its plan's) figure from measured arrays (``array_timing.array_mhz``)."""
    design = {k: v for k, v in _parameters(component, values).items() if k != "fused_pe"}
    design["pe"] = "fused" if component.fused_pe else "generic"
    defaults = {p.name: _value(p.default) for p in UNITS["mxu"].params}
    element = (arch, component.in_fmt.name, component.acc_fmt.name, component.fused_pe, component.accumulation.spec)
    return array_timing.array_mhz(arch, design, defaults,
                                  functools.partial(_element_mhz, *element, component.rows),
                                  element_measured=functools.partial(_element_measured, *element, component.mul_dsp),
                                  path=array_timing.MXU_PNR_CSV, current=_current_array)


def _element_measured(arch: str, in_fmt: str, acc_fmt: str, fused: bool, accumulation: str, mul_dsp: str,
                      mul_stages: int, add_stages: int):
    """docs/timing.csv's Fmax of an MXU's processing element at a depth (a window element
    as measured, for ``TIMING_TERMS`` rows), or None."""
    params = dict(in_fmt=in_fmt, acc_fmt=acc_fmt, mul_stages=mul_stages, add_stages=add_stages, fused=fused,
                  accumulation=accumulation, terms=TIMING_TERMS, mul_dsp=mul_dsp)
    return achieved_mhz(arch, ElementPlan(**params).module_name(TIMING_TERMS), lambda: ProcessingElement(**params))


@functools.cache
def _element_mhz(arch: str, in_fmt: str, acc_fmt: str, fused: bool, accumulation: str, terms: int,
                 mul_stages: int, add_stages: int) -> float:
    """The delay model's Fmax of an MXU's processing element (its accumulation's, for
    ``terms`` rows)."""
    element = ElementPlan(in_fmt=in_fmt, acc_fmt=acc_fmt, mul_stages=mul_stages, add_stages=add_stages, fused=fused,
                          accumulation=accumulation, terms=terms)
    return timing.predict_mhz(element, arch)


def _mxu_for(kwargs: dict, arch: str, target_mhz: float | None):
    """``build_for`` for an MXU, from measured arrays: with ``target_mhz``, the cheapest depth
    whose own runs reach it or, if none does, the cheapest predicted to (a prediction never
    exceeds what the nearest measured sizes reached)."""
    unit = UNITS["mxu"]
    if target_mhz is None:
        component, values = unit.build(**kwargs)
        return component, values, {"arch": arch, "target_mhz": None, "achieved_mhz": _array_mhz(component, values, arch)}
    choices = _depth_choices(unit, kwargs)
    plan, values = unit.plan(**{**kwargs, **choices[0]})     # the depth changes no other parameter
    chosen, fastest = None, None
    for depth in choices:
        figure = _array_mhz(plan, {**values, **depth}, arch)
        if figure["mhz"] is None:
            continue
        measured = "measured" in figure
        # A measured design promises what its slowest seed reached; a prediction its figure.
        reached = figure.get("slowest_mhz", figure["mhz"])
        if reached >= target_mhz and (chosen is None or measured):
            chosen = (depth, figure)
            if measured:
                break
        if fastest is None or (reached, measured) > (fastest.get("slowest_mhz", fastest["mhz"]), "measured" in fastest):
            fastest = figure
    if chosen is None:
        reach = (f"arrays measured {fastest['slowest_mhz']:g} MHz at best on every seed ({fastest['design']}, "
                 f"{fastest['measured']}, {fastest['source']})" if "measured" in fastest else
                 f"at most {fastest['mhz']:g} MHz predicted ({fastest['predicted']})") if fastest else "it does not fit"
        raise ValueError(f"target_mhz {target_mhz:g} is out of reach on {arch} for a {kwargs.get('rows', 4)}x"
                         f"{kwargs.get('cols', 4)} array: {reach}")
    depth, figure = chosen
    component, values = unit.build(**{**kwargs, **depth})
    return component, values, {"arch": arch, "target_mhz": target_mhz, "achieved_mhz": figure}


def build_for(unit: Unit, kwargs: dict, arch: str, target_mhz: float | None):
    """``unit.build`` at the explicit depth or, with ``target_mhz``, at the smallest depth
    that reaches it: measured (docs/timing.csv) where that design was placed and routed
    (and is still what the generator emits),
    else predicted; an MXU from measured arrays (``_mxu_for``). Returns (component, values,
    timing facts for the manifest)."""
    if target_mhz is not None and not 1 <= target_mhz <= 1000:
        raise ValueError(f"target_mhz must be in 1..1000 MHz, not {target_mhz:g}")
    if unit.key == "mxu":
        return _mxu_for(kwargs, arch, target_mhz)
    if target_mhz is not None:
        kwargs = {**kwargs, **_unit_depth(unit, kwargs, arch, target_mhz)}
    component, values = unit.build(**kwargs)
    mhz = timing.predict_mhz(component, arch)
    facts = {"arch": arch, "target_mhz": target_mhz, "predicted_mhz": round(mhz, 1),
             "achieved_mhz": achieved_mhz(arch, module_name(unit, component), lambda: component)}
    return component, values, facts


def _unit_depth(unit: Unit, kwargs: dict, arch: str, target_mhz: float):
    """The cheapest depth (``_depth_choices``) whose design reaches ``target_mhz``, measured
    where it was placed and routed, else predicted, from its plan."""
    best = None
    for depth in _depth_choices(unit, kwargs):
        plan, _ = unit.plan(**{**kwargs, **depth})
        mhz = timing.predict_mhz(plan, arch)
        measured = _measured_mhz(unit, {**kwargs, **depth}, arch)
        reached = measured if measured is not None else mhz
        if reached >= target_mhz:
            return depth
        if best is None or reached > best[1] + 1e-9:
            best = (depth, reached, measured is not None)
    where = ", ".join(f"{k}={v}" for k, v in best[0].items())
    raise ValueError(f"target_mhz {target_mhz:g} is out of reach on {arch}: the highest is "
                     f"{best[1]:.1f} MHz {'measured' if best[2] else 'predicted'} ({where})")
