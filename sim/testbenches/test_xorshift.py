"""cocotb test of Xorshift32: every lane's outputs equal golden's lanes for the same seed."""

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly

from golden import xorshift
from sim.testbenches.harness import Config, save_summary


@cocotb.test()
async def lanes_match_golden(dut):
    """Load seeds (0, one that zeroes lane 1, random), step with random gaps, compare."""
    cfg = Config()
    lanes = cfg.params["lanes"]
    rng = cfg.rng()
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value, dut.load.value, dut.next.value = 1, 0, 0
    await FallingEdge(dut.clk)
    dut.rst.value = 0
    for seed in (0, xorshift.LANE_STRIDE, int(rng.integers(0, 1 << 32))):
        dut.seed.value, dut.load.value = seed, 1
        await FallingEdge(dut.clk)
        dut.load.value = 0
        steps = max(cfg.vectors // 3, 10)
        want, _ = xorshift.stream(xorshift.lane_seeds(seed, lanes), steps)
        got = []
        while len(got) < steps:
            step = rng.random() < 0.7
            dut.next.value = int(step)
            await ReadOnly()
            value = int(dut.value.value)
            if step:
                got.append([(value >> (32 * i)) & 0xFFFFFFFF for i in range(lanes)])
            await FallingEdge(dut.clk)
        dut.next.value = 0
        assert np.array_equal(np.array(got, np.uint64), want.astype(np.uint64)), f"seed {seed:#x}"
    save_summary(vectors=3 * steps)
