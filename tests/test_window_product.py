"""The exact anchor's element units alone: ``WindowProduct`` gives ``ExactProduct``'s
products (the same value, class and flags, not normalised), and ``ExactWindowAdder`` adds
them as ``LateBoundWindowAdder`` adds ``ExactProduct``'s, for any anchor at least the
product's exponent (the bound element is bit-exact against golden.column); random operands
with zeros, subnormals, infinities and NaN, and anchors from the product's exponent to
fp32's largest field; a planted mutant (the product's top bit dropped) fails."""

import numpy as np
import pytest
from amaranth.hdl import Module
from amaranth.sim import Simulator

from golden.column import ColumnAccumulator
from golden.formats import BF16, FP32, FP8_E4M3, parse_format
from hdl.mxu.accumulation import exact_adder
from hdl.mxu.accumulation.bound_adder import LateBoundWindowAdder
from hdl.mxu.accumulation.exact_adder import ExactWindowAdder
from hdl.mxu.accumulation.window_product import WindowProduct
from hdl.product import ExactProduct

SPECIALS = {BF16: [0x0000, 0x8000, 0x0001, 0x7F80, 0xFF80, 0x7FC0, 0x7F7F, 0x0080],
            FP8_E4M3: [0x00, 0x80, 0x01, 0x7F, 0x7E, 0x08]}


def _values(rng, fmt, n):
    values = rng.integers(0, 1 << fmt.width, n, dtype=np.uint64)
    corner = rng.random(n) < 0.2
    values[corner] = rng.choice(SPECIALS[fmt], int(corner.sum()))
    return values


def run(in_fmt, acc_fmt, accumulation, n=1500, seed=1):
    """Per random pair: the two products' fields and both adders' results and flags."""
    rng = np.random.default_rng(seed)
    xs, ws = _values(rng, in_fmt, n), _values(rng, in_fmt, n)
    slack, sums = rng.integers(0, 4, n), rng.integers(-(1 << 20), 1 << 20, n)
    terms = 16
    exact, window = ExactProduct(in_fmt=in_fmt, acc_fmt=acc_fmt), WindowProduct(in_fmt=in_fmt, acc_fmt=acc_fmt)
    adders = [cls(in_fmt=in_fmt, acc_fmt=acc_fmt, accumulation=accumulation, terms=terms)
              for cls in (LateBoundWindowAdder, ExactWindowAdder)]
    m = Module()
    m.submodules += [exact, window, *adders]
    for adder, product in zip(adders, (exact, window)):
        m.d.comb += adder.b.eq(product.result)
    rows = []

    async def bench(ctx):
        for i in range(n):
            for unit in (exact, window):
                ctx.set(unit.a, int(xs[i])), ctx.set(unit.b, int(ws[i]))
            e = ctx.get(exact.result)
            # An anchor at least the product's exponent, at most fp32's largest finite field.
            anchor = min(int(e.exponent) + int(slack[i]), acc_fmt.exp_max_field - 1) if not e.zero else int(slack[i])
            for adder in adders:
                ctx.set(adder.anchor, anchor)
                ctx.set(adder.a.sum, int(sums[i]))
            w = ctx.get(window.result)
            rows.append({"exact": e, "window": w, "flags": (ctx.get(exact.flags), ctx.get(window.flags)),
                         "sums": [(ctx.get(a.result.as_value()), ctx.get(a.flags)) for a in adders]})
            await ctx.delay(1e-9)

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
    return rows, 2 * in_fmt.precision


@pytest.mark.parametrize("in_fmt, acc_fmt, accumulation", [
    ("bf16", "fp32", "column:w=30,sticky,anchor=exact"), ("bf16", "fp32", "column:w=24,anchor=exact"),
    ("fp8_e4m3", "bf16", "column:w=16,sticky,anchor=exact")])
def test_window_product_and_adder_are_the_bound_elements(in_fmt, acc_fmt, accumulation):
    from golden.column import accumulation_param
    rows, width = run(parse_format(in_fmt), parse_format(acc_fmt), accumulation_param("accumulation", accumulation))
    ordinary = 0
    for r in rows:
        e, w = r["exact"], r["window"]
        assert (w.zero, w.inf, w.nan) == (e.zero, e.inf, e.nan) and r["flags"][0] == r["flags"][1], r
        if not (e.zero or e.inf or e.nan):
            ordinary += 1
            # The same value: sig * 2^(exponent + 1) (MSB weight 2) == (1.mantissa) * 2^E.
            assert w.sign == e.sign
            low = min(int(w.exponent) + 1, int(e.exponent))
            assert (int(w.sig) << (int(w.exponent) + 1 - low)) == \
                ((int(e.mantissa) | 1 << (width - 1)) << (int(e.exponent) - low)), r
        assert r["sums"][0] == r["sums"][1], r
    assert ordinary > len(rows) // 2


def test_a_planted_mutant_fails(monkeypatch):
    """The adder's frame without the bit above the window: products whose significand
    reaches 2 lose their MSB."""
    monkeypatch.setattr(exact_adder.ExactWindowAdderPlan, "_term_above", 0)
    rows, _ = run(BF16, FP32, ColumnAccumulator(window=30, sticky=True, anchor="exact"), n=300)
    assert any(r["sums"][0] != r["sums"][1] for r in rows)
