"""Verilator waivers for generated Verilog: ``NAME.vlt`` beside ``NAME.v``, so that
``verilator --lint-only -Wall --quiet NAME.vlt [MODELS] NAME.v`` prints nothing (``MODELS``: the
simulation models of the ECP5 blocks a design instantiates, written beside it).

Amaranth's Verilog backend (Yosys ``write_verilog``) writes some constructs that ``-Wall``
flags although their Verilog meaning is the intended one (the same Verilog is simulated
bit for bit against the golden model). Each waiver names the file and, where Verilator
allows it, the message pattern it is justified for; a warning of another kind, or of a
waived kind with another message, still prints (docs/hardware.md, "Lint").
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["WAIVERS", "UNUSED_REASON", "verilator_config"]

#: ``(rule, message pattern, reason)``: Verilator wildcards (``*``, ``?``) over the message
#: text; ``{name}`` stands for the top module's name.
WAIVERS = (
    ("DECLFILENAME", "Filename '{name}' does not match MODULE name: '{name}*'",
     "one file holds the top module and its submodules, named after it (NAME.sub, an array's "
     "element NAME_pe)"),
    ("PROCASSINIT", "Procedural assignment to declaration with initial value: *",
     "a register carries its power-on value as a declaration initialiser (the FPGA's initial "
     "value, equal to its reset value) beside the always block that assigns it"),
    ("WIDTHTRUNC", "Logical operator LOGNOT expects 1 bit on the LHS, but LHS's * generates * bits.",
     "the backend writes 'x == 0' as '!x' on a multi-bit x, whose Verilog meaning is exactly that"),
    ("WIDTHTRUNC", "Operator ASSIGNW expects * bits on the Assign RHS, but Assign RHS's SHIFTR generates * bits.",
     "a selection among precomputed values (the rounder's carry picks one of two exponent checks) "
     "is written as a right shift whose result is truncated to the selected width"),
    ("WIDTHEXPAND", "Operator * expects * bits on the ?HS, but ?HS's SIGNED generates * bits.",
     "a $signed() operand is sign-extended to the operation's width: Verilog's rule is the "
     "intended arithmetic"),
    ("WIDTHEXPAND", "Operator * expects * bits on the ?HS, but ?HS's CONST '*' generates * bits.",
     "a constant is written at its own width and zero-extended to the operation's width"),
    ("CASEINCOMPLETE", "Case values incompletely covered (example pattern *)",
     "a Switch or FSM is written as a casez after its default assignments (a comb signal's "
     "reset value, a register's hold), so a value no case names keeps those: the intended "
     "semantics"),
)

#: Why UNUSEDSIGNAL is waived; the waiver is by lines, not by message (see ``verilator_config``).
UNUSED_REASON = (
    "the backend keeps every named signal: temporaries ($N), aliases of struct fields and array "
    "elements, a net's second name (a processing element's output that is its neighbour's "
    "input), submodule ports the parent leaves unused (a unit's valid chain inside an element) "
    "and high bits of a cut point's register (NAME_rN) that the logic after it does not read; "
    "synthesis drops them. Waived on every line but the top module's declarations of its inputs, "
    "so an input the design ignores still warns")


def _comment(text: str) -> str:
    return "".join(f"// {line}\n" for line in textwrap.wrap(text, 96, break_long_words=False, break_on_hyphens=False))


#: A declaration as the backend writes it, one per line: kind, optional range, name.
_DECLARATION = re.compile(r"\s*(input|output|inout|wire|reg)\b\s*(?:\[[^\]]*\]\s*)?(\\\S+|\w+)\s*(?:=[^;]*)?;")


def _input_lines(text: str, name: str) -> list[int]:
    """Line numbers of the top module's declarations of its inputs: the ``input`` line and
    the ``wire`` beside it (Verilator reports an unused input at the first and takes the
    waiver from the second)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines, 1) if re.match(rf"module {re.escape(name)}\s*\(", line))
    end = next(i for i, line in enumerate(lines, 1) if i > start and line.startswith("endmodule"))
    declared = [(i, m[1], m[2]) for i in range(start, end + 1) if (m := _DECLARATION.match(lines[i - 1]))]
    inputs = {signal for _, kind, signal in declared if kind == "input"}
    return [i for i, _, signal in declared if signal in inputs]


def _ranges_without(excluded: list[int], last: int) -> list[tuple[int, int]]:
    """The line ranges of 1..``last`` that leave out ``excluded`` (sorted)."""
    ranges, first = [], 1
    for line in [*excluded, last + 1]:
        if line > first:
            ranges.append((first, line - 1))
        first = line + 1
    return ranges


def verilator_config(text: str, name: str, models: tuple[str, ...] = ()) -> str:
    """The Verilator configuration file for ``text``, the Verilog of top module ``name``
    written to ``NAME.v`` (``models``: the file names of the simulation models of the blocks
    it instantiates, written beside it): one ``lint_off`` per waiver, each after a comment
    with its reason."""
    file = f'-file "*{name}.v"'
    files = " ".join([f"{name}.vlt", *models, f"{name}.v"])
    out = ["`verilator_config",
           f"// Lint waivers for {name}.v: verilator --lint-only -Wall --quiet {files} prints nothing.",
           "// Each waiver covers one warning kind of the Verilog backend in this file only, and only",
           "// the message it is justified for. Written by python -m hdl.build with the Verilog.", ""]
    for rule, pattern, reason in WAIVERS:
        match = pattern.format(name=name)
        out.append(_comment(f"{rule}: {reason}.") + f'lint_off -rule {rule} {file} -match "{match}"\n')
    ranges = _ranges_without(_input_lines(text, name), len(text.splitlines()))
    out.append(_comment(f"UNUSEDSIGNAL: {UNUSED_REASON}.")
               + "".join(f"lint_off -rule UNUSEDSIGNAL {file} -lines {a}-{b}\n" for a, b in ranges))
    return "\n".join(out)
