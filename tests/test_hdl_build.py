"""python -m hdl.build, manifests, parameter errors, pipeline placement and Verilator lint."""

import json
import os
import subprocess
import sys

import pytest

from golden.column import ColumnAccumulator
from hdl.adder import FPAdder
from hdl.build import main
from hdl.units import UNITS, emit, module_name
from hdl.multiplier import FPMultiplier
from hdl.mxu.accumulation.normalisation_point import NormalisationPoint
from hdl.mxu import MXU
from hdl.pipeline import Delay, Stages
from hdl.stochastic_rounder import StochasticRounder
from hdl.verilator_config import WAIVERS, verilator_config
from hdl.mxu.accumulation.window_adder import RunningWindowAdder
from hdl.xorshift import Xorshift32
from sim.testbenches import runner
from sim.configs import COLUMN_EXHAUSTIVE, COLUMN_UNITS, CONFIGS, DEEP, ECP5_DSP, MXUS


def _cli(*args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "ARITH_BUILD"}
    return subprocess.run([sys.executable, "-m", "hdl.build", *args], cwd=cwd, capture_output=True, text=True,
                          env=env)


def test_default_build_writes_every_unit(tmp_path):
    """``python -m hdl.build`` as the docs show it (tests/test_docs.py runs its help)."""
    proc = _cli(cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = {"fpmul_bf16_fp32_rne_s0", "fpadd_fp32_rne_s0", "fpround_fp32_bf16_sr16_s0_rng", "xorshift32_x1",
             "mxu_4x4_bf16_fp32_m0a0", "board_2x2_m1a1_d217", "fpprod_bf16_fp32_rne_s0", "fpprodadd_bf16_fp32_rne_s0",
             "winadd_bf16_fp32_colw26_t4_product_s0", "winround_bf16_fp32_colw26_t4_s0", "normpt_bf16_fp32_colw26_t4_r0a0"}
    out = tmp_path / "build" / "verilog"
    assert {p.stem for p in out.glob("*.v")} == names | {f"{n}_inst" for n in names} | {"mxu_4x4_bf16_fp32_m0a0_top"}
    assert {p.stem for p in out.glob("*.json")} == names
    assert {p.stem for p in out.glob("*.vlt")} == names
    assert all(f"build/verilog/{n}.v" in proc.stdout for n in names)
    assert [p.name for p in tmp_path.iterdir()] == ["build"]         # nothing written outside build/


def test_subcommand_flags_name_and_manifest(tmp_path):
    proc = _cli("mul", "--in-fmt", "fp16", "--out-fmt", "e5m10", "--rounding", "sr", "--sr-bits", "6",
                "--stages", "2", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "out" / "fpmul_fp16_fp16_sr6_s2.json").read_text())
    assert manifest["latency"] == 2 and manifest["rand_bits"] == 6
    assert manifest["parameters"] == {"in_fmt": "fp16", "out_fmt": "fp16", "rounding": "sr", "sr_bits": 6, "stages": 2,
                                      "mul_dsp": "inferred"}
    ports = {p["name"]: (p["direction"], p["width"]) for p in manifest["ports"]}
    assert ports == {"a": ("input", 16), "b": ("input", 16), "rand": ("input", 6), "valid_in": ("input", 1),
                     "clk": ("input", 1), "rst": ("input", 1),
                     "result": ("output", 16), "flags": ("output", 5), "valid_out": ("output", 1)}


@pytest.mark.parametrize("args, message", [
    (["mul", "--in-fmt", "fp64"], "in_fmt: unknown format 'fp64'"),
    (["mul", "--out-fmt", "e9m3"], "out_fmt: exp_bits must be in 2..8, not 9"),
    (["add", "--stages", "99"], "stages must be in 0..21, not 99"),
    (["add", "--stages", "-1"], "stages must be in 0..21, not -1"),
    (["mul", "--sr-bits", "4"], "sr_bits=4 needs stochastic rounding"),
    (["rounder", "--sr-bits", "40"], "sr_bits must be in 1..32, not 40"),
    (["xorshift", "--lanes", "0"], "lanes must be in 1..1024, not 0"),
    (["mul", "--rounding", "up"], "invalid choice: 'up'"),
    (["mxy"], "invalid choice: 'mxy'"),
    (["mul", "--stages", "two"], "invalid int value: 'two'"),
    (["mxu", "--rows", "0"], "rows must be in 1..256, not 0"),
    (["mxu", "--cols", "300"], "cols must be in 1..256, not 300"),
    (["mxu", "--acc-depth", "12"], "acc_depth must be 0 or a power of two in 2..65536, not 12"),
    (["mxu", "--out-rounding", "up"], "invalid choice: 'up'"),
    (["mxu", "--sr-bits", "8"], "sr_bits=8 needs a stochastic out_rounding"),
    (["mxu", "--out-rounding", "rne", "--sr-bits", "8"], "sr_bits=8 needs stochastic rounding"),
    (["mxu", "--acc-fmt", "fp16"], "acc_fmt fp16 must hold an exact bf16 product"),
    (["mxu", "--add-stages", "22"], "add_stages must be in 0..21, not 22"),
    (["window_add", "--accumulation", "sequential"], "accumulation 'sequential': a column unit needs column[:w=W][,g=G]"),
    (["window_add", "--accumulation", "column:w=99"], "accumulation: column window w must be from the products' significand bits (twice the input precision: 16 for bf16, 8 for fp8) to 48, not 99"),
    (["window_add", "--accumulation", "column:w=12"], "column window w must be at least the products' 16"),
    (["mxu", "--accumulation", "kahan"], "accumulation 'kahan': use sequential or column"),
    (["mxu", "--accumulation", "sequential", "--accumulator", "column:w=26"],
     "--accumulation sequential and --accumulator column:w=26 differ (--accumulator is the old spelling"),
    (["window_add", "--accumulator", "column:w=20", "--accumulation", "column:w=22"],
     "--accumulator column:w=20 and --accumulation column:w=22 differ"),
    (["window_add", "--term", "sum"], "term must be one of product, rounded, not 'sum'"),
    (["window_add", "--late-sum"], "late_sum needs an anchor that cannot move (anchor=bound, term=product)"),
    (["window_add", "--stages", "7"], "stages must be in 0..6, not 7"),
    (["window_round", "--terms", "0"], "terms must be in 1..8192, not 0"),
    (["window_round", "--acc-fmt", "fp8_e4m3fn"], "acc_fmt fp8_e4m3fn must hold an exact bf16 product"),
    (["norm_point", "--round-stages", "9"], "round_stages must be in 0..8, not 9"),
])
def test_bad_arguments_exit_2_with_one_line(args, message, tmp_path, monkeypatch, refused):
    """In this process (a command's start saved each)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARITH_BUILD", raising=False)
    assert message in refused(main, args)
    assert not (tmp_path / "build").exists()


def test_old_spellings_of_the_accumulation_write_the_same_files(tmp_path):
    """``--accumulator`` and ``fp32``, the old spellings of ``--accumulation`` and
    ``sequential``: the same files, the manifest recording ``accumulation: sequential``; the
    old flag is not in the help."""
    for folder, args in (("old", ["--accumulator", "fp32"]), ("new", ["--accumulation", "sequential"]),
                         ("old_column", ["--accumulator", "column:w=20,g=2"]),
                         ("new_column", ["--accumulation", "column:w=20,g=2"])):
        proc = _cli("mxu", "--rows", "3", "--cols", "1", *args, "-o", folder, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    for old, new, spec in (("old", "new", "sequential"), ("old_column", "new_column", "column:w=20,g=2")):
        files = sorted(p.name for p in (tmp_path / old).iterdir())
        assert files == sorted(p.name for p in (tmp_path / new).iterdir())
        assert all((tmp_path / old / f).read_bytes() == (tmp_path / new / f).read_bytes() for f in files)
        manifest = json.loads(next((tmp_path / new).glob("mxu_*.json")).read_text())
        assert manifest["parameters"]["accumulation"] == spec and "accumulator" not in manifest["parameters"]
    component, values = UNITS["window_add"].build(accumulator="column:w=20")
    assert values["accumulation"] == "column:w=20" and component.accumulation == ColumnAccumulator(window=20)
    shown = _cli("mxu", "--help", cwd=tmp_path).stdout
    assert "--accumulation" in shown and "--accumulator" not in shown


def test_mxu_options_shape_the_ports(tmp_path):
    proc = _cli("mxu", "--rows", "2", "--cols", "3", "--convert-inputs", "--out-rounding", "sr-half",
                "--acc-depth", "8", "--add-stages", "1", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "out" / "mxu_2x3_bf16_fp32_m0a1_cvt_osrhalf1_acc8.json").read_text())
    assert manifest["latency"] == 2 * 2 + 0 + 3 + 5 and manifest["rand_bits"] == 1
    ports = {p["name"]: (p["direction"], p["width"]) for p in manifest["ports"]}
    assert ports["w__payload"] == ("input", 3 * 32)                  # fp32 in, converted on entry
    assert ports["x__payload"] == ("input", 2 * 32 + 1 + 3 + 1 + 1)  # data, swap, addr, first, last
    assert ports["flags"] == ("output", 3 * 5) and ports["flags_clear"] == ("input", 1)
    assert ports["y__payload"] == ("output", 3 * 16)                 # rounded to bf16
    assert ports["seed"] == ("input", 32) and ports["seed_load"] == ("input", 1)
    plain = MXU(rows=2, cols=3, out_rounding="rne")
    assert "seed" not in plain.signature.members and plain.out_fmt.name == "bf16"


def test_list_and_help(tmp_path):
    listed = _cli("--list", cwd=tmp_path)
    assert listed.returncode == 0 and all(key in listed.stdout for key in UNITS)
    assert "--sr-bits" in _cli("mul", "--help", cwd=tmp_path).stdout


@pytest.mark.parametrize("make, message", [
    (lambda: FPMultiplier(in_fmt=16), "in_fmt: format must be a FloatFormat or a string"),
    (lambda: FPMultiplier(rounding="nearest"), "rounding: unknown rounding 'nearest'"),
    (lambda: FPAdder(stages=2.5), "stages must be an integer"),
    (lambda: StochasticRounder(rng="yes"), "rng must be True or False"),
    (lambda: StochasticRounder(in_fmt="bf16", out_fmt="fp32"), "rounding sr: bf16 -> fp32 never rounds"),
    (lambda: Xorshift32(lanes="4"), "lanes must be an integer"),
    (lambda: MXU(rows=2, cols=2, convert_inputs=1), "convert_inputs must be True or False"),
    (lambda: MXU(rows=2, cols=2, out_rounding="up"), "out_rounding: unknown rounding 'up'"),
    (lambda: MXU(rows=2.0, cols=2), "rows must be an integer"),
    (lambda: RunningWindowAdder(accumulation=ColumnAccumulator(window=20), term="sum"),
     "term must be one of product, rounded, not 'sum'"),
    (lambda: NormalisationPoint(accumulation=ColumnAccumulator(window=20), add_stages=99),
     r"add_stages must be in 0\.\.\d+, not 99"),
    (lambda: MXU(rows=2, cols=2, mul_dsp="xilinx"), "mul_dsp must be one of inferred, ecp5, not 'xilinx'"),
    (lambda: MXU(rows=2, cols=2, fifo_ram="bram"), "fifo_ram must be one of block, lut, ecp5, not 'bram'"),
    (lambda: MXU(rows=32, cols=2, add_stages=21, fifo_ram="ecp5"),
     r"fifo_ram='ecp5' holds at most 512 rows \(one DP16KD's 36-bit rows\), and this array needs fifo_depth 1024 "
     r"\(latency 712\): use fifo_ram block or lut, or fewer rows or stages"),
    (lambda: FPMultiplier(in_fmt="fp32", out_fmt="fp32", mul_dsp="ecp5"),
     r"mul_dsp='ecp5' needs in_fmt with at most 18 significand bits \(a MULT18X18D's operand\), not fp32 \(24\)"),
])
def test_bad_parameters_name_the_parameter(make, message):
    with pytest.raises((TypeError, ValueError), match=message):
        make()


def test_options_are_keyword_only():
    with pytest.raises(TypeError):
        FPMultiplier("bf16")


def test_exact_product_multiplier_has_no_rounding_inputs():
    mul = FPMultiplier(in_fmt="bf16", out_fmt="fp32", rounding="sr")
    assert mul.exact and mul.rand_bits is None and "rand" not in mul.signature.members
    narrow = FPMultiplier(in_fmt="bf16", out_fmt="bf16", rounding="sr")
    assert not narrow.exact and narrow.rand_bits == 8 and "rand" in narrow.signature.members


def test_stages_split_the_longest_segment_first():
    cuts = [("input", Delay()), ("a", Delay(3)), ("b", Delay(1)), ("c", Delay(2)), ("d", Delay(2)), ("output", Delay(1))]
    counts = [{k for k, n in Stages(n, cuts).count.items() if n} for n in range(7)]
    assert counts == [set(), {"b"}, {"a", "c"}, {"a", "b", "c"}, {"a", "b", "c", "d"}, {"a", "b", "c", "d", "output"},
                      {"input", "a", "b", "c", "d", "output"}]
    assert [max(d.cost for d in Stages(n, cuts).segments) for n in range(5)] == [9, 5, 3, 3, 3]
    # inputs_first: the first spare register at the inputs, the second at the outputs.
    assert [{k for k, n in Stages(n, cuts, inputs_first=True).count.items() if n} for n in (5, 6)] == [
        {"input", "a", "b", "c", "d"}, {"input", "a", "b", "c", "d", "output"}]
    assert FPAdder(stages=3).latency == 3
    with pytest.raises(ValueError, match="stages must be in 0..6, not 7"):
        Stages(7, cuts)


#: The bound anchor's exponent arithmetic, linted too: its offset is negative for bf16
#: products into fp32 and positive for fp8 ones (two ways of writing the add).
BOUND_MXUS = [("mxu", dict(rows=4, cols=3, mul_stages=3, add_stages=2, accumulation="column:w=20,anchor=bound")),
              ("mxu", dict(rows=2, cols=2, in_fmt="fp8_e4m3", accumulation="column:w=8,anchor=bound"))]
#: Instantiated MULT18X18D and DP16KD blocks, linted with their simulation models.
ECP5_DSP_MXUS = [("mxu", dict(rows=3, cols=2, mul_stages=4, add_stages=4, accumulation="column:w=26,anchor=bound",
                              mul_dsp="ecp5", fifo_ram="ecp5"))]


#: The column units but a normalisation point without stages (``test_normalisation_point_lint...``).
LINTED_COLUMN_UNITS = [c for c in COLUMN_UNITS + COLUMN_EXHAUSTIVE
                       if c[0] != "norm_point" or c[1].get("round_stages", 0) + c[1].get("add_stages", 0)]
#: The 8x8 MXU's lint (half a minute): with ``--thorough``.
LINTED_MXUS = [pytest.param(c, marks=pytest.mark.thorough) if c[1].get("rows") == 8 else c for c in MXUS]


def _one_of_each(configs: list) -> list:
    """``configs``, each after the first of its kind (its unit, parameter names, rounding,
    accumulation and blocks: the same structures again) marked thorough."""
    seen, out = set(), []
    for config in configs:
        if not hasattr(config, "marks"):            # not already a pytest.param
            unit, params = config[:2]
            kind = (unit, frozenset(params), *(str(params.get(k)) for k in ("rounding", "accumulation", "mul_dsp",
                                                                            "fifo_ram")))
            config = config if kind not in seen else pytest.param(config, marks=pytest.mark.thorough)
            seen.add(kind)
        out.append(config)
    return out


@pytest.mark.parametrize("config", _one_of_each(CONFIGS + DEEP + LINTED_MXUS + BOUND_MXUS + ECP5_DSP[:1] + ECP5_DSP_MXUS
                                                + [("board", {})] + LINTED_COLUMN_UNITS),
                         ids=lambda c: f"{c[0]}-{'-'.join(map(str, c[1].values()))}")
def test_generated_verilog_is_lint_clean(config, tmp_path):
    """verilator --lint-only -Wall NAME.vlt NAME.v: no warning with the waivers written beside the Verilog."""
    if runner.verilator_bin() is None:
        pytest.skip(runner.available("verilator"))
    unit, params = config
    component, values = UNITS[unit].build(**params)
    v_path, _ = emit(UNITS[unit], component, values, tmp_path)
    assert runner.lint(v_path) == []
    assert v_path.stem == module_name(UNITS[unit], component)


@pytest.mark.parametrize("config", [ECP5_DSP_MXUS[0], ("mul", {})], ids=["ecp5-blocks", "plain"])
def test_the_waivers_header_command_prints_nothing(config, tmp_path):
    """The command NAME.vlt's header shows, run as written in the output folder (with the
    blocks' simulation models where the design instantiates any), prints nothing."""
    import re
    import subprocess
    if runner.verilator_bin() is None:
        pytest.skip(runner.available("verilator"))
    unit, params = config
    component, values = UNITS[unit].build(**params)
    v_path, _ = emit(UNITS[unit], component, values, tmp_path)
    command = re.search(r": (verilator --lint-only .*) prints nothing\.", v_path.with_suffix(".vlt").read_text())
    argv = command.group(1).split()
    assert ("ecp5_mult18x18d_sim.v" in argv) == (unit == "mxu")
    proc = subprocess.run([str(runner.verilator_bin() / "verilator"), *argv[1:]], cwd=tmp_path, capture_output=True,
                          text=True)
    assert (proc.returncode, proc.stdout + proc.stderr) == (0, "")


def test_normalisation_point_lint_reports_only_its_unused_reset(tmp_path):
    """A normalisation point without stages has one register, its output's, without reset
    (with stages its rounder's and adder's valid registers reset), yet its module keeps
    the clock domain's ``rst`` port, which the lint reports as the one unused input."""
    if runner.verilator_bin() is None:
        pytest.skip(runner.available("verilator"))
    component, values = UNITS["norm_point"].build(accumulation="column:w=18,anchor=bound")
    v_path, _ = emit(UNITS["norm_point"], component, values, tmp_path)
    problems = runner.lint(v_path)
    assert len(problems) == 1 and problems[0].endswith("Signal is not used: 'rst'"), problems


@pytest.fixture(scope="module")
def board_verilog(tmp_path_factory):
    """The board top: the one design with every waived kind (its FSMs the only CASEINCOMPLETE)."""
    component, values = UNITS["board"].build()
    v_path, _ = emit(UNITS["board"], component, values, tmp_path_factory.mktemp("board"))
    return v_path


@pytest.mark.parametrize("waiver", [*WAIVERS, ("UNUSEDSIGNAL", "-lines", "")], ids=lambda w: f"{w[0]}-{w[1][:20]}")
def test_every_waiver_is_needed(waiver, board_verilog, tmp_path):
    """Without any one waiver, the board top's lint reports that kind of warning."""
    if runner.verilator_bin() is None:
        pytest.skip(runner.available("verilator"))
    rule, pattern, _ = waiver
    v_path = tmp_path / board_verilog.name
    v_path.write_text(board_verilog.read_text())
    marker = pattern.format(name=v_path.stem)
    lines = board_verilog.with_suffix(".vlt").read_text().splitlines(keepends=True)
    kept = [line for line in lines if not (line.startswith(f"lint_off -rule {rule} ") and marker in line)]
    assert len(kept) < len(lines)
    v_path.with_suffix(".vlt").write_text("".join(kept))
    problems = runner.lint(v_path)
    assert problems and all(p.startswith(f"%Warning-{rule}: ") for p in problems)


def test_lint_catches_an_unused_port(tmp_path):
    """The UNUSEDSIGNAL waiver leaves out the top module's input declarations."""
    if runner.verilator_bin() is None:
        pytest.skip(runner.available("verilator"))
    v_path = tmp_path / "top.v"
    v_path.write_text("module top(a, b, y);\n  input a;\n  wire a;\n  input b;\n  wire b;\n  output y;\n"
                      "  wire y;\n  wire [1:0] t;\n  assign t = {a, a};\n  assign y = t[0];\nendmodule\n")
    v_path.with_suffix(".vlt").write_text(verilator_config(v_path.read_text(), "top"))
    problems = runner.lint(v_path)
    assert len(problems) == 1 and "Signal is not used: 'b'" in problems[0]


@pytest.mark.parametrize("config", _one_of_each(CONFIGS + COLUMN_UNITS),
                         ids=lambda c: f"{c[0]}-{'-'.join(map(str, c[1].values()))}")
def test_manifest_parameters_rebuild_the_same_unit(config, tmp_path):
    """The manifest's parameters (what the testbenches read) construct an identical unit."""
    unit, params = config
    component, values = UNITS[unit].build(**params)
    _, j_path = emit(UNITS[unit], component, values, tmp_path)
    again, _ = UNITS[unit].build(**json.loads(j_path.read_text())["parameters"])
    assert module_name(UNITS[unit], again) == j_path.stem


def test_lut_fifo_is_the_same_design_but_its_memory_attributes():
    """``fifo_ram="lut"`` changes what synthesis maps the output FIFO's memory onto, nothing
    the simulators see: its Verilog is the ``block`` one's but for the module names and the
    two attribute lines (tests/test_hdl_output_fifo.py checks what Yosys does with them)."""
    from hdl.units import to_verilog

    texts = {}
    for ram in ("block", "lut"):
        mxu = MXU(rows=2, cols=2, mul_stages=1, add_stages=1, fifo_ram=ram)
        name = module_name(UNITS["mxu"], mxu)
        texts[ram] = to_verilog(mxu, name).replace(name, "NAME")
    attributes = ['  (* ram_style = "distributed" *)', '  (* syn_ramstyle = "distributed" *)']
    lines = texts["lut"].splitlines()
    assert all(a in lines for a in attributes)
    assert [line for line in lines if line not in attributes] == texts["block"].splitlines()
