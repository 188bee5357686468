"""A structural proof that pipelining cannot change a bit, for units SAT cannot finish.

``python -m sim.formal UNIT --stages N --method structural`` proves the unit at ``stages=N``
equal to itself at ``stages=0`` delayed ``N`` cycles, in two steps that together imply it
for every input sequence (docs/formal.md, "The structural method"):

1. **Every path is a pure delay of N.** In the pipelined unit's flattened netlist (its clock
   domain without reset: the registers then only delay), every path from an input port to
   an output port crosses exactly ``N`` registers (the fewest and the most registers on any
   path, per output bit, are both ``N``), and there is no loop (a register with an enable
   or feedback would be one). Then each output at cycle ``t > N`` is the netlist with its
   registers replaced by wires, applied to the inputs of cycle ``t - N``.
2. **With its registers as wires, the netlist is the combinational unit.** Yosys replaces
   every flip-flop by a connection (a ``techmap`` of ``$dff`` to ``assign Q = D``) and
   proves the result equal to the ``stages=0`` unit: ``equiv_make`` pairs their
   same-named signals (the same Amaranth code elaborated with and without cut registers),
   ``equiv_struct`` merges the identical cells, ``equiv_simple`` proves what is left.

No SAT problem spans the datapath: the 24x24 significand products of the fp32 multiplier,
whose bounded model check did not finish, are identical cells paired by name.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from pathlib import Path

from amaranth.back import rtlil
from amaranth.hdl import ClockDomain, Module, Value

from golden.tools.cli import build_dir
from hdl.units import _value, module_name

from .equiv import equiv_script, equiv_verdict, tools

__all__ = ["METHOD", "path_registers", "check_structural"]

METHOD = ("structural: every input-to-output path crosses exactly N registers (netlist walk), and the "
          "netlist with its registers as wires equals the stages=0 unit (yosys equiv_make / equiv_struct / "
          "equiv_simple)")
#: ``$dff`` (the only flip-flop a reset-less Amaranth domain gives) as a wire.
_DFF_AS_WIRE = """module \\$dff (CLK, D, Q);
  parameter WIDTH = 0; parameter CLK_POLARITY = 1;
  input CLK; input [WIDTH-1:0] D; output [WIDTH-1:0] Q;
  assign Q = D;
endmodule
"""


def _reset_less(unit, name: str) -> str:
    """RTLIL of ``unit`` in a reset-less ``sync`` domain (registers are pure delays), its ports
    named as the unit's signature names them."""
    m = Module()
    m.domains.sync = ClockDomain("sync", reset_less=True)
    m.submodules.unit = unit
    ports = [Value.cast(getattr(unit, n)) for n in unit.signature.members]      # a View: its signal
    return rtlil.convert(m, name=name, ports=ports)


def path_registers(netlist: dict) -> dict[str, tuple[int, int]]:
    """Per output port, the fewest and the most registers on any path to it from an input
    port (a Yosys ``write_json`` module; ports driven by constants alone are left out).
    Raises ``ValueError`` naming a cell on a loop."""
    cells = list(netlist["cells"].values())
    names = list(netlist["cells"])
    inputs = {b for p in netlist["ports"].values() if p["direction"] == "input" for b in p["bits"]}
    driver = {bit: i for i, c in enumerate(cells) for port, bits in c["connections"].items()
              if c["port_directions"].get(port) == "output" for bit in bits}
    register = ["dff" in c["type"] or c["type"] in ("$ff", "$dlatch") for c in cells]
    fanin = [[b for port, bits in c["connections"].items() if c["port_directions"].get(port) == "input"
              and port != "CLK" for b in bits] for c in cells]
    span: dict[int, tuple[int, int] | None] = {}

    def of_bit(bit):
        if bit in inputs:
            return (0, 0)
        return span[driver[bit]] if bit in driver else None        # a constant: no input behind it

    for root in range(len(cells)):
        stack, on_path = [root], {root}
        while stack:
            i = stack[-1]
            todo = [driver[b] for b in fanin[i] if b in driver and driver[b] not in span]
            if todo:
                j = todo[0]
                if j in on_path:
                    raise ValueError(f"a loop through {names[j]}: not a feed-forward pipeline")
                stack.append(j)
                on_path.add(j)
                continue
            stack.pop()
            on_path.discard(i)
            ends = [s for s in map(of_bit, fanin[i]) if s is not None]
            span[i] = (min(s[0] for s in ends) + register[i], max(s[1] for s in ends) + register[i]) if ends else None
    out = {}
    for name, port in netlist["ports"].items():
        if port["direction"] == "output":
            ends = [s for s in map(of_bit, port["bits"]) if s is not None]
            if ends:
                out[name] = (min(s[0] for s in ends), max(s[1] for s in ends))
    return out


def check_structural(key: str, pipelined, dut, ref, values: dict, *, yosys, timeout: int) -> dict:
    """The report of the structural proof of ``dut`` (``pipelined``, or its mutant) against
    ``ref`` (``stages=0``); ``yosys(folder, script, timeout)`` runs Yosys."""
    from .pipelining import FORMAL_UNITS

    latency = dut.latency
    work = build_dir("formal")
    work.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=work, prefix="formal_struct_") as folder:
        (Path(folder) / "gate.il").write_text(_reset_less(dut, "gate"))
        (Path(folder) / "gold.il").write_text(_reset_less(ref, "gold"))
        (Path(folder) / "dff_as_wire.v").write_text(_DFF_AS_WIRE)
        proc = yosys(folder, "read_rtlil gate.il; hierarchy -top gate; proc; flatten; opt_clean; write_json gate.json",
                     timeout)
        if proc is None or proc.returncode:
            raise RuntimeError(f"yosys could not read the pipelined unit: {(proc.stdout if proc else 'timeout')[-1500:]}")
        netlist = json.loads((Path(folder) / "gate.json").read_text())["modules"]["gate"]
        state = sorted({c["type"] for c in netlist["cells"].values()
                        if re.search(r"ff|latch|mem", c["type"]) and c["type"] != "$dff"})
        if state:       # an enable, a reset or a memory: not a pure delay, the method does not apply
            raise ValueError(f"{module_name(FORMAL_UNITS[key], pipelined)} has {', '.join(state)} cells: "
                             "the structural method needs plain $dff registers")
        spans = path_registers(netlist)
        balanced = all(span == (latency, latency) for span in spans.values())
        script = equiv_script(
            "read_rtlil gold.il; hierarchy -top gold; proc; flatten; opt_clean",
            "read_rtlil gate.il; hierarchy -top gate; proc; flatten; opt_clean; techmap -map dff_as_wire.v t:$dff; "
            "opt_clean", "equiv_struct; equiv_simple")
        proc = yosys(folder, script, timeout)
    seconds = time.perf_counter() - start
    result, pairs, unproven = equiv_verdict(proc)
    if not balanced and result != "timeout":
        result = "not a pure delay"
    return {
        "unit": key, "module": module_name(FORMAL_UNITS[key], pipelined),
        "parameters": {k: _value(getattr(pipelined, k, v)) for k, v in values.items() if k != "stages"},
        "stages": latency, "method": METHOD,
        "path_registers": {name: list(span) for name, span in sorted(spans.items())},
        "pairs": pairs, "unproven": unproven, "result": result, "seconds": round(seconds, 2),
        "tools": tools(proc.stdout if proc else ""),
    }
