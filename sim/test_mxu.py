"""cocotb test of the MXU: driver, monitor and scoreboard against golden.mxu, bit for bit.

Weight tiles stream in back to back while X rows stream with random bubbles and Y sees
random backpressure. Every cycle the test records the handshakes; an X row uses the last
tile completed before the cycle it was accepted in. The scoreboard checks that every row
comes out once, in order, equal to golden's ``matmul`` with that tile.
"""

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly

from golden import BF16, FP32, convert, from_float64
from golden.mxu import matmul
from golden.vectors import corner_values
from sim.harness import Config, Timed, save_summary


def _matrix(shape, rng, special_fraction):
    """bf16 values of moderate size, with corners (NaN, inf, zeros, subnormals) mixed in."""
    values = rng.standard_normal(shape) * 2.0 ** rng.integers(-6, 7, shape)
    big = rng.random(shape) < 0.02
    values = np.where(big, values * 2.0 ** 120, values)     # sums that overflow
    bits = convert(from_float64(values.astype(np.float32).astype(np.float64), FP32), FP32, BF16)[0]
    corners = corner_values(BF16)
    pick = rng.random(shape) < special_fraction
    return np.where(pick, corners[rng.integers(0, len(corners), shape)], bits).astype(np.uint16)


def _pack(values, width):
    return sum(int(v) << (width * i) for i, v in enumerate(values))


def _unpack(word, width, n):
    return [(word >> (width * i)) & ((1 << width) - 1) for i in range(n)]


@cocotb.test()
async def streams_tiles_bubbles_and_backpressure(dut):
    cfg = Config()
    k, n = cfg.params["rows"], cfg.params["cols"]
    rng = cfg.rng()
    tiles = 3
    rows_per_tile = max(cfg.vectors // (tiles * 4), 8)
    weights = [_matrix((k, n), rng, 0.05) for _ in range(tiles)]
    xs = _matrix((tiles * rows_per_tile, k), rng, 0.05)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    dut.w__valid.value = dut.x__valid.value = dut.y__ready.value = 0
    for _ in range(2):
        await FallingEdge(dut.clk)
    dut.rst.value = 0

    w_rows = [row for tile in weights for row in tile]          # tile after tile
    w_next = x_next = 0
    tiles_done = 0
    expected_tiles = []                                        # the tile each accepted row uses
    outputs = []
    cycles = 0
    limit = 50 * (len(xs) + len(w_rows)) + 1000
    with Timed() as t:
        while len(outputs) < len(xs):
            await FallingEdge(dut.clk)
            # Driver: weights as fast as allowed; X waits for the first tile, then streams
            # with bubbles; Y ready at random.
            w_valid = w_next < len(w_rows) and rng.random() < 0.8
            dut.w__valid.value = int(w_valid)
            if w_valid:
                dut.w__payload.value = _pack(w_rows[w_next], 16)
            x_valid = tiles_done >= 1 and x_next < len(xs) and rng.random() < 0.75
            dut.x__valid.value = int(x_valid)
            if x_valid:
                dut.x__payload.value = _pack(xs[x_next], 16)
            dut.y__ready.value = int(rng.random() < 0.7)
            await ReadOnly()
            # Monitor: handshakes complete at the coming rising edge.
            if x_valid and int(dut.x__ready.value):
                expected_tiles.append(tiles_done)
                x_next += 1
            if w_valid and int(dut.w__ready.value):
                w_next += 1
                if w_next % k == 0:
                    tiles_done += 1
            if int(dut.y__valid.value) and int(dut.y__ready.value):
                outputs.append(_unpack(int(dut.y__payload.value), 32, n))
            cycles += 1
            assert cycles < limit, f"{len(outputs)} of {len(xs)} rows after {cycles} cycles"
        for _ in range(cfg.manifest["latency"] + 4):             # nothing extra comes out
            await FallingEdge(dut.clk)
            dut.x__valid.value = dut.w__valid.value = 0
            dut.y__ready.value = 1
            await ReadOnly()
            assert not int(dut.y__valid.value), "an extra row came out"

    # Scoreboard: every row once, in order, bit for bit.
    got = np.array(outputs, np.uint32)
    want = np.concatenate([matmul(xs[i:i + 1], weights[expected_tiles[i] - 1]) for i in range(len(xs))])
    bad = np.flatnonzero((got != want).any(axis=1))
    assert not len(bad), (f"{len(bad)} of {len(xs)} rows differ; first row {bad[0]} (tile "
                          f"{expected_tiles[bad[0]]}): got {[hex(v) for v in got[bad[0]]]}, "
                          f"golden {[hex(v) for v in want[bad[0]]]}")
    assert len(set(expected_tiles)) == tiles, "rows streamed under every tile"
    save_summary(vectors=len(xs), cycles=cycles, seconds=t.seconds, macs=len(xs) * k * n)


@cocotb.test()
async def latency_matches_the_formula(dut):
    """Without stalls, a row's result is offered exactly ``latency`` cycles after it is accepted."""
    cfg = Config()
    k, n = cfg.params["rows"], cfg.params["cols"]
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    dut.w__valid.value = dut.x__valid.value = 0
    dut.y__ready.value = 1
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    ones = _pack([0x3F80] * n, 16)
    for _ in range(k):                     # an all-ones tile
        dut.w__valid.value, dut.w__payload.value = 1, ones
        await FallingEdge(dut.clk)
    dut.w__valid.value = 0
    dut.x__valid.value, dut.x__payload.value = 1, _pack([0x4000] * k, 16)   # 2.0 each
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
    assert cycles == cfg.manifest["latency"], f"measured {cycles} cycles, formula {cfg.manifest['latency']}"
    assert _unpack(int(dut.y__payload.value), 32, n) == [int(from_float64([2.0 * k], FP32)[0])] * n
    save_summary(measured_latency=cycles)
