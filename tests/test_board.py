"""The board top (hdl/board/): the host driver through the simulated UART, bit-exact against
golden.mxu; the build and host CLIs' argument errors. The bitstream build itself (place and
route, minutes) is not a test: ``python -m hdl.board`` (docs/board.md)."""

import subprocess
import sys

import pytest

from hdl.board import Board, divisor_for
from sim.testbenches import runner


def test_host_driver_through_simulated_uart():
    """sim/testbenches/test_board.py: hdl.board.host.BoardLink over cocotbext-uart, two runs of 20 X rows on a 2x2
    MXU (FIFO depth 16: results wait in the full FIFO), swaps, flags, unknown commands."""
    reason = runner.available("verilator")
    if reason:
        pytest.skip(reason)
    summary = runner.run("board", dict(rows=2, cols=2, divisor=4), "verilator", vectors=20)
    assert summary["tests"] == 2 and summary["vectors"] == 40 and summary["fifo_depth"] == 16


def test_board_cli_elaborates():
    """The top elaborates through the build CLI (the build itself is not a test); the CLIs'
    argument errors are in tests/test_cli.py."""
    proc = subprocess.run([sys.executable, "-m", "hdl.board", "--rows", "3", "--cols", "2", "--elaborate-only"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "ulx3s85f_mxu3x2_m1a1_115200: elaborated" in proc.stdout, proc.stderr


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")    # its facts are read, not its hardware
def test_board_options_and_divisor():
    assert divisor_for(115200) == 217 and divisor_for(1_000_000) == 25
    board = Board(rows=4, cols=3, mul_stages=0, add_stages=2, divisor=4)
    assert board.latency == 4 * 3 + 0 + 3 + 5 and board.frame_bytes == {"W": 6, "X": 9, "I": 6, "Y": 12, "F": 3}
    with pytest.raises(ValueError, match="baud 2000000 is 4.2 % off at 25 MHz"):
        divisor_for(2_000_000)
