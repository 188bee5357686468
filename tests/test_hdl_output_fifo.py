"""hdl.mxu.output_fifo.OutputFIFO: order, no loss or duplicate, latency and full rate under
random write and ready patterns (Amaranth's simulator; the writer counts credits as the MXU does),
for the one-stage read and for ``ecp5``'s two (its blocks' behaviour, the ``formal`` platform's)."""

import gc

import numpy as np
import pytest
from amaranth.hdl import Fragment
from amaranth.sim import Simulator

from hdl.mxu.output_fifo import OutputFIFO


def run(depth, write_p, ready_p, cycles, seed, ram="block"):
    """Drive ``cycles`` cycles; returns [(cycle, row)] written, [(cycle, row)] read, the
    cycles with ``r.ready`` high and the FIFO's ``latency``.
    A row is written with probability ``write_p`` when a credit is free (``depth`` credits,
    returned when a row is read); ``r.ready`` is high with probability ``ready_p``."""
    fifo = OutputFIFO(width=16, depth=depth, ram=ram)
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

    sim = Simulator(Fragment.get(fifo, "formal") if ram == "ecp5" else fifo)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return writes, reads, ready_cycles, fifo.latency


@pytest.mark.parametrize("ram", ["block", "ecp5"])
@pytest.mark.parametrize("depth", [2, 4, 16])
@pytest.mark.parametrize("write_p, ready_p", [(1.0, 1.0), (0.9, 0.5), (0.5, 0.9), (1.0, 0.1), (0.3, 0.3)])
def test_rows_leave_in_order_without_loss(depth, write_p, ready_p, ram):
    writes, reads, ready_cycles, latency = run(depth, write_p, ready_p, cycles=600, seed=depth * 100 + int(10 * ready_p),
                                               ram=ram)
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


@pytest.mark.parametrize("ram, expected", [("block", 5), ("ecp5", 6)])
def test_latency_and_full_rate(ram, expected):
    """A write every cycle with r always ready (``latency + 1`` credits, as the MXU gives it):
    each row leaves exactly 5 cycles after its write, 6 through ``ecp5``'s output registers."""
    writes, reads, ready_cycles, latency = run(8, 1.0, 1.0, cycles=50, seed=1, ram=ram)
    assert latency == expected
    assert [(c - expected, r) for c, r in reads] == writes[:len(reads)]
    assert len(reads) == 50 - expected


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")   # refused, not elaborated
def test_parameters_are_checked():
    with pytest.raises(ValueError, match="depth must be a power of two \\(2..65536\\), not 6"):
        OutputFIFO(width=8, depth=6)
    with pytest.raises(ValueError, match="width"):
        OutputFIFO(width=0, depth=4)
    with pytest.raises(ValueError, match="ram must be one of block, lut, ecp5, not 'bram'"):
        OutputFIFO(width=8, depth=4, ram="bram")
    with pytest.raises(ValueError, match=r"ram='ecp5' needs depth at most 512 \(one DP16KD's 36-bit rows\), not 1024"):
        OutputFIFO(width=8, depth=1024, ram="ecp5")
    gc.collect()   # the refused objects' warnings here, where they are filtered
