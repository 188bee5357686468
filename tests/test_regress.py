"""``python -m sim.regress``: one configuration's regression from the command line, on its
generated Verilog, on a Verilog file a user brings (``--verilog``) and on its netlist mapped
by Yosys for ECP5 or iCE40 (``--netlist``, gate level); planted mutants of the RTL and of the
netlist fail it, bad options exit 2 naming the parameter."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sim import regress
from sim.testbenches import runner

ROOT = Path(__file__).resolve().parent.parent
#: Random vectors per run: gate-level models simulate slowly, and a wrong cell shows at once.
VECTORS = 200


@pytest.fixture(autouse=True)
def _verilator():
    reason = runner.available("verilator")
    if reason:
        pytest.skip(reason)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.regress", *args], capture_output=True, text=True, cwd=ROOT)


def _design(output: str) -> Path:
    """The Verilog a summary names."""
    return ROOT / re.search(r"^  design\s+(\S+)", output, re.M).group(1)


def _copy(verilog: Path, folder: Path) -> Path:
    """``verilog`` and its manifest copied into ``folder``, for a planted change."""
    for path in (verilog, verilog.with_suffix(".json")):
        shutil.copyfile(path, folder / path.name)
    return folder / verilog.name


def test_unlisted_configuration_passes_and_its_rtl_mutant_fails(tmp_path):
    """A configuration no regression lists passes through the command; its generated
    Verilog with one adder made a subtractor, run with ``--verilog``, fails with the first
    mismatches shown (inputs, expected, got, flags)."""
    ok = _cli("mul", "--in-fmt", "fp16", "--out-fmt", "fp32", "--stages", "3", "--vectors", str(VECTORS))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.startswith("PASS  fpmul_fp16_fp32_rne_s3 (RTL) on verilator"), ok.stdout
    mutant = _copy(_design(ok.stdout), tmp_path)
    text = mutant.read_text()
    assert " + " in text
    mutant.write_text(text.replace(" + ", " - ", 1))
    bad = _cli("mul", "--verilog", str(mutant), "--vectors", str(VECTORS), "--junit", str(tmp_path / "report.xml"))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "differ from golden; the first:" in bad.stdout and "expected 0x" in bad.stdout, bad.stdout
    assert "<failure" in (tmp_path / "report.xml").read_text()


def _flip_first_lut(netlist: Path) -> None:
    """Complement the truth table of the netlist's first LUT4: its function inverted."""
    text = netlist.read_text()
    init = re.search(r"LUT4 #\(\s*\.INIT\(16'h([0-9a-f]{4})\)", text)
    netlist.write_text(text[:init.start(1)] + f"{0xFFFF ^ int(init.group(1), 16):04x}" + text[init.end(1):])


def test_ecp5_multiplier_netlist_passes_and_a_flipped_lut_fails(tmp_path, capsys):
    """The bf16 multiplier (2 stages) mapped by synth_ecp5 matches golden; the same netlist
    with one LUT4's function inverted, run with ``--verilog``, does not."""
    assert regress.main(["mul", "--stages", "2", "--netlist", "ecp5", "--vectors", str(VECTORS)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS  fpmul_bf16_fp32_rne_s2 (netlist ecp5) on verilator"), out
    mutant = _copy(_design(out), tmp_path)
    assert mutant.name == "fpmul_bf16_fp32_rne_s2.ecp5.v" and "LUT4" in mutant.read_text()
    _flip_first_lut(mutant)
    assert regress.main(["mul", "--verilog", str(mutant), "--vectors", str(VECTORS)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL  fpmul_bf16_fp32_rne_s2 (netlist ecp5, from "), out


@pytest.mark.parametrize("unit, params, family", [
    pytest.param("add", {}, "ecp5", marks=pytest.mark.thorough),   # the fp32 adder, combinational
    ("mul", {"stages": 2}, "ice40"),               # SB_MAC16: Yosys's DSP mapping, simulated
], ids=lambda v: v if isinstance(v, str) else None)
def test_netlist_matches_golden(unit, params, family):
    summary = runner.run(unit, params, vectors=VECTORS, netlist=family)
    assert summary["netlist"] == family and summary["verilog"].name.endswith(f".{family}.v")
    if family == "ice40":
        assert "SB_MAC16" in summary["verilog"].read_text()


@pytest.mark.thorough
def test_ecp5_mxu_netlist_through_the_command():
    """A 2x2 MXU (no regression lists it) mapped by synth_ecp5: all four of its tests pass."""
    proc = _cli("mxu", "--rows", "2", "--cols", "2", "--netlist", "ecp5", "--vectors", str(VECTORS))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("PASS  mxu_2x2_bf16_fp32_m0a0 (netlist ecp5) on verilator: 4 of 4"), proc.stdout


@pytest.mark.regress_large
@pytest.mark.parametrize("args", [
    ("mxu", "--rows", "4", "--cols", "4", "--netlist", "ecp5"),
    ("mxu", "--rows", "3", "--cols", "5", "--acc-depth", "4", "--out-rounding", "sr"),
], ids=lambda args: "-".join(a.lstrip("-") for a in args[1:]))
def test_larger_arrays(args):
    """The 3x5 array (no netlist) runs on Icarus where it is installed: Verilator's C++
    build of it takes a quarter of an hour (docs/testing.md)."""
    icarus = "--netlist" not in args and not runner.available("icarus")
    proc = _cli(*args, "--vectors", str(VECTORS), *(["--simulator", "icarus"] if icarus else []))
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("args, message", [
    (["mul", "--stages", "12"], "mul: stages must be in 0..9, not 12"),
    (["mxu", "--rows", "0"], "mxu: rows must be in 1..256, not 0"),
    (["add", "--fmt", "fp7"], "add: fmt"),
    (["mul", "--vectors", "0"], "--vectors must be in 1..4294967296, not 0"),
    (["mul", "--seed", "-1"], "--seed must be in 0..4294967295, not -1"),
    (["mul", "--simulator", "vcs"], "argument --simulator: invalid choice: 'vcs'"),
    (["mul", "--netlist", "xc7"], "argument --netlist: invalid choice: 'xc7'"),
    (["mul", "--verilog", "no/such.v"], "--verilog no/such.v: no such file"),
    (["product", "--stages", "1"], "argument UNIT: invalid choice: 'product'"),
])
def test_bad_option_exits_2_naming_it(args, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        regress.main(args)
    err = capsys.readouterr().err
    # (Amaranth's warnings about components an earlier bad option left half-built may come first.)
    said = [line for line in err.splitlines() if line.startswith("python -m sim.regress")]
    assert exit_.value.code == 2 and len(said) == 1 and message in said[0], err


def test_verilog_takes_its_configuration_from_the_manifest(tmp_path, capsys):
    verilog = tmp_path / "fpadd_fp32_rne_s0.v"
    verilog.write_text("module fpadd_fp32_rne_s0; endmodule\n")
    with pytest.raises(SystemExit):
        regress.main(["add", "--verilog", str(verilog)])
    assert "no manifest fpadd_fp32_rne_s0.json beside it" in capsys.readouterr().err
    verilog.with_suffix(".json").write_text('{"module": "fpadd_fp32_rne_s0", "unit": "add", "parameters": {}, '
                                            '"latency": 0, "ports": []}')
    for args, message in ((["mul"], "its manifest is of unit add, not mul"),
                          (["add", "--stages", "2"], "give no unit options (--stages)")):
        with pytest.raises(SystemExit):
            regress.main([*args, "--verilog", str(verilog)])
        assert message in capsys.readouterr().err


def test_an_optimised_model_split_over_several_files_builds(tmp_path):
    """The benchmarks' build (``optimize=True``) of a model Verilator splits over several C++
    files, each including Verilator's own precompiled header: the shared one must not come
    first (GCC takes one a compile, then looked for ``Vtop__pch.h.fast`` as a plain file).
    The one-file 4x4 first: the shared runtime and headers exist once a build has kept them,
    so in a fresh checkout the split model's build is the second."""
    from sim.compiled import mxu_bench

    bench = ["--rows", "1", "--out", str(tmp_path / "bench.json")]
    assert mxu_bench.main(["--sizes", "4x4", *bench]) == 0
    shutil.rmtree(runner.BUILD_ROOT / "verilator" / "mxu_4x4_bf16_fp32_m1a1_opt", ignore_errors=True)
    assert mxu_bench.main(["--sizes", "4x4:m1a1", *bench]) == 0
