"""Verilog a user can connect: ports in signature order, payload fields in the manifest, and an
instantiation template that compiles against the module."""

import json
import subprocess

import pytest

from hdl.units import UNITS, emit
from hdl.ports import ports_of
from hdl.verilator_config import verilator_config
from sim.testbenches import runner


def _build(tmp_path, unit, **params):
    component, values = UNITS[unit].build(**params)
    v_path, j_path = emit(UNITS[unit], component, values, tmp_path)
    return v_path, json.loads(j_path.read_text())


def test_mxu_ports_come_in_signature_order_with_their_fields(tmp_path):
    v_path, manifest = _build(tmp_path, "mxu", rows=2, cols=3, convert_inputs=True, out_rounding="sr-half",
                              acc_depth=8)
    names = [p["name"] for p in manifest["ports"]]
    assert names[:2] == ["clk", "rst"]
    streams = [n for n in names if "__" in n]
    assert streams == ["w__payload", "w__valid", "w__ready", "x__payload", "x__valid", "x__ready",
                       "y__payload", "y__valid", "y__ready"]
    text = v_path.read_text()
    header = text[text.index(f"module {manifest['module']}("):].split(")", 1)[0]
    assert [p.strip().lstrip("\\") for p in header.split("(", 1)[1].split(",")] == names
    # The manifest agrees with the Verilog's declarations, port by port.
    declared = {p["name"]: p for p in ports_of(text, manifest["module"])}
    for port in manifest["ports"]:
        assert (declared[port["name"]]["direction"], declared[port["name"]]["width"]) == \
            (port["direction"], port["width"])
    ports = {p["name"]: p for p in manifest["ports"]}
    # w: three fp32 columns (converted on entry), lowest column in the lowest bits.
    assert ports["w__payload"]["fields"] == [{"name": f"[{j}]", "offset": 32 * j, "width": 32} for j in range(3)]
    x_fields = {f["name"]: (f["offset"], f["width"]) for f in ports["x__payload"]["fields"]}
    assert x_fields["data[0]"] == (0, 32) and x_fields["data[1]"] == (32, 32)
    assert {"addr", "first", "last"} <= set(x_fields)
    assert sum(w for _, w in x_fields.values()) == ports["x__payload"]["width"]
    assert ports["y__payload"]["fields"] == [{"name": f"[{j}]", "offset": 16 * j, "width": 16} for j in range(3)]
    assert "fields" not in ports["y__valid"]


@pytest.mark.parametrize("unit, params", [
    ("mxu", dict(rows=2, cols=2, acc_depth=4, out_rounding="sr")),
    ("rounder", dict(rng=False)),
    ("mul", dict(in_fmt="bf16", out_fmt="bf16", rounding="sr", stages=1)),
])
def test_instantiation_template_compiles(unit, params, tmp_path):
    """A wrapper that declares one net per port and pastes the template lints clean."""
    if runner.verilator_bin() is None:
        pytest.skip(runner.available("verilator"))
    v_path, manifest = _build(tmp_path, unit, **params)
    template = (tmp_path / f"{manifest['module']}_inst.v").read_text()
    escaped = {p["name"]: f"\\{p['name']} " if p["name"] == "rand" else p["name"] for p in manifest["ports"]}
    for port in manifest["ports"]:
        assert f".{escaped[port['name']]}" in template
    nets = "".join(f"  {'reg' if p['direction'] == 'input' else 'wire'} [{p['width'] - 1}:0] {escaped[p['name']]};\n"
                   for p in manifest["ports"])
    wrapper = tmp_path / "wrap.v"
    wrapper.write_text(f"module wrap;\n{nets}{template}endmodule\n")
    proc = subprocess.run([str(runner.verilator_bin() / "verilator"), "--lint-only", "-Wno-fatal",
                           "-Wno-UNUSEDSIGNAL", "-Wno-UNDRIVEN", "--top-module", "wrap", str(wrapper), str(v_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "%Error" not in proc.stderr, proc.stderr
    in_wrapper = [line for line in proc.stderr.splitlines() if "wrap.v" in line and line.startswith("%")]
    assert in_wrapper == []                      # every pin connected, at its width


def test_lint_waives_only_the_backend_patterns(tmp_path):
    """A truncating assignment (WIDTHTRUNC, but not the backend's '!x') and a widened
    variable (WIDTHEXPAND, but not a $signed() or constant operand) still fail the lint."""
    if runner.verilator_bin() is None:
        pytest.skip(runner.available("verilator"))
    v_path = tmp_path / "top.v"
    v_path.write_text("module top(input [3:0] a, input [1:0] c, output [1:0] y, output z, output [3:0] s);\n"
                      "  assign y = a;\n  assign z = !a;\n  assign s = a + c;\nendmodule\n")
    v_path.with_suffix(".vlt").write_text(verilator_config(v_path.read_text(), "top"))
    problems = runner.lint(v_path)
    assert len(problems) == 2, problems
    assert any("WIDTHTRUNC" in p and "ASSIGNW" in p for p in problems)
    assert any("WIDTHEXPAND" in p and "VARREF 'c'" in p for p in problems)


def test_unknown_parameters_and_units_are_named():
    with pytest.raises(TypeError, match="mul takes no parameter stage "):
        UNITS["mul"].build(stage=2)
    with pytest.raises(ValueError, match="unit must be one of mul, add, rounder, mxu, board, window_add, window_round, norm_point, xorshift, not 'muls'"):
        runner.run("muls", {})
    with pytest.raises(ValueError, match="vectors must be in 1..4294967296, not 0"):
        runner.run("mul", {}, vectors=0)


def test_sr_half_has_one_name_and_one_manifest(tmp_path):
    """sr-half takes one random bit: sr_bits=1 builds the same design as no sr_bits, and says so."""
    _, plain = _build(tmp_path / "plain", "rounder", rounding="sr-half")
    _, one = _build(tmp_path / "one", "rounder", rounding="sr-half", sr_bits=1)
    assert one == plain and plain["parameters"]["sr_bits"] is None and plain["rand_bits"] == 1
    with pytest.raises(ValueError, match="sr_bits=3: sr-half uses one random bit"):
        UNITS["rounder"].build(rounding="sr-half", sr_bits=3)


@pytest.mark.thorough
def test_mxu_verilog_goes_through_yosys_abc9(tmp_path):
    """Amaranth names the elements of array-shaped signals ``\\flags[0] ``; read back, such a
    wire clashes with ABC9's name for bit 0 of ``flags`` and ``synth_ecp5`` stops on an
    assertion. The generated Verilog renames them (``\\flags.0 ``) and synthesises."""
    from hdl.toolchain import yosys_command
    v_path, manifest = _build(tmp_path, "mxu", rows=1, cols=2, acc_depth=2)
    text = v_path.read_text()
    assert "\\flags.0 " in text and "\\flags[0] " not in text
    (tmp_path / "synth.ys").write_text(f"read_verilog {v_path.name}\nsynth_ecp5 -top {manifest['module']}\n")
    proc = subprocess.run([*yosys_command(), "-q", "-l", "yosys.log", "synth.ys"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0, (tmp_path / "yosys.log").read_text()[-1500:]
