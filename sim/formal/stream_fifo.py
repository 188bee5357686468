"""The output FIFO's formal harness and the row tracking that the MXU's harness reuses.

A row is *tracked*: on any write the free input ``pick`` may choose it; the harness then
remembers its data and counts the rows ahead of it, and asserts that it leaves unchanged,
after exactly those rows, and no later than the FIFO's latency allows. Since ``pick`` is
free, this covers every row of every input sequence: no row is lost, duplicated, changed or
reordered (docs/formal-streams.md). Invariants over the FIFO's state make the assertions inductive.
"""

from __future__ import annotations

from amaranth.hdl import Assert, Assume, Cover, Module, Mux, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from hdl.mxu.output_fifo import OutputFIFO

__all__ = ["FIFO_MUTANTS", "FIFOHarness", "track_fifo"]

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
    """``OutputFIFO(width, depth, ram)`` with its writer counting credits as the MXU does
    (``depth`` rows written and not read at most), every other input free."""

    def __init__(self, *, width: int = 3, depth: int = 8, ram: str = "block", mutant: str | None = None):
        if mutant is not None and mutant not in FIFO_MUTANTS:
            raise ValueError(f"mutant must be one of {', '.join(FIFO_MUTANTS)}, not {mutant!r}")
        self.fifo = (OutputFIFO(width=width, depth=depth, ram=ram) if mutant is None else
                     _MutantFIFO(width=width, depth=depth, ram=ram, mutant=mutant))
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
                     Cover(fifo.head_valid & (fifo.queued == fifo.slot_count), "the head and the queue full"),
                     Cover((fifo.stored != 0) & fifo.head_valid & ~fifo.r.ready, "the memory holds rows behind a waiting head"),
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
    # Invariants: where every row is, and the tracked row's data wherever it is. The stages
    # out of the memory in the order rows leave them: (rows there, the fewest cycles a row
    # there has spent since its write, its data there).
    stages = [(fifo.head_valid, latency, fifo.head), (fifo.queued, latency - 1, fifo.peek_slot_data)]
    for back, (valid, data) in enumerate(zip(fifo.stage_valid[::-1], fifo.stage_data[::-1])):
        stages.append((valid, latency - 2 - back, data))
    in_flight = sum(rows for rows, _, _ in stages)
    in_memory = Signal(range(depth + 1))
    m.d.comb += in_memory.eq(outstanding - in_flight)
    slot_bits = len(fifo.slot_w)
    m.d.comb += [
        Assert(in_memory == fifo.stored + fifo.read_en, "rows in the memory miscounted"),
        Assert(outstanding >= in_flight),
        Assert((fifo.produce - fifo.consume)[:len(fifo.produce)] == in_memory[:len(fifo.produce)]),
        Assert(fifo.nonempty == (fifo.stored != 0)),
        Assert(fifo.room + in_flight + fifo.read_en == fifo.room_count, "the room counter miscounts the decided rows"),
        Assert(fifo.queued <= fifo.slot_count),
        Assert((fifo.slot_w - fifo.slot_r)[:slot_bits] == fifo.queued[:slot_bits]),
        Assert(~(fifo.w_en & fifo.read_en & (fifo.produce == fifo.consume)),
               "the memory reads the row being written (its collision result is undefined: no_rw_check)"),
    ]
    m.d.comb += [fifo.peek_addr.eq(fifo.consume + (ahead - in_flight)),
                 fifo.peek_slot.eq(fifo.slot_r + (ahead - fifo.head_valid))]
    with m.If(tracked):
        before = 0                      # rows in the stages nearer the head
        for rows, cycles, data in stages:
            with m.If((ahead >= before) & (ahead < before + rows)):
                m.d.comb += Assert(data == t_data, "the tracked row's data changed in the FIFO")
                m.d.comb += Assert(age >= cycles, "the tracked row ahead of its write")
            before = before + rows
        with m.If(ahead >= in_flight):
            m.d.comb += Assert(fifo.peek_data == t_data, "the tracked row's data changed in the FIFO")
    delivered = Signal()
    m.d.comb += delivered.eq(tracked & read & (ahead == 0))
    return delivered
