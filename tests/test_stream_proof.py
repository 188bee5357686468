"""python -m sim.formal fifo / mxu: the stream proofs hold, reach their covers, and each
planted bug fails with a counterexample trace (sim.formal.stream_proof)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hdl.mxu import MXU
from sim.formal.stream_fifo import FIFO_MUTANTS
from sim.formal.stream_mxu import MXU_MUTANTS
from sim.formal.stream_proof import READY_CONTRACT, check_stream, ready_inputs

TAGS = dict(in_fmt="fp8_e4m3", acc_fmt="bf16")


@pytest.mark.parametrize("kind, params", [
    ("fifo", dict(width=3, depth=8)),
    # ecp5's second read stage (the blocks' output registers): 16 rows, so that the head and
    # its 8-row queue can fill.
    ("fifo", dict(width=3, depth=16, ram="ecp5")),
    pytest.param("mxu", dict(rows=2, cols=2, mul_stages=0, add_stages=0, **TAGS), marks=pytest.mark.thorough),
    ("mxu", dict(rows=1, cols=2, mul_stages=0, add_stages=0, acc_depth=2, **TAGS)),
    # The column accumulator: window elements and a pipelined column rounder (2x2: --formal-large).
    ("mxu", dict(rows=2, cols=1, mul_stages=1, add_stages=1, accumulation="column:w=8", **TAGS)),
    # The exact anchor: its exponent array ahead of the rows (about a minute).
    pytest.param("mxu", dict(rows=2, cols=1, mul_stages=1, add_stages=1, accumulation="column:w=16,anchor=exact",
                             **TAGS), marks=pytest.mark.thorough),
], ids=lambda v: v if isinstance(v, str) else "x".join(str(v[k]) for k in ("rows", "cols", "mul_stages", "add_stages"))
   + (f"-acc{v['acc_depth']}" if "acc_depth" in v else "") + ("-" + v["accumulation"].replace(":", "-") if "accumulation" in v else "")
   if "rows" in v else f"d{v['depth']}" + (f"-{v['ram']}" if "ram" in v else ""))
def test_proved_and_covers_reached(kind, params, tmp_path):
    report = check_stream(kind, params, work=tmp_path)
    assert report["result"] == "proved", report
    assert kind == "fifo" or report["ready_inputs"] == READY_CONTRACT, report["ready_inputs"]
    covers = 5 if "acc_depth" in params else 4
    assert report["covers"]["unreached"] == 0 and report["covers"]["reached"] == covers, report["covers"]


#: The larger sizes of docs/formal-streams.md's table, proved only with ``pytest --formal-large``.
LARGE = [dict(rows=1, cols=3), dict(rows=2, cols=2, mul_stages=1, add_stages=1),
         dict(rows=1, cols=4), dict(rows=1, cols=3, mul_stages=2, add_stages=2), dict(rows=3, cols=3),
         dict(rows=4, cols=4), dict(rows=2, cols=2, mul_stages=1, add_stages=1, accumulation="column:w=8"),
         dict(rows=3, cols=3, mul_stages=1, add_stages=2, accumulation="column:w=8"),
         # The bound anchor (a window wide enough that the tags stay in its sum field).
         dict(rows=2, cols=2, mul_stages=2, add_stages=1, accumulation="column:w=16,anchor=bound"),
         # A normalisation point after row 2 (its registers in the skew, tags, drain and latency;
         # k = 27, 4.5 minutes wall beside a place and route).
         dict(rows=3, cols=2, accumulation="column:w=8,g=2")]


@pytest.mark.formal_large
@pytest.mark.parametrize("large", LARGE, ids=lambda v: "x".join(str(n) for k, n in v.items() if k != "accumulation")
                         + ("-column" if "accumulation" in v else ""))
def test_larger_arrays_proved(large, tmp_path):
    report = check_stream("mxu", {"mul_stages": 0, "add_stages": 0, **large, **TAGS}, work=tmp_path, timeout=7200)
    assert report["result"] == "proved" and report["covers"]["unreached"] == 0, report


# The credit mutant's counterexample needs 20 steps (half a minute): --thorough.
@pytest.mark.parametrize("kind, mutant", [("fifo", m) for m in FIFO_MUTANTS] + [("fifo-ecp5", m) for m in FIFO_MUTANTS]
                         + [("mxu", m) if m != "credit" else pytest.param("mxu", m, marks=pytest.mark.thorough)
                            for m in MXU_MUTANTS])
def test_each_planted_bug_has_a_counterexample(kind, mutant, tmp_path):
    # the drain matters only where a write can overtake a row still using the old tile: 1x4
    size = dict(rows=1, cols=4) if mutant == "drain" else dict(rows=2, cols=2)
    if mutant == "acc":                 # only an MXU with accumulators has the adder
        size = dict(rows=1, cols=2, acc_depth=2)
    if mutant == "credit":              # 1x1: its FIFO's 16 rows overflow within the base case
        size = dict(rows=1, cols=1)
    params = dict(**size, mul_stages=0, add_stages=0, **TAGS)
    if kind.startswith("fifo"):
        params = dict(width=3, depth=8, **({"ram": "ecp5"} if kind == "fifo-ecp5" else {}))
        kind = "fifo"
    report = check_stream(kind, params, mutant=mutant, depth=20 if mutant == "credit" else 16, work=tmp_path)
    assert report["result"] == "counterexample", report
    assert report["failed_assertions"] and all(Path(t).is_file() and t.endswith(".vcd") for t in report["traces"])
    assert report["traces"], report


def test_cli_report_and_errors(tmp_path):
    out = tmp_path / "r.json"
    # The FIFO's proof through the command (seconds; the MXU's proofs run above in-process).
    proc = subprocess.run([sys.executable, "-m", "sim.formal", "fifo", "--depth", "16",
                           "--report", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["result"] == "proved" and report["parameters"]["depth"] == 16
    bad = subprocess.run([sys.executable, "-m", "sim.formal", "mxu", "--k", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--k must be 1..200, not 0" in bad.stderr


class _ReadyWaitsForY(MXU):
    """x.ready also waits for y.ready and for data bit 0: what the contract forbids."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        st = self.internals
        swap = self.x.payload.swap | ~st.started
        m.d.comb += self.x.ready.eq((st.free != 0) & (st.shadow_full | ~swap) & self.y.ready & self.x.payload.data[0][0])
        return m


def test_ready_cone_finds_a_forbidden_input(tmp_path):
    cones = ready_inputs(dict(rows=2, cols=2), tmp_path, cls=_ReadyWaitsForY)
    assert cones == {"x.ready": ["x.payload.data", "x.payload.swap", "y.ready"], "w.ready": []}, cones
