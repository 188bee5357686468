"""The ``MXU``'s stream control: the credits for its output FIFO, the tile controller
(``w.ready``, ``x.ready``, the active buffer), the weight writes on their way down the
columns and the rows' valid tags (hdl/mxu/array.py's ``elaborate``).

Each function takes the ``MXU`` being elaborated and its ``Module``; the control state goes
into ``mxu.internals`` for the formal harnesses (sim.formal.stream_mxu).
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data

from golden.rounding import Rounding

from .output_fifo import OutputFIFO
from ..pipeline import select
from ..stochastic_rounder import StochasticRounder

__all__ = ["controller", "credits", "row_tags"]


def credits(mxu, m: Module, x_in, y_out):
    """The output FIFO and the credit count: free FIFO slots not promised to rows in
    flight (a register). Returns the FIFO, ``take`` (an ``x`` row is accepted) and the
    count's next value.

    A ``y`` transfer returns its credit through a register by the output (``returned``)
    and a second one by the controller (``returned_late``), which the count adds: the count
    sits by the controller that reads it, and only the wire between the two registers
    crosses the die, a cycle of its own (the count's route from the output to ``x.ready``
    with its logic, or that wire with the count's add and the accept logic, is too long for
    one cycle). The credit comes back two cycles after its ``y`` row leaves
    (``MXUPlan.fifo_depth``)."""
    m.submodules.fifo = out_fifo = OutputFIFO(width=mxu.cols * mxu.out_fmt.width, depth=mxu.fifo_depth,
                                                 ram=mxu.fifo_ram)
    free = Signal(range(mxu.fifo_depth + 1), init=mxu.fifo_depth)
    returned = Signal()  # a y row left last cycle
    returned_late = Signal()  # ... the cycle before: its credit is counted now
    produces = 1 if not mxu.acc_depth else x_in.payload.last
    take = Signal()      # an x row is accepted
    free_next = Signal.like(free)
    m.d.comb += [take.eq(x_in.valid & x_in.ready), free_next.eq(free - (take & produces) + returned_late)]
    m.d.sync += [returned.eq(y_out.valid & y_out.ready), returned_late.eq(returned), free.eq(free_next)]
    mxu.internals.fifo, mxu.internals.free = out_fifo, free
    mxu.internals.returned, mxu.internals.returned_late = returned, returned_late
    return out_fifo, take, free_next


def controller(mxu, m: Module, w_in, x_in, take, free_next):
    """Weights go into the shadow buffer; a swap row makes it active (``x.ready`` waits
    for a complete shadow tile and a credit). Returns the rows entering the array (after
    input conversion), the buffer tag of the accepted row, the weight-write registers and,
    what the column keeps of each tile as it loads (``Column.tile_state``; None: nothing)."""
    k_rows = mxu.rows
    active = Signal()            # the buffer new rows multiply with
    shadow_full = Signal()       # `rows` rows accepted: w waits for a swap
    started = Signal()           # a tile has been swapped in since reset
    load_row = Signal(range(k_rows))
    drain = Signal(range(mxu.drain_cycles + 1))
    swap = Signal()
    swapping = Signal()          # a swap row is accepted
    w_take = Signal()
    # w.ready is a register, loaded with what the drain count and the shadow state will
    # be: the controller's accept logic starts at a flip-flop rather than at the drain
    # count's compare (the compare and the accept logic in one cycle are too long).
    w_open = Signal(init=1)
    # The weight writes' own copy of it: their enable reaches every column's first write
    # register, a fan-out across the die that would pull a shared flip-flop away from the
    # controller and lengthen its paths there (w.ready -> swap_open). Named wload* so that
    # NAME_keep.ys keeps Yosys from merging the two (hdl.floorplan.KEEP).
    wload_open = Signal(init=1)
    # x.ready likewise: two registers, loaded with what the credit count and the shadow
    # state will be, and the row's swap bit select between them: the accept drives the
    # active buffer's enable across the die, which leaves no room for the count's compare
    # and the shadow gate before it in the same cycle.
    credit = Signal(init=1)      # a credit is free
    swap_open = Signal()         # a credit is free and the shadow tile complete
    drain_next, full_next = Signal.like(drain), Signal()
    m.d.comb += [
        swap.eq(x_in.payload.swap | ~started),
        x_in.ready.eq(select(swap, swap_open, credit)),
        swapping.eq(take & swap),
        w_in.ready.eq(w_open),
        w_take.eq(w_in.valid & w_open),
        drain_next.eq(select(swapping, mxu.drain_cycles, select(drain == 0, 0, drain - 1))),
        full_next.eq(~swapping & (shadow_full | (w_take & (load_row == k_rows - 1)))),
    ]
    # drain_next == 0, without the swap's multiplexer in the way:
    drained = ~swapping & (drain <= 1) if mxu.drain_cycles else 1
    m.d.sync += [drain.eq(drain_next), shadow_full.eq(full_next), w_open.eq(~full_next & drained),
                 wload_open.eq(~full_next & drained),
                 credit.eq(free_next != 0), swap_open.eq((free_next != 0) & full_next)]
    with m.If(w_take):
        m.d.sync += load_row.eq(Mux(load_row == k_rows - 1, 0, load_row + 1))
    with m.If(swapping):
        m.d.sync += [active.eq(~active), started.eq(1)]
    w_row = _converted(mxu, m, w_in.payload, "w")
    x_row = _converted(mxu, m, x_in.payload.data, "x")
    w_writes = _weight_writes(mxu, m, w_in.valid & wload_open, load_row, ~active, w_row)
    tile = mxu.column.tile_state(m, w_writes, w_row)
    mxu.internals.w_writes = w_writes
    x_sel = Signal()      # the buffer the accepted row multiplies with
    m.d.comb += x_sel.eq(active ^ swap)
    mxu.internals.__dict__.update(credit=credit, swap_open=swap_open,
                                  active=active, started=started, shadow_full=shadow_full, load_row=load_row,
                                  drain=drain, w_open=w_open, wload_open=wload_open)
    return x_row, x_sel, w_writes, tile


def _converted(mxu, m: Module, values, name):
    """``values`` (a payload array) as ``in_fmt`` encodings, RNE from ``acc_fmt`` if asked."""
    if not mxu.convert_inputs:
        return list(values)
    out = []
    for i, value in enumerate(values):
        conv = StochasticRounder(in_fmt=mxu.acc_fmt, out_fmt=mxu.in_fmt, rounding=Rounding.NEAREST_EVEN)
        m.submodules[f"{name}_convert{i}"] = conv
        m.d.comb += [conv.a.eq(value), conv.valid_in.eq(1)]
        out.append(conv.result)
    return out


def _weight_writes(mxu, m: Module, we, row, buf, values):
    """The weight writes as they travel down each column: ``writes[k][j]``, the
    registered write (``we``, tile ``row``, buffer ``buf``, ``data``) at PE ``(k, j)``,
    which stores it when ``row == k``.

    A ``w`` row accepted in cycle ``T`` is at row ``k`` in cycle ``T + 1 + k`` and lands
    at its end, so every PE's write enable comes from a register beside it, not from one
    net that reaches every weight register from the controller (such a net spans the
    array, and its delay grows with the array's size). A swap row is accepted from the
    cycle after the tile's last ``w`` row on (``shadow_full``) and reaches row ``k``
    through the entry register ``1 + k * psum_latency >= 1 + k`` cycles later, when that
    row's write has landed.
    """
    layout = data.StructLayout({"we": 1, "buf": 1, "row": unsigned(max(mxu.rows - 1, 0).bit_length()),
                                "data": mxu.in_fmt.width})
    writes = []
    for k in range(mxu.rows):
        stage = []
        for j, value in enumerate(values):
            reg = Signal(layout, name=f"wload{k}_{j}")
            m.d.sync += reg.eq(writes[k - 1][j] if k else Cat(we, buf, row, value))
            stage.append(reg)
        writes.append(stage)
    return writes


def row_tags(mxu, m: Module, x_in, take):
    """The accepted row's valid (and accumulator control), delayed the array's latency."""
    tag_layout = data.StructLayout({"valid": 1, **({"addr": mxu.acc_addr_width, "first": 1, "last": 1}
                                                  if mxu.acc_depth else {})})
    tag = Signal(tag_layout)
    m.d.comb += tag.valid.eq(take)
    if mxu.acc_depth:
        m.d.comb += [tag.addr.eq(x_in.payload.addr), tag.first.eq(x_in.payload.first),
                     tag.last.eq(x_in.payload.last)]
    for d in range(mxu.array_latency):
        r = Signal(tag_layout, name=f"tag_{d}")
        m.d.sync += r.eq(tag)
        tag = r
    return tag
