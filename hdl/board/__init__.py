"""The ULX3S 85F board: the MXU behind a UART link, in one place.

``top``: the gateware (``Board``, the link protocol); ``uart``: its serial receiver and
transmitter; ``bitstream``: ``python -m hdl.board`` places and routes it into a bitstream;
``host``: ``python -m hdl.board.host`` drives the board from a PC over the serial port.
"""

from .top import CLOCK_HZ, COMMANDS, MAX_SIZE, Board, divisor_for

__all__ = ["Board", "COMMANDS", "MAX_SIZE", "CLOCK_HZ", "divisor_for"]
