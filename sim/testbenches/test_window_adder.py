"""cocotb test of WindowAdder against golden.column.window_add, bit for bit."""

import cocotb

from sim.testbenches.column import regress


@cocotb.test()
async def corners_then_random_windows(dut):
    """The corner terms and random ones against windows of every magnitude, anchor and
    special (sim.testbenches.column)."""
    await regress(dut, "window_add")
