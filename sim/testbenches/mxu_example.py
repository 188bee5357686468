"""A minimal testbench for the MXU built with ``--axi-stream``, written from docs/mxu.md only.

It drives the block through its documented ports with cocotbext-axi's AXI4-Stream source and
sink: two weight tiles on ``s_axis_w`` (``tdata``: one row, element ``j`` in lane ``j``),
X rows on ``s_axis_x`` (``tdata``: one row; ``tuser`` bit 0: swap), ``y`` rows from
``m_axis_y`` under backpressure, then the sticky ``flags``, all checked bit for bit against
``golden.mxu.stream``. Default formats (bf16 in, fp32 out), no accumulators, no output
rounding.
"""

import itertools

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

from golden import BF16, FP32, convert, from_float64
from golden.mxu import stream
from sim.testbenches.harness import Config


@cocotb.test()
async def two_tiles_through_axi_stream(dut):
    params = Config().params
    k, n = params["rows"], params["cols"]
    rng = np.random.default_rng(7)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value, dut.flags_clear.value = 1, 0          # synchronous, active high
    w_src = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis_w"), dut.clk, dut.rst, byte_size=16)
    x_src = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis_x"), dut.clk, dut.rst, byte_size=16)
    y_sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis_y"), dut.clk, dut.rst, byte_size=32)
    y_sink.set_pause_generator(itertools.cycle([0, 1, 1]))    # y ready one cycle in three
    await ClockCycles(dut.clk, 2)
    await FallingEdge(dut.clk)
    dut.rst.value = 0

    def bf16(shape):
        values = rng.standard_normal(shape).astype(np.float32).astype(np.float64)
        return convert(from_float64(values, FP32), FP32, BF16)[0]

    tiles, xs = [bf16((k, n)), bf16((k, n))], bf16((12, k))
    swaps = [1] + [0] * 5 + [1] + [0] * 5                  # rows 6.. use the second tile
    for tile in tiles:                                      # the second waits in the shadow buffer
        for row in tile:
            await w_src.send(AxiStreamFrame([int(v) for v in row]))
    for row, swap in zip(xs, swaps):
        await x_src.send(AxiStreamFrame([int(v) for v in row], tuser=swap))
    got = [(await y_sink.recv()).tdata for _ in xs]

    want = stream(xs, tiles, swaps)
    assert np.array_equal(np.array(got, np.uint32), want.y), f"got {got}, golden {want.y.tolist()}"
    column_flags = np.bitwise_or.reduce(want.row_flags, axis=0)
    assert int(dut.flags.value) == sum(int(f) << (5 * j) for j, f in enumerate(column_flags))
    await FallingEdge(dut.clk)                              # inputs change between rising edges
    dut.flags_clear.value = 1
    await FallingEdge(dut.clk)
    dut.flags_clear.value = 0
    assert int(dut.flags.value) == 0, "flags_clear did not clear"
