"""Place and route on real parts (``python -m synth.sweep --pnr``): Fmax and utilisation.

A unit has more I/O bits than a small FPGA has pins, so ``FmaxHarness`` wraps it: a shift
register fed from one pin (a button) drives every input from registers, every output is
registered, and their XOR leaves on one pin (an LED) through a tree of registered 4-input
XORs (one LUT level per register, so the harness never limits Fmax). The critical path is
then the unit's register-to-register path (for ``stages=0``, the whole datapath). The boards come from
``amaranth-boards`` (iCEBreaker: iCE40UP5K-SG48, its domain without Amaranth's power-on timer; ULX3S
85F: LFE5U-85F-6BG381C); the flow is Amaranth's own build with Yosys and nextpnr from PyPI. The clock
is constrained to ``TARGET_MHZ``, above every unit's Fmax, not to the board's oscillator: nextpnr then
works on the critical path of every design and reports what it reached (``--timing-allow-fail``);
its "FAIL at 300.03 MHz" on every run is that constraint, and the output says so beside it.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import importlib
import json
import operator
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from amaranth.build import Clock
from amaranth.hdl import ClockDomain, ClockSignal, Instance, Module, ResetSignal, Signal, Value
from amaranth.lib import cdc, io, wiring
from amaranth.lib.wiring import In, Out

from hdl.toolchain import announce_first_runs, check_synthesis_log, parse_details, parse_report, tool_env, tool_versions

__all__ = ["BOARDS", "TARGET_MHZ", "SEED", "FmaxHarness", "VerilogDesign", "VerilogUnit", "board", "explain_verdict",
           "place_and_route"]

#: Architecture -> (amaranth-boards module, platform class, nextpnr tool).
BOARDS = {
    "ice40": ("amaranth_boards.icebreaker", "ICEBreakerPlatform", "nextpnr-ice40"),
    "ecp5": ("amaranth_boards.ulx3s", "ULX3S_85F_Platform", "nextpnr-ecp5"),
}
#: Clock target of place and route per architecture (the boards' oscillators: 12 and 25 MHz).
TARGET_MHZ = {"ice40": 100, "ecp5": 300}
#: nextpnr's placer seed (its default, stated so a figure can be reproduced).
SEED = 1
#: ``synth_ecp5`` without inferred synchronous resets: ``(synth_opts, script_after_synth)``.
#: Yosys turns a register fed by ``Mux(c, 0, x)`` into one whose synchronous reset is ``c``
#: (the slice's LSR pin: a control set of its own, reached through the routing), even where
#: the design gives the register no reset. Stopping before the flip-flop mapping and
#: legalising to plain flip-flops and enables puts ``c`` back into the LUTs.
NO_SYNC_RESETS = ("-run :map_ffs",
                  "dfflegalize -cell $_DFF_?_ 01 -cell $_DFF_?P?_ r -cell $_DFFE_??_ 01 -cell $_DFFE_?P??_ r; "
                  "synth_ecp5 -top top -run map_ffs:")


class FmaxHarness(wiring.Component):
    """Registers around ``unit`` (a component; stream ports are flattened), one pin each way.

    ``scramble``: each input bit comes from a register of the XOR of two neighbouring chain
    bits instead of from the chain itself. A delay line in the design (an MXU's activations
    passing from PE to PE, its skew registers) fed straight from the shift register equals
    the shift register's own later bits, and Yosys merges the two: one flip-flop then feeds
    the multipliers of a whole row of PEs (the 8x8 array's critical path). Real inputs are
    not a shift register, so the array runs use it."""

    def __init__(self, unit, *, scramble: bool = False):
        self.unit = unit
        self.scramble = scramble
        super().__init__({})

    def elaborate(self, platform):
        m = Module()
        m.submodules.unit = unit = self.unit
        din, dout = platform.request("button", 0).i, platform.request("led", 0).o
        # Every port signal, stream interfaces' included (a path per signal: ``("x", "payload")``).
        ports = [("_".join(map(str, path)), member.flow, Value.cast(value))
                 for path, member, value in unit.signature.flatten(unit)]
        inputs = [port for _, flow, port in ports if flow == wiring.In]
        outputs = [(name, port) for name, flow, port in ports if flow == wiring.Out]
        width = sum(len(port) for port in inputs)
        chain = Signal(width)
        m.d.sync += chain.eq((chain << 1)[:width] | din)
        source = chain
        if self.scramble and width > 1:
            source = Signal(width, name="scrambled")
            m.d.sync += source.eq(chain ^ chain.rotate_right(1))
        at = 0
        for port in inputs:
            m.d.comb += port.eq(source[at:at + len(port)])
            at += len(port)
        bits = []
        for name, port in outputs:
            r = Signal(len(port), name=f"out_{name}")
            m.d.sync += r.eq(port)
            bits += list(r)
        level = 0
        while len(bits) > 1:
            nxt = [Signal(name=f"xor{level}_{i}") for i in range(0, len(bits), 4)]
            m.d.sync += [reg.eq(functools.reduce(operator.xor, bits[4 * i:4 * i + 4])) for i, reg in enumerate(nxt)]
            bits, level = nxt, level + 1
        m.d.comb += dout.eq(bits[0])
        return m


@dataclass(frozen=True)
class VerilogDesign:
    """What ``python -m hdl.build`` wrote for a module: ``NAME.v`` and the facts of its
    manifest ``NAME.json`` (``read``), without hardware: a cached result needs no more."""

    module: str
    parameters: dict
    latency: int
    verilog: str
    ports: tuple

    @classmethod
    def read(cls, manifest: Path) -> "VerilogDesign":
        facts = json.loads(Path(manifest).read_text())
        return cls(facts["module"], facts["parameters"], facts["latency"],
                   Path(manifest).with_suffix(".v").read_text(), tuple(facts["ports"]))


class VerilogUnit(wiring.Component):
    """A module as ``python -m hdl.build`` wrote it (``VerilogDesign``), for ``FmaxHarness``:
    one port per manifest port in the manifest's order (``clk``/``rst`` from the ``sync``
    domain) wired to an ``Instance`` of the module, whose Verilog joins the platform's files
    unchanged."""

    def __init__(self, design: VerilogDesign):
        self.module, self.parameters, self.latency = design.module, design.parameters, design.latency
        self.verilog = design.verilog
        self.domain_ports = [p["name"] for p in design.ports if p["name"] in ("clk", "rst")]
        self.data_ports = [p for p in design.ports if p["name"] not in ("clk", "rst")]
        super().__init__({p["name"]: (In if p["direction"] == "input" else Out)(p["width"])
                          for p in self.data_ports})

    def elaborate(self, platform):
        platform.add_file(f"{self.module}.v", self.verilog)
        ports = {("i_" if p["direction"] == "input" else "o_") + p["name"]: getattr(self, p["name"])
                 for p in self.data_ports}
        # A reset-less domain (the ECP5 board's: reset through GSR) drives rst with 0.
        ports.update({f"i_{name}": ClockSignal() if name == "clk" else ResetSignal(allow_reset_less=True)
                      for name in self.domain_ports})
        m = Module()
        m.submodules.unit = Instance(self.module, **ports)
        return m


def _sync_without_power_on_timer(platform, name):
    """The iCE40 ``sync`` domain as Amaranth's platform builds it for a board with a reset
    pin, without its power-on timer: the domain's reset is one flip-flop (a two-stage
    synchroniser of the break-off PMOD's button 1) that fans out to the flip-flops.

    Amaranth's own domain holds the reset until a power-on timer (an 11-bit counter and its
    compare, two LUT levels) has counted 15 us. That timer, not the design, is then the
    critical path of every design faster than ~90 MHz on the UP5K (the bare SB_MAC16
    multiply's was). A domain without a reset (the ECP5 platform's, which resets through
    GSR) is not an option here: with reset-less registers around the multiply, Yosys's
    SB_MAC16 packing gives product bits a second, constant driver."""
    if name != "sync":
        return super(type(platform), platform).create_missing_domain(name)
    m = Module()
    m.domains.sync = ClockDomain("sync")
    m.submodules.clk_buf = clk = io.Buffer("i", platform.request(platform.default_clk, dir="-"))
    m.submodules.rst_buf = rst = io.Buffer("i", platform.request("button", 1, dir="-"))
    m.d.comb += ClockSignal("sync").eq(clk.i)
    m.submodules.reset_sync = cdc.ResetSynchronizer(rst.i, domain="sync")
    return m


def board(arch: str, clock_mhz: float | None = None):
    """``arch``'s amaranth-boards platform, its default clock constrained to ``clock_mhz``
    (default ``TARGET_MHZ``); on iCE40 the ``sync`` domain of ``_sync_without_power_on_timer``."""
    module, cls, _ = BOARDS[arch]
    base = getattr(importlib.import_module(module), cls)

    def retarget(resource):
        if resource.name != base.default_clk:
            return resource
        resource = copy.copy(resource)
        resource.clock = Clock((clock_mhz or TARGET_MHZ[arch]) * 1e6)
        return resource
    members = {"resources": [retarget(r) for r in base.resources]}
    if arch == "ice40":
        members["resources"] += [r for r in base.break_off_pmod if r.name == "button"]
        members["create_missing_domain"] = _sync_without_power_on_timer
    return type(cls, (base,), members)()


#: nextpnr's verdict on a clock it does not reach (a warning, so printed even with ``--quiet``).
_VERDICT = re.compile(r"Max frequency for clock .*: ([\d.]+) MHz \(FAIL at [\d.]+ MHz\)")


def explain_verdict(line: str, above_every_design: bool) -> str:
    """A line of the tools' output, nextpnr's ``FAIL`` explained when the clock was
    constrained ``above_every_design`` (``TARGET_MHZ``): then the figure is what was reached."""
    found = _VERDICT.search(line) if above_every_design else None
    if found is None:
        return line
    return (line.rstrip("\n") + f" [expected: the clock is constrained above every design on purpose "
            f"(synth.pnr.TARGET_MHZ), so {found[1]} MHz is the Fmax reached]\n")


#: What synthesis writes (``place_and_route`` names the design ``top``): kept per netlist key.
_SYNTHESISED = ("top.json", "top.rpt")
#: The build scripts' tools after Yosys (their variables in Amaranth's scripts).
_AFTER_SYNTHESIS = ("NEXTPNR_ECP5", "NEXTPNR_ICE40", "ECPPACK", "ICEPACK")


def _netlist_key(plan) -> str:
    """What Yosys's netlist depends on: every file of ``plan`` but its build scripts (which
    name nextpnr's seed), and the tools' versions."""
    h = hashlib.sha256(tool_versions().encode())
    for name, content in sorted(plan.files.items()):
        if not name.startswith(plan.script):
            h.update(name.encode() + b"\0" + (content.encode() if isinstance(content, str) else content) + b"\0")
    return h.hexdigest()[:20]


def _run_build(plan, build_dir: Path, above_every_design: bool) -> None:
    """Run Amaranth's build script (Yosys, nextpnr) in ``build_dir`` as ``execute_local``
    does, its stderr passed on line by line through ``explain_verdict``. A design already
    synthesised in a sibling folder (another seed of it: the same files and tools) reuses
    that netlist and runs nextpnr only (a large array's synthesis takes ten minutes and more),
    also when it was started while that one placed: the netlist is kept once synthesised."""
    plan.extract(str(build_dir))
    netlist = build_dir.parent / "netlists" / _netlist_key(plan)
    command = ["sh", f"{plan.script}.sh"]

    def run(**skipped):
        """The build script with the ``skipped`` tools' steps doing nothing (``true``)."""
        proc = subprocess.Popen(command, cwd=build_dir, env={**tool_env(), **skipped}, stderr=subprocess.PIPE,
                                text=True)
        for line in proc.stderr:
            sys.stderr.write(explain_verdict(line, above_every_design))
        if proc.wait():
            raise subprocess.CalledProcessError(proc.returncode, command)

    if not all((netlist / name).exists() for name in _SYNTHESISED):
        # Synthesis alone first, its netlist kept before place and route starts: another
        # seed's run started meanwhile takes it from there.
        run(**{tool: "true" for tool in _AFTER_SYNTHESIS})
        netlist.mkdir(parents=True, exist_ok=True)
        for name in _SYNTHESISED:            # renamed into place: a reader never sees half a file
            shutil.copyfile(build_dir / name, netlist / f".{name}.tmp")
            (netlist / f".{name}.tmp").replace(netlist / name)
    for name in _SYNTHESISED:
        shutil.copyfile(netlist / name, build_dir / name)
    run(YOSYS="true")


def place_and_route(unit, arch: str, build_dir: Path, synth_opts: str = "", details: bool = False,
                    clock_mhz: float | None = None, script_after_read: str = "", script_after_synth: str = "",
                    scramble: bool = False, seed: int = SEED, sync_resets: bool = True) -> dict:
    """Build ``FmaxHarness(unit)`` for ``arch``'s board; return Fmax and utilisation (and,
    with ``details``, ``parse_details``). ``synth_opts``: extra ``synth_<arch>`` options
    (``-dsp`` maps iCE40 multiplies onto SB_MAC16); ``clock_mhz``: the clock constraint
    nextpnr's timing-driven placement and routing work towards (default ``TARGET_MHZ``);
    ``script_after_read`` / ``script_after_synth``: Yosys commands run before synthesis and
    on the mapped netlist (``synth.mxu_pnr``'s kept registers, ``synth.floorplan``);
    ``scramble``: ``FmaxHarness``'s option; ``seed``: nextpnr's; ``sync_resets=False``:
    ``NO_SYNC_RESETS`` (ECP5 only)."""
    if not sync_resets:
        if arch != "ecp5":
            raise ValueError(f"sync_resets=False is a synth_ecp5 flow, not one for {arch}")
        synth_opts = f"{synth_opts} {NO_SYNC_RESETS[0]}".strip()
        script_after_synth = NO_SYNC_RESETS[1] + ("\n" + script_after_synth if script_after_synth else "")
    announce_first_runs("yosys", f"nextpnr-{arch}")
    platform = board(arch, clock_mhz)
    build_dir.mkdir(parents=True, exist_ok=True)
    plan = platform.build(FmaxHarness(unit, scramble=scramble), name="top", build_dir=str(build_dir), do_build=False,
                          nextpnr_opts=f"--timing-allow-fail --seed {seed}", synth_opts=synth_opts,
                          script_after_read=script_after_read, script_after_synth=script_after_synth)
    _run_build(plan, build_dir, clock_mhz in (None, TARGET_MHZ[arch]))
    check_synthesis_log((build_dir / "top.rpt").read_text())
    log = (build_dir / "top.tim").read_text()
    return {**parse_report(log, arch), **(parse_details(log) if details else {})}
