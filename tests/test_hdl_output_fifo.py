"""hdl.output_fifo.OutputFIFO: order, no loss or duplicate, latency and full rate under
random write and ready patterns (Amaranth's simulator; the writer counts credits as the MXU does)."""

import numpy as np
import pytest
from amaranth.sim import Simulator

from hdl.output_fifo import OutputFIFO


def run(depth, write_p, ready_p, cycles, seed):
    """Drive ``cycles`` cycles; returns [(cycle, row)] written, [(cycle, row)] read, the
    cycles with ``r.ready`` high and the FIFO's ``latency``.
    A row is written with probability ``write_p`` when a credit is free (``depth`` credits,
    returned when a row is read); ``r.ready`` is high with probability ``ready_p``."""
    fifo = OutputFIFO(width=16, depth=depth)
    rng = np.random.default_rng(seed)
    writes, reads, ready_cycles = [], [], []

    async def bench(ctx):
        credits, row = depth, 0
        for cycle in range(cycles):
            write = credits > 0 and rng.random() < write_p
            ready = rng.random() < ready_p
            ctx.set(fifo.w_en, write)
            ctx.set(fifo.w_data, row)
            ctx.set(fifo.r.ready, ready)
            if ready:
                ready_cycles.append(cycle)
            if write:
                writes.append((cycle, row))
                credits -= 1
                row = (row + 1) & 0xFFFF
            if ctx.get(fifo.r.valid) and ready:
                reads.append((cycle, ctx.get(fifo.r.payload)))
                credits += 1
            await ctx.tick()

    sim = Simulator(fifo)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return writes, reads, ready_cycles, fifo.latency


@pytest.mark.parametrize("depth", [2, 4, 16])
@pytest.mark.parametrize("write_p, ready_p", [(1.0, 1.0), (0.9, 0.5), (0.5, 0.9), (1.0, 0.1), (0.3, 0.3)])
def test_rows_leave_in_order_without_loss(depth, write_p, ready_p):
    writes, reads, ready_cycles, latency = run(depth, write_p, ready_p, cycles=600, seed=depth * 100 + int(10 * ready_p))
    rows = [r for _, r in reads]
    assert rows == [r for _, r in writes][:len(rows)], "rows lost, duplicated or reordered"
    assert len(writes) - len(rows) <= depth, "more rows outstanding than credits"
    # every row is offered no earlier than the FIFO's latency after its write
    written_at = dict((r, c) for c, r in writes)
    assert all(c - written_at[r] >= latency for c, r in reads)
    # never a bubble: in a ready cycle with a row written latency cycles ago or earlier and
    # not yet read, a row is read
    read_cycles = {c for c, _ in reads}
    for cycle in ready_cycles:
        due = sum(c <= cycle - latency for c, _ in writes) > sum(c < cycle for c in read_cycles)
        assert not due or cycle in read_cycles, f"cycle {cycle}: a row was due and r.valid was low"


def test_latency_and_full_rate():
    """A write every cycle with r always ready (``latency + 1`` credits, as the MXU gives it):
    each row leaves exactly 5 cycles after its write."""
    writes, reads, ready_cycles, latency = run(8, 1.0, 1.0, cycles=50, seed=1)
    assert latency == 5
    assert [(c - 5, r) for c, r in reads] == writes[:len(reads)]
    assert len(reads) == 45


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")   # refused, not elaborated
def test_parameters_are_checked():
    with pytest.raises(ValueError, match="depth must be a power of two \\(2..65536\\), not 6"):
        OutputFIFO(width=8, depth=6)
    with pytest.raises(ValueError, match="width"):
        OutputFIFO(width=0, depth=4)
    with pytest.raises(ValueError, match="ram must be one of block, lut, not 'bram'"):
        OutputFIFO(width=8, depth=4, ram="bram")
