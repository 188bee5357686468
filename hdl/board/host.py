"""Host driver of the board's MXU over its UART link (protocol: docs/board.md, hdl/board/).

``python -m hdl.board.host --port /dev/ttyUSB0 --rows 64 --check`` asks the board its size, streams
random bf16 weight tiles and X rows (with swaps) through it, reads the results and the sticky
flags and, with ``--check``, compares them bit for bit with ``golden.mxu.stream``.

The driver (``BoardLink``) talks to a ``Transport``: ``SerialTransport`` (pyserial) for a
board, or the cocotb test's UART pair for the simulated board top, so the test runs this code.
"""

from __future__ import annotations

import asyncio
import sys
from typing import NamedTuple, Protocol

import numpy as np

from golden.tools.cli import Parser, command, progress
from golden.formats import BF16
from golden.mxu import stream
from golden.params import int_param
from hdl.board import COMMANDS

__all__ = ["Transport", "SerialTransport", "BoardLink", "Run", "run_and_check", "main"]


class Transport(Protocol):
    """A byte link to the board."""

    async def write(self, data: bytes) -> None: ...

    async def read(self, count: int) -> bytes:
        """Exactly ``count`` bytes (or an error)."""


class SerialTransport:
    """A serial port through pyserial (8N1); a read that times out is an error."""

    def __init__(self, port: str, baud: int, timeout: float = 5.0):
        import serial
        self.port = serial.Serial(port, baud, timeout=timeout)
        self.port.reset_input_buffer()      # nothing the board sent before this session

    async def write(self, data: bytes) -> None:
        self.port.write(data)

    async def read(self, count: int) -> bytes:
        data = self.port.read(count)
        if len(data) != count:
            raise TimeoutError(f"{self.port.port}: {len(data)} of {count} bytes before the timeout")
        return data


class Run(NamedTuple):
    """What the board returned: ``y`` rows (fp32 bits) and per-column sticky ``flags``."""

    y: np.ndarray
    flags: np.ndarray


def _le(values, width: int) -> bytes:
    return b"".join(int(v).to_bytes(width, "little") for v in values)


class BoardLink:
    """The board's commands, one frame out and its reply back (stop-and-wait)."""

    def __init__(self, transport: Transport):
        self.transport = transport
        self.rows = self.cols = self.fifo_depth = None

    async def _command(self, name: str, payload: bytes = b"", reply: int = 0) -> bytes:
        await self.transport.write(bytes([COMMANDS[name]]) + payload)
        head = await self.transport.read(1)
        if head[0] != COMMANDS[name]:
            raise RuntimeError(f"command {name}: the board replied {head!r}, not {name!r} (link out of step)")
        return await self.transport.read(reply) if reply else b""

    async def info(self) -> tuple[int, int, int]:
        """Ask the board its MXU's rows, cols and output FIFO depth (kept for the other commands)."""
        data = await self._command("I", reply=6)
        self.rows, self.cols, self.fifo_depth = (int.from_bytes(data[i:i + 2], "little") for i in (0, 2, 4))
        return self.rows, self.cols, self.fifo_depth

    async def weight_row(self, row) -> None:
        """One row of a weight tile (``cols`` bf16) into the shadow buffer; returns when accepted."""
        await self._command("W", _le(row, 2))

    async def x_row(self, row, swap: bool) -> None:
        """One X row (``rows`` bf16); ``swap``: the shadow tile becomes active from it on."""
        await self._command("X", bytes([int(swap)]) + _le(row, 2))

    async def y_row(self) -> np.ndarray:
        """The next result row (``cols`` fp32 bits); waits for it."""
        data = await self._command("Y", reply=4 * self.cols)
        return np.frombuffer(data, "<u4").astype(np.uint32)

    async def flags(self) -> np.ndarray:
        """Each column's sticky flags (bit 0 inexact .. 4 invalid)."""
        return np.frombuffer(await self._command("F", reply=self.cols), np.uint8).copy()

    async def clear_flags(self) -> None:
        await self._command("C")

    async def run(self, xs, tiles, swaps, bar=None) -> Run:
        """Stream X rows with their swap marks; the tiles are loaded in order, each into the
        shadow buffer as soon as the previous one is swapped in (the first before row 0).
        Results are read only when the FIFO's rows are all promised (``fifo_depth`` rows
        outstanding) and at the end, so ``y`` waits in the FIFO meanwhile. The flags are
        cleared first and read last: they cover exactly these rows."""
        if self.rows is None:
            await self.info()
        await self.clear_flags()
        pending, ys, out = list(tiles), [], 0
        shadow_full = False
        for i, (row, swap) in enumerate(zip(xs, swaps)):
            swap = bool(swap) or i == 0
            if not shadow_full and pending:
                for w_row in pending.pop(0):
                    await self.weight_row(w_row)
                shadow_full = True
            if out == self.fifo_depth:
                ys.append(await self.y_row())
                out -= 1
            await self.x_row(row, swap)
            out += 1
            shadow_full &= not swap
            if bar is not None:
                bar.update(1)
        for _ in range(out):
            ys.append(await self.y_row())
        return Run(np.array(ys, np.uint32).reshape(len(ys), self.cols), await self.flags())


def mismatches(got: Run, xs, tiles, swaps) -> list[str]:
    """How ``got`` differs from ``golden.mxu.stream`` for the same stream (empty: bit-exact)."""
    want = stream(xs, tiles, swaps)
    problems = [f"y row {i}: board {got.y[i].tolist()}, golden {want.y[i].tolist()}"
                for i in range(len(want.y)) if not np.array_equal(got.y[i], want.y[i])]
    flags = np.bitwise_or.reduce(want.row_flags, axis=0).astype(np.uint8)
    if not np.array_equal(got.flags, flags):
        problems.append(f"flags: board {got.flags.tolist()}, golden {flags.tolist()}")
    return problems


async def run_and_check(link: BoardLink, count: int, seed: int, bar=None):
    """Random tiles and ``count`` X rows (``golden.vectors``) through the board:
    ``(run, mismatches)``."""
    from golden.vectors import rows_and_tiles

    rows, cols, _ = await link.info()
    xs, tiles, swaps = rows_and_tiles(rows, cols, count, BF16, np.random.default_rng(seed))
    got = await link.run(xs, tiles, swaps, bar)
    return got, mismatches(got, xs, tiles, swaps)


@command("python -m hdl.board.host")
def main(argv=None) -> int:
    parser = Parser(prog="python -m hdl.board.host", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", required=True, help="serial device of the board (e.g. /dev/ttyUSB0)")
    parser.add_argument("--baud", type=int, default=115200, help="the bitstream's baud rate (default 115200)")
    parser.add_argument("--rows", type=int, default=64, help="X rows to stream, 1..1000000 (default 64)")
    parser.add_argument("--seed", type=int, default=1, help="stimulus seed (default 1)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for a reply (default 5)")
    parser.add_argument("--check", action="store_true", help="compare results and flags with golden.mxu")
    args = parser.parse_args(argv)
    count = int_param("rows", args.rows, 1, 1_000_000)
    int_param("seed", args.seed, 0, 0xFFFFFFFF)
    int_param("baud", args.baud, 300, 12_000_000)
    if not 0 < args.timeout <= 3600:
        raise ValueError(f"timeout must be in (0, 3600] seconds, not {args.timeout:g}")
    try:
        import serial
    except ImportError:
        raise ValueError("pyserial is not installed: pip install 'tpu-arith[board]'") from None
    try:
        transport = SerialTransport(args.port, args.baud, args.timeout)
    except serial.SerialException as error:
        raise OSError(f"--port {args.port}: {error}") from None
    link = BoardLink(transport)
    with progress(count, "X rows", "row") as bar:
        got, problems = asyncio.run(run_and_check(link, count, args.seed, bar))
    print(f"{count} X rows through a {link.rows}x{link.cols} MXU: {len(got.y)} y rows, flags {got.flags.tolist()}")
    if args.check:
        for line in problems[:10]:
            print(line, file=sys.stderr)
        print(f"check against golden.mxu: {'bit-exact' if not problems else f'{len(problems)} mismatches'}")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
