"""MXU regressions: multi-tile streams with explicit swaps, bubbles, backpressure, input
conversion, output rounding lanes, tile accumulation, sticky flags and clears, defined start,
swaps waiting for their tile, latency and full-rate throughput, bit for bit against
golden.mxu; y.ready's combinational cone (Yosys); the AXI4-Stream example testbench; the
datasheet's table of the registers ``rst`` resets, against the elaborated design."""

import re
from pathlib import Path

import pytest

from sim.testbenches import runner

ROOT = Path(__file__).resolve().parent.parent

SIZES = [
    dict(rows=1, cols=1),
    dict(rows=1, cols=1, out_rounding="sr-half", acc_depth=2),
    dict(rows=2, cols=3, convert_inputs=True, out_rounding="sr"),
    dict(rows=2, cols=2, in_fmt="fp8_e4m3fn", acc_depth=2),
    dict(rows=3, cols=2, mul_stages=9, add_stages=2, acc_depth=4, fused_pe=False),    # the generic units
    dict(rows=3, cols=2, mul_stages=7, add_stages=2, acc_depth=4),
    dict(rows=4, cols=4, add_stages=1, out_rounding="rne", acc_depth=8),
    # The column accumulator: a narrow sticky window, pipelined, accumulators and output rounding;
    # fp8 products in an 8-bit window, the output FIFO in instantiated ECP5 block RAMs (their
    # output registers: a cycle more latency; simulated with their model).
    dict(rows=3, cols=2, mul_stages=2, add_stages=3, accumulation="column:w=16,sticky", acc_depth=4,
         out_rounding="rne"),
    dict(rows=2, cols=2, in_fmt="fp8_e4m3", accumulation="column:w=8", acc_depth=2, fifo_ram="ecp5"),
    dict(rows=4, cols=3, mul_stages=3, add_stages=2, accumulation="column:w=20,anchor=bound", out_rounding="sr",
         acc_depth=2),
]
#: Only with ``--regress-large``: the 8x8 array (a minute of Verilator and C++ compilation).
LARGE = [dict(rows=8, cols=8, mul_stages=1, add_stages=1, convert_inputs=True, out_rounding="sr", sr_bits=8,
              acc_depth=16)]
#: Only under ``--scale`` above 1 (nightly-style runs): the 16x16 array takes minutes to build.
SCALED = [dict(rows=16, cols=16, add_stages=1, out_rounding="sr", acc_depth=32)]

#: On Verilator only with ``--thorough``: a deeper fused element (beside the generic one at
#: m9a2), the 4x4 (the output rounders and accumulators run in the smaller ones too) and the
#: fp8 column array (Icarus runs it by default; the compiled path the ECP5 FIFO on Verilator).
THOROUGH = [SIZES[5], SIZES[6], SIZES[8]]

#: Icarus is much slower on the larger arrays: it runs the small ones (``--every-simulator``),
#: by default one of each accumulator.
ICARUS_DEFAULT = [SIZES[0], SIZES[8]]


def _id(value):
    return value if isinstance(value, str) else "-".join(f"{k}{x}" for k, x in value.items())


def pytest_generate_tests(metafunc):
    if "simulator" not in metafunc.fixturenames:
        return
    small = [p for p in SIZES if p["rows"] * p["cols"] <= 6]
    icarus = small if metafunc.config.getoption("--every-simulator") else ICARUS_DEFAULT
    runs = [("verilator", p) if p not in THOROUGH else pytest.param("verilator", p, marks=pytest.mark.thorough)
            for p in SIZES] + [("icarus", p) for p in icarus]
    runs += [("verilator", p) for p in SCALED] if metafunc.config.arith_scale > 1 else []
    runs += [pytest.param("verilator", p, marks=pytest.mark.regress_large) for p in LARGE]
    metafunc.parametrize("simulator, params", runs, ids=_id)


def test_mxu_matches_golden(simulator, params, scale):
    reason = runner.available(simulator)
    if reason:
        pytest.skip(reason)
    summary = runner.run("mxu", params, simulator, vectors=2000 * scale)
    assert summary["tests"] == 4


@pytest.mark.parametrize("params", [dict(rows=2, cols=2), dict(rows=4, cols=2),
                                    dict(rows=2, cols=3, acc_depth=4, out_rounding="sr", axi_stream=True)],
                         ids=_id)
def test_y_ready_drives_only_the_output_fifo(params):
    """Yosys cone of y's ready: no ready output in it, and exactly the credit return
    register (1 bit: not the credit count), the head (the ``y`` register: valid and payload)
    and the counters of the output FIFO's queue (its read pointer and level) and room:
    nothing of the FIFO's memory, its read decision or level, nothing growing with rows."""
    from golden.tools.cli import build_dir
    from hdl.units import UNITS
    from hdl.mxu.output_fifo import queue_slots
    from synth.stall_cone import measure

    params = dict(mul_stages=1, add_stages=1, **params)
    cone = measure(params, build_dir("stall-cone"))
    mxu = UNITS["mxu"].build(**params)[0]
    y_register = 1 + mxu.cols * mxu.out_fmt.width
    assert cone["ports"] == [], f"ready outputs in y.ready's combinational cone: {cone['ports']}"
    slots = queue_slots(mxu.fifo_ram)
    queue_counters = (slots - 1).bit_length() + slots.bit_length() + (slots + 1).bit_length()
    assert cone["ff_bits"] == 1 + y_register + queue_counters, cone
    assert cone["memory_bits"] == 0, cone


def test_axi_stream_example_testbench():
    """sim/testbenches/mxu_example.py (the datasheet's testbench): cocotbext-axi source and sinks."""
    reason = runner.available("verilator")
    if reason:
        pytest.skip(reason)
    summary = runner.run("mxu", dict(rows=2, cols=3, axi_stream=True), "verilator", test_module="sim.testbenches.mxu_example")
    assert summary["tests"] == 1


def test_mxu_options_are_checked_and_described():
    from hdl.mxu import MXU

    with pytest.raises(TypeError, match="axi_stream must be True or False, not 1"):
        MXU(rows=2, cols=2, axi_stream=1)
    mxu = MXU(rows=8, cols=8, mul_stages=1, add_stages=1)
    # Latency 30: a credit comes back two cycles after its y row, so 33 credits: 64. At
    # latency 14, 16 credits fall one short of full rate (sustains_one_row_per_cycle).
    assert (mxu.latency, mxu.array_latency, mxu.fifo_depth, mxu.drain_cycles) == (30, 25, 64, 21)
    assert [(a.latency, a.fifo_depth) for a in (MXU(rows=1, cols=1, mul_stages=4, add_stages=3),
                                                MXU(rows=1, cols=1, mul_stages=3, add_stages=3))] == [(14, 32), (13, 16)]
    # A bound anchor's row maximum over 12 rows: 4 compare levels, 3 of them during the
    # multiplier's 4 stages, so the rows wait a cycle; the rounders' result registers one
    # more, their margin register one more (latency 52 + 3). Over 5 rows at m3: 3 levels, 2
    # during the multiplier; latency 33 needs 36 credits: 64.
    bound = MXU(rows=12, cols=12, mul_stages=4, add_stages=4, accumulation="column:w=26,anchor=bound")
    assert (bound.anchor_wait, bound.result_register, bound.latency, bound.drain_cycles) == (1, 1, 55, 2 * 11 + 11 + 1)
    # A fifth add stage registers the product before the compare (a cycle in all), not the
    # partial sum after the add (a cycle per row); a sixth takes that too.
    assert [(a.sum_wait, a.psum_latency, a.latency) for a in (
        MXU(rows=12, cols=12, mul_stages=4, add_stages=s, accumulation="column:w=26,anchor=bound") for s in (5, 6))] \
        == [(4, 2, 56), (4, 3, 68)]
    small = MXU(rows=5, cols=5, mul_stages=3, add_stages=4, accumulation="column:w=26,anchor=bound")
    assert (small.anchor_wait, small.latency, small.fifo_depth) == (1, 33, 64)
    # The exact anchor: the exponent array's rows + 4 cycles less the entry register and the
    # multiplier's stages, as docs/mxu.md states; the 12x13 of docs/mxu-pnr.md: latency 55.
    from hdl.mxu.accumulation.exponent_array import exponent_array_latency
    wait = re.search(r"`anchor_wait = rows \+ (\d+) - mul_stages`", (ROOT / "docs" / "mxu.md").read_text())
    for rows, ms in ((12, 4), (5, 3), (3, 5)):
        exact = MXU(rows=rows, cols=2, mul_stages=ms, add_stages=3, accumulation="column:w=30,sticky,anchor=exact")
        assert exact.anchor_wait == exponent_array_latency(rows) - 1 - ms == rows + int(wait[1]) - ms
    big = MXU(rows=12, cols=13, mul_stages=4, add_stages=3, accumulation="column:w=30,sticky,anchor=exact",
              mul_dsp="ecp5", fifo_ram="ecp5")
    assert (big.anchor_wait, big.latency, big.fifo_depth) == (11, 55, 64)
    # Normalisation points after rows 2 and 4 of 5: each point_latency cycles in the formulas.
    points = MXU(rows=5, cols=2, mul_stages=1, add_stages=1, accumulation="column:w=20,g=2")
    assert (points.point_rows, points.round_stages, points.point_latency) == ([2, 4], 3, 6)
    assert (points.array_latency, points.drain_cycles) == (5 * 2 + 1 + 3 + 1 + 2 + 2 * 6, 4 * 2 + 2 * 6 + 1)
    assert set(MXU(rows=2, cols=2, axi_stream=True).signature.members) >= {
        "s_axis_w_tdata", "s_axis_x_tdata", "s_axis_x_tuser", "m_axis_y_tready", "flags", "flags_clear"}


def test_old_spellings_of_the_accumulation_resolve_alike():
    """``accumulator=`` and ``fp32``, the old spellings of ``accumulation=`` and
    ``sequential``, still resolve (MXU, resolve, ElementPlan) to the same design; both
    keywords with different values are an error naming both."""
    from hdl.units import UNITS, module_name
    from hdl.mxu import MXU
    from hdl.mxu.config import resolve
    from hdl.mxu.element import ElementPlan

    def described(function, implementation):
        return function.accumulation.spec, {**vars(function), "accumulation": None}, implementation

    assert described(*resolve(rows=2, cols=2, accumulator="fp32")) == \
        described(*resolve(rows=2, cols=2, accumulation="sequential"))
    assert described(*resolve(rows=3, cols=2, accumulator="column:w=20,g=2")) == \
        described(*resolve(rows=3, cols=2, accumulation="column:w=20,g=2"))
    names = {module_name(UNITS["mxu"], MXU(rows=2, cols=2, **kw)) for kw in (
        dict(accumulator="column:w=26,anchor=bound"), dict(accumulation="column:w=26,anchor=bound"))}
    assert names == {"mxu_2x2_bf16_fp32_m0a0_colw26b"}
    old, new = (ElementPlan(terms=4, **kw) for kw in (dict(accumulator="column:w=26"), dict(accumulation="column:w=26")))
    assert (old.accumulation.spec, old.psum_latency) == (new.accumulation.spec, new.psum_latency)
    for make in (MXU, resolve, lambda **kw: ElementPlan(**{k: v for k, v in kw.items() if k not in ("rows", "cols")})):
        with pytest.raises(TypeError, match="accumulation='sequential' and accumulator='column:w=26' .* differ"):
            make(rows=2, cols=2, accumulation="sequential", accumulator="column:w=26")
    with pytest.raises(ValueError, match="accumulation 'kahan': use sequential or column"):
        resolve(rows=2, cols=2, accumulation="kahan")


def test_options_are_described_once():
    """The MXU's options (hdl.mxu.config.OPTIONS) are hdl.build's flags, the manifest's
    parameters and docs/mxu.md's table; each is a field of what the MXU computes or of how it
    is built, and every command taking the accumulation shows its grammar whole."""
    import subprocess
    import sys
    from dataclasses import fields
    from pathlib import Path

    from hdl.units import UNITS
    from hdl.mxu.config import OPTIONS, MXUFunction, MXUImplementation, describes, parameter_table

    assert UNITS["mxu"].params == OPTIONS
    assert parameter_table() in (Path(__file__).resolve().parent.parent / "docs" / "mxu.md").read_text()
    named = {f.name for f in fields(MXUFunction)} | {f.name for f in fields(MXUImplementation)}
    assert {p.name for p in OPTIONS} <= named
    assert describes(next(p for p in OPTIONS if p.name == "accumulation")) is MXUFunction
    grammar = next(p for p in OPTIONS if p.name == "accumulation").values.split(", ")[1]
    for command in (["hdl.build", "mxu"], ["sim.formal", "mxu"], ["sim.compiled.matmul"], ["sim.regress", "mxu"]):
        shown = subprocess.run([sys.executable, "-m", *command, "--help"], capture_output=True, text=True,
                               env={**__import__("os").environ, "COLUMNS": "400"}).stdout
        assert grammar in shown, (command, shown)


def _sync_registers(fragment, path=()):
    """``{hierarchical name: has a reset}`` of every register an elaborated fragment drives."""
    found = {}
    for domain, statements in fragment.statements.items():
        if domain != "comb":
            for statement in statements:
                # Amaranth has no public way to list what a statement assigns.
                for signal in statement._lhs_signals():
                    found[".".join((*path, signal.name))] = not signal.reset_less
    for sub, name, _ in fragment.subfragments:
        found.update(_sync_registers(sub, (*path, name)))
    return found


def _datasheet_reset_table():
    """docs/mxu.md's *What `rst` resets* table: ``[(globs, reset, reset without fused_pe)]``."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs/mxu.md").read_text()
    section = text.split("### What `rst` resets", 1)[1].split("\n#", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[2] in ("reset", "---"):
            continue
        globs = [re.sub(r"<\w+>", "*", name) for name in re.findall(r"`([^`]+)`", cells[1])]
        reset = cells[2].startswith("yes")
        rows.append((globs, reset, reset or "yes with `--no-fused-pe`" in cells[2]))
    return rows


#: The datasheet's reset table is checked on these: every kind of register, with and without fused_pe.
RESET_CONFIGS = [
    dict(rows=2, cols=3, mul_stages=2, add_stages=1, convert_inputs=True, out_rounding="sr", acc_depth=2),
    dict(rows=3, cols=1, axi_stream=True, out_rounding="rne"),
    dict(rows=2, cols=2, mul_stages=2, add_stages=2, fused_pe=False),
]


def test_datasheet_says_which_registers_rst_resets():
    """Every register of the elaborated MXU matches a row of the datasheet's reset table
    (the first that matches) and has a reset exactly when that row says so; every row
    names registers that exist."""
    from fnmatch import fnmatchcase

    from amaranth.hdl import Fragment
    from hdl.mxu import MXU

    table = _datasheet_reset_table()
    wrong, used = [], set()
    for params in RESET_CONFIGS:
        fused = params.get("fused_pe", True)
        for name, has_reset in sorted(_sync_registers(Fragment.get(MXU(**params), None)).items()):
            row = next((i for i, (globs, _, _) in enumerate(table) if any(fnmatchcase(name, g) for g in globs)),
                       None)
            assert row is not None, f"{_id(params)}: {name} is in no row of docs/mxu.md's reset table"
            used.add(row)
            if (table[row][1] if fused else table[row][2]) != has_reset:
                wrong.append(f"{_id(params)}: {name} {'has' if has_reset else 'has no'} reset")
    assert not wrong, "docs/mxu.md's reset table is wrong: " + ", ".join(wrong)
    assert used == set(range(len(table))), f"table rows that match no register: {set(range(len(table))) - used}"
