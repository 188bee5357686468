"""The stream proofs: the output FIFO alone (``stream_fifo``) and the MXU around it
(``stream_mxu``), proven by SymbiYosys k-induction; the MXU's ready cones read off its netlist.

Each harness is a top whose inputs SymbiYosys leaves free on every cycle (no reset: the
proof starts from the registers' initial values).
"""

from __future__ import annotations

import linecache
import re
import subprocess
import tempfile
from pathlib import Path

from amaranth.back import rtlil

from golden.tools.cli import build_dir
from hdl.mxu import MXU
from hdl.toolchain import yosys_command

from .sby import ENGINE, run_sby, tools
from .stream_fifo import FIFOHarness
from .stream_mxu import MXUHarness, TagMXU

__all__ = ["PROPERTIES", "READY_CONTRACT", "check_stream", "default_depths", "ready_inputs"]


#: What ``check_stream`` proves, per harness (docs/formal-streams.md).
PROPERTIES = {
    "fifo": ["every row written leaves once, unchanged, in order (a tracked row, chosen freely)",
             "no row is offered that was not written",
             "a row is offered no later than latency (5; 6 through ecp5's output registers) cycles after its write, "
             "whatever r.ready did before",
             "the memory never holds more rows than it has (writer within depth credits)"],
    "mxu": ["credits: free + returned + returned_late + rows outstanding == fifo_depth (never negative, never above the depth)",
            "no y row without an x row",
            "a swap row, and the first row after reset, is accepted only with a complete shadow tile",
            "no w row is accepted into a complete shadow tile (w waits for the swap)",
            "every accepted row leaves the array exactly array_latency cycles later, into the FIFO",
            "the weight registers hold the tiles as w and the swap rows define them (or a write on its way does)",
            "the tracked row's result in every column is its own activations' with the tile last swapped in "
            "before it, or by it (tags for products)",
            "it leaves y once, unchanged, after exactly the rows accepted before it",
            "it is offered no later than latency cycles after it was accepted",
            "the sticky flags of each column are the OR of the flags of every row that left the array since "
            "the last flags_clear, the rows leaving in the clear cycle included"],
}
#: With output accumulators (``acc_depth``), the row properties are per y row (docs/formal-streams.md).
PROPERTIES["mxu_acc"] = [p for p in PROPERTIES["mxu"] if "tracked row" not in p and "it " not in p[:3]] + [
    "only rows with last make a y row and take a credit; the others write their accumulator row",
    "every accumulator row equals the datasheet's: first loads the row's result, another row adds to it "
    "(tags: XOR), a row with last leaves it alone",
    "every y row is its address's sum: the rows since its first, its own included, each with its own "
    "activations and the tile last swapped in before it (tags)",
    "a tracked y row (chosen freely) leaves y once, unchanged, after exactly the y rows before it, no later than "
    "latency cycles after its last x row was accepted",
    "the accumulator adds' flags join the sticky flags with the rows' own"]
METHOD = f"SymbiYosys k-induction ({ENGINE}): basecase from the initial state and induction, depth k"


def _harness(kind: str, params: dict, mutant: str | None):
    if kind == "fifo":
        return FIFOHarness(mutant=mutant, **params)
    if kind == "mxu":
        return MXUHarness(mutant=mutant, **params)
    raise ValueError(f"kind must be fifo or mxu, not {kind!r}")


def default_depths(kind: str, params: dict) -> tuple[int, int]:
    """``(induction depth, cover depth)``: for the MXU, its latency + drain cycles + 3 (every
    register of the array, and the drain count, then hold what rows and swaps within the
    window put there) and enough cycles to fill the FIFO after loading a tile."""
    if kind == "fifo":
        return 8, params.get("depth", 4) + 8
    mxu = TagMXU.plan(**params)
    return mxu.latency + mxu.drain_cycles + 3, mxu.fifo_depth + mxu.rows + 8


#: The stall contract: the only inputs each ready may depend on combinationally.
READY_CONTRACT = {"x.ready": ["x.payload.swap"], "w.ready": []}
_STATE = ",".join(("$dff", "$adff", "$sdff", "$dffe", "$adffe", "$sdffe", "$sdffce", "$aldff", "$ff", "$memrd_v2",
                   "$mem_v2"))


def ready_inputs(params: dict, work: Path, cls=MXU) -> dict:
    """The MXU's input bits in the combinational cone of ``x.ready`` and ``w.ready``
    (Yosys on the flattened netlist, bit by bit, stopping at registers and memories), by
    field name: ``{"x.ready": [...], "w.ready": [...]}``. ``cls``: test only, a broken MXU."""
    mxu = cls(**params)
    text = rtlil.convert(mxu, name="top")
    layout = mxu.x.payload.shape()
    fields = {f"x.payload.{name}": (field.offset, field.width) for name, field in layout}
    work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work, prefix="ready_") as folder:
        (Path(folder) / "mxu.il").write_text(text)
        script = "read_rtlil mxu.il; hierarchy -top top; proc; flatten; opt_clean; splitnets -ports; " + "; ".join(
            f"select -write {port}.txt w:{port}__ready %ci*:-{_STATE} x:* %i" for port in ("x", "w"))
        proc = subprocess.run([*yosys_command(), "-q", "-p", script], cwd=folder, capture_output=True,
                              text=True)
        if proc.returncode:
            raise RuntimeError(f"yosys failed: {(proc.stderr or proc.stdout)[-2000:]}")
        found = {port: (Path(folder) / f"{port}.txt").read_text().split() for port in ("x", "w")}
    cones = {}
    for port, names in found.items():
        inputs = set()
        for name in names:
            wire = name.split("/", 1)[1]
            if wire == f"{port}__ready":
                continue
            bit = re.fullmatch(r"x__payload\[(\d+)\]", wire)
            if bit:
                index = int(bit[1])
                wire = next(n for n, (o, w) in fields.items() if o <= index < o + w)
            inputs.add(wire.replace("__", "."))
        cones[f"{port}.ready"] = sorted(inputs)
    return cones


def check_stream(kind: str, params: dict, *, mutant: str | None = None, depth: int | None = None,
                 cover_depth: int | None = None, timeout: int = 3600, work: Path | None = None,
                 progress=None) -> dict:
    """Prove ``PROPERTIES[kind]`` for the FIFO (``width``, ``depth``) or the MXU (``rows``,
    ``cols``, ``mul_stages``, ``add_stages``, ``in_fmt``, ``acc_fmt``) and reach its covers;
    return the report (``result``: proved, counterexample, unknown (induction failed at
    this depth) or timeout; the VCD traces). ``progress`` (optional) gets a line as each
    step starts and now and then while it runs."""
    harness = _harness(kind, params, mutant)
    k, c = default_depths(kind, params)
    depth, cover_depth = depth or k, cover_depth or c
    text = rtlil.convert(harness, name="top", platform="formal")
    work = Path(work or build_dir("formal-stream"))
    tag = "_".join(f"{v}" for v in params.values())
    name = f"{kind}_{tag}" + (f"_{mutant}" if mutant else "")
    if progress:
        progress(f"{name}: k-induction at k = {depth} (SymbiYosys)...")
    prove = run_sby(work, f"{name}_prove", text, mode="prove", depth=depth, timeout=timeout, progress=progress)
    result = {"PASS": "proved", "FAIL": "counterexample", "UNKNOWN": "unknown", "TIMEOUT": "timeout"}.get(
        prove["status"], "error")
    if result == "error":
        raise RuntimeError(f"SymbiYosys failed: {prove['log'][-2000:]}")
    failed = sorted(set(re.findall(r"Assert failed in top: (\S+):(\d+)", prove["log"])))
    report = {"kind": kind, "parameters": params, "mutant": mutant, "method": METHOD, "depth": depth,
              "properties": PROPERTIES["mxu_acc" if params.get("acc_depth") else kind], "result": result, "seconds": prove["seconds"],
              "failed_assertions": [f"{Path(f).name}:{n}: {linecache.getline(f, int(n)).strip()}" for f, n in failed],
              "traces": [str(work / t) for t in prove["traces"]]}
    if kind == "mxu" and mutant is None:
        report["ready_inputs"] = ready_inputs(params, work)
        report["ready_contract_holds"] = report["ready_inputs"] == READY_CONTRACT
    if mutant is None:
        if progress:
            progress(f"{name}: covers within {cover_depth} cycles (SymbiYosys)...")
        cover = run_sby(work, f"{name}_cover", text, mode="cover", depth=cover_depth, timeout=timeout,
                        progress=progress)
        reached = re.findall(r"Reached cover statement in step (\d+) at top: \S+ \((\S+)\)", cover["log"])
        unreached = re.findall(r"Unreached cover statement at top: \S+ \((\S+)\)", cover["log"])
        report["covers"] = {"depth": cover_depth, "reached": len(set(n for _, n in reached)),
                            "unreached": len(set(unreached)), "seconds": cover["seconds"],
                            "traces": [str(work / t) for t in cover["traces"]]}
    report["tools"] = tools()
    return report
