"""cocotb test of FPAdder against golden.add, bit for bit."""

import cocotb
import numpy as np

from golden.ops import add
from golden.vectors import corner_values, far_pairs, near_pairs, random_encodings
from sim.testbenches.harness import Config, Timed, compare, save_coverage, save_summary, start, stream


@cocotb.test()
async def corners_then_weighted_random(dut):
    """Corner pairs, then random operands, near pairs (cancellation, carries, ties) and
    far pairs (sticky bits, borrows across a binade); one per clock."""
    cfg = Config()
    fmt = cfg.fmt("fmt")
    rng = cfg.rng()
    corners = corner_values(fmt)
    third = max(cfg.vectors // 3, 1)
    pairs = [(np.repeat(corners, len(corners)), np.tile(corners, len(corners))),
             (random_encodings(fmt, third, rng), random_encodings(fmt, third, rng)),
             near_pairs(fmt, third, rng), far_pairs(fmt, third, rng)]
    a = np.concatenate([p[0] for p in pairs])
    b = np.concatenate([p[1] for p in pairs])
    inputs = {"a": a, "b": b}
    if cfg.rand_bits is not None:
        inputs["rand"] = rng.integers(0, 1 << cfg.rand_bits, len(a), dtype=np.uint64)
    want = add(a, b, fmt, cfg.rounding, inputs.get("rand"), cfg.params["sr_bits"])
    await start(dut, cfg)
    with Timed() as t:
        got = await stream(dut, cfg, inputs, rng)
    compare(got, want, inputs)
    save_coverage(dut, fmt, want, lambda sel, *mode: add(a[sel], b[sel], fmt, *mode), fmt, [a, b],
                  cfg.rounding)
    save_summary(vectors=len(a), cycles=got[2], seconds=t.seconds)
