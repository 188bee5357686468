"""A user's flow reproduces the published array figure: the files ``python -m hdl.build mxu``
writes and the commands docs/mxu-timing.md shows ("Measuring the clock in your own flow"), run as
written, against ``synth.mxu_pnr``'s place and route of the same array on the same seed
(which builds the same harness with Amaranth's platform).

Two place-and-route runs of a 2x2 array (about two minutes of CPU; ``synth.mxu_pnr``'s is
cached under ``build/``). ``ARITH_PNR_LOCK=FILE`` runs each under ``flock`` on FILE, so that
they wait for other heavy jobs on the machine.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from golden.tools.cli import build_dir
from hdl.units import UNITS, emit
from hdl.fmax_top import top_lpf, top_verilog
from hdl.toolchain import parse_details, parse_report

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Measuring the clock in your own flow"


def documented_sequence() -> list[str]:
    """The commands of the first ``sh`` block of docs/mxu-timing.md's section ``SECTION``."""
    text = (ROOT / "docs" / "mxu-timing.md").read_text()
    block = text[text.index(SECTION):].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_the_top_registers_every_port_around_one_instance():
    ports = [{"name": "clk", "direction": "input", "width": 1}, {"name": "rst", "direction": "input", "width": 1},
             {"name": "a", "direction": "input", "width": 3}, {"name": "rand", "direction": "input", "width": 2},
             {"name": "y", "direction": "output", "width": 5}]
    text = top_verilog("unit_x", ports, {"rand"})
    assert ("  unit_x unit (\n    .clk(clk),\n    .rst(1'b0),\n    .a(scrambled[2:0]),\n"
            "    .\\rand (scrambled[4:3]),") in text
    assert "scrambled <= chain ^ {chain[0], chain[4:1]};" in text and "out_y <= y_out;" in text
    assert "xor0_1 <= out_y[4];" in text and "xor1_0 <= xor0_0 ^ xor0_1;" in text and "assign dout = xor1_0;" in text
    lpf = top_lpf("unit_x")
    assert 'LOCATE COMP "clk" SITE "G2";' in lpf and 'FREQUENCY PORT "clk" 300000000 HZ;' in lpf


def _locked(command: str) -> list[str]:
    """``command`` for ``subprocess``; a Yosys or nextpnr run under ``flock`` on ``ARITH_PNR_LOCK``."""
    lock = os.environ.get("ARITH_PNR_LOCK")
    return ["flock", lock, "sh", "-c", command] if lock and command.startswith("yowasp-") else ["sh", "-c", command]


@pytest.mark.regress_large   # two syntheses and places and routes: minutes
def test_documented_user_flow_reproduces_mxu_pnr():
    from synth import mxu_pnr

    size, seed = (2, 2, 4, 6), 1
    rows, cols, mul_stages, add_stages = size
    work = ROOT / build_dir("pytest-synth", "user-flow")      # the yowasp tools do not see /tmp
    if work.exists():
        shutil.rmtree(work)
    component, values = UNITS["mxu"].build(rows=rows, cols=cols, mul_stages=mul_stages, add_stages=add_stages)
    v_path, _ = emit(UNITS["mxu"], component, values, work)
    name = v_path.stem
    commands = documented_sequence()
    assert any(f"--seed {seed}" in c for c in commands) and any("NAME_top.v" in c for c in commands)
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    for command in commands:
        proc = subprocess.run(_locked(command.replace("NAME", name)), cwd=work, env=env,
                              capture_output=True, text=True)
        assert proc.returncode == 0, (command, proc.stderr[-2000:])
    log = (work / f"{name}_top.tim").read_text()
    fmax, cells = parse_report(log, "ecp5")["ecp5_fmax_mhz"], parse_details(log)["cells"]
    assert f"{fmax:.2f} MHz" in proc.stdout                    # the grep shows the figure
    reference = mxu_pnr.run("ecp5", size, ROOT / build_dir("pytest-synth", "user-flow-mxu-pnr"),
                            os.environ.get("ARITH_PNR_LOCK"), 300, "dsp", seed)
    # The same netlist but for names: the same multipliers, LUTs within 3 % (2.2 % seen: names
    # steer ABC's mapping and the placer, so the figure moves as with another seed); the
    # user's flow must not fall short.
    assert cells["MULT18X18D"] == reference["dsp"] and abs(cells["TRELLIS_COMB"] / reference["lut"] - 1) < 0.03
    assert fmax >= 0.95 * reference["fmax_mhz"], (fmax, reference["fmax_mhz"])
