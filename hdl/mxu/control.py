"""``TileController``: the ``MXU``'s stream control: the credits for its output FIFO, the
weight tile's shadow and active buffers, ``w.ready`` and ``x.ready``, the input conversion,
and the weight write that enters the columns (hdl/mxu/array.py wires it)."""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.rounding import Rounding

from ..pipeline import select
from ..stochastic_rounder import StochasticRounder

__all__ = ["TileController", "write_layout"]


def write_layout(rows: int, in_fmt) -> data.StructLayout:
    """A weight write on its way down a column: enable, buffer, tile row and the weight."""
    return data.StructLayout({"we": 1, "buf": 1, "row": unsigned(max(rows - 1, 0).bit_length()),
                              "data": in_fmt.width})


class TileController(wiring.Component):
    """Accepts ``w`` rows into the shadow buffer and ``x`` rows into the array: a swap row
    makes the complete shadow tile active (``x.ready`` waits for it and for a credit), and
    ``w.ready`` stays low while rows before a swap may still read the old tile
    (``plan.drain_cycles``).

    Parameters (keyword-only)
    -------------------------
    plan : MXUPlan
        The array's plan (hdl/mxu/plan.py): its shape, formats, streams, drain and FIFO depth.

    Ports: in ``w``, ``x`` (the MXU's streams), ``returned`` (a ``y`` row left last cycle:
    its credit comes back); out ``take`` (an ``x`` row is accepted), ``x_row`` (its data in
    ``in_fmt``) and ``x_sel`` (the buffer it multiplies with), ``w_row`` (the ``w`` row in
    ``in_fmt``) and ``w_write`` (per column, the write entering its first write register).
    Every output is combinational from the inputs and the state: ``latency`` 0.

    The state is made here, for formal harnesses (sim.formal.stream_mxu) to state invariants
    over: ``free``, ``returned_late``, ``credit``, ``swap_open``, ``active``, ``started``,
    ``shadow_full``, ``load_row``, ``drain``, ``w_open``, ``wload_open``.
    """

    def __init__(self, *, plan, streams: dict):
        self.plan = plan
        rows, cols, fmt = plan.rows, plan.cols, plan.in_fmt
        super().__init__({"w": In(streams["w"]), "x": In(streams["x"]), "returned": In(1), "take": Out(1),
                          "x_row": Out(data.ArrayLayout(fmt.width, rows)), "x_sel": Out(1),
                          "w_row": Out(data.ArrayLayout(fmt.width, cols)),
                          "w_write": Out(data.ArrayLayout(write_layout(rows, fmt), cols))})
        # The credit count: free FIFO slots not promised to rows in flight.
        self.free = Signal(range(plan.fifo_depth + 1), init=plan.fifo_depth)
        self.returned_late = Signal()   # a y row left the cycle before last: its credit is counted now
        self.active = Signal()          # the buffer new rows multiply with
        self.shadow_full = Signal()     # `rows` rows accepted: w waits for a swap
        self.started = Signal()         # a tile has been swapped in since reset
        self.load_row = Signal(range(rows))
        self.drain = Signal(range(plan.drain_cycles + 1))
        # w.ready is a register, loaded with what the drain count and the shadow state will
        # be: the accept logic starts at a flip-flop rather than at the drain count's compare
        # (the compare and the accept logic in one cycle are too long).
        self.w_open = Signal(init=1)
        # The weight writes' own copy of it: their enable reaches every column's first write
        # register, a fan-out across the die that would pull a shared flip-flop away from the
        # controller and lengthen its paths there (w.ready -> swap_open). Named wload* so that
        # the Verilog keeps synthesis from merging the two (hdl.keep).
        self.wload_open = Signal(init=1)
        # x.ready likewise: two registers, loaded with what the credit count and the shadow
        # state will be, and the row's swap bit selects between them: the accept drives the
        # active buffer's enable across the die, which leaves no room for the count's compare
        # and the shadow gate before it in the same cycle.
        self.credit = Signal(init=1)    # a credit is free
        self.swap_open = Signal()       # a credit is free and the shadow tile complete

    @property
    def latency(self) -> int:
        """Cycles from an accepted row to its outputs: 0."""
        return 0

    def elaborate(self, platform):
        m = Module()
        free_next = self._credits(m)
        self._tiles(m, free_next)
        m.d.comb += [self.x_row[k].eq(v) for k, v in enumerate(self._converted(m, self.x.payload.data, "x"))]
        w_row = self._converted(m, self.w.payload, "w")
        m.d.comb += [self.w_row[j].eq(v) for j, v in enumerate(w_row)]
        m.d.comb += [self.w_write[j].eq(Cat(self.w.valid & self.wload_open, ~self.active, self.load_row, v))
                     for j, v in enumerate(w_row)]
        return m

    def _credits(self, m):
        """The credit count (a register, by the controller that reads it). Returns its next value.

        A ``y`` transfer returns its credit through a register by the output (``returned``,
        the output stage's) and a second one here (``returned_late``), which the count adds:
        only the wire between the two registers crosses the die, a cycle of its own (the
        count's route from the output to ``x.ready`` with its logic, or that wire with the
        count's add and the accept logic, is too long for one cycle). The credit comes back
        two cycles after its ``y`` row leaves (``MXUPlan.fifo_depth``)."""
        free, x = self.free, self.x
        produces = 1 if not self.plan.acc_depth else x.payload.last
        free_next = Signal.like(free)
        m.d.comb += [self.take.eq(x.valid & x.ready),
                     free_next.eq(free - (self.take & produces) + self.returned_late)]
        m.d.sync += [self.returned_late.eq(self.returned), free.eq(free_next)]
        return free_next

    def _tiles(self, m, free_next):
        """The shadow and active buffers, ``w.ready`` and ``x.ready``."""
        plan, w, x = self.plan, self.w, self.x
        load_row, drain = self.load_row, self.drain
        swap = Signal()
        swapping = Signal()          # a swap row is accepted
        w_take = Signal()
        drain_next, full_next = Signal.like(drain), Signal()
        m.d.comb += [
            swap.eq(x.payload.swap | ~self.started),
            x.ready.eq(select(swap, self.swap_open, self.credit)),
            swapping.eq(self.take & swap),
            w.ready.eq(self.w_open),
            w_take.eq(w.valid & self.w_open),
            drain_next.eq(select(swapping, plan.drain_cycles, select(drain == 0, 0, drain - 1))),
            full_next.eq(~swapping & (self.shadow_full | (w_take & (load_row == plan.rows - 1)))),
            self.x_sel.eq(self.active ^ swap),
        ]
        # drain_next == 0, without the swap's multiplexer in the way:
        drained = ~swapping & (drain <= 1) if plan.drain_cycles else 1
        m.d.sync += [drain.eq(drain_next), self.shadow_full.eq(full_next), self.w_open.eq(~full_next & drained),
                     self.wload_open.eq(~full_next & drained),
                     self.credit.eq(free_next != 0), self.swap_open.eq((free_next != 0) & full_next)]
        with m.If(w_take):
            m.d.sync += load_row.eq(Mux(load_row == plan.rows - 1, 0, load_row + 1))
        with m.If(swapping):
            m.d.sync += [self.active.eq(~self.active), self.started.eq(1)]

    def _converted(self, m, values, name):
        """``values`` (a payload array) as ``in_fmt`` encodings, RNE from ``acc_fmt`` if asked."""
        plan = self.plan
        if not plan.convert_inputs:
            return list(values)
        out = []
        for i, value in enumerate(values):
            conv = StochasticRounder(in_fmt=plan.acc_fmt, out_fmt=plan.in_fmt, rounding=Rounding.NEAREST_EVEN)
            m.submodules[f"{name}_convert{i}"] = conv
            m.d.comb += [conv.a.eq(value), conv.valid_in.eq(1)]
            out.append(conv.result)
        return out
