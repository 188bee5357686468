"""The compiled verification path (sim.compiled.model, sim.compiled.chunks, sim.compiled.exhaustive, golden.tools.executor)
on small slices: bit-exact against golden, journalled, resumable, the same on Dask."""

import json

import re

import pytest

from sim.compiled import exhaustive
from sim.compiled.chunks import check_chunk
from sim.testbenches.runner import available

pytestmark = pytest.mark.skipif(available("verilator") is not None, reason=str(available("verilator")))

SLICE = 1 << 14
ONE_BF16 = (0x3F80 << 16) // SLICE        # chunk of a = 1.0 (all b), with SLICE-vector chunks

# (unit, params, chunk index): slices where the results span every class and situation.
# A model is compiled for each: by default one of each unit and rounding kind, the others
# with --thorough.
FAMILIES = [
    ("mul", dict(in_fmt="bf16", out_fmt="fp32"), (0x3F80 << 16) // SLICE),
    ("mul", dict(in_fmt="bf16", out_fmt="bf16", rounding="rne", stages=2), (0x3FC0 << 16) // SLICE + 1),
    pytest.param("mul", dict(in_fmt="bf16", out_fmt="bf16", rounding="sr", stages=1), (0x3FC0 << 16) // SLICE + 2,
                 marks=pytest.mark.thorough),
    ("mul", dict(in_fmt="bf16", out_fmt="bf16", rounding="sr-half"), (0x3FC0 << 16) // SLICE + 3),
    pytest.param("rounder", dict(rounding="rne"), 0x3F800000 // SLICE, marks=pytest.mark.thorough),
    ("rounder", dict(rounding="rne", stages=2), 0x7F7F0000 // SLICE + 3),
    ("rounder", dict(rounding="sr"), 0x3F800000 // SLICE + 1),
]


def _plan(unit, params, **kw):
    return exhaustive.plan_of(unit, params, chunk=SLICE, **kw)


@pytest.mark.parametrize("unit, params, index", FAMILIES, ids=lambda x: str(x))
def test_compiled_slice_matches_golden(unit, params, index):
    plan = _plan(unit, params)
    assert plan.exhaustive and plan.vectors == 1 << 32
    result = check_chunk(plan, index)
    assert result["mismatches"] == 0, result["first_mismatches"]
    assert result["vectors"] == SLICE
    classes = result["classes"]
    assert sum(classes[k] for k in ("zero", "subnormal", "normal", "inf", "nan")) == SLICE
    if params.get("rounding") in ("rne", "sr") and unit == "mul":
        assert result["situations"]["tie"] > 5000      # 1.5 * b: a third of the products are ties


def _wrong_nan(text):
    """Mutant: the multiplier's canonical NaN 0x7fc00000 becomes 0x7fc00001 (the NaN's
    constant bits outside its exponent and quiet bit are one assignment, its lowest bit 1)."""
    changed, count = re.subn(r"(\{ \\\$\d+ \[32:31\], \\\$\d+ \[21:0\] \} = )24'h000000;", r"\g<1>24'h000001;", text)
    assert count == 1, count
    return changed


def test_mutant_is_caught_with_a_readable_report():
    plan = _plan("mul", dict(in_fmt="bf16", out_fmt="fp32"))
    result = check_chunk(plan, (0x7FC0 << 16) // SLICE, verilog=_wrong_nan)     # a is a quiet NaN
    assert result["mismatches"] == SLICE
    first = result["first_mismatches"][0]
    assert first == {"a": "0x7fc0", "b": "0x0", "expected": "0x7fc00000", "expected_flags": "0b00000",
                     "actual": "0x7fc00001", "actual_flags": "0b00000", "vector": 0x7FC0 << 16}


def test_part_arithmetic():
    for chunks in (1, 7, 256):
        for parts in range(1, min(chunks, 9) + 1):
            ranges = [exhaustive.part_range(chunks, i, parts) for i in range(1, parts + 1)]
            covered = [i for r in ranges for i in r]
            assert covered == list(range(chunks))
            assert max(map(len, ranges)) - min(map(len, ranges)) <= 1


def test_cli_part_report_and_resume(tmp_path, capsys):
    report = tmp_path / "r.json"
    args = ["mul", "--chunk", str(SLICE), "--part", f"{ONE_BF16 // 2 + 1}/{(1 << 32) // SLICE // 2}",
            "--workers", "1", "--report", str(report)]
    assert exhaustive.main(args) == 0
    first = json.loads(report.read_text())
    assert first["vectors"] == 2 * SLICE and first["mismatches"] == 0
    assert first["configuration"]["chunks"] == [ONE_BF16, ONE_BF16 + 2]
    assert "0 mismatches" in capsys.readouterr().out
    # Interrupted after one chunk, the last line cut: the rerun does only the other chunk.
    journal = report.with_name(report.name + ".journal.jsonl")
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(lines[:2]) + "\n" + lines[2][:40] + "\n")
    report.unlink()
    assert exhaustive.main(args) == 0
    redone = [json.loads(line) for line in journal.read_text().splitlines()[3:] if "index" in line]
    assert [r["index"] for r in redone] == [int(json.loads(lines[2])["index"])]
    again = json.loads(report.read_text())
    for key in ("vectors", "mismatches", "classes", "situations", "cycles"):
        assert again[key] == first[key]


@pytest.mark.parametrize("args, message", [
    (["--part", "0/4"], "--part 0/4: N must be in 1..262144"),
    (["--part", "x"], "--part must be I/N with integers, not 'x'"),
    (["--chunk", "5"], "--chunk must be in 1024..268435456, not 5"),
    (["--bubbles", "1.5"], "--bubbles must be in 0..0.9, not 1.5"),
    (["--vectors", "0"], "--vectors must be in 1..1099511627776, not 0"),
    (["--stages", "99"], "stages must be in 0..9, not 99"),
    (["--rounding", "foo"], "argument --rounding: invalid choice: 'foo'"),
])
def test_bad_arguments(tmp_path, capsys, args, message):
    report = tmp_path / "r.json"
    report.write_text("keep")
    with pytest.raises(SystemExit) as exit_:
        exhaustive.main(["mul", "--chunk", str(SLICE), "--report", str(report), *args])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert report.read_text() == "keep"


def test_journal_of_another_configuration_is_refused(tmp_path, capsys):
    report = tmp_path / "r.json"
    report.with_name("r.json.journal.jsonl").write_text('{"plan": "something else"}\n')
    with pytest.raises(SystemExit) as exit_:
        exhaustive.main(["mul", "--chunk", str(SLICE), "--part", "1/262144", "--report", str(report)])
    assert exit_.value.code == 2 and "journals another configuration" in capsys.readouterr().err
    assert not report.exists()


def test_dask_cluster_gives_the_local_result(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    plan = _plan("rounder", dict(rounding="sr"))
    chunks = range(0x3F800000 // SLICE, 0x3F800000 // SLICE + 4)
    local = exhaustive.run(plan, chunks, tmp_path / "local.json", workers=1, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        remote = exhaustive.run(plan, chunks, tmp_path / "dask.json", scheduler=cluster.scheduler_address,
                                progress=False)
    assert remote["executor"].startswith("dask")
    for key in ("vectors", "mismatches", "classes", "situations", "cycles"):
        assert remote[key] == local[key]
    assert local["vectors"] == 4 * SLICE and local["mismatches"] == 0


FP8 = [dict(in_fmt="fp8_e4m3fn", out_fmt="fp32"),
       dict(in_fmt="fp8_e4m3fn", out_fmt="fp8_e4m3fn", rounding="rne"),
       dict(in_fmt="fp8_e4m3fn", out_fmt="fp8_e4m3fn_sat", rounding="rne", stages=2),
       dict(in_fmt="fp8_e5m2", out_fmt="fp8_e5m2_sat", rounding="sr")]
#: By default the exact products into fp32 and the saturating multiplier (the mutant's, below);
#: the others with --thorough.
FP8_RUNS = [FP8[0], FP8[2], *(pytest.param(p, marks=pytest.mark.thorough) for p in (FP8[1], FP8[3]))]


def _saturating_to_nan(text):
    """Mutant: the saturating multiplier's largest finite value (0x7e) becomes the NaN."""
    assert "7'h7e" in text
    return text.replace("7'h7e", "7'h7f")


@pytest.mark.parametrize("params", FP8_RUNS, ids=lambda p: "-".join(map(str, p.values())))
def test_every_fp8_product_matches_golden(params):
    """All 65,536 operand pairs of the OCP 8-bit multipliers through the compiled RTL."""
    plan = exhaustive.plan_of("mul", params, chunk=1 << 16)
    assert plan.exhaustive and plan.vectors == 1 << 16
    result = check_chunk(plan, 0)
    assert result["mismatches"] == 0, result["first_mismatches"]
    if params["out_fmt"] != "fp32":
        assert result["classes"]["overflow"] > 1000 and result["classes"]["ftz_underflow"] > 1000
    if params["out_fmt"] == "fp8_e4m3fn":
        assert result["classes"]["inf"] == 0 and result["classes"]["nan"] > 1000   # overflows are NaN


def test_fp8_saturation_mutant_is_caught():
    plan = exhaustive.plan_of("mul", FP8[2], chunk=1 << 16)
    result = check_chunk(plan, 0, verilog=_saturating_to_nan)
    assert result["mismatches"] > 1000


def test_cxx_level_comes_from_the_environment_and_is_checked(monkeypatch):
    from sim.compiled.model import cxx_flags
    monkeypatch.setenv("ARITH_CXX_OPT", "-O3")
    assert cxx_flags()[0] == "-O3"
    monkeypatch.delenv("ARITH_CXX_OPT")
    assert cxx_flags()[0] == "-O2"
    monkeypatch.setenv("ARITH_CXX_OPT", "-Ofast")
    with pytest.raises(ValueError, match="ARITH_CXX_OPT must be one of -O0, -O1, -O2, -O3, not '-Ofast'"):
        cxx_flags()
