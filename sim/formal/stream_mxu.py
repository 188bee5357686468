"""The MXU's formal harness: the MXU with its products abstracted to tags (``TagMXU``),
every input free, and the stream contract asserted with the invariants that make it
inductive (docs/formal-streams.md).
"""

from __future__ import annotations

from types import SimpleNamespace

from amaranth.hdl import Array, Assert, Assume, Cover, Fragment, Module, Mux, ResetSignal, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hdl.float import CLASSES_LAYOUT
from hdl.mxu import MXU
from hdl.mxu.control import TileController
from hdl.mxu.output import OutputStage
from hdl.mxu.element import ProcessingElement
from hdl.mxu.accumulation.window import window_layout

from .stream_fifo import track_fifo

__all__ = ["MXU_MUTANTS", "TagMXU", "MXUHarness"]

class _TagUnit(wiring.Component):
    """A multiplier or adder abstracted: ``result`` is ``a XOR b`` (zero-extended), ``stages``
    registers later; with ``flags``, its low five bits (so every row raises flags of its own),
    else none. With ``sum_wait`` (an element's adder that takes the partial sum late,
    ``LateBoundWindowAdder``), ``a`` comes ``sum_wait`` cycles after ``b`` and after
    ``anchor`` (ignored), as the real adder's do. With ``b_classes``, the multiplier's port of
    ``b``'s stored classes (ignored)."""

    def __init__(self, in_width: int, out_width: int, stages: int, *, flags: bool, name: str, sum_wait: int = 0,
                 anchor: int = 0, b_classes: bool = False):
        self.stages, self.raises_flags, self.prefix = stages, flags, name
        self.late_sum, self.sum_wait = bool(anchor), sum_wait
        super().__init__({"a": In(in_width), "b": In(in_width), "valid_in": In(1),
                          **({"anchor": In(anchor)} if anchor else {}),
                          **({"b_classes": In(CLASSES_LAYOUT)} if b_classes else {}),
                          "result": Out(out_width), "flags": Out(5)})

    def elaborate(self, platform):
        m = Module()
        b = self.b
        for i in range(self.sum_wait):
            r = Signal.like(self.b, name=f"{self.prefix}_b{i}")
            m.d.sync += r.eq(b)
            b = r
        value = self.a ^ b
        for i in range(self.stages - self.sum_wait):
            r = Signal.like(self.result, name=f"{self.prefix}{i}")
            m.d.sync += r.eq(value)
            value = r
        m.d.comb += self.result.eq(value)
        if self.raises_flags:
            m.d.comb += self.flags.eq(value[:5])
        return m


class _TagRounder(wiring.Component):
    """A column rounder abstracted: ``result`` is the window's low bits (the tag the
    elements built), ``flags`` is ``flags_in``, both ``stages`` registers later. With
    ``anchor`` (a normalisation point's port, ignored) ``result`` is the whole window."""

    def __init__(self, in_width: int, out_width: int, stages: int, *, anchor: int = 0):
        self.stages = stages
        super().__init__({"a": In(in_width), "flags_in": In(5), "valid_in": In(1),
                          **({"anchor": In(anchor)} if anchor else {}),
                          "result": Out(out_width), "flags": Out(5)})

    def elaborate(self, platform):
        m = Module()
        value, flags = self.a[:len(self.result)], self.flags_in
        for i in range(self.stages):
            r, f = Signal.like(self.result, name=f"tag_round{i}"), Signal(5, name=f"tag_round{i}_flags")
            m.d.sync += [r.eq(value), f.eq(flags)]
            value, flags = r, f
        m.d.comb += [self.result.eq(value), self.flags.eq(flags)]
        return m


class _TagElement(ProcessingElement):
    """A processing element whose multiplier and adder carry tags (``_TagUnit``), with its
    own timing and ports."""

    def _build_units(self):
        late = {"sum_wait": self.sum_wait, "anchor": self.acc_fmt.exp_bits} if self.late_sum else {}
        return (_TagUnit(self.in_fmt.width, self.acc_fmt.width, self.mul.latency, flags=True, name="tag_mul",
                         b_classes=True),
                _TagUnit(self.acc_fmt.width, self.acc_fmt.width, self.add_stages, flags=False, name="tag_add", **late))


class TagMXU(MXU):
    """``MXU`` whose processing elements carry tags instead of products: column ``j``'s
    output is the XOR of ``x[k] XOR w[k][j]`` over the rows ``k``, so it names the row, the
    column and the tile; the accumulator adders XOR too, so a sum names its rows (with a
    column accumulator, the column rounders pass the tag through their registers). Everything else (controller, weight buffers and their writes,
    credits, entry, skew, de-skew, row tags, output FIFO) is the MXU's own. Sound for the
    stream properties because no control decision looks at a data value. Normalisation
    points pass the tag through their registers as the column rounders do."""

    def processing_element(self):
        return _TagElement(**self._element_params())

    def accumulator_adder(self):
        return _TagUnit(self.acc_fmt.width, self.acc_fmt.width, 0, flags=True, name="tag_acc")

    def column_rounder(self):
        window = window_layout(self.acc_fmt, self.accumulator, self.rows).size
        return _TagRounder(window, self.acc_fmt.width, self.round_stages)

    def normalisation_point(self):
        window = window_layout(self.acc_fmt, self.accumulator, self.rows).size
        return _TagRounder(window, window, self.point_latency, anchor=self.acc_fmt.exp_bits)


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


class _MutantController(TileController):
    """The tile controller with the ``credit``, ``swap`` or ``drain`` mutant planted."""

    def __init__(self, *, mutant: str, **kwargs):
        super().__init__(**kwargs)
        self.mutant = mutant

    def elaborate(self, platform):
        m = super().elaborate(platform)
        swap = self.x.payload.swap | ~self.started
        if self.mutant == "credit":
            m.d.comb += self.x.ready.eq(self.shadow_full | ~swap)
        elif self.mutant == "swap":
            m.d.comb += self.x.ready.eq(self.free != 0)
        elif self.mutant == "drain":
            w_take = self.w.valid & self.w.ready
            full_next = ~(self.x.valid & self.x.ready & swap) & (
                self.shadow_full | (w_take & (self.load_row == self.plan.rows - 1)))
            m.d.sync += [self.w_open.eq(~full_next), self.wload_open.eq(~full_next)]
        return m


class _ClearingOutput(OutputStage):
    """The output stage with the ``clear`` mutant planted."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        with m.If(self.flags_clear):
            m.d.sync += [f.eq(0) for f in self.flags]
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

    def tile_controller(self):
        if self.mutant not in ("credit", "swap", "drain"):
            return super().tile_controller()
        return _MutantController(mutant=self.mutant, plan=self, streams=self._streams)

    def output_stage(self):
        if self.mutant != "clear":
            return super().output_stage()
        return _ClearingOutput(plan=self, y=self._streams["y"], accumulator_adder=self.accumulator_adder)


class MXUHarness(wiring.Component):
    """A ``TagMXU`` (``hdl.build mxu`` parameters ``rows``, ``cols``, ``mul_stages``,
    ``add_stages``, ``in_fmt``, ``acc_fmt``) with every input free; asserts the stream
    contract (docs/formal-streams.md) and the invariants that make it inductive."""

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
        m.d.comb += [Assume(~ResetSignal()),
                     mxu.w.valid.eq(self.w_valid), mxu.w.payload.eq(self.w_payload),
                     mxu.x.valid.eq(self.x_valid), mxu.x.payload.eq(self.x_payload),
                     mxu.y.ready.eq(self.y_ready), mxu.flags_clear.eq(self.flags_clear)]
        h = SimpleNamespace(w_take=Signal(), take=Signal(), give=Signal())
        m.d.comb += [h.w_take.eq(mxu.w.valid & mxu.w.ready), h.take.eq(mxu.x.valid & mxu.x.ready),
                     h.give.eq(mxu.y.valid & mxu.y.ready)]
        self._credits(m, h)
        self._swap_rule(m, h)
        self._tiles(m, h)
        self._array_flow(m, h)
        h.results = [self._result(mxu, h.tiles, h.active ^ h.swap, j) for j in range(mxu.cols)]
        acc_flags = self._accumulators(m, h) if mxu.acc_depth else [0] * mxu.cols
        self._sticky_flags(m, h, acc_flags)
        m.d.comb += [
            Cover(h.outstanding == mxu.fifo_depth, "credits exhausted: x waits"),
            Cover(self.x_valid & h.swap & ~mxu.x.ready & (h.loaded < mxu.rows) & h.started,
                  "a swap row waits for its tile"),
        ]
        if not mxu.acc_depth:
            self._tracked_row(m, h)
        return m

    def _credits(self, m, h):
        """Credits: rows accepted and not yet delivered never exceed the FIFO's depth (with
        accumulators, only rows with last make a y row and take a credit)."""
        mxu = self.mxu
        h.producing = Signal()
        m.d.comb += h.producing.eq(h.take & (mxu.x.payload.last if mxu.acc_depth else 1))
        h.outstanding = Signal(range(mxu.fifo_depth + 1))
        m.d.sync += h.outstanding.eq(h.outstanding + h.producing - h.give)
        st = mxu.internals
        m.d.comb += [Assert(st.free + st.returned + st.returned_late + h.outstanding == mxu.fifo_depth, "credits miscounted"),
                     Assert(st.credit == (st.free != 0)), Assert(st.swap_open == ((st.free != 0) & st.shadow_full)),
                     Assert(~mxu.y.valid | (h.outstanding != 0), "a y row without an x row")]

    def _swap_rule(self, m, h):
        """A swap row (and the first row) waits for a complete shadow tile, w waits while
        the shadow tile is complete; the controller's tile state is the harness's count."""
        mxu, st, rows = self.mxu, self.mxu.internals, self.mxu.rows
        h.loaded = Signal(range(rows + 1))          # w rows accepted since the last swap
        h.started = Signal()
        h.swap = mxu.x.payload.swap | ~h.started
        m.d.sync += [h.loaded.eq(Mux(h.take & h.swap, 0, h.loaded + h.w_take)), h.started.eq(h.started | h.take)]
        m.d.comb += [
            Assert(~(h.take & h.swap) | (h.loaded == rows), "a row swapped in an incomplete tile"),
            Assert(~h.w_take | (h.loaded < rows), "a w row accepted into a complete shadow tile"),
            Assert(st.started == h.started), Assert(st.shadow_full == (h.loaded == rows)),
            Assert(st.load_row == Mux(h.loaded == rows, 0, h.loaded)),
        ]

    def _tiles(self, m, h):
        """The tiles as the datasheet defines them: w rows fill the shadow tile in order, a
        swap row makes it the active one (the two buffers and which is active), and the
        weight registers hold them, or a write on its way down the column does."""
        mxu, st, rows = self.mxu, self.mxu.internals, self.mxu.rows
        h.tiles = [[[Signal(mxu.in_fmt.width, name=f"tile{b}_{k}_{j}") for j in range(mxu.cols)]
                    for k in range(rows)] for b in range(2)]
        h.active = Signal()
        with m.If(h.take & h.swap):
            m.d.sync += h.active.eq(~h.active)
        for k in range(rows):
            for j in range(mxu.cols):
                with m.If(h.w_take & (h.loaded == k)):
                    with m.If(h.active):
                        m.d.sync += h.tiles[0][k][j].eq(mxu.w.payload[j])
                    with m.Else():
                        m.d.sync += h.tiles[1][k][j].eq(mxu.w.payload[j])
        m.d.comb += Assert(st.active == h.active)
        for k in range(rows):
            for j in range(mxu.cols):
                for b in range(2):
                    held = st.pes[k][j].weights[b]
                    for d in range(k + 1):               # a write for row k still on its way
                        wr = st.w_writes[d][j]
                        held = Mux(wr.we & (wr.row == k) & (wr.buf == b), wr.data, held)
                    m.d.comb += Assert(held == h.tiles[b][k][j], f"weight ({k}, {j}) of buffer {b}")

    def _array_flow(self, m, h):
        """Rows that make a y row leave the array exactly array_latency cycles after they
        are accepted, into the FIFO (``h.in_fifo``: rows in it)."""
        mxu, fifo = self.mxu, self.mxu.internals.fifo
        in_array, value = [], h.producing
        for d in range(mxu.array_latency):
            r = Signal(name=f"in_array{d}")
            m.d.sync += r.eq(value)
            in_array.append(r)
            value = r
        h.in_fifo = Signal(range(mxu.fifo_depth + 1))
        m.d.sync += h.in_fifo.eq(h.in_fifo + fifo.w_en - h.give)
        m.d.comb += [Assert(fifo.w_en == value, "a row leaves the array off its cycle"),
                     Assert(h.outstanding == h.in_fifo + sum(in_array), "rows lost or made up between array and FIFO")]

    def _sticky_flags(self, m, h, acc_flags):
        """Each row's flags (here the low five bits of every x[k] ^ w[k][j] it makes, ORed;
        with accumulators also their adds') join column j's flags when it leaves the array;
        flags_clear clears what was there before its cycle, not the flags of a row leaving in it."""
        mxu = self.mxu
        row_flags = []
        for j in range(mxu.cols):
            f = 0
            for k in range(mxu.rows):
                f = f | (mxu.x.payload.data[k] ^ Mux(h.active ^ h.swap, h.tiles[1][k][j], h.tiles[0][k][j]))[:5]
            row_flags.append(Mux(h.take, f, 0))
        for d in range(mxu.array_latency):
            delayed = [Signal(5, name=f"row_flags{d}_{j}") for j in range(mxu.cols)]
            m.d.sync += [r.eq(f) for r, f in zip(delayed, row_flags)]
            row_flags = delayed
        for j in range(mxu.cols):
            sticky = Signal(5, name=f"sticky{j}")
            m.d.sync += sticky.eq(Mux(self.flags_clear, 0, sticky) | row_flags[j] | acc_flags[j])
            m.d.comb += Assert(mxu.flags[j] == sticky, f"column {j}'s sticky flags")
        m.d.comb += Cover(self.flags_clear & (row_flags[0] != 0), "a row leaves in a clear cycle")

    def _tracked_row(self, m, h):
        """The tracked row: its result (column j: the XOR of x[k] ^ w[k][j] over the tile it
        multiplies with, the new one if it swaps) enters the FIFO array_latency cycles after
        it is accepted; from there ``track_fifo``."""
        mxu, fifo = self.mxu, self.mxu.internals.fifo
        tracked, done = Signal(), Signal()
        expected = [Signal(mxu.acc_fmt.width, name=f"expected{j}") for j in range(mxu.cols)]
        age = Signal(range(mxu.latency + 1))
        with m.If(~tracked & ~done & h.take & self.pick):
            m.d.sync += [tracked.eq(1), age.eq(1)] + [e.eq(r) for e, r in zip(expected, h.results)]
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
        delivered = track_fifo(m, fifo, fifo.w_en, fifo.w_data, h.give, entering, h.in_fifo, fifo.latency)
        m.d.comb += Cover(delivered & (h.outstanding > 1), "the tracked row delivered behind others")

    @staticmethod
    def _result(mxu, tiles, uses, j):
        """Column ``j`` of the accepted row's result: the XOR of ``x[k] ^ w[k][j]`` over the
        tile it multiplies with (``uses``: buffer 1)."""
        tag = 0
        for k in range(mxu.rows):
            tag = tag ^ mxu.x.payload.data[k] ^ Mux(uses, tiles[1][k][j], tiles[0][k][j])
        return tag

    def _accumulators(self, m, h):
        """With accumulators: every row's result travels beside the array with its ``addr``,
        ``first`` and ``last``; when it leaves, a model of the accumulator rows (the
        datasheet's: ``first`` loads, else adds; ``last`` offers the sum and writes nothing)
        gives the y row it must make, and the MXU's accumulator rows must equal the model's.
        Returns each column's flags of the accumulator adds (tags: the sum's low five bits)."""
        mxu = self.mxu
        width, payload = mxu.acc_fmt.width, mxu.x.payload
        row = [h.take, payload.addr, payload.first, payload.last, *h.results]
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
        delivered = track_fifo(m, fifo, fifo.w_en, fifo.w_data, h.give, leaving & self.pick, h.in_fifo, fifo.latency)
        m.d.comb += [Cover(delivered & (h.in_fifo > 1), "an accumulated row delivered behind others"),
                     Cover(leaving & ~first & (stored[0] != 0), "a y row sums several rows")]
        return flags
