"""The exact anchor's ``ExponentArray`` alone against golden.column's ``exact_anchor``: random
tiles and rows (zeros, subnormals, infinities and NaN among them), both weight buffers, in
Amaranth's simulator; and a planted mutant (infinities' and NaNs' fields counted) that
fails."""

import numpy as np
import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from golden.column import exact_anchor
from golden.formats import BF16, FP32, FP8_E4M3, parse_format
from hdl.mxu.accumulation import exponent_array
from hdl.mxu.accumulation.exponent_array import ExponentArray, weight_field

SPECIALS = {BF16: [0x0000, 0x8000, 0x0001, 0x7F80, 0xFF80, 0x7FC0], FP8_E4M3: [0x00, 0x80, 0x01, 0x78, 0x7C]}


def _values(rng, fmt, shape):
    """Random encodings, a fifth of them zeros, subnormals and specials."""
    values = rng.integers(0, 1 << fmt.width, shape, dtype=np.uint64)
    corner = rng.random(shape) < 0.2
    values[corner] = rng.choice(SPECIALS[fmt], int(corner.sum()))
    return values


def run(in_fmt, acc_fmt, rows, cols, n_rows=40, seed=1):
    """``(got, want)`` anchors of ``n_rows`` rows against two tiles, alternating buffers."""
    rng = np.random.default_rng(seed)
    tiles = [_values(rng, in_fmt, (rows, cols)) for _ in range(2)]
    xs, sels = _values(rng, in_fmt, (n_rows, rows)), rng.integers(0, 2, n_rows)
    dut = ExponentArray(in_fmt=in_fmt, acc_fmt=acc_fmt, rows=rows, cols=cols)
    got = np.zeros((n_rows, cols), np.int64)

    # The elements' weight registers, read through the elements' own weight_field.
    m = Module()
    for b, tile in enumerate(tiles):
        for k in range(rows):
            for j in range(cols):
                weight = Signal(in_fmt.width, init=int(tile[k, j]), name=f"w{b}_{k}_{j}")
                m.d.comb += dut.weights[k * cols + j][b].eq(weight_field(in_fmt, weight))

    async def bench(ctx):
        for t in range(n_rows + dut.latency + cols):
            if t < n_rows:
                ctx.set(dut.sel, int(sels[t]))
                for k in range(rows):
                    ctx.set(dut.x[k], int(xs[t, k]))
            for j in range(cols):
                row = t - dut.latency - j
                if 0 <= row < n_rows:
                    got[row, j] = ctx.get(dut.anchors[j])
            await ctx.tick()

    m.submodules.dut = dut
    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    want = np.stack([exact_anchor(xs[i:i + 1], tiles[sels[i]], in_fmt, acc_fmt)[0] for i in range(n_rows)])
    return got, want


@pytest.mark.parametrize("in_fmt, acc_fmt, rows, cols", [("bf16", "fp32", 4, 3), ("fp8_e4m3", "fp32", 3, 2),
                                                         ("fp8_e4m3", "bf16", 2, 2)])
def test_exponent_array_is_golden_exact_anchor(in_fmt, acc_fmt, rows, cols):
    got, want = run(parse_format(in_fmt), parse_format(acc_fmt), rows, cols)
    assert np.array_equal(got, want), np.argwhere(got != want)[:5]


def test_a_planted_mutant_fails(monkeypatch):
    """Weight fields that count infinities' and NaNs' (not cleared): a special operand's sum
    then wins the maximum."""
    monkeypatch.setattr(exponent_array, "finite_nonzero_field", lambda fmt, field: field != 0)
    got, want = run(BF16, FP32, 4, 3)
    assert not np.array_equal(got, want)
