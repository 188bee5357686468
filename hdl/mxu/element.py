"""``ProcessingElement``: one cell of the weight-stationary matrix unit."""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.formats import BF16, FP32

from ..adder import FPAdder
from ..multiplier import FPMultiplier
from ..params import check_exact_products, format_param, int_param
from ..product import ExactProduct
from ..pipeline import delayed
from ..product_adder import ProductAdder
from .accumulation.window_adder import WindowAdder

__all__ = ["ProcessingElement", "check_pe_stages", "late_sum", "pe_units"]


def pe_units(in_fmt, acc_fmt, fused: bool, mul_stages: int = 0, add_stages: int = 0, accumulator=None,
             terms: int = 1, mul_dsp: str = "inferred"):
    """``(multiplier, adder)`` of a processing element: ``ExactProduct`` and ``ProductAdder``
    (``fused``), or ``FPMultiplier`` and ``FPAdder``; with a column ``accumulator``,
    ``ExactProduct`` and ``WindowAdder`` (a window of up to ``terms`` products). ``mul_dsp``:
    the multiplier's (``FPMultiplier``)."""
    if accumulator is not None:
        if not fused:
            raise ValueError("a column accumulator needs fused processing elements (fused_pe=True)")
        return (ExactProduct(in_fmt=in_fmt, acc_fmt=acc_fmt, stages=mul_stages, mul_dsp=mul_dsp),
                WindowAdder(in_fmt=in_fmt, acc_fmt=acc_fmt, accumulator=accumulator, terms=terms,
                            late_sum=late_sum(accumulator), stages=add_stages))
    if fused:
        return (ExactProduct(in_fmt=in_fmt, acc_fmt=acc_fmt, stages=mul_stages, mul_dsp=mul_dsp),
                ProductAdder(in_fmt=in_fmt, acc_fmt=acc_fmt, stages=add_stages))
    return FPMultiplier(in_fmt=in_fmt, out_fmt=acc_fmt, stages=mul_stages, mul_dsp=mul_dsp), FPAdder(fmt=acc_fmt, stages=add_stages)


def late_sum(accumulator) -> bool:
    """Whether a column accumulator's elements take the partial sum at the add
    (``WindowAdder``'s ``late_sum``): with a bound anchor and no normalisation points, where
    no window's anchor moves."""
    return accumulator.anchor == "bound" and not accumulator.group


def check_pe_stages(in_fmt, acc_fmt, mul_stages, add_stages, fused: bool = True, accumulator=None,
                    terms: int = 1) -> tuple[int, int]:
    """``(mul_stages, add_stages)``, each checked against its unit's ``max_stages`` (a
    ValueError naming the parameter, before any processing element is built)."""
    from ..timing import unused
    mul, add = pe_units(in_fmt, acc_fmt, fused, accumulator=accumulator, terms=terms)
    unused(mul, add)
    return (int_param("mul_stages", mul_stages, 0, mul.max_stages),
            int_param("add_stages", add_stages, 0, add.max_stages))


def check_fused(fused) -> bool:
    if not isinstance(fused, bool):
        raise TypeError(f"fused must be True or False, not {fused!r}")
    return fused


class ProcessingElement(wiring.Component):
    """``psum_out = psum_in + x_in * w[sel_in]``: an exact product, one RNE add.

    ``flags_out = flags_in | flags of the multiply | flags of the add``, aligned with
    ``psum_out``: a row's flags travel down the column with its partial sum.

    Two weight registers (double buffering): ``w_we`` writes ``w_data`` into buffer
    ``w_buf``; the activation's ``sel_in`` picks the buffer it multiplies with, so a
    swap never disturbs activations in flight. ``x_in``/``sel_in`` pass right with one
    register; the product is ready ``mul_stages`` cycles after ``x_in``, when
    ``psum_in`` must arrive (``sum_wait`` cycles later with ``late_sum``, below);
    ``psum_out`` follows ``psum_latency`` cycles later.

    ``fused`` (default): the multiplier hands the adder its exact product as a raw float
    (``ExactProduct`` into ``ProductAdder``): no rounder in the multiplier, no unpacking in
    the adder, registers without reset; the same bits as ``fused=False``, the generic
    ``FPMultiplier`` into ``FPAdder`` (proven: ``python -m sim.formal pe``).

    With a column ``accumulator`` (``golden.column.ColumnAccumulator``) the adder is a
    ``WindowAdder``: the partial sum is a window of up to ``terms`` products
    (``window_layout``), rounded once at the column's end, and the add raises only invalid.
    With a bound anchor and no normalisation points (``late_sum``) the product is aligned to
    the anchor, ``anchor_in`` (with the product, ``mul_stages`` cycles after ``x_in``), before
    the partial sum comes: ``psum_in`` arrives ``sum_wait`` cycles after the product and
    ``psum_out`` follows ``psum_latency`` cycles later, ``anchor_out`` (for the element
    below) ``psum_latency`` cycles after ``anchor_in``. Otherwise ``sum_wait`` is 0 and
    ``psum_latency`` is ``add_stages + 1``.

    ``mul_dsp="ecp5"``: the multiplier's significand product in an instantiated MULT18X18D with
    its own registers (``FPMultiplier``); the same bits and latency.
    """

    def __init__(self, *, in_fmt=BF16, acc_fmt=FP32, mul_stages=0, add_stages=0, fused=True, accumulator=None,
                 terms=1, mul_dsp="inferred"):
        self.in_fmt = format_param("in_fmt", in_fmt)
        self.acc_fmt = format_param("acc_fmt", acc_fmt)
        self.fused = check_fused(fused)
        check_exact_products(self.in_fmt, self.acc_fmt)
        mul_stages, add_stages = check_pe_stages(self.in_fmt, self.acc_fmt, mul_stages, add_stages, fused,
                                                 accumulator, terms)
        self.mul, self.add = pe_units(self.in_fmt, self.acc_fmt, fused, mul_stages, add_stages, accumulator, terms,
                                      mul_dsp)
        self.mul_dsp = self.mul.mul_dsp
        self.accumulator = accumulator
        self.add_stages = add_stages
        w = self.in_fmt.width
        psum = self.add.result.shape()
        anchor = {"anchor_in": In(self.acc_fmt.exp_bits), "anchor_out": Out(self.acc_fmt.exp_bits)} \
            if self.late_sum else {}
        super().__init__({
            "x_in": In(w), "sel_in": In(1), "psum_in": In(psum),
            "w_we": In(1), "w_buf": In(1), "w_data": In(w),
            "flags_in": In(5), "x_out": Out(w), "sel_out": Out(1), "psum_out": Out(psum),
            "flags_out": Out(5), **anchor,
        })

    @property
    def late_sum(self) -> bool:
        """Whether the partial sum joins at the add (``sum_wait`` cycles after the product)."""
        return getattr(self.add, "late_sum", False)

    @property
    def sum_wait(self) -> int:
        """Cycles from the product (and ``anchor_in``) to ``psum_in``."""
        return getattr(self.add, "sum_wait", 0)

    @property
    def psum_latency(self) -> int:
        """Cycles from ``psum_in`` to ``psum_out``: the add's stages after the partial sum
        joins, and the output register."""
        return self.add_stages - self.sum_wait + 1

    def elaborate(self, platform):
        m = Module()
        m.submodules.mul = mul = self.mul
        m.submodules.add = add = self.add
        # Fused: no register here needs a reset (the MXU loads a tile before it accepts a row
        # and qualifies every result with its own valid tags), so none has one.
        plain = {"reset_less": True} if self.fused else {}
        weights = [Signal(self.in_fmt.width, name=f"w{i}", **plain) for i in range(2)]
        self.weights = weights          # for formal harnesses (sim.formal.stream_mxu)
        with m.If(self.w_we):
            with m.If(self.w_buf):
                m.d.sync += weights[1].eq(self.w_data)
            with m.Else():
                m.d.sync += weights[0].eq(self.w_data)
        m.d.comb += [
            mul.a.eq(self.x_in), mul.b.eq(Mux(self.sel_in, weights[1], weights[0])), mul.valid_in.eq(1),
            add.a.eq(self.psum_in), add.b.eq(mul.result), add.valid_in.eq(1),
        ]
        # The product's flags join the partial sum's where the partial sum joins the add, then
        # wait out the adder.
        product_flags = delayed(m, mul.flags, self.sum_wait, "product_flags", self.fused)
        flags = delayed(m, self.flags_in | product_flags, self.add_stages - self.sum_wait, "flags_d", self.fused)
        outputs = {"x_out": self.x_in, "sel_out": self.sel_in, "psum_out": add.result, "flags_out": flags | add.flags}
        if self.late_sum:
            m.d.comb += add.anchor.eq(self.anchor_in)
            # The element below takes its product psum_latency cycles after this one.
            outputs["anchor_out"] = delayed(m, self.anchor_in, self.psum_latency - 1, "anchor_d", self.fused)
        for name, value in outputs.items():
            port = getattr(self, name)
            reg = Signal(port.shape(), name=f"{name}_r", **plain) if self.fused else port
            m.d.sync += reg.eq(value)
            if reg is not port:
                m.d.comb += port.eq(reg)
        return m

