"""The interface every way of summing an MXU column implements (``Accumulation``), and the
part of it that is planned per array (``Column``)."""

from __future__ import annotations

from amaranth.hdl import Module

__all__ = ["Accumulation", "Column"]


class Accumulation:
    """How a column of processing elements sums its products: what the column computes
    (``spec``, golden's description ``golden``), the element's units
    (``element_designs``), and the per-array ``Column``: what enters the top of a column,
    what the partial sums pass on the way and at the array's edge, and their latencies.

    Implementations: ``Sequential`` (every add rounded), ``RunningAnchor`` and
    ``BoundAnchor`` (golden.column's window sums). A new way of summing a column is a new
    implementation; the array, the processing element and the build only call these.
    """

    #: The module name's part (``""``: none).
    key = ""

    @property
    def spec(self) -> str:
        """The accumulation as the ``accumulation`` parameter spells it (the manifest's value)."""
        raise NotImplementedError

    @property
    def golden(self):
        """golden's description of the sum: ``None`` (sequential) or a ``ColumnAccumulator``."""
        raise NotImplementedError

    def check(self, in_fmt, acc_fmt, fused: bool) -> None:
        """A ValueError naming the parameter if the hardware cannot build this sum for these
        formats and elements."""

    def element_designs(self, *, in_fmt, acc_fmt, fused: bool, mul_stages: int, add_stages: int, terms: int,
                        mul_dsp: str):
        """The classes of one processing element's multiplier and adder, each with its keyword
        parameters: ``((class, params), (class, params))``."""
        raise NotImplementedError

    def element_units(self, **element):
        """``(multiplier, adder)`` of one processing element (unelaborated); ``element``:
        ``element_designs``' arguments."""
        return tuple(cls(**params) for cls, params in self._element_designs(**element))

    def element_plans(self, **element):
        """The plans (``ArithmeticUnit.plan``) of ``element_units``' multiplier and adder."""
        return tuple(cls.plan(**params) for cls, params in self._element_designs(**element))

    def _element_designs(self, **element):
        """``element_designs``, the multiplier taking its weight's classes from the element
        (``classified_b``), which classifies each weight as it stores it."""
        (mul, mul_params), adder = self.element_designs(**element)
        return (mul, {**mul_params, "classified_b": True}), adder

    #: Whether the element's adder takes the partial sum late, after the product (with the
    #: anchor on a port of its own).
    late_sum = False

    def sum_wait(self, adder) -> int:
        """Cycles from the product to the partial sum at the element's ``adder`` (the unit or
        its plan): 0, they come together."""
        return 0

    def element_ports(self, in_fmt, acc_fmt) -> dict:
        """The processing element's ports beyond the common ones (name -> ``In``/``Out``)."""
        return {}

    def element_outputs(self, m: Module, pe) -> dict:
        """Drive the element's own ports: its inputs into its logic, and any output read
        straight from its registers (``pe.weights``); returns the outputs that pass the
        element's output register (name -> value before it)."""
        return {}

    def column(self, **array) -> "Column":
        """The per-array part (``array``: ``Column``'s parameters)."""
        return Column(self, **array)


class Column:
    """An accumulation planned for one array: the latencies it adds and the logic it puts at
    the top, on the way and at the edge of each column. The base class is a column that
    only chains its elements, from ``+0`` at the top.

    Parameters (keyword-only)
    -------------------------
    in_fmt, acc_fmt : FloatFormat
    rows, cols, mul_stages : int
        The array's (``MXU``'s).
    element : ElementPlan
        The plan of the array's elements (their ``psum_latency`` and delay segments).
    """

    def __init__(self, accumulation: Accumulation, *, in_fmt, acc_fmt, rows: int, cols: int, mul_stages: int,
                 element):
        self.accumulation = accumulation
        self.in_fmt, self.acc_fmt = in_fmt, acc_fmt
        self.rows, self.cols, self.mul_stages = rows, cols, mul_stages
        self.element = element

    #: The rows with a normalisation point above them.
    point_rows: list = []
    #: Cycles a partial sum spends in one normalisation point.
    point_latency = 0
    #: Register stages of each column's edge rounder.
    round_stages = 0
    #: Registers after each column's edge rounder.
    result_register = 0
    #: Cycles the rows wait before the array for the column's anchor.
    anchor_wait = 0

    def row_skew(self, k: int) -> int:
        """Cycles row ``k``'s activation waits after the entry register: the partial sums'
        time in the rows and normalisation points above it."""
        return k * self.element.psum_latency + sum(r <= k for r in self.point_rows) * self.point_latency

    def parts(self) -> dict:
        """The column's parts that a build may convert once as modules of their own:
        name -> component factory (``MXU`` method name)."""
        return {}

    def tile_state(self, m: Module, w_writes, w_row):
        """What the column keeps of each weight tile as it loads (``w_writes[k][j]``: the
        weight writes at element ``(k, j)``; ``None``: nothing)."""
        return None

    def start(self, m: Module, pe) -> None:
        """The partial sum into the column's top element while the array is built: ``+0``."""
        m.d.comb += pe.psum_in.eq(0)

    def connect(self, m: Module, x_row, x_sel, pes, tile, place_point) -> None:
        """Whatever joins the columns once every element is placed (``x_row``, ``x_sel``: the
        accepted row and its buffer, before the entry register; ``place_point(m, k, j)``: a
        normalisation point placed above row ``k`` of column ``j``)."""

    def finish(self, m: Module, out, flags, j: int, rounder):
        """Column ``j``'s sum and flags as they leave its last element, through the edge
        (``rounder()``: a new edge rounder): ``(result, flags)``."""
        return out, flags
