"""The MXU under faults (docs/mxu.md, "Faults"), simulated with Amaranth on a 2x2 array at
``m1a1``: reset asserted in the middle of a stream, ``valid`` withdrawn before a handshake
(AXI4-Stream forbids it; the MXU tolerates it), and ``flags_clear`` in the cycle a row's
flags are set. Results are compared with ``golden.mxu``."""

import numpy as np
from amaranth.hdl import ClockDomain, Module
from amaranth.sim import Simulator

from golden import mxu as golden_mxu
from hdl.mxu import MXU

ONE, TWO, THIRD, BIG = 0x3F80, 0x4000, 0x3EAB, 0x4B80     # bf16 1, 2, ~1/3, 2^24 (2^24 + 1 is inexact in fp32)


class Bench:
    """Drive one MXU cycle by cycle from scripted streams; record every ``y`` transfer, the
    cycles in which ``x`` was ready, and ``flags`` after every cycle."""

    def __init__(self, **params):
        self.dut = MXU(rows=2, cols=2, mul_stages=1, add_stages=1, **params)
        self.m = Module()
        self.m.domains.sync = self.domain = ClockDomain("sync")
        self.m.submodules.dut = self.dut

    def run(self, cycles, w_rows, x_rows, *, y_ready=lambda c: True, reset=(), clear=(), x_withdrawn=None,
            w_withdrawn=None):
        """``w_rows``: (cycle from which offered, row); ``x_rows``: (cycle, row, swap).
        ``x_withdrawn``/``w_withdrawn``: (cycle, row) offered in that cycle only, then
        withdrawn. Returns (y rows, x-ready cycles, flags per cycle)."""
        dut, got, ready_cycles, flags = self.dut, [], [], []

        async def bench(ctx):
            w_next = x_next = 0
            for cycle in range(cycles):
                ctx.set(self.domain.rst, cycle in reset)
                ctx.set(dut.flags_clear, cycle in clear)
                w_offer = w_next < len(w_rows) and cycle >= w_rows[w_next][0]
                w_row = w_rows[w_next][1] if w_offer else None
                if w_withdrawn and cycle == w_withdrawn[0]:
                    w_offer, w_row = True, w_withdrawn[1]
                ctx.set(dut.w.valid, w_offer)
                ctx.set(dut.w.payload, w_row or [0, 0])
                x_offer = x_next < len(x_rows) and cycle >= x_rows[x_next][0]
                x_row, swap = (x_rows[x_next][1], x_rows[x_next][2]) if x_offer else ([0, 0], 0)
                if x_withdrawn and cycle == x_withdrawn[0]:
                    x_offer, x_row, swap = True, x_withdrawn[1], 1
                ctx.set(dut.x.valid, x_offer)
                ctx.set(dut.x.payload.data, x_row)
                ctx.set(dut.x.payload.swap, swap)
                ctx.set(dut.y.ready, y_ready(cycle))
                if ctx.get(dut.x.ready):
                    ready_cycles.append(cycle)
                if ctx.get(dut.y.valid) and y_ready(cycle) and cycle not in reset:
                    got.append([int(v) for v in ctx.get(dut.y.payload)])
                in_reset = cycle in reset
                withdrawn_w = w_withdrawn and cycle == w_withdrawn[0]
                withdrawn_x = x_withdrawn and cycle == x_withdrawn[0]
                w_next += bool(w_offer and not withdrawn_w and ctx.get(dut.w.ready) and not in_reset)
                x_next += bool(x_offer and not withdrawn_x and ctx.get(dut.x.ready) and not in_reset)
                await ctx.tick()
                flags.append([int(f) for f in ctx.get(dut.flags)])

        sim = Simulator(self.m)
        sim.add_clock(1e-6)
        sim.add_testbench(bench)
        sim.run()
        return got, ready_cycles, flags


def _golden(rows, tile):
    y, flags = golden_mxu.matmul_flags(np.array(rows, np.uint16), np.array(tile, np.uint16))
    return [list(map(int, r)) for r in y], np.bitwise_or.reduce(flags, axis=0).tolist()


def test_reset_mid_stream_drops_everything_in_flight_and_waits_for_a_new_tile():
    """Rows in the array, in the FIFO and on ``y`` at reset are lost; the flags clear; no
    ``x`` is accepted until a complete tile has been loaded after reset, and the first row
    after it swaps that tile in whatever its swap bit says; then everything is golden's."""
    tile_a, tile_b = [[ONE, TWO], [TWO, ONE]], [[THIRD, ONE], [ONE, THIRD]]
    old = [[ONE, ONE]] * 6
    new = [[ONE, TWO], [TWO, THIRD], [THIRD, THIRD]]
    reset_cycle = 9                                     # rows in the FIFO and in the array
    w_rows = [(0, r) for r in tile_a] + [(reset_cycle + 3, r) for r in tile_b]
    x_rows = [(0, r, 0) for r in old] + [(reset_cycle + 1, new[0], 0)] + [(0, r, 0) for r in new[1:]]
    got, ready, flags = Bench().run(45, w_rows, x_rows, y_ready=lambda c: c > reset_cycle, reset={reset_cycle})
    want, want_flags = _golden(new, tile_b)
    assert got == want                                   # no row of before the reset, every new one
    assert flags[reset_cycle] == [0, 0]                  # flags cleared by the reset
    first_ready = min(c for c in ready if c > reset_cycle)
    assert first_ready >= reset_cycle + 3 + 2            # not before tile B's two rows are in
    assert flags[-1] == want_flags


def test_valid_withdrawn_before_a_handshake_leaves_no_trace():
    """An ``x`` row offered while ``x.ready`` is low (no tile yet) and withdrawn, and a
    ``w`` row offered while ``w.ready`` is low (shadow tile complete) and withdrawn: neither
    is taken; the rows offered after them are."""
    tile_a, tile_b = [[ONE, TWO], [TWO, ONE]], [[THIRD, ONE], [ONE, TWO]]
    w_rows = [(2, r) for r in tile_a] + [(6, r) for r in tile_b]
    x_rows = [(3, [ONE, TWO], 0), (3, [TWO, ONE], 0), (30, [ONE, THIRD], 1), (30, [THIRD, TWO], 0)]
    got, ready, _ = Bench().run(60, w_rows, x_rows, x_withdrawn=(1, [TWO, TWO]),
                                w_withdrawn=(12, [TWO, TWO]))
    assert 1 not in ready                                 # the withdrawn x row was never ready
    want = _golden([[ONE, TWO], [TWO, ONE]], tile_a)[0] + _golden([[ONE, THIRD], [THIRD, TWO]], tile_b)[0]
    assert got == want


def test_flags_clear_in_the_cycle_a_row_leaves_keeps_that_rows_flags():
    """``flags_clear`` empties the rows that left before its cycle; a row leaving in the
    clear cycle itself is kept (set wins), one cycle later it is cleared."""
    tile = [[BIG, BIG], [ONE, ONE]]
    w_rows = [(0, r) for r in tile]
    x_rows = [(0, [ONE, ONE], 0)]
    _, _, flags = Bench().run(30, w_rows, x_rows)
    first = next(c for c, f in enumerate(flags) if any(f))     # the cycle whose edge set the flags
    assert flags[first] == _golden([[ONE, ONE]], tile)[1] == [1, 1]      # inexact
    _, _, same = Bench().run(30, w_rows, x_rows, clear={first})
    assert same[first] == flags[first] and same[-1] == flags[-1]
    _, _, after = Bench().run(30, w_rows, x_rows, clear={first + 1})
    assert after[first] == flags[first] and after[first + 1] == [0, 0] and after[-1] == [0, 0]
