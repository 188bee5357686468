"""cocotb test of FPMultiplier against golden.multiply, bit for bit."""

import cocotb
import numpy as np

from golden.ops import multiply
from golden.vectors import corner_values, random_encodings
from sim.testbenches.harness import Config, Timed, compare, save_coverage, save_summary, start, stream


@cocotb.test()
async def corners_then_weighted_random(dut):
    """Every pair of corner values, then corner-weighted random operands; one per clock."""
    cfg = Config()
    in_fmt, out_fmt = cfg.fmt("in_fmt"), cfg.fmt("out_fmt")
    rng = cfg.rng()
    corners = corner_values(in_fmt)
    a = np.concatenate([np.repeat(corners, len(corners)), random_encodings(in_fmt, cfg.vectors, rng)])
    b = np.concatenate([np.tile(corners, len(corners)), random_encodings(in_fmt, cfg.vectors, rng)])
    inputs = {"a": a, "b": b}
    if cfg.rand_bits is not None:
        inputs["rand"] = rng.integers(0, 1 << cfg.rand_bits, len(a), dtype=np.uint64)
    want = multiply(a, b, in_fmt, out_fmt, cfg.rounding, inputs.get("rand"), cfg.params["sr_bits"])
    await start(dut, cfg)
    with Timed() as t:
        got = await stream(dut, cfg, inputs, rng)
    compare(got, want, inputs)
    save_coverage(dut, out_fmt, want, lambda sel, *mode: multiply(a[sel], b[sel], in_fmt, out_fmt, *mode),
                  in_fmt, [a, b], cfg.rounding)
    save_summary(vectors=len(a), cycles=got[2], seconds=t.seconds)
