"""``OutputFIFO``: the MXU's output FIFO, whose memory read never waits for ``r.ready``.

Rows are written into a memory (block RAM on large arrays) and read synchronously into the
memory's read register, then into a fabric register that takes the read data through no
logic (the *landing* register: only an enable), then into two fabric registers: the head
(``r.payload``) and one spare behind it. Whether to read the memory is decided from
registers only (the memory holds a row, and the read register will be free: it is empty,
or the landing register or the spare is), so ``r.ready`` reaches nothing but the fabric
registers' enables, the moves out of the read and landing registers, the FIFO's valid
bits and the memory's read enable, a register of its own: no path runs within a cycle
from the consumer's ready to the memory, its pointers or its level (on a placed 9x9 array
such a loop, from the level counter out to the block RAMs and back, set the clock). The read
enable is the read decision computed a cycle ahead from the next state, so the decision
that the level counter uses stays beside it, and only that register drives the block
RAMs. The landing register keeps the head's multiplexer out of the block RAM's path,
whose clock-to-out takes most of a cycle on the ECP5 (the head read straight from it set a
placed 4x4 array's clock).

A row written in cycle ``T`` is offered on ``r`` from cycle ``T + 4`` (the level, the read
register, the landing register, the head register) and then one row per cycle while
``r.ready`` stays high.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from .params import int_param

__all__ = ["LATENCY", "OutputFIFO"]

MAX_WIDTH = 1 << 16
MAX_DEPTH = 1 << 16
#: Cycles from a write to its row on ``r``: the level, the read, landing and head registers.
LATENCY = 4


class OutputFIFO(wiring.Component):
    """A FIFO of ``depth`` rows in memory plus four in flight, for a writer that never
    overflows it (the MXU's credits).

    Parameters (keyword-only)
    -------------------------
    width : int
        Bits per row, 1..65536.
    depth : int
        Memory rows, a power of two 2..65536. The FIFO holds ``depth + 4`` rows (memory,
        its read register, the landing register, the head and the spare); a write with ``depth`` rows already in
        the memory is lost, so the writer must count (the MXU's credits never exceed
        ``depth``).

    Ports: in ``w_en``, ``w_data`` (``width``); out ``r`` (``lib.stream``, ``width`` bits).
    """

    def __init__(self, *, width, depth):
        self.width = int_param("width", width, 1, MAX_WIDTH)
        self.depth = int_param("depth", depth, 2, MAX_DEPTH)
        if depth & (depth - 1):
            raise ValueError(f"depth must be a power of two (2..{MAX_DEPTH}), not {depth}")
        super().__init__({"w_en": In(1), "w_data": In(width), "r": Out(stream.Signature(width))})
        # The state, made here so that a formal harness can state invariants over it
        # (sim.formal.stream_fifo); with platform "formal", ``peek_data`` is the memory's row at
        # ``peek_addr``.
        self.storage = memory.Memory(shape=self.width, depth=self.depth, init=[])
        self.peek_addr = Signal(range(self.depth))
        self.peek_data = Signal(self.width)
        self.produce = Signal(range(self.depth))
        self.consume = Signal(range(self.depth))
        self.stored = Signal(range(self.depth + 1))   # rows in the memory, not yet read
        self.nonempty = Signal()                      # stored != 0, a register of its own
        self.read = Signal()                          # the memory is read (from registers only)
        self.read_en = Signal()                       # read, a register of its own: the memory's enable
        self.read_valid = Signal()                    # the memory's read register holds a row
        self.read_data = Signal(self.width)           # the read register (in the memory)
        self.landing_valid = Signal()
        self.landing = Signal(self.width, reset_less=True)
        self.spare_valid = Signal()
        self.spare = Signal(self.width, reset_less=True)
        self.head_valid = Signal()
        self.head = Signal(self.width, reset_less=True)

    @property
    def latency(self) -> int:
        """Cycles from a write to its row being offered on an idle FIFO: 4."""
        return LATENCY

    def elaborate(self, platform):
        m = Module()
        m.submodules.storage = storage = self.storage
        w_port, r_port = storage.write_port(), storage.read_port(domain="sync")
        produce, consume, stored, nonempty = self.produce, self.consume, self.stored, self.nonempty
        read_valid, landing_valid, landing = self.read_valid, self.landing_valid, self.landing
        spare_valid, spare, head_valid, head = self.spare_valid, self.spare, self.head_valid, self.head
        m.d.comb += self.read_data.eq(r_port.data)
        if platform == "formal":
            peek = storage.read_port(domain="comb")
            m.d.comb += [peek.addr.eq(self.peek_addr), self.peek_data.eq(peek.data)]

        # The memory is read whenever the row read can certainly move on next cycle: into the
        # landing register, which is empty or moves on itself (the spare is empty: the head or
        # the spare takes its row), whatever r.ready does.
        def reads(nonempty, read_valid, landing_valid, spare_valid):
            return nonempty & (~read_valid | ~landing_valid | ~spare_valid)

        read, read_en = self.read, self.read_en
        stored_next, nonempty_next = Signal.like(stored), Signal()
        m.d.comb += [
            read.eq(reads(nonempty, read_valid, landing_valid, spare_valid)),
            w_port.addr.eq(produce), w_port.data.eq(self.w_data), w_port.en.eq(self.w_en),
            r_port.addr.eq(consume), r_port.en.eq(read_en),
            stored_next.eq(stored + self.w_en - read), nonempty_next.eq(stored_next != 0),
        ]
        m.d.sync += [produce.eq(produce + self.w_en), consume.eq(consume + read),
                     stored.eq(stored_next), nonempty.eq(nonempty_next)]

        head_free, landing_free = Signal(), Signal()
        m.d.comb += [head_free.eq(~head_valid | self.r.ready),
                     self.r.valid.eq(head_valid), self.r.payload.eq(head)]
        # The landing register's row moves on unless the head and the spare both stay full;
        # the read register's row moves into the landing register when that is free then.
        landed = landing_valid & (head_free | ~spare_valid)
        m.d.comb += landing_free.eq(~landing_valid | landed)
        read_valid_next, landing_valid_next, spare_valid_next = Signal(), Signal(), Signal()
        m.d.comb += [read_valid_next.eq(read | (read_valid & ~landing_free)),
                     landing_valid_next.eq(Mux(landing_free, read_valid, landing_valid)),
                     spare_valid_next.eq(Mux(head_free, spare_valid & landing_valid, spare_valid | landing_valid))]
        # The memory's read enable: next cycle's read decision from the next state, so that it
        # drives the block RAMs alone and the level loop (nonempty, read, stored) stays local.
        m.d.sync += [read_valid.eq(read_valid_next), landing_valid.eq(landing_valid_next),
                     spare_valid.eq(spare_valid_next),
                     read_en.eq(reads(nonempty_next, read_valid_next, landing_valid_next, spare_valid_next))]
        with m.If(landing_free):
            m.d.sync += landing.eq(r_port.data)
        with m.If(head_free):
            m.d.sync += [head_valid.eq(spare_valid | landing_valid), head.eq(Mux(spare_valid, spare, landing))]
        with m.If(head_free | ~spare_valid):
            m.d.sync += spare.eq(landing)
        return m
