"""``Board``: the MXU behind a UART host link (the gateware; ``hdl.board.bitstream`` builds it).

The link protocol (docs/board.md) is stop-and-wait: the host sends one command frame and
waits for its reply before the next, so the receiver never has a byte it cannot take.
Every reply starts with the command byte. Values are little-endian, element 0 first.

=======  ===============================  ==========================================
command  payload (host -> board)          reply (board -> host), sent when ...
=======  ===============================  ==========================================
``I``    none                             ``I`` rows, cols, fifo_depth (16 bits each)
``W``    one weight row: ``cols`` bf16    ``W`` once the MXU accepted the row
``X``    control byte (bit 0: swap),      ``X`` once the MXU accepted the row
         one X row: ``rows`` bf16
``Y``    none                             ``Y`` and the next y row: ``cols`` fp32
``F``    none                             ``F`` and one byte per column: its sticky flags
``C``    none                             ``C``: the flags are cleared
other    none                             ``?``
=======  ===============================  ==========================================
"""

from __future__ import annotations

from types import SimpleNamespace

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..mxu import MXU
from ..params import int_param
from .uart import MAX_DIVISOR, MIN_DIVISOR, UartRx, UartTx

__all__ = ["Board", "COMMANDS", "MAX_SIZE", "CLOCK_HZ", "divisor_for"]

#: Command bytes (docs/board.md).
COMMANDS = {name: ord(name) for name in "IWXYFC"}
UNKNOWN = ord("?")
#: Rows and columns of the board's MXU: the frames are then at most 65 bytes.
MAX_SIZE = 16
#: The ULX3S oscillator; the design runs on it directly (no PLL).
CLOCK_HZ = 25_000_000
#: Largest baud-rate error the link accepts (the receiver samples mid-bit over 10 bits).
MAX_BAUD_ERROR = 0.02


def divisor_for(baud: int, clock_hz: int = CLOCK_HZ) -> int:
    """Clock cycles per bit for ``baud``, or a ValueError if the rate is off by over 2 %."""
    baud = int_param("baud", baud, 1, clock_hz // MIN_DIVISOR)
    divisor = round(clock_hz / baud)
    error = abs(clock_hz / divisor - baud) / baud
    if not MIN_DIVISOR <= divisor <= MAX_DIVISOR or error > MAX_BAUD_ERROR:
        raise ValueError(f"baud {baud} is {100 * error:.1f} % off at {clock_hz / 1e6:g} MHz "
                         f"(divisor {divisor}); allowed: at most {100 * MAX_BAUD_ERROR:g} %")
    return divisor


class Board(wiring.Component):
    """A bf16 x bf16 -> fp32 MXU (no output rounding, no accumulators) driven over ``rx``/``tx``.

    Parameters (keyword-only)
    -------------------------
    rows, cols : int
        The MXU's size, 1..16 each.
    mul_stages, add_stages : int
        Register stages of each processing element (``MXU``): multiplier 0..9, adder 0..21 (fp32).
    divisor : int
        Clock cycles per UART bit, 4..2**20 (``divisor_for(baud)``).
    """

    def __init__(self, *, rows=2, cols=2, mul_stages=1, add_stages=1, divisor=divisor_for(115200)):
        self.rows = int_param("rows", rows, 1, MAX_SIZE)
        self.cols = int_param("cols", cols, 1, MAX_SIZE)
        self.divisor = int_param("divisor", divisor, MIN_DIVISOR, MAX_DIVISOR)
        self.mxu = MXU(rows=self.rows, cols=self.cols, mul_stages=mul_stages, add_stages=add_stages)
        self.mul_stages, self.add_stages = self.mxu.mul_stages, self.mxu.add_stages
        super().__init__({"rx": In(1, init=1), "tx": Out(1, init=1)})

    @property
    def latency(self) -> int:
        """The MXU's latency (cycles; the link adds whole UART frames)."""
        return self.mxu.latency

    @property
    def frame_bytes(self) -> dict:
        """Bytes after the command byte, per command that has any: host -> board (``W``,
        ``X``) and board -> host (``I``, ``Y``, ``F``)."""
        return {"W": 2 * self.cols, "X": 1 + 2 * self.rows, "I": 6, "Y": 4 * self.cols, "F": self.cols}

    def elaborate(self, platform):
        m = Module()
        m.submodules.mxu = mxu = self.mxu
        m.submodules.rx = rx = UartRx(divisor=self.divisor)
        m.submodules.tx = tx = UartTx(divisor=self.divisor)
        m.d.comb += [rx.rx.eq(self.rx), self.tx.eq(tx.tx)]
        self._protocol(m, mxu, rx, tx, self._buffers(m, mxu, tx))
        return m

    def _buffers(self, m, mxu, tx) -> SimpleNamespace:
        """The frame buffers: payload bytes shift into ``inbuf`` from the top (an N-byte
        frame ends in its top N bytes, which feed the MXU's ``w`` and ``x``); a reply goes
        out of ``outbuf`` from the bottom byte up (``left`` bytes)."""
        size = self.frame_bytes
        in_bits = 8 * max(size["W"], size["X"])
        inbuf = Signal(in_bits)
        w_frame, x_frame = inbuf[in_bits - 8 * size["W"]:], inbuf[in_bits - 8 * size["X"]:]
        m.d.comb += [mxu.w.payload.eq(w_frame), mxu.x.payload.swap.eq(x_frame[0]),
                     mxu.x.payload.data.eq(x_frame[8:])]
        need = Signal(range(max(size["W"], size["X"]) + 1))
        is_x = Signal()
        out_bits = 8 * (1 + max(size["I"], size["Y"], size["F"]))
        outbuf = Signal(out_bits)
        left = Signal(range(out_bits // 8 + 1))
        m.d.comb += tx.data.payload.eq(outbuf[:8])
        return SimpleNamespace(inbuf=inbuf, need=need, is_x=is_x, outbuf=outbuf, left=left)

    def _protocol(self, m, mxu, rx, tx, buf: SimpleNamespace) -> None:
        """The command state machine (the module docstring's table)."""
        size = self.frame_bytes
        inbuf, need, is_x, outbuf, left = buf.inbuf, buf.need, buf.is_x, buf.outbuf, buf.left

        def reply(*fields):
            value = Cat(*fields)
            return [outbuf.eq(value), left.eq(len(value) // 8)]

        flags = [Cat(mxu.flags[j], Const(0, 3)) for j in range(self.cols)]
        with m.FSM():
            with m.State("idle"):
                with m.If(rx.data.valid):
                    with m.Switch(rx.data.payload):
                        for name in "WX":
                            with m.Case(COMMANDS[name]):
                                m.d.sync += [need.eq(size[name]), is_x.eq(name == "X")]
                                m.next = "receive"
                        with m.Case(COMMANDS["Y"]):
                            m.next = "y"
                        with m.Case(COMMANDS["I"]):
                            m.d.sync += reply(Const(COMMANDS["I"], 8), Const(self.rows, 16), Const(self.cols, 16),
                                              Const(mxu.fifo_depth, 16))
                            m.next = "send"
                        with m.Case(COMMANDS["F"]):
                            m.d.sync += reply(Const(COMMANDS["F"], 8), *flags)
                            m.next = "send"
                        with m.Case(COMMANDS["C"]):
                            m.d.comb += mxu.flags_clear.eq(1)
                            m.d.sync += reply(Const(COMMANDS["C"], 8))
                            m.next = "send"
                        with m.Default():
                            m.d.sync += reply(Const(UNKNOWN, 8))
                            m.next = "send"
            with m.State("receive"):
                with m.If(rx.data.valid):
                    m.d.sync += [inbuf.eq(Cat(inbuf[8:], rx.data.payload)), need.eq(need - 1)]
                    with m.If(need == 1):
                        m.next = "push"
            with m.State("push"):
                m.d.comb += [mxu.w.valid.eq(~is_x), mxu.x.valid.eq(is_x)]
                with m.If(is_x & mxu.x.ready):
                    m.d.sync += reply(Const(COMMANDS["X"], 8))
                    m.next = "send"
                with m.If(~is_x & mxu.w.ready):
                    m.d.sync += reply(Const(COMMANDS["W"], 8))
                    m.next = "send"
            with m.State("y"):
                m.d.comb += mxu.y.ready.eq(1)
                with m.If(mxu.y.valid):
                    m.d.sync += reply(Const(COMMANDS["Y"], 8), mxu.y.payload)
                    m.next = "send"
            with m.State("send"):
                m.d.comb += tx.data.valid.eq(1)
                with m.If(tx.data.ready):
                    m.d.sync += [outbuf.eq(outbuf >> 8), left.eq(left - 1)]
                    with m.If(left == 1):
                        m.next = "idle"
