"""Shared cocotb driving and checking for the arithmetic units.

Each cycle: drive on the falling edge (one vector, or a bubble with ``valid_in = 0``), then
sample in the ReadOnly phase, keeping outputs whose ``valid_out`` is 1 (a unit without
``valid_out`` gets a vector every cycle and keeps the outputs from cycle ``latency`` on). A
combinational unit without a clock gets one vector per settle instead. ``simulate`` drives
a component the same way in Amaranth's simulator (``cycles`` is the shared loop).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, Timer

from golden import coverage
from golden.formats import parse_format
from golden.rounding import Rounding

__all__ = ["Config", "start", "stream", "cycles", "simulate", "pack", "unpack", "mismatches", "compare",
           "save_mismatches", "save_summary", "save_coverage", "Timed"]


class Config:
    """The configuration under test, from the manifest the runner wrote."""

    def __init__(self):
        self.manifest = json.loads(Path(os.environ["UNIT_MANIFEST"]).read_text())
        self.vectors = int(os.environ.get("UNIT_VECTORS", "2000"))
        self.seed = int(os.environ.get("UNIT_SEED", "1"))
        self.params = self.manifest["parameters"]
        self.ports = {p["name"] for p in self.manifest["ports"]}
        self.rand_bits = self.manifest.get("rand_bits")
        self.latency = self.manifest["latency"]

    def fmt(self, name):
        return parse_format(self.params[name])

    @property
    def rounding(self) -> Rounding:
        return Rounding.parse(self.params["rounding"])

    def rng(self, salt: int = 0) -> np.random.Generator:
        return np.random.default_rng([self.seed, salt])


async def start(dut, cfg: Config) -> None:
    """Start the clock and reset, if the unit has them; inputs idle."""
    if "valid_in" in cfg.ports:
        dut.valid_in.value = 0
    if "clk" not in cfg.ports:
        return
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    for _ in range(2):
        await FallingEdge(dut.clk)
    dut.rst.value = 0


async def stream(dut, cfg: Config, inputs: dict[str, np.ndarray], rng: np.random.Generator,
                 bubbles: float = 0.2, late: dict[str, int] | None = None):
    """Feed every vector of ``inputs`` (port -> values); return (results, flags, cycles).
    ``late``: ports whose value of a vector is driven that many cycles after the rest."""
    n = len(next(iter(inputs.values())))
    if "clk" not in cfg.ports:
        results, flags = [], []
        for i in range(n):
            for port, values in inputs.items():
                getattr(dut, port).value = int(values[i])
            dut.valid_in.value = 1
            await Timer(1, unit="ns")
            assert int(dut.valid_out.value) == 1
            results.append(int(dut.result.value))
            flags.append(int(dut.flags.value))
        return _bits(results), np.array(flags, np.uint8), n
    got = await cycles(_CocotbPorts(dut), inputs, rng, latency=cfg.latency, valid="valid_in" in cfg.ports,
                       bubbles=bubbles, late=late)
    await FallingEdge(dut.clk)
    if "valid_in" in cfg.ports:
        dut.valid_in.value = 0
    return got


class _CocotbPorts:
    """``cycles``' view of a cocotb design: drive after the falling edge, sample read-only."""

    def __init__(self, dut):
        self.dut = dut
        self.edge = lambda: FallingEdge(dut.clk)
        self.sample = ReadOnly

    def set(self, port, value):
        getattr(self.dut, port).value = int(value)

    def get(self, port):
        return int(getattr(self.dut, port).value)

    async def clock(self):
        """The rising edge comes before the next falling one."""


async def cycles(ports, inputs: dict[str, np.ndarray], rng: np.random.Generator, *, latency: int, valid: bool = True,
                 bubbles: float = 0.2, late: dict[str, int] | None = None):
    """Feed every vector of ``inputs`` through ``ports`` (``edge``, ``sample``, ``clock``:
    awaitables around one cycle; ``set``, ``get``), a bubble instead with probability
    ``bubbles``, keeping the outputs whose ``valid_out`` is 1; without ``valid`` ports a
    vector every cycle, the outputs kept from cycle ``latency`` on. ``late`` as ``stream``'s.
    Returns (results, flags, cycles)."""
    n = len(next(iter(inputs.values())))
    late = late or {}
    pending: dict[int, dict] = {}       # cycle -> the late ports' values due then
    results, flags = [], []
    i = cycle = 0
    limit = 4 * n + 4 * latency + 100
    while len(results) < n:
        await ports.edge()
        issue = i < n and (not valid or rng.random() >= bubbles)
        if issue:
            for port, values in inputs.items():
                if port in late:
                    pending.setdefault(cycle + late[port], {})[port] = values[i]
                else:
                    ports.set(port, values[i])
            i += 1
        for port, value in pending.pop(cycle, {}).items():
            ports.set(port, value)
        if valid:
            ports.set("valid_in", issue)
        await ports.sample()
        if ports.get("valid_out") if valid else cycle >= latency:
            results.append(ports.get("result"))
            flags.append(ports.get("flags"))
        await ports.clock()
        cycle += 1
        assert cycle < limit, f"only {len(results)} of {n} results after {cycle} cycles"
    return _bits(results), np.array(flags, np.uint8), cycle


class _AmaranthPorts:
    """``cycles``' view of a design in Amaranth's simulator: drive, read the settled
    outputs, then the clock edge."""

    def __init__(self, ctx, dut):
        self.ctx, self.dut = ctx, dut

    async def edge(self):
        pass

    sample = edge

    def _port(self, name):
        from amaranth.hdl import ValueCastable       # here: a cocotb run need not import Amaranth (0.4 s)
        port = getattr(self.dut, name)
        return port.as_value() if isinstance(port, ValueCastable) else port

    def set(self, port, value):
        self.ctx.set(self._port(port), int(value))

    def get(self, port):
        return self.ctx.get(self._port(port))

    async def clock(self):
        await self.ctx.tick()


def simulate(dut, inputs: dict[str, np.ndarray], rng: np.random.Generator, *, latency: int, bubbles: float = 0.2,
             late: dict[str, int] | None = None):
    """``cycles`` on ``dut`` in Amaranth's simulator (its ``sync`` domain clocked, a
    combinational unit read in the cycle it is driven): (results, flags, cycles)."""
    from amaranth.hdl import ClockDomain, Module
    from amaranth.sim import Simulator

    m = Module()
    m.domains.sync = ClockDomain()
    m.submodules.dut = dut
    valid = "valid_in" in dut.signature.members
    got = []

    async def bench(ctx):
        got.append(await cycles(_AmaranthPorts(ctx, dut), inputs, rng, latency=latency, valid=valid,
                                bubbles=bubbles, late=late))

    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return got[0]


def _bits(values: list[int]) -> np.ndarray:
    """Results as uint64, or as Python ints where a port is wider."""
    return np.array(values, np.uint64 if max(values, default=0) < 1 << 64 else object)


def pack(port: dict, fields: dict[str, np.ndarray]) -> np.ndarray:
    """Values of a struct-shaped ``port`` (a manifest's, with ``fields``) from each field's
    values (two's complement for negative ones), as Python ints."""
    total = np.zeros(len(next(iter(fields.values()))), object)
    for field in port["fields"]:
        mask = (1 << field["width"]) - 1
        total = total + ((np.asarray(fields[field["name"]]).astype(object) & mask) << field["offset"])
    return total


def unpack(port: dict, values, signed=()) -> dict[str, np.ndarray]:
    """``pack``'s inverse: each field's values (int64; those named in ``signed`` as two's complement)."""
    values = np.asarray(values).astype(object)
    fields = {}
    for field in port["fields"]:
        width = field["width"]
        raw = (values >> field["offset"]) & ((1 << width) - 1)
        if field["name"] in signed:
            raw = raw - ((raw >> (width - 1)) << width)
        fields[field["name"]] = raw.astype(np.int64)
    return fields


def mismatches(got, want, inputs: dict[str, np.ndarray]) -> tuple[int, list[dict]]:
    """Bit-for-bit comparison of (results, flags) with golden's: how many vectors differ,
    and the first ``FIRST`` of them, each with its ``inputs``, ``expected`` and ``got``."""
    got_bits, got_flags = np.asarray(got[0]).astype(object), np.asarray(got[1]).astype(np.uint8)
    want_bits, want_flags = np.asarray(want[0]).astype(object), np.asarray(want[1]).astype(np.uint8)
    bad = np.flatnonzero((got_bits != want_bits) | (got_flags != want_flags))
    return len(bad), [
        {"index": int(j), "inputs": {port: hex(int(v[j])) for port, v in inputs.items()},
         "expected": hex(int(want_bits[j])), "expected_flags": f"{int(want_flags[j]):#07b}",
         "got": hex(int(got_bits[j])), "got_flags": f"{int(got_flags[j]):#07b}"} for j in bad[:FIRST]]


def compare(got, want, inputs: dict[str, np.ndarray], what: str = "") -> None:
    """``mismatches``, recorded and raised (``save_mismatches``) if there are any."""
    count, first = mismatches(got, want, inputs)
    if count:
        save_mismatches(what, count, len(got[0]), first)


#: Mismatches reported in full (the rest are counted).
FIRST = 8


def save_mismatches(what: str, count: int, total: int, first: list[dict]) -> None:
    """Record (summary.json: ``mismatches``, one entry per failing check) and raise: ``count``
    of ``total`` vectors differ from golden, ``first`` the first few, each with its
    ``inputs``, ``expected`` and ``got`` (and flags)."""
    path = Path("summary.json")
    data = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault("mismatches", []).append({"what": what, "count": count, "of": total, "first": first})
    path.write_text(json.dumps(data))
    rows = [f"  #{m['index']} " + ", ".join(f"{k}={v}" for k, v in m["inputs"].items()) +
            f": got {m['got']} flags {m.get('got_flags', '-')}, golden {m['expected']} flags {m.get('expected_flags', '-')}"
            for m in first]
    raise AssertionError(f"{what}{count} of {total} vectors differ from golden:\n" + "\n".join(rows))


def save_summary(**facts) -> None:
    """Merge figures (vectors, cycles, seconds) into summary.json in the build folder."""
    path = Path("summary.json")
    data = json.loads(path.read_text()) if path.exists() else {}
    data.update(facts)
    path.write_text(json.dumps(data))


def save_coverage(dut, out_fmt, want, again, in_fmt, operands, rounding) -> None:
    """Log and save (summary.json: ``classes``, ``situations``) what the vectors covered,
    from golden's results ``want``; ``again`` as ``golden.coverage.situations`` takes it."""
    counts = {**coverage.classes(out_fmt, *want), **coverage.situations(out_fmt, *want, again, in_fmt, operands, rounding)}
    dut._log.info("coverage:\n" + coverage.table(counts, len(want[0])))
    save_summary(coverage=counts)


class Timed:
    """Wall-clock seconds of a block (for the vectors/second benchmark)."""

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start
