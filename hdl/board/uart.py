"""``UartRx``, ``UartTx``: 8N1 serial receiver and transmitter, one bit every ``divisor`` cycles.

The receiver synchronises ``rx`` (two flip-flops), waits for a start bit, samples each bit in
its middle and offers each byte for one cycle (an always-ready stream: whoever listens must
take it then). The transmitter sends a byte per stream transfer, start bit first, LSB first.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import cdc, stream, wiring
from amaranth.lib.wiring import In, Out

from ..params import int_param

__all__ = ["UartRx", "UartTx", "MIN_DIVISOR", "MAX_DIVISOR"]

#: Cycles per bit: at least 4 so the receiver's mid-bit sample has margin either side.
MIN_DIVISOR, MAX_DIVISOR = 4, 1 << 20


class UartRx(wiring.Component):
    """``rx`` in, received bytes out on ``data`` (``valid`` for one cycle; no ``ready``)."""

    def __init__(self, *, divisor: int):
        self.divisor = int_param("divisor", divisor, MIN_DIVISOR, MAX_DIVISOR)
        super().__init__({"rx": In(1, init=1), "data": Out(stream.Signature(8, always_ready=True))})

    def elaborate(self, platform):
        m = Module()
        rx = Signal(init=1)
        m.submodules.sync = cdc.FFSynchronizer(self.rx, rx, init=1)
        timer = Signal(range(self.divisor * 3 // 2 + 1))
        bit = Signal(range(10))
        shift = Signal(8)
        m.d.sync += self.data.valid.eq(0)
        with m.FSM():
            with m.State("idle"):
                with m.If(~rx):
                    # From the start bit's edge to the middle of data bit 0.
                    m.d.sync += [timer.eq(self.divisor * 3 // 2 - 1), bit.eq(0)]
                    m.next = "bits"
            with m.State("bits"):
                with m.If(timer != 0):
                    m.d.sync += timer.eq(timer - 1)
                with m.Elif(bit == 8):
                    # The stop bit's middle: a low line is a framing error, the byte is dropped.
                    m.d.sync += [self.data.payload.eq(shift), self.data.valid.eq(rx)]
                    m.next = "idle"
                with m.Else():
                    m.d.sync += [shift.eq(Cat(shift[1:], rx)), bit.eq(bit + 1), timer.eq(self.divisor - 1)]
        return m


class UartTx(wiring.Component):
    """Bytes in on ``data`` (a stream), ``tx`` out; idle high."""

    def __init__(self, *, divisor: int):
        self.divisor = int_param("divisor", divisor, MIN_DIVISOR, MAX_DIVISOR)
        super().__init__({"data": In(stream.Signature(8)), "tx": Out(1, init=1)})

    def elaborate(self, platform):
        m = Module()
        timer = Signal(range(self.divisor))
        frame = Signal(10, init=0x3FF)      # stop bit, data, start bit; shifted out LSB first
        left = Signal(range(11))
        m.d.comb += [self.tx.eq(frame[0]), self.data.ready.eq(left == 0)]
        with m.If(self.data.valid & self.data.ready):
            m.d.sync += [frame.eq(Cat(0, self.data.payload, 1)), left.eq(10), timer.eq(self.divisor - 1)]
        with m.Elif(left != 0):
            with m.If(timer != 0):
                m.d.sync += timer.eq(timer - 1)
            with m.Else():
                m.d.sync += [frame.eq(Cat(frame[1:], 1)), left.eq(left - 1), timer.eq(self.divisor - 1)]
        return m
