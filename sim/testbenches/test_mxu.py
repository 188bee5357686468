"""cocotb test of the MXU: driver, monitor and scoreboard against golden.mxu, bit for bit.

Weight tiles stream into the shadow buffer whenever ``w`` is ready, X rows stream with
random bubbles and explicit swap marks (a swap row waits for its tile), ``y`` sees random
backpressure and the sticky flags are cleared at random. The scoreboard checks that every
``y`` row comes out once, in order, equal to ``golden.mxu.stream`` for the same rows, tiles
and swap marks (input conversion, tile accumulation and the output rounders' xorshift lanes
included), and every cycle that ``flags`` is the OR of the golden flags of the rows that
left the array (``array_latency`` cycles after their acceptance) since the last clear.

With output accumulators the driver runs groups of ``TILES`` passes over one set of
accumulator rows (random pass length, down to a single row, so a row's read-add-write meets
the previous one to the same address back to back); each pass swaps in its own tile.
"""

import os

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly

from golden.column import accumulation_param
from golden.mxu import stream
from sim.testbenches.harness import FIRST, Config, Timed, save_mismatches, save_summary
from golden.vectors import cancelling, matrix, rows_and_tiles

TILES = 3


class Setup:
    """What the test needs to know about the configuration under test."""

    def __init__(self):
        self.cfg = cfg = Config()
        p = cfg.params
        self.k, self.n = p["rows"], p["cols"]
        self.in_fmt, self.acc_fmt = cfg.fmt("in_fmt"), cfg.fmt("acc_fmt")
        self.convert_inputs, self.depth = p["convert_inputs"], p["acc_depth"]
        self.out_rounding, self.sr_bits = p["out_rounding"], p["sr_bits"]
        self.port_fmt = self.acc_fmt if self.convert_inputs else self.in_fmt
        self.out_fmt = self.acc_fmt if self.out_rounding is None else self.in_fmt
        self.addr_width = max(self.depth - 1, 0).bit_length()
        self.seed = int(cfg.rng(1).integers(0, 2 ** 32)) if "seed" in cfg.ports else None
        self.accumulation = p.get("accumulation")
        # Accepted to leaving the array (the flags), the datasheet's formula: a normalisation
        # point after every G rows but the last.
        group = getattr(accumulation_param("accumulation", self.accumulation), "group", 0)
        points = (self.k - 1) // group if group else 0
        self.array_latency = (self.k * cfg.manifest["psum_latency"] + p["mul_stages"] + cfg.manifest["sum_wait"]
                              + cfg.manifest["round_stages"] + cfg.manifest["result_register"]
                              + points * cfg.manifest["point_latency"] + self.n + cfg.manifest["anchor_wait"])

    def x_word(self, row, swap=0, addr=0, first=1, last=1):
        """The ``x`` payload: ``data``, then ``swap``, then ``addr``, ``first``, ``last``."""
        at = self.k * self.port_fmt.width
        word = _pack(row, self.port_fmt.width) | (swap << at)
        if self.depth:
            word |= (addr << (at + 1)) | (first << (at + 1 + self.addr_width)) | \
                (last << (at + 2 + self.addr_width))
        return word

    def golden(self, xs, tiles, swaps, control=None):
        """``golden.mxu.stream`` for this configuration."""
        return stream(xs, tiles, swaps, control=control, in_fmt=self.in_fmt, acc_fmt=self.acc_fmt,
                      convert_inputs=self.convert_inputs, out_rounding=self.out_rounding, seed=self.seed or 0,
                      sr_bits=self.sr_bits, acc_depth=self.depth, accumulation=self.accumulation)

    async def reset(self, dut):
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        dut.rst.value = 1
        dut.w__valid.value = dut.x__valid.value = dut.y__ready.value = dut.flags_clear.value = 0
        if self.seed is not None:
            dut.seed.value, dut.seed_load.value = self.seed, 0
        for _ in range(2):
            await FallingEdge(dut.clk)
        dut.rst.value = 0
        if self.seed is not None:          # reset restarts the lanes from seed 0: load after it
            dut.seed_load.value = 1
            await FallingEdge(dut.clk)
            dut.seed_load.value = 0

    async def load_tile(self, dut, w):
        """Drive the rows of ``w`` on ``w`` back to back, each until it is taken."""
        for row in w:
            dut.w__valid.value, dut.w__payload.value = 1, _pack(row, self.port_fmt.width)
            await ReadOnly()
            while not int(dut.w__ready.value):
                await FallingEdge(dut.clk)
                await ReadOnly()
            await FallingEdge(dut.clk)
        dut.w__valid.value = 0

    async def start_with_tile(self, dut, salt):
        """Reset, ``y`` always ready, one random weight tile loaded and landed (a swap row
        is accepted at once): ``(tile, rng)``."""
        await self.reset(dut)
        dut.y__ready.value = 1
        rng = self.cfg.rng(salt)
        w = matrix((self.k, self.n), rng, self.port_fmt, 0.0)
        await self.load_tile(dut, w)
        await FallingEdge(dut.clk)      # the tile's last write lands in the array
        return w, rng


def _pack(values, width):
    return sum(int(v) << (width * i) for i, v in enumerate(values))


def _words(values) -> str:
    return "[" + " ".join(hex(int(v)) for v in values) + "]"


def _unpack(word, width, n):
    return [(word >> (width * i)) & ((1 << width) - 1) for i in range(n)]


def _plan(s: Setup, rng):
    """X rows, weight tiles, swap marks and accumulator control: ``(xs, tiles, swaps, control)``.

    Without accumulators a row swaps in the next tile with probability 1/8 (the first row
    always). With them, each pass over a group's accumulator rows swaps in its own tile.
    """
    if not s.depth:
        xs, tiles, swaps = rows_and_tiles(s.k, s.n, TILES * max(s.cfg.vectors // (TILES * 4), 8), s.port_fmt, rng)
        return xs, tiles, swaps, None
    lengths = rng.integers(1, s.depth + 1, max(s.cfg.vectors // (4 * TILES * (s.depth + 1) // 2), 3))
    lengths[:2] = [1, s.depth]                       # back-to-back read-add-write; a full pass
    control, swaps = [], []
    for m in lengths:
        for t in range(TILES):
            control += [(a, int(t == 0), int(t == TILES - 1)) for a in range(m)]
            swaps += [a == 0 for a in range(m)]
    tiles = [matrix((s.k, s.n), rng, s.port_fmt, 0.05) for _ in range(sum(swaps))]
    return matrix((len(control), s.k), rng, s.port_fmt, 0.05), tiles, np.array(swaps), control


@cocotb.test()
async def streams_tiles_bubbles_and_backpressure(dut):
    s = Setup()
    n = s.n
    rng = s.cfg.rng()
    xs, tiles, swaps, control = _plan(s, rng)
    cancelling(xs, tiles, s.port_fmt, rng)
    want = s.golden(xs, tiles, swaps, control)
    await s.reset(dut)

    w_rows = [row for tile in tiles for row in tile]            # tile after tile
    w_next = x_next = 0
    leaves = {}                  # cycle -> X row leaving the array then
    sticky = 0                   # golden flags since the last clear, as a column-packed word
    outputs = []
    cycles = 0
    limit = 50 * (len(xs) + len(w_rows)) + 1000
    with Timed() as t:
        while len(outputs) < len(want.y):
            await FallingEdge(dut.clk)
            # Driver: weights and X with bubbles, Y ready at random, the odd flags clear.
            w_valid = w_next < len(w_rows) and rng.random() < 0.8
            dut.w__valid.value = int(w_valid)
            if w_valid:
                dut.w__payload.value = _pack(w_rows[w_next], s.port_fmt.width)
            x_valid = x_next < len(xs) and rng.random() < 0.75
            dut.x__valid.value = int(x_valid)
            if x_valid:
                addr, first, last = control[x_next] if control else (0, 1, 1)
                dut.x__payload.value = s.x_word(xs[x_next], int(swaps[x_next]), addr, first, last)
            dut.y__ready.value = int(rng.random() < 0.7)
            clear = rng.random() < 0.05
            dut.flags_clear.value = int(clear)
            await ReadOnly()
            # Monitor: the sticky flags hold the rows that left before this cycle.
            if int(dut.flags.value) != sticky:
                save_mismatches(f"sticky flags at cycle {cycles}: ", 1, 1, [
                    {"index": cycles, "inputs": {}, "expected": "-", "expected_flags": hex(sticky),
                     "got": "-", "got_flags": hex(int(dut.flags.value))}])
            # Handshakes complete at the coming rising edge.
            if x_valid and int(dut.x__ready.value):
                leaves[cycles + s.array_latency] = x_next
                x_next += 1
            if w_valid and int(dut.w__ready.value):
                w_next += 1
            if int(dut.y__valid.value) and int(dut.y__ready.value):
                outputs.append(_unpack(int(dut.y__payload.value), s.out_fmt.width, n))
            row = leaves.pop(cycles, None)
            sticky = (0 if clear else sticky) | (0 if row is None else _pack(want.row_flags[row], 5))
            cycles += 1
            assert cycles < limit, f"{len(outputs)} of {len(want.y)} rows after {cycles} cycles"
        for _ in range(s.cfg.latency + 4):                          # nothing extra comes out
            await FallingEdge(dut.clk)
            dut.x__valid.value = dut.w__valid.value = dut.flags_clear.value = 0
            dut.y__ready.value = 1
            await ReadOnly()
            assert not int(dut.y__valid.value), "an extra row came out"

    # Scoreboard: every row once, in order, bit for bit.
    assert x_next == len(xs) and w_next == len(w_rows)
    got = np.array(outputs, np.uint64)
    bad = np.flatnonzero((got != want.y).any(axis=1))
    if len(bad):
        save_mismatches("y rows: ", len(bad), len(got), [
            {"index": int(j), "inputs": {"x": _words(xs[j]), "swap": int(swaps[j])},
             "expected": _words(want.y[j]), "got": _words(got[j])} for j in bad[:FIRST]])
    save_summary(vectors=len(xs), cycles=cycles, seconds=t.seconds, macs=len(xs) * s.k * n)


@cocotb.test()
async def defined_start_and_swaps_wait_for_their_tile(dut):
    """After reset no row is accepted before a complete tile (``y`` stays idle); a swap row
    waits until the shadow tile is complete and is accepted the cycle after its last ``w``
    row (it reaches row ``k`` of the array after that row's write has landed); a complete
    shadow tile holds ``w`` until it is swapped in."""
    s = Setup()
    await s.reset(dut)
    dut.y__ready.value = 1
    rng = s.cfg.rng(4)
    tiles = [matrix((s.k, s.n), rng, s.port_fmt, 0.05) for _ in range(3)]
    xs = matrix((3, s.k), rng, s.port_fmt, 0.05)
    swaps = [0, 1, 1]
    got = []

    async def monitor():
        while True:
            await ReadOnly()
            if int(dut.y__valid.value):
                got.append(_unpack(int(dut.y__payload.value), s.out_fmt.width, s.n))
            await FallingEdge(dut.clk)

    cocotb.start_soon(monitor())

    async def offer_row(i, hold_w):
        """Offer row ``i`` for ``hold_w`` cycles with no ``w``, then load tile ``i``: the row
        must be accepted exactly the cycle after the tile's last ``w`` row."""
        dut.x__valid.value, dut.x__payload.value = 1, s.x_word(xs[i], swaps[i])

        async def cycle():
            await ReadOnly()
            assert not int(dut.x__ready.value), f"row {i} accepted with no complete tile to swap in"
            ready = int(dut.w__ready.value)
            await FallingEdge(dut.clk)
            return ready

        for _ in range(hold_w):
            await cycle()
        for row in tiles[i]:
            dut.w__valid.value, dut.w__payload.value = 1, _pack(row, s.port_fmt.width)
            while not await cycle():
                pass
        dut.w__valid.value = 0
        await ReadOnly()
        assert int(dut.x__ready.value), f"row {i} not accepted the cycle after its tile completed"
        await FallingEdge(dut.clk)
        dut.x__valid.value = 0

    await offer_row(0, 2 * s.cfg.latency)           # defined start: nothing before a tile
    await offer_row(1, 3)
    # Row 2's tile loads while row 1's tile is active; then w waits for the swap.
    await FallingEdge(dut.clk)
    await s.load_tile(dut, tiles[2])
    dut.w__valid.value, dut.w__payload.value = 1, _pack(tiles[0][0], s.port_fmt.width)   # a fourth tile's row
    for _ in range(4):
        await ReadOnly()
        assert not int(dut.w__ready.value), "w accepted a row into a full shadow buffer"
        await FallingEdge(dut.clk)
    dut.w__valid.value = 0
    dut.x__valid.value, dut.x__payload.value = 1, s.x_word(xs[2], 1)
    await ReadOnly()
    assert int(dut.x__ready.value), "a swap with a complete shadow tile waited"
    await FallingEdge(dut.clk)
    dut.x__valid.value = 0
    for _ in range(s.cfg.latency + 2):
        await FallingEdge(dut.clk)
    want = s.golden(xs, tiles, swaps, [(0, 1, 1)] * 3 if s.depth else None)
    assert np.array_equal(np.array(got, np.uint64), want.y), f"got {got}, golden {want.y.tolist()}"


@cocotb.test()
async def latency_matches_the_formula(dut):
    """Without stalls, a row's result is offered exactly ``latency`` cycles after it is accepted."""
    s = Setup()
    k, n = s.k, s.n
    w, rng = await s.start_with_tile(dut, salt=2)
    x = matrix((1, k), rng, s.port_fmt, 0.0)
    dut.x__valid.value, dut.x__payload.value = 1, s.x_word(x[0], swap=1)
    await FallingEdge(dut.clk)
    dut.x__valid.value = 0
    cycles = 1
    while True:
        await ReadOnly()
        if int(dut.y__valid.value):
            break
        await FallingEdge(dut.clk)
        cycles += 1
        assert cycles < 10 * (k + n) + 100, "no result"
    # The datasheet's formula: the array's cycles, then the output FIFO's 5 (6 through the
    # ECP5 block RAMs' output registers).
    formula = s.array_latency + (6 if s.cfg.params.get("fifo_ram") == "ecp5" else 5)
    assert cycles == s.cfg.latency == formula, f"measured {cycles} cycles, manifest {s.cfg.latency}, formula {formula}"
    got = _unpack(int(dut.y__payload.value), s.out_fmt.width, n)
    assert got == [int(v) for v in s.golden(x, [w], [1], [(0, 1, 1)] if s.depth else None).y[0]]
    save_summary(measured_latency=cycles)


@cocotb.test()
async def sustains_one_row_per_cycle(dut):
    """Rows at full rate with ``y`` always ready: the last of ``M`` rows is offered
    ``M - 1 + latency`` cycles after the first is accepted (the run spans ``M + latency``
    cycles, both ends counted), for each ``M`` in ``UNIT_MXU_ROWS`` (default 1 8 64).
    The first row swaps in the tile without a swap mark (the first row after reset does)."""
    s = Setup()
    k, n = s.k, s.n
    w, rng = await s.start_with_tile(dut, salt=3)
    runs, all_x, all_got = [], [], []
    for m in map(int, os.environ.get("UNIT_MXU_ROWS", "1 8 64").split()):
        xs = matrix((m, k), rng, s.port_fmt, 0.0)
        got, cycle, sent = [], 0, 0
        first_accepted = last_offered = None
        with Timed() as t:
            while len(got) < m:
                dut.x__valid.value = int(sent < m)
                if sent < m:
                    dut.x__payload.value = s.x_word(xs[sent])
                await ReadOnly()
                if int(dut.x__valid.value) and int(dut.x__ready.value):
                    sent += 1
                    first_accepted = cycle if first_accepted is None else first_accepted
                if int(dut.y__valid.value):
                    got.append(_unpack(int(dut.y__payload.value), s.out_fmt.width, n))
                    last_offered = cycle
                cycle += 1
                await FallingEdge(dut.clk)
                assert cycle < 2 * (m + s.cfg.latency) + 10, "stalled"
        dut.x__valid.value = 0
        all_x.append(xs)
        all_got += got
        # The datasheet's latency: cycles from accepting a row to offering its y row.
        offset = last_offered - first_accepted
        assert offset == m - 1 + s.cfg.latency, (
            f"M = {m}: the last row offered {offset} cycles after the first was accepted, "
            f"want M - 1 + latency = {m - 1 + s.cfg.latency}")
        cycles = offset + 1
        runs.append({"rows": m, "cycles": cycles, "seconds": t.seconds})
    xs = np.concatenate(all_x)
    want = s.golden(xs, [w], np.zeros(len(xs), bool), [(0, 1, 1)] * len(xs) if s.depth else None)
    assert (np.array(all_got, np.uint64) == want.y).all(), "results differ from golden"
    save_summary(throughput=runs)
