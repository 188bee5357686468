"""Every command line: bad flags, values and paths end in one line on stderr, exit status 2,
no traceback, and no output written or touched. The commands run in-process (``main(argv)``)."""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import golden.bench
import golden.experiments
import hdl.board.bitstream
import hdl.board.host
import hdl.build
import sim.compiled.matmul
import sim.compiled.mxu_bench
import sim.experiments.mxu_waves
import sim.testbenches.bench
import synth.area_breakdown
import synth.liberty
import synth.mxu_pnr
import synth.stale
import synth.tables
import synth.stall_cone
import synth.sweep.cli
import synth.timing.cli

MAINS = {
    "golden.bench": golden.bench.main,
    "golden.experiments": golden.experiments.main,
    "hdl.board": hdl.board.bitstream.main,
    "hdl.build": hdl.build.main,
    "sim.testbenches.bench": sim.testbenches.bench.main,
    "sim.compiled.matmul": sim.compiled.matmul.main,
    "hdl.board.host": hdl.board.host.main,
    "sim.compiled.mxu_bench": sim.compiled.mxu_bench.main,
    "sim.experiments.mxu_waves": sim.experiments.mxu_waves.main,
    "synth.stall_cone": synth.stall_cone.main,
    "synth.timing": synth.timing.cli.main,
    "synth.mxu_pnr": synth.mxu_pnr.main,
    "synth.stale": synth.stale.main,
    "synth.tables": synth.tables.main,
    "synth.sweep": synth.sweep.cli.main,
    "synth.liberty": synth.liberty.main,
    "synth.area_breakdown": synth.area_breakdown.main,
}

#: Integer flags and their allowed ranges, per command (a subcommand's flags after its name).
INT_FLAGS = {
    ("golden.bench",): [("--size", 1 << 16, 1 << 25), ("--repeat", 1, 100)],
    ("golden.experiments", "sr-dot"): [("--n-max", 10, 10_000_000), ("--trials", 1, 1000),
                                       ("--points", 2, 100), ("--seed", 0, 1 << 20), ("--workers", 1, 64)],
    ("hdl.board",): [("--rows", 1, 16), ("--cols", 1, 16), ("--mul-stages", 0, 9), ("--add-stages", 0, 21),
                     ("--seed", 0, (1 << 32) - 1)],
    ("hdl.build", "mul"): [("--stages", 0, 9), ("--sr-bits", 1, 32)],
    ("hdl.build", "add"): [("--stages", 0, 21)],
    ("hdl.build", "mxu"): [("--rows", 1, 256), ("--cols", 1, 256), ("--mul-stages", 0, 9),
                           ("--add-stages", 0, 21)],
    ("hdl.build", "xorshift"): [("--lanes", 1, 1024)],
    ("hdl.build", "window_add"): [("--terms", 1, 8192), ("--stages", 0, 6)],
    ("hdl.build", "norm_point"): [("--terms", 1, 8192), ("--round-stages", 0, 8), ("--add-stages", 0, 6)],
    ("sim.testbenches.bench",): [("--vectors", 100, 10_000_000), ("--repeat", 1, 20)],
    ("sim.compiled.mxu_bench",): [("--rows", 1, 1_000_000)],
    ("sim.compiled.matmul",): [("--rows", 1, 256), ("--cols", 1, 256), ("--m", 1, 4096), ("--k", 1, 4096),
                               ("--n", 1, 4096)],
    ("synth.sweep",): [("--jobs", 1, 64)],
}

#: Flags that take an output path, per command.
OUT_FLAGS = {
    ("golden.bench",): ("--out", "file"),
    ("golden.experiments", "sr-dot"): ("--out", "folder"),
    ("hdl.board",): ("--out", "folder"),
    ("hdl.build",): ("--out-dir", "folder"),
    ("hdl.build", "mul"): ("--out-dir", "folder"),
    ("sim.testbenches.bench",): ("--out", "file"),
    ("sim.compiled.mxu_bench",): ("--out", "file"),
    ("sim.compiled.matmul",): ("--out", "file"),
    ("sim.experiments.mxu_waves",): ("--out", "folder"),
    ("synth.timing", "--cached-only"): ("--docs", "folder"),
    ("synth.mxu_pnr",): ("--csv", "file"),
    ("synth.sweep",): ("--out", "folder"),
    ("synth.area_breakdown",): ("--out", "file"),
}


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A fresh current folder holding one existing result file; the build folder inside it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARITH_BUILD", str(tmp_path / "build"))
    (tmp_path / "old.json").write_text("old results\n")
    (tmp_path / "a_file").write_text("not a folder\n")
    return tmp_path


def _snapshot(folder):
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _check_bad(name, argv, refused, folder):
    before = _snapshot(folder)
    err = refused(MAINS[name], argv)
    assert _snapshot(folder) == before, f"{name} {argv} touched files"
    return err


BAD = [
    ("golden.bench", ["--size", "huge"], "invalid int value"),
    ("golden.bench", ["--size", str(1 << 40)], "--size must be in 65536..33554432"),
    ("golden.bench", ["--bogus"], "unrecognized arguments"),
    ("golden.experiments", [], "required: EXPERIMENT"),
    ("golden.experiments", ["sr-dot", "--points", "1"], "--points must be in 2..100, not 1"),
    ("hdl.board", ["--rows", "17"], "rows must be in 1..16, not 17"),
    ("hdl.board", ["--baud", "3000000"], "baud 3000000 is 4.2 % off at 25 MHz (divisor 8)"),
    ("hdl.build", ["mul", "--rounding", "sr"], "never rounds"),
    ("hdl.build", ["mul", "--out-fmt", "bf16", "--rounding", "sr-half", "--sr-bits", "3"],
     "sr-half uses one random bit"),
    ("hdl.build", ["mul", "--in-fmt", "bf17"], "unknown format 'bf17'"),
    ("hdl.build", ["nounit"], "invalid choice: 'nounit'"),
    ("hdl.build", ["mxu", "--rows", "0"], "rows must be in 1..256, not 0"),
    ("hdl.build", ["window_add", "--accumulation", "fp32"], "accumulation 'fp32': a column unit needs column"),
    ("hdl.build", ["window_round", "--accumulation", "column:w=26,anchor=up"],
     "accumulation: column anchor must be one of running, bound, exact, not 'up'"),
    ("hdl.board.host", ["--port", "x", "--rows", "0"], "rows must be in 1..1000000, not 0"),
    ("hdl.board.host", ["--port", "/nonexistent/tty"], "--port /nonexistent/tty"),
    ("hdl.board.host", ["--port", "x", "--timeout", "0"], "timeout must be in (0, 3600] seconds, not 0"),
    ("sim.testbenches.bench", ["--vectors", "5"], "--vectors must be in 100..10000000, not 5"),
    ("sim.testbenches.bench", ["--simulators", "ghdl"], "invalid choice: 'ghdl'"),
    ("sim.compiled.mxu_bench", ["--sizes", "4by4"], "use RxC or RxC:mMaA"),
    ("sim.compiled.mxu_bench", ["--sizes", "300x4"], "rows must be in 1..256, not 300"),
    ("synth.sweep", ["--group", "z"], "unknown group 'z'"),
    ("synth.sweep", ["--cached-only", "--no-cache"], "give one of them"),
    ("synth.sweep", ["--cached-only", "--quick"], "none of the 5 designs is cached"),
    ("synth.liberty", ["no.whl"], "is not a wheel file"),
    ("sim.experiments.mxu_waves", ["--bogus"], "unrecognized arguments"),
    ("synth.stall_cone", ["--rows", "0"], "rows must be in 1..256, not 0"),
    ("hdl.build", ["mxu", "--mul-stages", "12"], "mul_stages must be in 0..7, not 12"),
    ("hdl.build", ["mxu", "--no-fused-pe", "--mul-stages", "12"], "mul_stages must be in 0..9, not 12"),
    ("hdl.board", ["--add-stages", "22", "--elaborate-only"], "add_stages must be in 0..21, not 22"),
    ("synth.timing", ["--arch", "xc7"], "unknown architecture 'xc7'"),
    ("synth.timing", ["--only", "fft"], "unknown design 'fft'"),
    ("synth.timing", ["--cached-only", "--cache", "empty"], "nothing of the plan is cached"),
    ("synth.mxu_pnr", ["--sizes", "8by8"], "use RxC:mMaA"),
    ("synth.mxu_pnr", ["--sizes", "300x2:m0a0"], "rows must be in 1..256, not 300"),
    ("synth.mxu_pnr", ["--arch", "xc7"], "invalid choice: 'xc7'"),
    ("synth.mxu_pnr", ["--clock-mhz", "5"], "--clock-mhz must be in 10..500, not 5"),
    ("synth.mxu_pnr", ["--arch", "ice40", "--floorplan", "dsp"], "--floorplan dsp is for --arch ecp5"),
    ("synth.mxu_pnr", ["--arch", "ice40", "--no-sync-resets"], "--no-sync-resets is a synth_ecp5 flow"),
    ("synth.mxu_pnr", ["--sizes", "13x13:m0a0"], "needs 169 DSP sites; the LFE5U-85F has 156"),
    ("synth.mxu_pnr", ["--sizes", "1x60:m0a0"], "1 of them do not fit one DSP row's 52 sites"),
    ("synth.mxu_pnr", ["--verilog", "none.json"], "--verilog none.json: [Errno 2] No such file"),
    ("synth.mxu_pnr", ["--verilog", "a.json", "--sizes", "2x2:m0a0"], "give --sizes or --verilog, not both"),
    ("synth.stall_cone", ["--out-rounding", "rnd"], "out_rounding"),
    ("sim.compiled.matmul", ["--precision", "X9"], "precision 'X9': use one of"),
    # /proc takes no new file even for root, whom the permission bits let through: named
    # before any synthesis, with the user's path, not a temporary file's.
    ("synth.area_breakdown", ["--out", "/proc/area.csv"], "--out /proc/area.csv: cannot create files in /proc"),
]


@pytest.mark.parametrize("name, argv, message", BAD, ids=[f"{n} {' '.join(a)}" for n, a, _ in BAD])
def test_bad_flags_exit_2_with_one_line(name, argv, message, workdir, refused):
    assert message in _check_bad(name, argv, refused, workdir)
    assert not (workdir / "build").exists()


@pytest.mark.parametrize("command, flag", OUT_FLAGS.items(), ids=[" ".join(c) for c in OUT_FLAGS])
@pytest.mark.parametrize("path, message", [
    ("a_file/out", "is a file, not a folder"),       # inside something that is not a folder
    ("a_file", None),                                 # a file where a folder goes (or the reverse)
])
def test_unusable_output_paths_exit_2(command, flag, path, message, workdir, refused):
    name, *sub = command
    option, kind = flag
    if path == "a_file":
        path = "a_file" if kind == "folder" else "."
        message = "is a file, not a folder" if kind == "folder" else "is a folder, not a file"
    err = _check_bad(name, [*sub, option, path], refused, workdir)
    assert message in err and option in err


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_output_folder_exits_2(workdir, refused):
    locked = workdir / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        err = _check_bad("golden.bench", ["--out", str(locked / "x.json")], refused, workdir)
    finally:
        locked.chmod(0o700)
    assert "not writable" in err


def test_existing_result_is_kept_when_a_flag_is_bad(workdir, refused):
    _check_bad("golden.bench", ["--repeat", "0", "--out", "old.json"], refused, workdir)
    _check_bad("sim.testbenches.bench", ["--simulators", "icarus", "verilator", "--repeat", "0", "--out", "old.json"],
               refused, workdir)
    assert (workdir / "old.json").read_text() == "old results\n"


_bad_int = st.one_of(st.integers(-10**12, 10**12).map(str), st.sampled_from(["", "x", "1.5", "0x10", "1e3"]))


@st.composite
def _bad_command_lines(draw):
    """A command, some in-range integer flags, and one flag whose value is out of range or not
    an integer, in any order."""
    command = draw(st.sampled_from(sorted(INT_FLAGS)))
    flags = INT_FLAGS[command]
    bad_flag, lo, hi = draw(st.sampled_from(flags))
    bad = draw(_bad_int.filter(lambda v: not (v.lstrip("-").isdigit() and lo <= int(v) <= hi)))
    pairs = [[bad_flag, bad]]
    for flag, flo, fhi in flags:
        if flag != bad_flag and draw(st.booleans()):
            pairs.append([flag, str(draw(st.integers(flo, fhi)))])
    order = draw(st.permutations(pairs))
    return command, [arg for pair in order for arg in pair]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_bad_command_lines())
def test_any_out_of_range_flag_exits_2_and_writes_nothing(workdir, refused, command_line):
    (name, *sub), argv = command_line
    _check_bad(name, [*sub, *argv], refused, workdir)


def test_outputs_are_written_whole_with_the_usual_permissions(tmp_path):
    from golden.tools.cli import write_text
    path = tmp_path / "a" / "b.json"
    write_text(path, "first\n")
    umask = os.umask(0)
    os.umask(umask)
    assert path.read_text() == "first\n" and path.stat().st_mode & 0o777 == 0o666 & ~umask
    path.chmod(0o640)
    write_text(path, b"second\n")
    assert path.read_bytes() == b"second\n" and path.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in path.parent.iterdir()) == ["b.json"]      # no temporary left


@pytest.mark.parametrize("env, args, message", [
    ({"ARITH_SCALE": "abc"}, [], "ARITH_SCALE must be an integer in 1..10000, not 'abc'"),
    ({}, ["--scale", "0"], "--scale (ARITH_SCALE) must be in 1..10000, not 0"),
])
def test_bad_scale_is_a_usage_error(env, args, message):
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", "--collect-only",
                           *args, "tests/test_golden_formats.py"], cwd=root, capture_output=True, text=True,
                          env={**os.environ, **env})
    assert proc.returncode == 4, proc.stdout + proc.stderr             # pytest's usage error
    assert message in proc.stderr and "INTERNALERROR" not in proc.stdout + proc.stderr


def test_sim_bench_without_a_simulator_keeps_the_old_results(workdir, refused, monkeypatch):
    monkeypatch.setattr(sim.testbenches.bench.runner, "available", lambda simulator: f"{simulator} is not installed")
    err = _check_bad("sim.testbenches.bench", ["--out", "old.json"], refused, workdir)
    assert "verilator is not installed; icarus is not installed" in err
    assert (workdir / "old.json").read_text() == "old results\n"
