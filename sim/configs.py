"""The unit configurations the regressions cover (the contract's units, each at several depths)."""

MULTIPLIERS = [
    dict(in_fmt="bf16", out_fmt="fp32"),                       # exact product
    dict(in_fmt="bf16", out_fmt="bf16", rounding="rne"),
    dict(in_fmt="bf16", out_fmt="bf16", rounding="sr"),
    dict(in_fmt="bf16", out_fmt="bf16", rounding="sr-half"),
    dict(in_fmt="fp16", out_fmt="fp16", rounding="rne"),
    dict(in_fmt="fp32", out_fmt="fp32", rounding="rne"),
    dict(in_fmt="fp32", out_fmt="bf16", rounding="rtz"),
    dict(in_fmt="fp8_e4m3", out_fmt="fp32"),
    dict(in_fmt="fp8_e4m3fn", out_fmt="fp8_e4m3fn", rounding="rne"),     # OCP: no inf, overflow to NaN
]
ADDERS = [
    dict(fmt="fp32", rounding="rne"),
    dict(fmt="bf16", rounding="rne"),
    dict(fmt="fp32", rounding="sr"),
    dict(fmt="fp32", rounding="rtz"),
    dict(fmt="bf16", rounding="sr-half"),
]
ROUNDERS = [
    dict(in_fmt="fp32", out_fmt="bf16", rounding="rne"),
    dict(in_fmt="fp32", out_fmt="bf16", rounding="sr"),
    dict(in_fmt="fp32", out_fmt="bf16", rounding="sr-half"),
    dict(in_fmt="fp32", out_fmt="bf16", rounding="sr", sr_bits=8),
    dict(in_fmt="fp32", out_fmt="bf16", rounding="sr", rng=False),
    dict(in_fmt="fp32", out_fmt="fp16", rounding="rne"),
    dict(in_fmt="fp32", out_fmt="fp8_e4m3fn_sat", rounding="sr"),          # OCP, saturating
]
XORSHIFTS = [dict(lanes=1), dict(lanes=4)]

#: (unit, parameters) at every depth of ``STAGES``; the xorshift unit has no stages.
STAGES = (0, 2)
CONFIGS = [(unit, {**params, "stages": s}) for unit, group in
           (("mul", MULTIPLIERS), ("add", ADDERS), ("rounder", ROUNDERS)) for params in group for s in STAGES]
CONFIGS += [("xorshift", params) for params in XORSHIFTS]
#: Deeper pipelines, up to a register at every cut point (``max_stages``: multiplier 9, fp32
#: adder 21 with RNE, 23 with SR, SR unit 4) and past the interior ones into the input/output
#: registers (Verilator only).
DEEP = [("mul", dict(stages=9)), ("mul", dict(out_fmt="bf16", rounding="rne", stages=3)),
        ("mul", dict(out_fmt="bf16", rounding="sr", stages=4)),
        ("add", dict(rounding="rne", stages=11)), ("add", dict(rounding="sr", stages=5)),
        ("add", dict(rounding="rne", stages=21)), ("add", dict(rounding="sr", stages=17)),
        ("add", dict(fmt="bf16", rounding="sr-half", stages=8)), ("add", dict(rounding="rne", stages=9)),
        ("rounder", dict(stages=4)), ("rounder", dict(rounding="rne", stages=1))]
#: Those run without ``--thorough``: a register at every interior cut point of each unit
#: (multiplier, fp32 adder, SR unit), and the stochastic multiplier and adder.
DEEP_DEFAULT = [DEEP[0], DEEP[2], DEEP[5], DEEP[6], DEEP[9]]

#: The significand product in an instantiated ECP5 MULT18X18D (``mul_dsp="ecp5"``): its input and
#: output registers at each depth that uses them, the product exact, rounded, stochastic.
ECP5_DSP = [("mul", dict(stages=4, mul_dsp="ecp5")), ("mul", dict(in_fmt="fp8_e4m3", out_fmt="fp32", stages=9, mul_dsp="ecp5")),
            ("mul", dict(out_fmt="bf16", rounding="sr", stages=1, mul_dsp="ecp5")),
            ("mul", dict(in_fmt="fp16", out_fmt="fp16", rounding="rne", stages=2, mul_dsp="ecp5"))]


def every_depth() -> list:
    """Every configuration above (not the xorshift unit) at every depth 0..``max_stages``
    (``pytest --every-depth``)."""
    from hdl.units import UNITS
    configs = []
    for unit, group in (("mul", MULTIPLIERS), ("add", ADDERS), ("rounder", ROUNDERS)):
        for params in group:
            plan, _ = UNITS[unit].plan(**params)
            configs += [(unit, {**params, "stages": s}) for s in range(plan.max_stages + 1)]
    return configs


#: The column accumulator's units alone (hdl/mxu/accumulation/): each anchor, both terms,
#: late_sum, sticky, fp8 products in an 8-bit window; no stages up to a register at every cut
#: point (window_add, window_round: 6 and 8; norm_point: 8 + 6). tests/test_column_units.py
#: runs them in Amaranth's simulator, ``COLUMN_REGRESSIONS`` also through cocotb.
FP8_COLUMN = dict(in_fmt="fp8_e4m3", acc_fmt="bf16", accumulation="column:w=8", terms=1)
COLUMN_UNITS = [
    ("window_add", dict(stages=0)),
    ("window_add", dict(accumulation="column:w=26,anchor=bound", terms=16, stages=2)),
    ("window_add", dict(accumulation="column:w=20,sticky", term="rounded", stages=3)),
    ("window_add", dict(accumulation="column:w=26,anchor=bound", term="rounded", terms=8, stages=6)),
    ("window_add", dict(accumulation="column:w=26,anchor=bound", late_sum=True, terms=16, stages=6)),
    ("window_add", dict(accumulation="column:w=48,sticky", terms=8192, stages=1)),
    ("window_round", dict(accumulation="column:w=26", terms=16, stages=0)),
    ("window_round", dict(accumulation="column:w=20,sticky", stages=8)),
    ("norm_point", dict(accumulation="column:w=20,g=2,sticky")),
    ("norm_point", dict(accumulation="column:w=18,anchor=bound", terms=16, round_stages=8, add_stages=6)),
]
#: Every fp8 product (every operand pair's) against a set of windows, every sum at a set of
#: anchors (``sim.testbenches.column.vectors(exhaustive=True)``).
COLUMN_EXHAUSTIVE = [
    ("window_add", dict(FP8_COLUMN, accumulation="column:w=8,sticky", stages=2)),
    ("window_add", dict(FP8_COLUMN, accumulation="column:w=8,anchor=bound", late_sum=True, stages=3)),
    ("window_round", dict(FP8_COLUMN, stages=1)),
    ("norm_point", dict(FP8_COLUMN, accumulation="column:w=8,anchor=bound", round_stages=1, add_stages=1)),
]
#: Those that also run through cocotb (``sim.regress``), one per unit and simulator.
COLUMN_REGRESSIONS = [("verilator", COLUMN_UNITS[1]), ("icarus", COLUMN_UNITS[4]), ("verilator", COLUMN_UNITS[7]),
                      ("icarus", COLUMN_UNITS[9])]

#: MXU configurations for the lint (the regressions are in tests/test_hdl_mxu.py).
MXUS = [("mxu", dict(rows=2, cols=3)), ("mxu", dict(rows=3, cols=2, mul_stages=9, add_stages=2, fused_pe=False)),
        ("mxu", dict(rows=3, cols=2, mul_stages=7, add_stages=2)),
        ("mxu", dict(rows=2, cols=2, convert_inputs=True, out_rounding="sr", acc_depth=4)),
        ("mxu", dict(rows=2, cols=2, out_rounding="rne", acc_depth=2)),
        ("mxu", dict(rows=4, cols=4)), ("mxu", dict(rows=8, cols=8, mul_stages=4, add_stages=6)),
        ("mxu", dict(rows=3, cols=2, mul_stages=2, add_stages=3, accumulation="column:w=16,sticky")),
        ("mxu", dict(rows=5, cols=2, mul_stages=1, add_stages=1, accumulation="column:w=20,g=2,sticky"))]
