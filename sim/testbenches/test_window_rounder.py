"""cocotb test of WindowRounder against golden.column.window_round, bit for bit."""

import cocotb

from sim.testbenches.column import regress


@cocotb.test()
async def corners_then_random_windows(dut):
    """Windows of every magnitude (exact ties among them), anchor and special, and
    ``flags_in`` (sim.testbenches.column)."""
    await regress(dut, "window_round")
