"""The bound anchor's ``BoundWindows`` alone against golden.column's ``product_anchor``:
two random tiles (zeros, subnormals, infinities and NaN among them) loaded as the tile
controller writes them, then random rows reading either buffer, in Amaranth's simulator;
and a planted mutant (the anchor's offset one too high) that fails."""

import numpy as np
import pytest
from amaranth.sim import Simulator

from golden.column import product_anchor
from golden.formats import parse_format
from hdl.mxu import MXU
from hdl.mxu.accumulation import bound_windows
from hdl.mxu.accumulation.bound_windows import BoundWindows

from golden.vectors import random_encodings


def _values(rng, fmt, shape):
    """Random encodings, a quarter of them corners and exponents at the range's edges."""
    return random_encodings(fmt, int(np.prod(shape)), rng).reshape(shape).astype(np.uint64)


def run(in_fmt, acc_fmt, rows, cols, mul_stages, n_rows=30, seed=2):
    """``(got, want, other)``: each row's windows' anchors, golden's, and the OR of the
    windows' other fields (all zero)."""
    rng = np.random.default_rng(seed)
    tiles = [_values(rng, in_fmt, (rows, cols)) for _ in range(2)]
    xs, sels = _values(rng, in_fmt, (n_rows, rows)), rng.integers(0, 2, n_rows)
    plan = MXU.plan(rows=rows, cols=cols, in_fmt=in_fmt, acc_fmt=acc_fmt, mul_stages=mul_stages,
                    accumulation="column:w=26,anchor=bound").column
    dut = BoundWindows(plan=plan)
    got, other = np.zeros((n_rows, cols), np.int64), 0
    load = 2 * rows + 1          # cycles of the two tiles' writes (a write lands a cycle after its row)
    # sel[j] is the row's buffer tag at column j's first element: 1 + anchor_wait + j cycles after it.
    sel_at = {(load + i + 1 + plan.anchor_wait + j, j): int(sels[i]) for i in range(n_rows) for j in range(cols)}

    async def bench(ctx):
        nonlocal other
        writes = [(b, k) for b in (0, 1) for k in range(rows)]
        for t in range(load + n_rows + dut.latency + cols + 1):
            if t < len(writes):                       # the w row, a cycle ahead of its write
                b, k = writes[t]
                for j in range(cols):
                    ctx.set(dut.w_row[j], int(tiles[b][k, j]))
            if 1 <= t <= len(writes):                 # row 0's write register
                b, k = writes[t - 1]
                for j in range(cols):
                    ctx.set(dut.w_write[j], {"we": 1, "buf": b, "row": k, "data": int(tiles[b][k, j])})
            else:
                for j in range(cols):
                    ctx.set(dut.w_write[j].we, 0)
            if 0 <= t - load < n_rows:
                for k in range(rows):
                    ctx.set(dut.x[k], int(xs[t - load, k]))
            for j in range(cols):
                if (t, j) in sel_at:
                    ctx.set(dut.sel[j], sel_at[t, j])
                row = t - load - dut.latency - j
                if 0 <= row < n_rows:
                    window = ctx.get(dut.windows[j])
                    got[row, j] = window.exp
                    other |= ctx.get(dut.windows[j].as_value()) & ~(((1 << acc_fmt.exp_bits) - 1)
                                                                   << _exp_offset(dut))
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    want = np.stack([product_anchor(xs[i:i + 1], tiles[sels[i]], in_fmt, acc_fmt)[0] for i in range(n_rows)])
    return got, want, other


def _exp_offset(dut) -> int:
    """Where the window layout's ``exp`` field starts."""
    return dut.windows[0].shape()["exp"].offset


@pytest.mark.parametrize("in_fmt, acc_fmt, rows, cols, mul_stages", [
    ("bf16", "fp32", 4, 3, 2), ("bf16", "fp32", 5, 2, 0), ("fp8_e4m3", "fp32", 3, 2, 4), ("fp8_e4m3", "bf16", 2, 2, 1)])
def test_bound_windows_are_golden_product_anchor(in_fmt, acc_fmt, rows, cols, mul_stages):
    got, want, other = run(parse_format(in_fmt), parse_format(acc_fmt), rows, cols, mul_stages)
    assert np.array_equal(got, want), np.argwhere(got != want)[:5]
    assert other == 0


def test_a_planted_mutant_fails(monkeypatch):
    """The anchor's offset one too high: every window one place above golden's bound."""
    offset = bound_windows.anchor_offset
    monkeypatch.setattr(bound_windows, "anchor_offset", lambda in_fmt, acc_fmt: offset(in_fmt, acc_fmt) + 1)
    got, want, _ = run(parse_format("bf16"), parse_format("fp32"), 4, 3, 2)
    assert not np.array_equal(got, want)
