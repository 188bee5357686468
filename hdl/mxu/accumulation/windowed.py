"""What the window sums share (golden.column): the element's exact product into a window
adder, normalisation points on the way down each column, one ``WindowRounder`` and its
result register at the array's edge. ``RunningAnchor`` and ``BoundAnchor`` differ in the
window adder and in what enters the top of a column."""

from __future__ import annotations

from amaranth.hdl import Module, Signal

from ...pipeline import delayed
from ...product import ExactProduct
from .base import Accumulation, Column
from .normalisation_point import NormalisationPoint, point_add_stages
from .window import check_window
from .window_rounder import WindowRounder

__all__ = ["WindowAccumulation", "WindowColumn"]


class WindowAccumulation(Accumulation):
    """A column's sum as a fixed-point window (``golden.column.ColumnAccumulator``
    ``window``), rounded at its normalisation points and once at the column's end."""

    #: The element's multiplier's class (an ``ExactProduct``).
    product_class = ExactProduct

    def __init__(self, window):
        self.window = window

    @property
    def spec(self) -> str:
        return str(self.window)

    @property
    def golden(self):
        return self.window

    @property
    def key(self) -> str:
        return self.window.key

    def check(self, in_fmt, acc_fmt, fused):
        check_window(self.window, in_fmt, acc_fmt)
        if not fused:
            raise ValueError("accumulation column needs fused processing elements: fused_pe must be True")

    @property
    def adder_class(self) -> type:
        """The element's window adder's class (a ``WindowAdder``)."""
        raise NotImplementedError

    def sum_wait(self, adder) -> int:
        return adder.sum_wait

    def element_designs(self, *, in_fmt, acc_fmt, fused, mul_stages, add_stages, terms, mul_dsp):
        self.check(in_fmt, acc_fmt, fused)
        return ((self.product_class, {"in_fmt": in_fmt, "acc_fmt": acc_fmt, "stages": mul_stages, "mul_dsp": mul_dsp}),
                (self.adder_class, {"in_fmt": in_fmt, "acc_fmt": acc_fmt, "accumulation": self.window, "terms": terms,
                                    "stages": add_stages}))

    def column(self, **array) -> "WindowColumn":
        return WindowColumn(self, **array)


class WindowColumn(Column):
    """A window sum planned for one array: a normalisation point above every ``G``-th row,
    each column's ``WindowRounder`` (``round_stages`` registers) and its result register, so
    that the output FIFO's memory takes its write data from a flip-flop."""

    result_register = 1

    @property
    def window(self):
        return self.accumulation.window

    def _window_args(self) -> dict:
        return {"in_fmt": self.in_fmt, "acc_fmt": self.acc_fmt, "accumulation": self.window, "terms": self.rows}

    @property
    def point_rows(self) -> list[int]:
        group = self.window.group
        return list(range(group, self.rows, group)) if group else []

    @property
    def _element_cost(self) -> float:
        """The processing element's slowest segment (``pipeline.Delay.cost``)."""
        return max(d.cost for d in self.element.segments)

    @property
    def round_stages(self) -> int:
        """The fewest stages estimated no slower than the element, and one more (at most
        ``max_stages``): the rounder's normalising shift sends its count to every bit of the
        window, a fan-out the delay model does not see, and a register at the array's edge
        costs one row of flip-flops per column."""
        if not hasattr(self, "_round_stages"):
            deepest = WindowRounder.plan(**self._window_args()).max_stages
            for stages in range(deepest + 1):
                rounder = WindowRounder.plan(**self._window_args(), stages=stages)
                if max(d.cost for d in rounder.segments) <= self._element_cost:
                    break
            self._round_stages = min(stages + 1, deepest)
        return self._round_stages

    @property
    def point_latency(self) -> int:
        """``round_stages``, the point's adder's stages (``point_add_stages``, the fewest no
        slower than the element), then its output register; 0 without points."""
        if not self.point_rows:
            return 0
        if not hasattr(self, "_point_latency"):
            add_stages = point_add_stages(self._element_cost, round_stages=self.round_stages, **self._window_args())
            self._point_latency = self.round_stages + add_stages + 1
        return self._point_latency

    def parts(self) -> dict:
        return {"point": "normalisation_point"} if self.point_rows else {}

    def rounder(self) -> WindowRounder:
        """One column's edge rounder, unelaborated."""
        return WindowRounder(**self._window_args(), stages=self.round_stages)

    def normalisation_point(self) -> NormalisationPoint:
        """One normalisation point, unelaborated."""
        return NormalisationPoint(**self._window_args(), round_stages=self.round_stages,
                                  add_stages=self.point_latency - self.round_stages - 1)

    def tops(self, m: Module, x_row, x_sel, pes, tile) -> list:
        """Each column's first window, where the column makes one (``None``: the top element's
        ``start``)."""
        return [None] * self.cols

    def join_top(self, m: Module, column, top) -> None:
        """A column's first window (``tops``) into its elements."""

    def connect(self, m, x_row, x_sel, pes, tile, place_point):
        for j, top in enumerate(self.tops(m, x_row, x_sel, pes, tile)):
            column = [pes[k][j] for k in range(self.rows)]
            self.join_top(m, column, top)
            self._points(m, column, top, j, place_point)

    def _points(self, m, column, top, j, place_point):
        """Column ``j``'s normalisation points between its elements ``column``: each takes
        the window and flags of the element above and feeds the element below; with a
        column anchor, ``top`` (the column's first window) carries it, delayed beside the
        windows to each point."""
        anchor, at = (top.exp if top is not None else 0), 0      # ``at`` cycles after the top window
        for k in self.point_rows:
            arrives = self.row_skew(k - 1) + self.element.psum_latency     # the window at the point
            if top is not None:
                anchor = delayed(m, anchor, arrives - at, f"point{k}_{j}_anchor_")
            at = arrives
            point = place_point(m, k, j)
            m.d.comb += [point.a.eq(column[k - 1].psum_out), point.flags_in.eq(column[k - 1].flags_out),
                         point.anchor.eq(anchor),
                         column[k].psum_in.eq(point.result), column[k].flags_in.eq(point.flags)]

    def finish(self, m, out, flags, j, rounder):
        m.submodules[f"col_round{j}"] = edge = rounder()
        m.d.comb += [edge.a.eq(out), edge.flags_in.eq(flags), edge.valid_in.eq(1)]
        r, f = Signal(self.acc_fmt.width, name=f"rounded{j}"), Signal(5, name=f"rounded{j}_flags")
        m.d.sync += [r.eq(edge.result), f.eq(edge.flags)]
        return r, f
