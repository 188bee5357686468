"""cocotb test of the MXU: driver, monitor and scoreboard against golden.mxu, bit for bit.

Weight tiles stream in back to back while X rows stream with random bubbles and Y sees
random backpressure. Every cycle the test records the handshakes; an X row uses the last
tile completed before the cycle it was accepted in. The scoreboard checks that every row
comes out once, in order, equal to golden's model with that tile (input conversion, tile
accumulation and the output rounders' xorshift lanes included).

With output accumulators the driver runs groups of ``TILES`` passes over one set of
accumulator rows (random pass length, down to a single row, so a row's read-add-write meets
the previous one to the same address back to back); the last row of the next tile is held
until the current pass is in, so each pass uses its own tile while the next one loads.
"""

import os

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly

from golden import FP32, convert, from_float64
from golden.mxu import mxu, round_outputs
from golden.vectors import corner_values
from sim.harness import Config, Timed, save_summary

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

    def x_word(self, row, addr=0, first=1, last=1):
        word = _pack(row, self.port_fmt.width)
        if self.depth:
            at = self.k * self.port_fmt.width
            word |= (addr << at) | (first << (at + self.addr_width)) | (last << (at + self.addr_width + 1))
        return word

    def expected(self, x, w):
        """Golden ``y`` before output rounding for X (M x K*tiles) and W (K*tiles x N)."""
        return mxu(x, w, rows=self.k, in_fmt=self.in_fmt, acc_fmt=self.acc_fmt,
                   convert_inputs=self.convert_inputs)

    def rounded(self, y, row_offset=0):
        """The output rounder lanes over ``y``'s rows, in the order they left, after
        ``row_offset`` earlier rows."""
        if self.out_rounding is None:
            return y
        return round_outputs(y, self.acc_fmt, self.in_fmt, self.out_rounding, self.seed or 0, self.sr_bits,
                             row_offset)

    async def reset(self, dut):
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        dut.rst.value = 1
        dut.w__valid.value = dut.x__valid.value = dut.y__ready.value = 0
        if self.seed is not None:
            dut.seed.value, dut.seed_load.value = self.seed, 0
        for _ in range(2):
            await FallingEdge(dut.clk)
        dut.rst.value = 0
        if self.seed is not None:          # reset restarts the lanes from seed 0: load after it
            dut.seed_load.value = 1
            await FallingEdge(dut.clk)
            dut.seed_load.value = 0


    async def start_with_tile(self, dut, salt):
        """Reset, ``y`` always ready, one random weight tile loaded: ``(tile, rng)``."""
        await self.reset(dut)
        dut.y__ready.value = 1
        rng = self.cfg.rng(salt)
        w = _matrix((self.k, self.n), rng, self.port_fmt, 0.0)
        for row in w:
            dut.w__valid.value, dut.w__payload.value = 1, _pack(row, self.port_fmt.width)
            await FallingEdge(dut.clk)
        dut.w__valid.value = 0
        return w, rng


def _matrix(shape, rng, fmt, special_fraction):
    """``fmt`` values of moderate size, with corners (NaN, inf, zeros, subnormals) mixed in."""
    values = rng.standard_normal(shape) * 2.0 ** rng.integers(-6, 7, shape)
    big = rng.random(shape) < 0.02
    values = np.where(big, values * 2.0 ** 120, values)     # sums that overflow
    bits = convert(from_float64(values.astype(np.float32).astype(np.float64), FP32), FP32, fmt)[0]
    corners = corner_values(fmt)
    pick = rng.random(shape) < special_fraction
    return np.where(pick, corners[rng.integers(0, len(corners), shape)], bits).astype(fmt.dtype)


def _cancelling(x, weights, fmt, rng):
    """Column 0 of every tile gets ``w[1] = -w[0]``; a fifth of the X rows get ``x[1] = x[0]``
    (exact cancellation) or ``x[0]`` one ulp off (the sum cancels down to one product's ulp)."""
    if x.shape[1] < 2:
        return
    sign = fmt.dtype.type(1 << (fmt.width - 1))
    for w in weights:
        w[1, 0] = w[0, 0] ^ sign
    rows = np.flatnonzero(rng.random(len(x)) < 0.2)
    x[rows, 1] = x[rows, 0] ^ (rng.random(len(rows)) < 0.5).astype(fmt.dtype)


def _pack(values, width):
    return sum(int(v) << (width * i) for i, v in enumerate(values))


def _unpack(word, width, n):
    return [(word >> (width * i)) & ((1 << width) - 1) for i in range(n)]


def _plan(s: Setup, rng):
    """X rows, weight tiles and accumulator control: ``(xs, tiles, control, groups)``.

    ``control[i] = (addr, first, last, pass)``; ``groups`` lists each accumulation group's
    row indices per pass. Without accumulators every row is its own group.
    """
    if not s.depth:
        count = TILES * max(s.cfg.vectors // (TILES * 4), 8)
        tiles = [_matrix((s.k, s.n), rng, s.port_fmt, 0.05) for _ in range(TILES)]
        xs = _matrix((count, s.k), rng, s.port_fmt, 0.05)
        return xs, tiles, [(0, 1, 1, None)] * count, None
    lengths = rng.integers(1, s.depth + 1, max(s.cfg.vectors // (4 * TILES * (s.depth + 1) // 2), 3))
    lengths[:2] = [1, s.depth]                       # back-to-back read-add-write; a full pass
    control, groups, passes = [], [], 0
    for m in lengths:
        group = []
        for t in range(TILES):
            group.append(list(range(len(control), len(control) + m)))
            control += [(a, int(t == 0), int(t == TILES - 1), passes) for a in range(m)]
            passes += 1
        groups.append(group)
    tiles = [_matrix((s.k, s.n), rng, s.port_fmt, 0.05) for _ in range(passes)]
    return _matrix((len(control), s.k), rng, s.port_fmt, 0.05), tiles, control, groups


def _group_tiles(group, control):
    """The tiles (one per pass) of an accumulation group."""
    return slice(control[group[0][0]][3], control[group[-1][0]][3] + 1)


@cocotb.test()
async def streams_tiles_bubbles_and_backpressure(dut):
    s = Setup()
    k, n = s.k, s.n
    rng = s.cfg.rng()
    xs, tiles, control, groups = _plan(s, rng)
    _cancelling(xs, tiles, s.port_fmt, rng)
    gated = groups is not None
    await s.reset(dut)

    w_rows = [row for tile in tiles for row in tile]            # tile after tile
    w_next = x_next = 0
    tiles_done = 0
    row_tile = []                                               # the tile each accepted row uses
    outputs = []
    want_outputs = sum(1 for c in control if c[2])
    cycles = 0
    limit = 50 * (len(xs) + len(w_rows)) + 1000
    with Timed() as t:
        while len(outputs) < want_outputs:
            await FallingEdge(dut.clk)
            # Driver: weights as fast as allowed (gated: a tile completes only after the
            # previous pass is in); X once its tile is loaded, with bubbles; Y ready at random.
            w_free = w_next < len(w_rows)
            if gated and w_next % k == k - 1 and w_next // k >= 1:
                w_free &= x_next == sum(1 for c in control if c[3] < w_next // k)
            w_valid = w_free and rng.random() < 0.8
            dut.w__valid.value = int(w_valid)
            if w_valid:
                dut.w__payload.value = _pack(w_rows[w_next], s.port_fmt.width)
            x_free = x_next < len(xs) and tiles_done >= (control[x_next][3] + 1 if gated else 1)
            x_valid = x_free and rng.random() < 0.75
            dut.x__valid.value = int(x_valid)
            if x_valid:
                addr, first, last, _ = control[x_next]
                dut.x__payload.value = s.x_word(xs[x_next], addr, first, last)
            dut.y__ready.value = int(rng.random() < 0.7)
            await ReadOnly()
            # Monitor: handshakes complete at the coming rising edge.
            if x_valid and int(dut.x__ready.value):
                row_tile.append(tiles_done - 1)
                x_next += 1
            if w_valid and int(dut.w__ready.value):
                w_next += 1
                if w_next % k == 0:
                    tiles_done += 1
            if int(dut.y__valid.value) and int(dut.y__ready.value):
                outputs.append(_unpack(int(dut.y__payload.value), s.out_fmt.width, n))
            cycles += 1
            assert cycles < limit, f"{len(outputs)} of {want_outputs} rows after {cycles} cycles"
        for _ in range(s.cfg.latency + 4):                          # nothing extra comes out
            await FallingEdge(dut.clk)
            dut.x__valid.value = dut.w__valid.value = 0
            dut.y__ready.value = 1
            await ReadOnly()
            assert not int(dut.y__valid.value), "an extra row came out"

    # Scoreboard: every row once, in order, bit for bit.
    assert x_next == len(xs)
    if gated:
        assert row_tile == [c[3] for c in control], "driver: a pass ran under the wrong tile"
        pre = [s.expected(np.hstack([xs[rows] for rows in group]), np.vstack(tiles[_group_tiles(group, control)]))
               for group in groups]
    else:
        assert len(set(row_tile)) == TILES, "rows streamed under every tile"
        pre = [s.expected(xs[i:i + 1], tiles[row_tile[i]]) for i in range(len(xs))]
    want = s.rounded(np.concatenate(pre))
    got = np.array(outputs, np.uint64)
    bad = np.flatnonzero((got != want).any(axis=1))
    assert not len(bad), (f"{len(bad)} of {len(got)} rows differ; first: output row {bad[0]}: got "
                          f"{[hex(v) for v in got[bad[0]]]}, golden {[hex(v) for v in want[bad[0]]]}")
    save_summary(vectors=len(xs), cycles=cycles, seconds=t.seconds, macs=len(xs) * k * n)


@cocotb.test()
async def latency_matches_the_formula(dut):
    """Without stalls, a row's result is offered exactly ``latency`` cycles after it is accepted."""
    s = Setup()
    k, n = s.k, s.n
    w, rng = await s.start_with_tile(dut, salt=2)
    x = _matrix((1, k), rng, s.port_fmt, 0.0)
    dut.x__valid.value, dut.x__payload.value = 1, s.x_word(x[0])
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
    assert cycles == s.cfg.latency, f"measured {cycles} cycles, formula {s.cfg.latency}"
    got = _unpack(int(dut.y__payload.value), s.out_fmt.width, n)
    assert got == [int(v) for v in s.rounded(s.expected(x, w))[0]]
    save_summary(measured_latency=cycles)


@cocotb.test()
async def sustains_one_row_per_cycle(dut):
    """Rows at full rate with ``y`` always ready: the last of ``M`` rows leaves ``M + latency``
    cycles after the first is accepted, for each ``M`` in ``UNIT_MXU_ROWS`` (default 1 8 64)."""
    s = Setup()
    k, n = s.k, s.n
    w, rng = await s.start_with_tile(dut, salt=3)
    runs = []
    for m in map(int, os.environ.get("UNIT_MXU_ROWS", "1 8 64").split()):
        xs = _matrix((m, k), rng, s.port_fmt, 0.0)
        got, cycles, sent = [], 0, 0
        with Timed() as t:
            while len(got) < m:
                dut.x__valid.value = int(sent < m)
                if sent < m:
                    dut.x__payload.value = s.x_word(xs[sent])
                await ReadOnly()
                if int(dut.x__valid.value) and int(dut.x__ready.value):
                    sent += 1
                if int(dut.y__valid.value):
                    got.append(_unpack(int(dut.y__payload.value), s.out_fmt.width, n))
                cycles += 1
                await FallingEdge(dut.clk)
                assert cycles < 2 * (m + s.cfg.latency) + 10, "stalled"
        dut.x__valid.value = 0
        want = s.rounded(s.expected(xs, w), row_offset=sum(r["rows"] for r in runs))
        assert (np.array(got, np.uint64) == want).all(), f"M = {m}: results differ from golden"
        assert cycles == m + s.cfg.latency, f"M = {m}: {cycles} cycles, want {m} + latency {s.cfg.latency}"
        runs.append({"rows": m, "cycles": cycles, "seconds": t.seconds})
    save_summary(throughput=runs)
