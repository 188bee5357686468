"""``ProcessingElement``: one cell of the weight-stationary matrix unit."""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.column import accumulation_arg
from golden.formats import BF16, FP32

from ..float import CLASSES_LAYOUT, FloatLayout, operand_classes
from ..params import check_exact_products, format_param, int_param
from ..pipeline import Delay, delayed
from .accumulation import resolve_accumulation

__all__ = ["ElementPlan", "ProcessingElement", "check_pe_stages"]


def check_pe_stages(in_fmt, acc_fmt, mul_stages, add_stages, fused: bool, accumulation, terms: int = 1
                    ) -> tuple[int, int]:
    """``(mul_stages, add_stages)``, each checked against its unit's ``max_stages`` (a
    ValueError naming the parameter, before any processing element is built)."""
    mul, add = accumulation.element_plans(in_fmt=in_fmt, acc_fmt=acc_fmt, fused=fused, mul_stages=0, add_stages=0,
                                          terms=terms, mul_dsp="inferred")
    return (int_param("mul_stages", mul_stages, 0, mul.max_stages),
            int_param("add_stages", add_stages, 0, add.max_stages))


def check_fused(fused) -> bool:
    if not isinstance(fused, bool):
        raise TypeError(f"fused must be True or False, not {fused!r}")
    return fused


class ElementPlan:
    """A processing element's checked parameters (keyword-only, as ``ProcessingElement``'s)
    and timing without its hardware: its multiplier's and adder's plans (``mul``, ``add``),
    ``late_sum``, ``sum_wait``, ``psum_latency`` and ``segments``."""

    def __init__(self, *, in_fmt=BF16, acc_fmt=FP32, mul_stages=0, add_stages=0, fused=True, accumulation=None,
                 terms=1, mul_dsp="inferred", accumulator=None):
        self.in_fmt = format_param("in_fmt", in_fmt)
        self.acc_fmt = format_param("acc_fmt", acc_fmt)
        self.fused = check_fused(fused)
        check_exact_products(self.in_fmt, self.acc_fmt)
        self.accumulation = resolve_accumulation("accumulation", accumulation_arg(accumulation, accumulator))
        self.accumulation.check(self.in_fmt, self.acc_fmt, self.fused)
        mul_stages, add_stages = check_pe_stages(self.in_fmt, self.acc_fmt, mul_stages, add_stages, self.fused,
                                                 self.accumulation, terms)
        self._units = {"in_fmt": self.in_fmt, "acc_fmt": self.acc_fmt, "fused": self.fused, "mul_stages": mul_stages,
                       "add_stages": add_stages, "terms": terms, "mul_dsp": mul_dsp}
        self.mul, self.add = self.accumulation.element_plans(**self._units)
        self.mul_dsp = self.mul.mul_dsp
        self.mul_stages, self.add_stages = mul_stages, add_stages

    def module_name(self, terms: int) -> str:
        """The element's module name as synth.timing places it (docs/timing.csv's ``module``):
        formats and depths, then the accumulation's key and the column's ``terms`` (a
        window sum) or ``_fused``, and ``_ecp5dsp`` with an instantiated MULT18X18D."""
        key = self.accumulation.key
        return (f"mxu_pe_{self.in_fmt.name}_{self.acc_fmt.name}_m{self.mul_stages}a{self.add_stages}"
                + (f"_{key}_t{terms}" if key else "_fused" * self.fused) + "_ecp5dsp" * (self.mul_dsp == "ecp5"))

    @property
    def late_sum(self) -> bool:
        """Whether the partial sum joins at the add, after the product (its adder takes the
        anchor with the product)."""
        return self.accumulation.late_sum

    @property
    def sum_wait(self) -> int:
        """Cycles from the product (and ``anchor_in``) to ``psum_in``: the element adder's
        (0 but for an adder that takes the partial sum late)."""
        return self.accumulation.sum_wait(self.add)

    @property
    def psum_latency(self) -> int:
        """Cycles from ``psum_in`` to ``psum_out``: the add's stages after the partial sum
        joins, and the output register."""
        return self.add_stages - self.sum_wait + 1

    @property
    def psum_shape(self):
        """The partial sum's shape: the adder's result's."""
        return self.add._result_shape()

    @property
    def segments(self) -> list[Delay]:
        """Delays between consecutive registers: the weight-select mux before the
        multiplier, the multiplier's last segment running into the adder's first."""
        mul, add = self.mul.segments, self.add.segments
        mul = [mul[0] + Delay(1), *mul[1:]]
        return [*mul[:-1], mul[-1] + add[0], *add[1:]]


class ProcessingElement(ElementPlan, wiring.Component):
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

    The ``accumulation`` (an ``Accumulation`` of hdl/mxu/accumulation/, or its spelling,
    ``resolve_accumulation``; ``accumulator``: its old name) supplies the multiplier and adder
    and any ports of its own. With a window sum the partial sum is a window of up to ``terms`` products
    (``window_layout``), rounded at the column's edge, and the add raises only invalid. An
    adder that takes the partial sum late (a bound anchor without normalisation points,
    whose anchor comes on ``anchor_in`` with the product, ``mul_stages`` cycles after
    ``x_in``) aligns the product first: ``psum_in`` arrives ``sum_wait`` cycles after the
    product and ``psum_out`` ``psum_latency`` cycles after that, ``anchor_out`` (for the
    element below) ``psum_latency`` cycles after ``anchor_in``. Otherwise ``sum_wait`` is 0
    and ``psum_latency`` is ``add_stages + 1``.

    ``mul_dsp="ecp5"``: the multiplier's significand product in an instantiated MULT18X18D with
    its own registers (``FPMultiplier``); the same bits and latency.
    """

    def __init__(self, **params):
        ElementPlan.__init__(self, **params)
        psum = self.psum_shape
        self.mul, self.add = self._build_units()
        w = self.in_fmt.width
        wiring.Component.__init__(self, {
            "x_in": In(w), "sel_in": In(1), "psum_in": In(psum),
            "w_we": In(1), "w_buf": In(1), "w_data": In(w),
            "flags_in": In(5), "x_out": Out(w), "sel_out": Out(1), "psum_out": Out(psum),
            "flags_out": Out(5), **self.accumulation.element_ports(self.in_fmt, self.acc_fmt),
        })

    def _build_units(self):
        """The multiplier and adder (the accumulation's ``element_units``)."""
        return self.accumulation.element_units(**self._units)

    def elaborate(self, platform):
        m = Module()
        m.submodules.mul = mul = self.mul
        m.submodules.add = add = self.add
        # Fused: no register here needs a reset (the MXU loads a tile before it accepts a row
        # and qualifies every result with its own valid tags), so none has one.
        plain = {"reset_less": True} if self.fused else {}
        weights = [Signal(self.in_fmt.width, name=f"w{i}", **plain) for i in range(2)]
        self.weights = weights          # for formal harnesses (sim.formal.stream_mxu)
        # Each weight's classes are stored with it, so that the activation's buffer select
        # runs into the multiplier's registers through one multiplexer, not a multiplexer and
        # the tests of the weight it selected.
        classes = [Signal(CLASSES_LAYOUT, name=f"w{i}_classes", **plain) for i in range(2)]
        written = operand_classes(FloatLayout(self.in_fmt)(self.w_data))
        for i in range(2):
            with m.If(self.w_we & (self.w_buf == i)):
                m.d.sync += [weights[i].eq(self.w_data), *(getattr(classes[i], k).eq(v) for k, v in written.items())]
        m.d.comb += [
            mul.a.eq(self.x_in), mul.b.eq(Mux(self.sel_in, weights[1], weights[0])), mul.valid_in.eq(1),
            mul.b_classes.eq(Mux(self.sel_in, classes[1], classes[0])),
            add.a.eq(self.psum_in), add.b.eq(mul.result), add.valid_in.eq(1),
        ]
        # The product's flags join the partial sum's where the partial sum joins the add, then
        # wait out the adder.
        product_flags = delayed(m, mul.flags, self.sum_wait, "product_flags", self.fused)
        flags = delayed(m, self.flags_in | product_flags, self.add_stages - self.sum_wait, "flags_d", self.fused)
        outputs = {"x_out": self.x_in, "sel_out": self.sel_in, "psum_out": add.result, "flags_out": flags | add.flags}
        outputs.update(self.accumulation.element_outputs(m, self))
        for name, value in outputs.items():
            port = getattr(self, name)
            reg = Signal(port.shape(), name=f"{name}_r", **plain) if self.fused else port
            m.d.sync += reg.eq(value)
            if reg is not port:
                m.d.comb += port.eq(reg)
        return m

