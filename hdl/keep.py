"""The MXU's registers replicated on purpose, marked ``keep`` in its Verilog.

Every column's copy of a weight write (``wload*``: enable, tile row, buffer), the weight
writes' copy of ``w.ready`` (``w__ready`` and ``wload_open``) and every copy of a row's
buffer tag (``*sel*``) at the same distance from the entry hold the same value. Synthesis
merges identical flip-flops, which turns the copies back into one net across the array, a
route too long for one cycle (docs/mxu-timing.md). ``keep`` on a register's process stops
that in any flow that reads the Verilog (Yosys: ``(* keep *)`` before its ``always``); on the
wire it does not. The Verilog carries it, so no script is needed: ``kept_verilog`` is
Amaranth's ``verilog.convert`` with ``keep`` on those flip-flops.
"""

from __future__ import annotations

import fnmatch
import re

from amaranth.back import rtlil
# Amaranth's own RTLIL-to-Verilog step (its Yosys script): Amaranth has no hook between the
# two, and its built-in Yosys has no ``setattr``, so the marking is made in the RTLIL text.
# Amaranth is pinned below 0.6 (pyproject.toml); tests/test_synth_timing.py checks the result.
from amaranth.back.verilog import _convert_rtlil_text

__all__ = ["KEPT_WIRES", "keep_script", "kept_rtlil", "kept_verilog"]

#: Name patterns of the wires whose flip-flops are kept apart.
KEPT_WIRES = ("wload*", "w__ready", "*sel*")

_CELL = re.compile(r"^(?P<indent>[ \t]*)cell \$dff \S+\n(?:(?![ \t]*end\n).*\n)*?[ \t]*end\n", re.MULTILINE)


def _kept(cell: str) -> bool:
    """Whether a ``$dff`` cell's ``Q`` names a ``KEPT_WIRES`` wire."""
    q = re.search(r"^\s*connect \\Q (.*)$", cell, re.MULTILINE)
    return q is not None and any(fnmatch.fnmatchcase(name, pattern) for name in re.findall(r"\\(\S+)", q[1])
                                 for pattern in KEPT_WIRES)


def kept_rtlil(text: str) -> str:
    """Amaranth's RTLIL ``text`` with ``attribute \\keep 1`` on each ``$dff`` whose ``Q`` is a
    ``KEPT_WIRES`` wire (Amaranth writes registers as ``$dff`` cells)."""
    return _CELL.sub(lambda c: f"{c['indent']}attribute \\keep 1\n{c[0]}" if _kept(c[0]) else c[0], text)


def kept_verilog(component, name: str) -> str:
    """``component`` as Verilog module ``name`` (``verilog.convert`` without source locations),
    its ``KEPT_WIRES`` flip-flops marked ``keep``."""
    return _convert_rtlil_text(kept_rtlil(rtlil.convert(component, name=name, emit_src=False)))


def keep_script() -> str:
    """The same marking as Yosys commands, for a design read from Amaranth's RTLIL without
    it (``synth.mxu_pnr --source rtlil``): ``proc``, then ``keep`` on those flip-flops."""
    wires = " ".join(f"w:{pattern}" for pattern in KEPT_WIRES) + " %u" * (len(KEPT_WIRES) - 1)
    return f"proc\nsetattr -set keep 1 {wires} %ci1:+$dff[Q] t:$dff %i"
