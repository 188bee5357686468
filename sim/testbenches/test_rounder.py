"""cocotb tests of StochasticRounder: bit for bit against golden.convert with golden's
xorshift lane (same seed), and rounding statistics measured on the hardware's output."""

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge

from golden import xorshift
from golden.ops import convert
from golden.rounding import Rounding
from golden.vectors import corner_values, random_encodings
from sim.testbenches.harness import Config, Timed, compare, save_coverage, save_summary, start, stream

SEED = 0x5EED1234


async def _load_seed(dut, cfg, seed):
    if "seed" in cfg.ports:
        await FallingEdge(dut.clk)
        dut.seed.value = seed
        dut.seed_load.value = 1
        await FallingEdge(dut.clk)
        dut.seed_load.value = 0


def _rand(cfg, n, rng):
    """The random bits of the i-th rounding: golden's lane 0 (built-in rng) or our own draw."""
    if cfg.rand_bits is None:
        return None
    if "seed" in cfg.ports:
        return xorshift.lane_rand(SEED, 1, n, cfg.rand_bits)[:, 0]
    return rng.integers(0, 1 << cfg.rand_bits, n, dtype=np.uint64)


async def _run(dut, cfg, a, rng):
    inputs = {"a": a}
    rand = _rand(cfg, len(a), rng)
    if rand is not None and "rand" in cfg.ports:
        inputs["rand"] = rand
    await _load_seed(dut, cfg, SEED)
    with Timed() as t:
        got = await stream(dut, cfg, inputs, rng)   # bubbles: the generator must not step on them
    want = convert(a, cfg.fmt("in_fmt"), cfg.fmt("out_fmt"), cfg.rounding, rand, cfg.params["sr_bits"])
    compare(got, want, inputs)
    return got, want, t.seconds


@cocotb.test()
async def corners_then_weighted_random(dut):
    cfg = Config()
    in_fmt = cfg.fmt("in_fmt")
    rng = cfg.rng()
    a = np.concatenate([corner_values(in_fmt), random_encodings(in_fmt, cfg.vectors, rng)])
    await start(dut, cfg)
    got, want, seconds = await _run(dut, cfg, a, rng)
    out_fmt = cfg.fmt("out_fmt")
    save_coverage(dut, out_fmt, want, lambda sel, *mode: convert(a[sel], in_fmt, out_fmt, *mode),
                  in_fmt, [a], cfg.rounding)
    save_summary(vectors=len(a), cycles=got[2], seconds=seconds)


@cocotb.test()
async def rounding_statistics_on_hardware_output(dut):
    """One inexact value rounded many times: the hardware goes away from zero with the
    discarded fraction's probability (sr) or 1/2 (sr-half), within 6 standard errors;
    an exact value never moves. Also bit for bit against golden."""
    cfg = Config()
    in_fmt, out_fmt = cfg.fmt("in_fmt"), cfg.fmt("out_fmt")
    rng = cfg.rng(1)
    discard = in_fmt.precision - out_fmt.precision
    if not cfg.rounding.is_stochastic or discard <= 0:
        return
    n = max(cfg.vectors, 2000)
    # 1.0 plus 3/8 of an output ulp (plus one input ulp: never exact)
    value = (in_fmt.bias << in_fmt.man_bits) | (3 << (discard - 3)) | 1
    exact = in_fmt.bias << in_fmt.man_bits
    await start(dut, cfg)
    got, _, _ = await _run(dut, cfg, np.full(n, value, in_fmt.dtype), rng)
    # The value and 1.0 in the output format, by golden (the formats' exponent fields may differ).
    truncated = int(convert(np.array([value], in_fmt.dtype), in_fmt, out_fmt, "rtz")[0][0])
    exact_out = int(convert(np.array([exact], in_fmt.dtype), in_fmt, out_fmt, "rtz")[0][0])
    away = (got[0].astype(np.int64) - truncated)
    assert set(np.unique(away)) <= {0, 1}
    f = (value & ((1 << discard) - 1)) / 2 ** discard
    if cfg.rounding is Rounding.STOCHASTIC:
        k = cfg.rand_bits
        p = np.floor(f * 2 ** k) / 2 ** k          # the documented rate with sr_bits = k
    else:
        p = 0.5
    rate = away.mean()
    bound = 6 * np.sqrt(p * (1 - p) / n)
    assert abs(rate - p) <= bound, f"rounded away {rate:.4f} of the time, expected {p:.4f} +- {bound:.4f}"
    got, _, _ = await _run(dut, cfg, np.full(200, exact, in_fmt.dtype), rng)
    assert (got[0] == exact_out).all() and not got[1].any(), "exact values never move"
