"""What ``python -m synth.timing`` places: the plan of runs per part (``PLAN``) and each
run's design (``component``)."""

from __future__ import annotations

import re

from hdl.target import TIMING_TERMS

#: (kind, label, stages per architecture) in the order they run: the bare multiply first
#: (the reference), then each unit's deepest useful pipelines, then the shallower ones.
UNITS = {
    "bare": ("bare 8x8 multiply", None),
    "bare_dsp": ("bare 8x8 multiply, SB_MAC16", None),
    "mul_exact": ("bf16 x bf16 -> fp32 exact", ("mul", dict(in_fmt="bf16", out_fmt="fp32"))),
    "mul_rne": ("bf16 RNE multiplier", ("mul", dict(in_fmt="bf16", out_fmt="bf16", rounding="rne"))),
    "add": ("fp32 adder", ("add", dict(fmt="fp32", rounding="rne"))),
    "sr": ("SR fp32 -> bf16", ("rounder", dict(in_fmt="fp32", out_fmt="bf16", rounding="sr"))),
    "pe": ("MXU PE", None),
    "pe_fused": ("MXU PE, fused", None),
    "pe_fused_nosr": ("MXU PE, fused, no inferred sync resets", None),
    "pe_dsp": ("MXU PE, SB_MAC16", None),
    "fabric_add": ("28-bit add/subtract alone", None),
    **{f"pe_colw{w}": (f"MXU PE, column accumulator, W={w}", None) for w in (16, 20, 24, 26, 28, 32)},
    **{f"pe_colw{w}b": (f"MXU PE, column accumulator, W={w}, bound anchor", None) for w in (24, 26, 28, 30, 32)},
    **{f"colround_w{w}": (f"column rounder, W={w}", None) for w in (24, 26, 28)},
    **{f"pe_colw{w}b_regdsp": (f"MXU PE, column accumulator, W={w}, bound anchor, MULT18X18D registers", None)
       for w in (26, 28)},
    "pe_colw30sx_regdsp": ("MXU PE, column accumulator, W=30, sticky, exact anchor, MULT18X18D registers", None),
}
#: Rows the column-accumulator designs are measured for (the window's headroom: 5 bits).
COLUMN_TERMS = TIMING_TERMS
#: Width of the ``fabric_add`` reference: the fp32 adder's significand sum.
FABRIC_ADD_WIDTH = 28
#: Kinds that are no unit of the library but references on the same part: the bare multiplies
#: (the ratios' denominator) and the adder's significand add/subtract with nothing around it.
REFERENCES = ("bare", "bare_dsp", "fabric_add")
PLAN = {
    "ecp5": [("bare", 0), ("mul_exact", 2), ("mul_rne", 4), ("add", 7), ("sr", 2), ("pe", (4, 7)),
             ("mul_exact", 1), ("add", 9), ("add", 5), ("pe", (6, 9)), ("mul_rne", 3), ("mul_exact", 4),
             ("mul_exact", 0), ("mul_rne", 0), ("add", 0), ("sr", 0), ("pe", (0, 0)),
             ("add", 3), ("sr", 1), ("mul_rne", 2), ("pe", (1, 1)), ("add", 10), ("pe", (6, 10)), ("pe", (9, 9)),
             ("pe_fused", (4, 10)), ("pe_fused", (4, 7)), ("pe_fused", (4, 5)), ("pe_fused", (4, 8)),
             ("pe_fused", (4, 6)), ("pe_fused", (3, 7)), ("pe_fused_nosr", (4, 6)), ("pe_fused_nosr", (4, 5)),
             ("pe_colw24", (4, 4)), ("pe_colw26", (4, 4)), ("pe_colw28", (4, 4)), ("pe_colw32", (4, 4)),
             ("pe_colw16", (4, 4)), ("pe_colw20", (4, 4)), ("pe_colw26", (4, 3)), ("pe_colw26", (4, 5)),
             ("colround_w26", 3), ("colround_w26", 5), ("colround_w24", 5), ("colround_w28", 5),
             ("pe_colw26b", (4, 4)), ("pe_colw28b", (4, 4)), ("pe_colw24b", (4, 4)), ("pe_colw30b", (4, 4)),
             ("pe_colw28b", (4, 3)), ("pe_colw28b", (4, 2)), ("pe_colw26b", (5, 4)), ("pe_colw26b", (6, 4)),
             ("pe_colw26b", (7, 4)), ("pe_colw28b", (6, 4)), ("pe_colw26b", (3, 3)), ("pe_colw26b", (4, 2)),
             ("pe_colw26b_regdsp", (4, 4)), ("pe_colw26b_regdsp", (4, 3)), ("pe_colw28b_regdsp", (4, 4)),
             ("pe_colw30sx_regdsp", (5, 5)), ("pe_colw30sx_regdsp", (5, 3)), ("pe_colw30sx_regdsp", (4, 3))],
    "ice40": [("bare", 0), ("bare_dsp", 0), ("pe", (4, 7)), ("pe_dsp", (4, 7)), ("pe", (6, 9)), ("pe", (0, 0)),
              ("pe_dsp", (6, 9)), ("pe_dsp", (9, 12)), ("pe_dsp", (9, 21)), ("fabric_add", 0)],
}


def component(kind: str, stages, *, plan: bool = False):
    """The design of one run and its module name; with ``plan``, the design's plan instead
    (its segments and latency; ``None`` for a reference, which has none)."""
    from hdl.units import UNITS as BUILD
    from hdl.units import module_name
    from hdl.mxu.element import ElementPlan, ProcessingElement

    from ..significand import SignificandAdder, SignificandMultiplier
    if kind.startswith("bare"):
        return None if plan else SignificandMultiplier(width=8), "sigmul_8x8"
    if kind == "fabric_add":
        return None if plan else SignificandAdder(width=FABRIC_ADD_WIDTH), f"sigadd_{FABRIC_ADD_WIDTH}"
    element = ElementPlan if plan else ProcessingElement
    if kind.startswith(("pe_colw", "colround_w")):
        from golden.column import ColumnAccumulator
        from hdl.mxu.accumulation.window_rounder import WindowRounder
        width, sticky, anchor, dsp = re.fullmatch(r".*w(\d+)(s?)([bx]?)(_regdsp)?", kind).groups()
        window = ColumnAccumulator(window=int(width), sticky=bool(sticky),
                                   anchor={"b": "bound", "x": "exact", "": "running"}[anchor])
        if kind.startswith("colround"):
            rounder = WindowRounder.plan if plan else WindowRounder
            return (rounder(accumulation=window, terms=COLUMN_TERMS, stages=stages),
                    f"colround_bf16_fp32_{window.key}_t{COLUMN_TERMS}_s{stages}")
        pe = element(mul_stages=stages[0], add_stages=stages[1], accumulation=window, terms=COLUMN_TERMS,
                     mul_dsp="ecp5" if dsp else "inferred")
        return pe, pe.module_name(COLUMN_TERMS)
    if kind.startswith("pe"):
        pe = element(mul_stages=stages[0], add_stages=stages[1], fused=kind.startswith("pe_fused"))
        # A flow variant's module name differs, so that no lookup by module takes its figure
        # for the default flow's (hdl.build --target-mhz).
        return pe, pe.module_name(COLUMN_TERMS) + "_nosr" * kind.endswith("_nosr")
    unit, params = UNITS[kind][1]
    design, _ = (BUILD[unit].plan if plan else BUILD[unit].build)(**params, stages=stages)
    return design, module_name(BUILD[unit], design)


def design_plan(kind, stages):
    """The plan of a row's design, for the model's segments."""
    return component(kind, tuple(stages) if isinstance(stages, list) else stages, plan=True)[0]
