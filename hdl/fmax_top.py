"""A top for measuring an array's clock in a user's own flow: ``NAME_top.v`` and ``NAME_top.lpf``.

docs/mxu-pnr.csv's figures place the array inside the project's Fmax harness (the
``FmaxHarness`` of synth/pnr.py, with scrambled inputs, on the ULX3S's LFE5U-85F): every input
port from a register of a shift register fed from one pin, each register the XOR of two
neighbouring chain bits, every output port into a register, and those registers' XOR on one
pin through a tree of registered 4-input XORs. ``top_verilog`` writes that harness as plain
Verilog around the module ``python -m hdl.build`` wrote, and ``top_lpf`` its pins and clock
constraint, so that plain ``yosys`` and ``nextpnr-ecp5`` reproduce the figure (docs/mxu-timing.md,
"Measuring the clock in your own flow").
"""

from __future__ import annotations

from pathlib import Path

from golden.tools.cli import write_text

__all__ = ["CLOCK_MHZ", "PINS", "top_verilog", "top_lpf", "top_paths", "write_top"]

#: The clock constraint: above every design, so that nextpnr's timing-driven placement works
#: towards speed (the Fmax it reports is what the design reaches); synth.pnr's for ECP5.
CLOCK_MHZ = 300
#: ULX3S pins (amaranth-boards): the 25 MHz oscillator's, button 0's and LED 0's.
PINS = {"clk": ("G2", "IO_TYPE=LVCMOS33"), "din": ("R1", "IO_TYPE=LVCMOS33 PULLMODE=DOWN"),
        "dout": ("B2", "IO_TYPE=LVCMOS33 DRIVE=4")}


def top_verilog(name: str, ports: list[dict], escaped: set[str]) -> str:
    """Verilog module ``NAME_top`` (ports ``clk``, ``din``, ``dout``) holding instance
    ``unit`` of module ``name`` with manifest ``ports`` (``escaped``: the ports the module
    names as escaped identifiers, ``hdl.ports.escaped_ports``). ``rst`` is held low: every
    register starts from its initial value when the global set/reset is released.
    """
    def pin(port: str) -> str:
        return f"\\{port} " if port in escaped else port

    inputs = [p for p in ports if p["direction"] == "input" and p["name"] not in ("clk", "rst")]
    outputs = [p for p in ports if p["direction"] == "output"]
    width = sum(p["width"] for p in inputs)
    lines = [f"// The Fmax harness around {name} (python -m hdl.build; docs/mxu.md).",
             f"module {name}_top(clk, din, dout);", "  input clk;", "  input din;", "  output dout;",
             # The board's start-up, as Amaranth's ECP5 platform builds it: the global set/reset
             # released in step with the clock, two flip-flops after configuration.
             "  wire gsr0, gsr1;",
             "  FD1S3AX #(.GSR(\"DISABLED\")) gsr_sync0 (.CK(clk), .D(1'b1), .Q(gsr0));",
             "  FD1S3AX #(.GSR(\"DISABLED\")) gsr_sync1 (.CK(clk), .D(gsr0), .Q(gsr1));",
             "  SGSR gsr (.CLK(clk), .GSR(gsr1));",
             f"  reg [{width - 1}:0] chain = {width}'d0;",
             f"  always @(posedge clk) chain <= {{chain[{width - 2}:0], din}};" if width > 1 else
             "  always @(posedge clk) chain <= din;"]
    source = "chain"
    if width > 1:       # each bit the XOR of two chain bits: no input equals a later chain bit
        source = "scrambled"
        lines += [f"  reg [{width - 1}:0] scrambled = {width}'d0;",
                  f"  always @(posedge clk) scrambled <= chain ^ {{chain[0], chain[{width - 1}:1]}};"]
    present = {p["name"] for p in ports}
    connections = [f".{pin(p)}({net})" for p, net in (("clk", "clk"), ("rst", "1'b0")) if p in present]
    at = 0
    for p in inputs:
        connections.append(f".{pin(p['name'])}({source}[{at + p['width'] - 1}:{at}])")
        at += p["width"]
    bits = []
    for p in outputs:
        wire, reg = f"{p['name']}_out", f"out_{p['name']}"
        lines += [f"  wire [{p['width'] - 1}:0] {wire};", f"  reg [{p['width'] - 1}:0] {reg} = {p['width']}'d0;",
                  f"  always @(posedge clk) {reg} <= {wire};"]
        connections.append(f".{pin(p['name'])}({wire})")
        bits += [f"{reg}[{i}]" for i in range(p["width"])]
    lines.append(f"  {name} unit (\n    " + ",\n    ".join(connections) + "\n  );")
    level = 0
    while len(bits) > 1:
        groups = [bits[i:i + 4] for i in range(0, len(bits), 4)]
        bits = [f"xor{level}_{i}" for i in range(len(groups))]
        lines += [f"  reg {reg} = 1'b0;\n  always @(posedge clk) {reg} <= {' ^ '.join(group)};"
                  for reg, group in zip(bits, groups)]
        level += 1
    lines += [f"  assign dout = {bits[0]};", "endmodule", ""]
    return "\n".join(lines)


def top_lpf(name: str, clock_mhz: float = CLOCK_MHZ) -> str:
    """The constraints of ``NAME_top`` on the ULX3S (LFE5U-85F, CABGA381)."""
    pins = "".join(f'LOCATE COMP "{port}" SITE "{site}";\nIOBUF PORT "{port}" {attrs};\n'
                   for port, (site, attrs) in PINS.items())
    return (f"# {name}_top on the ULX3S (python -m hdl.build; docs/mxu.md)\nBLOCK ASYNCPATHS;\nBLOCK RESETPATHS;\n"
            f'{pins}FREQUENCY PORT "clk" {clock_mhz * 1e6:.0f} HZ;\n')


def top_paths(name: str, out_dir: Path) -> list[Path]:
    return [out_dir / f"{name}_top.v", out_dir / f"{name}_top.lpf"]


def write_top(name: str, ports: list[dict], escaped: set[str], out_dir: Path) -> list[Path]:
    """Write ``top_paths``: the harness and its constraints."""
    paths = top_paths(name, out_dir)
    write_text(paths[0], top_verilog(name, ports, escaped))
    write_text(paths[1], top_lpf(name))
    return paths
