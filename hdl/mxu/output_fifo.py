"""``OutputFIFO``: the MXU's output FIFO, whose memory never sees ``r.ready``.

Rows are written into a memory (block RAM on large arrays). Reading it is decided a cycle
before the memory reads, from two registers only: the memory holds a row (``nonempty``) and
a *room* counter has a place for it. The decision goes into a register of its own, the
memory's read enable, so the block RAMs' enables and address come straight from registers,
and the decision's inputs, placed beside the head, are one register away from them (the read
enable sits beside the block RAMs, away from the head: a path between the two is a long
route, with room for little logic). The row read enters a small queue of ``slot_count`` rows
through no logic (the queue's write data is the memory's read data; its enable and address
are registers: the block RAM's clock-to-out takes most of a cycle on the ECP5), and from the
queue the head register (``r.payload``) takes it. The room counter counts the places in the
queue and the head that no decided row holds: a row decided is certain to find its place, so
nothing between the memory and the queue waits, and ``r.ready`` reaches only the head, the
queue's read side and the room counter.

A row written in cycle ``T`` is offered on ``r`` from cycle ``T + latency`` (the level, the
read decision, the memory's read stages, the queue, the head: 5, or 6 for ``ecp5``) and then
one row per cycle while ``r.ready`` stays high.

The memory is block RAM, LUT RAM or ECP5 block RAM with its output register (``ram``): an
ECP5 block RAM's clock-to-out without its output register (which Yosys does not use) takes
most of a cycle, so that it and one route into the queue bound the array's clock
(docs/mxu-timing.md); a LUT RAM reads through a LUT and a multiplexer into a fabric
register; ``ecp5`` instantiates the block RAMs with their output registers
(hdl/ecp5_bram.py: the data leaves early in the cycle), a second read stage, so its rows
take a cycle more (``latency`` 6) and the queue has more slots.
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..ecp5_bram import MAX_DEPTH as ECP5_DEPTH, ecp5_memory
from ..params import choice_param, int_param

__all__ = ["RAMS", "READ_STAGES", "OutputFIFO", "fifo_latency", "queue_slots"]

MAX_WIDTH = 1 << 16
MAX_DEPTH = 1 << 16
#: The memory's kinds -> the synthesis attributes that ask for it (``ram_style``: Yosys and
#: Vivado; ``syn_ramstyle``: Synplify, as in Lattice's tools); ``block`` leaves the choice to
#: the tool (a block RAM on large arrays); ``ecp5`` instantiates ECP5 block RAMs.
RAMS = {"block": {}, "lut": {"ram_style": "distributed", "syn_ramstyle": "distributed"}, "ecp5": {}}
#: The memory's read registers per kind: the read register, and ``ecp5``'s output register.
READ_STAGES = {"block": 1, "lut": 1, "ecp5": 2}


def fifo_latency(ram: str) -> int:
    """Cycles from a write to its row on ``r``: the level, the decision, the memory's read
    stages, the queue, the head."""
    return 4 + READ_STAGES[ram]


def queue_slots(ram: str) -> int:
    """Rows in the queue between the memory and the head: a power of two (the pointers
    wrap) at least the read stages + 3 (with the head, the rows a read decision waits for:
    the decision, the read stages, the queue, the head and the cycle the room comes back,
    so that the FIFO keeps one row per cycle); 4, 8 for ``ecp5``."""
    return 1 << (READ_STAGES[ram] + 2).bit_length()


class OutputFIFO(wiring.Component):
    """A FIFO of a ``depth``-row memory, a ``slot_count``-row queue and the head, for a writer
    that keeps at most ``depth`` rows written and not read (the MXU's credits).

    Parameters (keyword-only)
    -------------------------
    width : int
        Bits per row, 1..65536.
    depth : int
        Memory rows, a power of two 2..65536. A write with ``depth`` rows already in the
        memory is lost, so the writer must count (the MXU's credits never exceed ``depth``).
    ram : str
        ``block`` (default: the synthesis tool's choice, block RAM on large arrays), ``lut``
        (LUT RAM, ``RAMS``): the same behaviour and latency; or ``ecp5``: ECP5 DP16KD blocks
        with their output registers (``depth`` at most 512), a cycle more latency. On the
        ``formal`` platform ``ecp5`` is a memory and a register (the blocks' behaviour).

    Ports: in ``w_en``, ``w_data`` (``width``); out ``r`` (``lib.stream``, ``width`` bits).
    """

    def __init__(self, *, width, depth, ram="block"):
        self.width = int_param("width", width, 1, MAX_WIDTH)
        self.depth = int_param("depth", depth, 2, MAX_DEPTH)
        if depth & (depth - 1):
            raise ValueError(f"depth must be a power of two (2..{MAX_DEPTH}), not {depth}")
        self.ram = choice_param("ram", ram, RAMS)
        if ram == "ecp5" and depth > ECP5_DEPTH:
            raise ValueError(f"ram='ecp5' needs depth at most {ECP5_DEPTH} (one DP16KD's 36-bit rows), not {depth}")
        super().__init__({"w_en": In(1), "w_data": In(width), "r": Out(stream.Signature(width))})
        # The state, made here so that a formal harness can state invariants over it
        # (sim.formal.stream_fifo); with platform "formal", ``peek_data`` is the memory's row at
        # ``peek_addr`` and ``peek_slot_data`` the queue's at ``peek_slot``.
        self.slots = memory.Memory(shape=self.width, depth=self.slot_count, init=[])
        self.peek_addr = Signal(range(self.depth))
        self.peek_data = Signal(self.width)
        self.peek_slot = Signal(range(self.slot_count))
        self.peek_slot_data = Signal(self.width)
        self.produce = Signal(range(self.depth))
        self.consume = Signal(range(self.depth))      # the memory's read address
        self.stored = Signal(range(self.depth + 1))   # rows in the memory, not yet decided
        self.nonempty = Signal()                      # stored != 0, a register of its own
        self.room = Signal(range(self.room_count + 1), init=self.room_count)  # places no decided row holds
        self.read = Signal()                          # the read decision (from registers only)
        self.read_en = Signal()                       # read, a cycle later: the memory's enable
        # Per read stage (the memory's read register, then ecp5's output register): it holds
        # a row, and the row (formal platform only for ecp5: inside the block otherwise).
        self.stage_valid = [Signal(name=f"stage{i}_valid") for i in range(READ_STAGES[ram])]
        self.stage_data = [Signal(self.width, name=f"stage{i}_data") for i in range(READ_STAGES[ram])]
        self.read_valid, self.read_data = self.stage_valid[-1], self.stage_data[-1]  # into the queue
        self.slot_w = Signal(range(self.slot_count))
        self.slot_r = Signal(range(self.slot_count))
        self.queued = Signal(range(self.slot_count + 1))  # rows in the queue
        self.head_valid = Signal()
        self.head = Signal(self.width, reset_less=True)

    @property
    def latency(self) -> int:
        """Cycles from a write to its row being offered on an idle FIFO: 5, 6 for ``ecp5``."""
        return fifo_latency(self.ram)

    @property
    def room_count(self) -> int:
        """Places the room counter counts: the queue's and the head's."""
        return self.slot_count + 1

    @property
    def slot_count(self) -> int:
        """Rows in the queue (``queue_slots``): 4, 8 for ``ecp5``."""
        return queue_slots(self.ram)

    def elaborate(self, platform):
        m = Module()
        m.submodules.slots = slots = self.slots
        slot_in, slot_out = slots.write_port(), slots.read_port(domain="comb")
        produce, consume, stored, nonempty, room = self.produce, self.consume, self.stored, self.nonempty, self.room
        read, read_en = self.read, self.read_en
        slot_w, slot_r, queued, head_valid, head = self.slot_w, self.slot_r, self.queued, self.head_valid, self.head
        if platform == "formal":
            peek_slot = slots.read_port(domain="comb")
            m.d.comb += [peek_slot.addr.eq(self.peek_slot), self.peek_slot_data.eq(peek_slot.data)]
        self._memory(m, platform)

        # The memory side: decide, then read at the decided address a cycle later.
        stored_next = Signal.like(stored)
        m.d.comb += [read.eq(nonempty & (room != 0)), stored_next.eq(stored + self.w_en - read)]
        m.d.sync += [produce.eq(produce + self.w_en), consume.eq(consume + read_en),
                     stored.eq(stored_next), nonempty.eq(stored_next != 0), read_en.eq(read)]
        for stage, valid in enumerate(self.stage_valid):
            m.d.sync += valid.eq(self.stage_valid[stage - 1] if stage else read_en)

        # The queue takes every row read, the cycle after its last read stage.
        m.d.comb += [slot_in.addr.eq(slot_w), slot_in.data.eq(self.read_data), slot_in.en.eq(self.read_valid),
                     slot_out.addr.eq(slot_r)]
        m.d.sync += slot_w.eq(slot_w + self.read_valid)

        # The head takes the queue's oldest row whenever it is free.
        head_free, take, pop = Signal(), Signal(), Signal()
        m.d.comb += [head_free.eq(~head_valid | self.r.ready), take.eq(head_free & (queued != 0)),
                     pop.eq(head_valid & self.r.ready),
                     self.r.valid.eq(head_valid), self.r.payload.eq(head)]
        m.d.sync += [slot_r.eq(slot_r + take), queued.eq(queued + self.read_valid - take),
                     room.eq(room - read + pop)]
        with m.If(head_free):
            m.d.sync += [head_valid.eq(queued != 0), head.eq(slot_out.data)]
        return m

    def _memory(self, m, platform):
        """The memory, written at ``produce`` and read at ``consume`` on ``read_en``, its read
        stages' rows into ``stage_data``."""
        if self.ram == "ecp5" and platform != "formal":
            # The blocks' read enable stays high in the cycle their output register loads, so
            # that the output register loads whether the block gates it with OCEB alone or
            # with CEB too (the latch then reloads a row that is never used).
            read_ce = Signal()
            m.d.sync += read_ce.eq(self.read | self.read_en)
            m.d.comb += self.read_data.eq(ecp5_memory(
                m, width=self.width, depth=self.depth, w_addr=self.produce, w_data=self.w_data, w_en=self.w_en,
                r_addr=self.consume, r_en=read_ce, out_en=self.stage_valid[0], name="storage"))
            return
        # The memory never reads the row being written (a row is read only cycles after its
        # write, and a write never finds the memory full: proved in sim.formal.stream_fifo), so
        # the synthesis tools need not emulate a collision's result: without ``no_rw_check``
        # Yosys registers the write data and muxes it onto the block RAMs' read data (on a
        # 400-bit row, 800 flip-flops and 400 LUTs, the multiplexer in the read data's path).
        m.submodules.storage = storage = memory.Memory(shape=self.width, depth=self.depth, init=[],
                                                       attrs={"no_rw_check": 1, **RAMS[self.ram]})
        w_port, r_port = storage.write_port(), storage.read_port(domain="sync")
        m.d.comb += [w_port.addr.eq(self.produce), w_port.data.eq(self.w_data), w_port.en.eq(self.w_en),
                     r_port.addr.eq(self.consume), r_port.en.eq(self.read_en), self.stage_data[0].eq(r_port.data)]
        for stage in range(1, len(self.stage_data)):   # ecp5's output register, on the formal platform
            with m.If(self.stage_valid[stage - 1]):
                m.d.sync += self.stage_data[stage].eq(self.stage_data[stage - 1])
        if platform == "formal":
            peek = storage.read_port(domain="comb")
            m.d.comb += [peek.addr.eq(self.peek_addr), self.peek_data.eq(peek.data)]
