"""cocotb test of NormalisationPoint against golden.column's window_round, then window_add, bit for bit."""

import cocotb

from sim.testbenches.column import regress


@cocotb.test()
async def corners_then_random_windows(dut):
    """Windows of every magnitude (exact ties among them), anchor and special, ``flags_in``
    and, with a bound anchor, random anchors (sim.testbenches.column)."""
    await regress(dut, "norm_point")
