"""``OutputFIFO``: the MXU's output FIFO, whose memory never sees ``r.ready``.

Rows are written into a memory (block RAM on large arrays). Reading it is decided a cycle
before the memory reads, from two registers only: the memory holds a row (``nonempty``) and
a *room* counter has a place for it. The decision goes into a register of its own, the
memory's read enable, so the block RAMs' enables and address come straight from registers,
and the decision's inputs, placed beside the head, are one register away from them (on a
placed 12x12 array the path from the head's valid bit to a read enable beside the block
RAMs set the clock). The row read enters a small queue of ``SLOTS`` rows through no logic
(the queue's write data is the memory's read data; its enable and address are registers:
the block RAM's clock-to-out takes most of a cycle on the ECP5), and from the queue the head
register (``r.payload``) takes it. The room counter counts the places in the queue and the
head that no decided row holds: a row decided is certain to find its place, so nothing
between the memory and the queue waits, and ``r.ready`` reaches only the head, the queue's
read side and the room counter.

A row written in cycle ``T`` is offered on ``r`` from cycle ``T + 5`` (the level, the read
decision, the memory's read register, the queue, the head) and then one row per cycle while
``r.ready`` stays high.

The memory is block RAM or LUT RAM (``ram``): an ECP5 block RAM's clock-to-out (5.8 ns without
its output register, which Yosys does not use) plus one route into the queue is a placed
array's clock near 131 MHz; a LUT RAM reads through a LUT and a multiplexer into a fabric
register.
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from .params import choice_param, int_param

__all__ = ["LATENCY", "SLOTS", "RAMS", "OutputFIFO"]

MAX_WIDTH = 1 << 16
MAX_DEPTH = 1 << 16
#: Cycles from a write to its row on ``r``: the level, the decision, the read, the queue, the head.
LATENCY = 5
#: Rows in the queue between the memory and the head: with the head, the rows a read decision
#: waits for (decision, read, queue, head and the cycle the room comes back), so that the
#: FIFO keeps one row per cycle.
SLOTS = 4
#: Places counted by the room counter: the queue and the head.
ROOM = SLOTS + 1
#: The memory's kinds -> the synthesis attributes that ask for it (``ram_style``: Yosys and
#: Vivado; ``syn_ramstyle``: Synplify, as in Lattice's tools); ``block`` leaves the choice to
#: the tool (a block RAM on large arrays).
RAMS = {"block": {}, "lut": {"ram_style": "distributed", "syn_ramstyle": "distributed"}}


class OutputFIFO(wiring.Component):
    """A FIFO of a ``depth``-row memory, a ``SLOTS``-row queue and the head, for a writer
    that keeps at most ``depth`` rows written and not read (the MXU's credits).

    Parameters (keyword-only)
    -------------------------
    width : int
        Bits per row, 1..65536.
    depth : int
        Memory rows, a power of two 2..65536. A write with ``depth`` rows already in the
        memory is lost, so the writer must count (the MXU's credits never exceed ``depth``).
    ram : str
        ``block`` (default: the synthesis tool's choice, block RAM on large arrays) or ``lut``
        (LUT RAM, ``RAMS``): the same behaviour and latency.

    Ports: in ``w_en``, ``w_data`` (``width``); out ``r`` (``lib.stream``, ``width`` bits).
    """

    def __init__(self, *, width, depth, ram="block"):
        self.width = int_param("width", width, 1, MAX_WIDTH)
        self.depth = int_param("depth", depth, 2, MAX_DEPTH)
        if depth & (depth - 1):
            raise ValueError(f"depth must be a power of two (2..{MAX_DEPTH}), not {depth}")
        self.ram = choice_param("ram", ram, RAMS)
        super().__init__({"w_en": In(1), "w_data": In(width), "r": Out(stream.Signature(width))})
        # The state, made here so that a formal harness can state invariants over it
        # (sim.formal.stream_fifo); with platform "formal", ``peek_data`` is the memory's row at
        # ``peek_addr`` and ``peek_slot_data`` the queue's at ``peek_slot``.
        # The memory never reads the row being written (a row is read only cycles after its
        # write, and a write never finds the memory full: proved in sim.formal.stream_fifo), so
        # the synthesis tools need not emulate a collision's result: without ``no_rw_check``
        # Yosys registers the write data and muxes it onto the block RAMs' read data (on a
        # 400-bit row, 800 flip-flops and 400 LUTs, the multiplexer in the read data's path).
        self.storage = memory.Memory(shape=self.width, depth=self.depth, init=[], attrs={"no_rw_check": 1, **RAMS[ram]})
        self.slots = memory.Memory(shape=self.width, depth=SLOTS, init=[])
        self.peek_addr = Signal(range(self.depth))
        self.peek_data = Signal(self.width)
        self.peek_slot = Signal(range(SLOTS))
        self.peek_slot_data = Signal(self.width)
        self.produce = Signal(range(self.depth))
        self.consume = Signal(range(self.depth))      # the memory's read address
        self.stored = Signal(range(self.depth + 1))   # rows in the memory, not yet decided
        self.nonempty = Signal()                      # stored != 0, a register of its own
        self.room = Signal(range(ROOM + 1), init=ROOM)  # places in queue and head no decided row holds
        self.read = Signal()                          # the read decision (from registers only)
        self.read_en = Signal()                       # read, a cycle later: the memory's enable
        self.read_valid = Signal()                    # the memory's read register holds a row
        self.read_data = Signal(self.width)           # the read register (in the memory)
        self.slot_w = Signal(range(SLOTS))
        self.slot_r = Signal(range(SLOTS))
        self.queued = Signal(range(SLOTS + 1))        # rows in the queue
        self.head_valid = Signal()
        self.head = Signal(self.width, reset_less=True)

    @property
    def latency(self) -> int:
        """Cycles from a write to its row being offered on an idle FIFO: 5."""
        return LATENCY

    def elaborate(self, platform):
        m = Module()
        m.submodules.storage, m.submodules.slots = storage, slots = self.storage, self.slots
        w_port, r_port = storage.write_port(), storage.read_port(domain="sync")
        slot_in, slot_out = slots.write_port(), slots.read_port(domain="comb")
        produce, consume, stored, nonempty, room = self.produce, self.consume, self.stored, self.nonempty, self.room
        read, read_en, read_valid = self.read, self.read_en, self.read_valid
        slot_w, slot_r, queued, head_valid, head = self.slot_w, self.slot_r, self.queued, self.head_valid, self.head
        m.d.comb += self.read_data.eq(r_port.data)
        if platform == "formal":
            peek, peek_slot = storage.read_port(domain="comb"), slots.read_port(domain="comb")
            m.d.comb += [peek.addr.eq(self.peek_addr), self.peek_data.eq(peek.data),
                         peek_slot.addr.eq(self.peek_slot), self.peek_slot_data.eq(peek_slot.data)]

        # The memory side: decide, then read at the decided address a cycle later.
        stored_next = Signal.like(stored)
        m.d.comb += [
            read.eq(nonempty & (room != 0)),
            w_port.addr.eq(produce), w_port.data.eq(self.w_data), w_port.en.eq(self.w_en),
            r_port.addr.eq(consume), r_port.en.eq(read_en),
            stored_next.eq(stored + self.w_en - read),
        ]
        m.d.sync += [produce.eq(produce + self.w_en), consume.eq(consume + read_en),
                     stored.eq(stored_next), nonempty.eq(stored_next != 0),
                     read_en.eq(read), read_valid.eq(read_en)]

        # The queue takes every row read, the cycle after its read.
        m.d.comb += [slot_in.addr.eq(slot_w), slot_in.data.eq(r_port.data), slot_in.en.eq(read_valid),
                     slot_out.addr.eq(slot_r)]
        m.d.sync += slot_w.eq(slot_w + read_valid)

        # The head takes the queue's oldest row whenever it is free.
        head_free, take, pop = Signal(), Signal(), Signal()
        m.d.comb += [head_free.eq(~head_valid | self.r.ready), take.eq(head_free & (queued != 0)),
                     pop.eq(head_valid & self.r.ready),
                     self.r.valid.eq(head_valid), self.r.payload.eq(head)]
        m.d.sync += [slot_r.eq(slot_r + take), queued.eq(queued + read_valid - take),
                     room.eq(room - read + pop)]
        with m.If(head_free):
            m.d.sync += [head_valid.eq(queued != 0), head.eq(slot_out.data)]
        return m
