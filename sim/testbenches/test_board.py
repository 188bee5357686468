"""cocotb test of the board top (``hdl.board.Board``): the real host driver (``hdl.board.host``)
over cocotbext-uart's source and sink, bytes in on ``rx`` and out on ``tx``.

The UART runs at one bit per ``divisor`` cycles of a 100 MHz simulated clock (the runner
builds a small divisor, so a byte is a few dozen cycles). Random bf16 tiles with swaps and X
rows go through ``BoardLink.run``, which lets results wait in the MXU's FIFO until every
credit is out; the ``y`` rows and the sticky flags must equal ``golden.mxu.stream`` bit for
bit, twice in a row (the second run's flags cover only its own rows: ``C`` cleared them);
after a last ``C`` the flags read zero.
"""

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge
from cocotbext.uart import UartSink, UartSource

from sim.testbenches.harness import Config, save_summary
from hdl.board.host import BoardLink, run_and_check

CLOCK_NS = 10


class UartTransport:
    """``hdl.board.host.Transport`` over the simulated board's ``rx`` and ``tx`` pins."""

    def __init__(self, dut, divisor: int):
        baud = 1e9 / (CLOCK_NS * divisor)
        self.source = UartSource(dut.rx, baud=baud)
        self.sink = UartSink(dut.tx, baud=baud)
        self.source.log.setLevel("WARNING")
        self.sink.log.setLevel("WARNING")
        self.sent = self.received = 0

    async def write(self, data: bytes) -> None:
        self.sent += len(data)
        await self.source.write(data)

    async def read(self, count: int) -> bytes:
        out = bytearray()
        while len(out) < count:       # the sink's read returns what has arrived, up to one byte here
            out += await self.sink.read(1)
        self.received += count
        return bytes(out)


async def start(dut):
    cfg = Config()
    dut.rx.value = 1
    dut.rst.value = 1
    cocotb.start_soon(Clock(dut.clk, CLOCK_NS, unit="ns").start())
    for _ in range(2):
        await FallingEdge(dut.clk)
    dut.rst.value = 0
    return cfg, UartTransport(dut, cfg.params["divisor"])


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def host_driver_streams_tiles_bit_exact(dut):
    cfg, link_bytes = await start(dut)
    link = BoardLink(link_bytes)
    rows, cols, depth = await link.info()
    assert (rows, cols) == (cfg.params["rows"], cfg.params["cols"]), (rows, cols, cfg.params)
    for run in range(2):
        got, problems = await run_and_check(link, cfg.vectors, cfg.seed + run)
        assert not problems, "\n".join(problems[:10])
        assert len(got.y) == cfg.vectors
    await link.clear_flags()
    assert not (await link.flags()).any(), "C did not clear the flags"
    save_summary(vectors=2 * cfg.vectors, fifo_depth=depth, bytes_sent=link_bytes.sent,
                 bytes_received=link_bytes.received)


@cocotb.test(timeout_time=1, timeout_unit="ms")
async def unknown_command_is_answered(dut):
    _, link_bytes = await start(dut)
    for byte in (0x00, ord("w"), 0xFF):
        await link_bytes.write(bytes([byte]))
        assert await link_bytes.read(1) == b"?", f"command byte {byte:#04x}"
