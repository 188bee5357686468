"""Shared cocotb driving and checking for the arithmetic units.

Each cycle: drive on the falling edge (one vector, or a bubble with ``valid_in = 0``), then
sample in the ReadOnly phase, keeping outputs whose ``valid_out`` is 1. A combinational
unit without a clock gets one vector per settle instead.
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

__all__ = ["Config", "start", "stream", "compare", "save_mismatches", "save_summary", "save_coverage", "Timed"]


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
    dut.valid_in.value = 0
    if "clk" not in cfg.ports:
        return
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    for _ in range(2):
        await FallingEdge(dut.clk)
    dut.rst.value = 0


async def stream(dut, cfg: Config, inputs: dict[str, np.ndarray], rng: np.random.Generator,
                 bubbles: float = 0.2):
    """Feed every vector of ``inputs`` (port -> values); return (results, flags, cycles)."""
    n = len(next(iter(inputs.values())))
    results, flags = [], []
    if "clk" not in cfg.ports:
        for i in range(n):
            for port, values in inputs.items():
                getattr(dut, port).value = int(values[i])
            dut.valid_in.value = 1
            await Timer(1, unit="ns")
            assert int(dut.valid_out.value) == 1
            results.append(int(dut.result.value))
            flags.append(int(dut.flags.value))
        return np.array(results, np.uint64), np.array(flags, np.uint8), n
    i = cycles = 0
    limit = 4 * n + 4 * cfg.latency + 100
    while len(results) < n:
        await FallingEdge(dut.clk)
        if i < n and rng.random() >= bubbles:
            for port, values in inputs.items():
                getattr(dut, port).value = int(values[i])
            dut.valid_in.value = 1
            i += 1
        else:
            dut.valid_in.value = 0
        await ReadOnly()
        if int(dut.valid_out.value):
            results.append(int(dut.result.value))
            flags.append(int(dut.flags.value))
        cycles += 1
        assert cycles < limit, f"only {len(results)} of {n} results after {cycles} cycles"
    await FallingEdge(dut.clk)
    dut.valid_in.value = 0
    return np.array(results, np.uint64), np.array(flags, np.uint8), cycles


def compare(got, want, inputs: dict[str, np.ndarray], what: str = "") -> None:
    """Bit-for-bit comparison of (results, flags) with golden's; report the first mismatches
    (``save_mismatches``) and fail."""
    got_bits, got_flags = got[0], got[1]
    want_bits, want_flags = (np.asarray(w).astype(np.uint64) for w in want)
    bad = np.flatnonzero((got_bits != want_bits) | (got_flags != want_flags))
    if len(bad):
        save_mismatches(what, len(bad), len(got_bits), [
            {"index": int(j), "inputs": {port: hex(int(v[j])) for port, v in inputs.items()},
             "expected": hex(int(want_bits[j])), "expected_flags": f"{int(want_flags[j]):#07b}",
             "got": hex(int(got_bits[j])), "got_flags": f"{int(got_flags[j]):#07b}"} for j in bad[:FIRST]])


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
