"""The area sweep's rows name the design they measured (hdl.designs): ``synth.sweep`` records
it, ``synth.stale --tables synth`` classifies and re-measures its rows, and docs/area.md's
tables show current rows only. Yosys is replaced by a stand-in: these check the records,
not the figures."""

import csv
import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from hdl import designs
from hdl.toolchain import tool_versions
from hdl.units import to_verilog
from synth import flows
from synth.sweep import cli
from synth.sweep.cache import design, row_status, synthesise
from synth.sweep.configs import component, configuration_of, configurations
from synth.sweep.report import COLUMNS

pytestmark = pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")

#: The stand-in's figures for every design.
FIGURES = {"gates": 29, "transistors": 200, "sky130_um2": 141.39, "ice40_lut4": 13}


@pytest.fixture
def yosys(monkeypatch, tmp_path):
    """Yosys replaced: every run returns ``FIGURES`` and records the Verilog it was given;
    identities are cached under ``tmp_path``."""
    monkeypatch.setenv("ARITH_BUILD", str(tmp_path / "build"))
    given = []

    def run_flows(verilog, top, flows_, work_dir, timeout_min):
        given.append((top, verilog))
        return dict(FIGURES)
    monkeypatch.setattr(flows, "run_flows", run_flows)
    return given


def _full(kind: str, man: int) -> dict:
    (config,) = [c for c in configurations() if c["kind"] == kind and c["man"] == man]
    return config


def _row(config: dict, **cells) -> dict:
    """A synth.csv row of ``config`` (its naming columns, figures and ``cells``), as text."""
    naming = {k: "" if config[k] is None else str(config[k]) for k in ("group", "kind", "label", "exp", "man")}
    row = {**naming, "module": component(config)[1], **{k: str(v) for k, v in FIGURES.items()}, **cells}
    return {k: row.get(k, "") for k in COLUMNS}


def _csv(path: Path, rows: list[dict]) -> Path:
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(out.getvalue())
    return path


def test_a_row_records_the_identity_of_the_verilog_synthesised(yosys, tmp_path):
    """The row's ``design`` is the identity of the very text Yosys was given (and what the
    stale check computes for its configuration); its cache entry keeps it, and an entry
    without one gets it from the sources its key holds."""
    out = tmp_path / "out"
    assert cli.main(["--quick", "--modules", "sigmul_4x4", "--jobs", "1", "--out", str(out)]) == 0
    (top, text), = yosys
    (row,) = csv.DictReader((out / "synth.csv").open())
    config = _full("bare", 3)
    assert top == row["module"] == "sigmul_4x4"
    assert row["design"] == designs.identity(text) == designs.identity(to_verilog(*component(config)))
    assert row["design"] == design(config) and row["tools"] == tool_versions()
    (entry,) = (out / "cache").glob("*.json")
    cached = json.loads(entry.read_text())
    assert cached["design"] == row["design"] and cached["tools"] == tool_versions()
    entry.write_text(json.dumps({k: v for k, v in cached.items() if k not in ("design", "tools")}))
    again = synthesise(config, out, cli.source_digest())
    assert again["cached"] and again["design"] == row["design"] and len(yosys) == 1


def test_sweep_rows_are_current_stale_or_unrecorded():
    config = _full("bare", 3)
    now = design(config)
    assert row_status(_row(config, design=now)) == designs.CURRENT
    assert row_status(_row(config, design="0" * 16)) == designs.STALE
    assert row_status(_row(config)) == designs.UNRECORDED
    gone = {**_row(config, design=now), "man": "99"}       # a configuration the sweep no longer has
    assert configuration_of(gone) is None and row_status(gone) == designs.STALE


def test_stale_remeasures_the_sweeps_rows_that_are_not_current(yosys, tmp_path, monkeypatch, capsys):
    """``synth.stale --tables synth`` counts the rows, and ``--remeasure`` runs ``synth.sweep``
    on exactly the configurations of those that are not current (``--pnr`` where a row was
    placed and routed)."""
    import synth.stale as stale
    small, placed, current = _full("bare", 3), _full("bare", 2), _full("bare", 4)
    _csv(tmp_path / "synth.csv", [_row(small), _row(small, design="0" * 16),
                                  _row(placed, ice40_fmax_mhz="67.36"), _row(current, design=design(current))])
    ran = []

    def run(step, cwd):       # the sweep in this process, Yosys replaced, without place and route
        ran.append(step[3:])
        assert step[1:3] == ["-m", "synth.sweep"]
        argv = [a for a in step[3:] if a != "--pnr"]
        return SimpleNamespace(returncode=cli.main([*argv, "--jobs", "1", "--out", str(tmp_path / "out")]))
    monkeypatch.setattr(stale.subprocess, "run", run)
    assert stale.main(["--published", str(tmp_path), "--tables", "synth", "--remeasure"]) == 0
    printed = capsys.readouterr().out
    assert "synth.csv: 1 current, 1 stale, 2 unrecorded of 4 rows" in printed
    assert ran == [["--modules", "sigmul_4x4"], ["--modules", "sigmul_3x3", "--pnr"]]
    assert "publish: the sweep's commands again with --cached-only --csv docs/synth.csv" in printed
    (row,) = csv.DictReader((tmp_path / "out" / "synth.csv").open())      # the last command's
    assert row["module"] == "sigmul_3x3" and row["design"] == design(placed)


def test_the_area_blocks_show_current_rows_only(tmp_path):
    """docs/area.md's blocks render docs/synth.csv's current rows as the sweep's report does;
    a block with none says so in one line."""
    from synth.tables import NO_CURRENT, render, tables
    bare, rne = _full("bare", 2), _full("mul_rne_e8", 2)
    (bf16,) = [c for c in configurations() if c["kind"] == "mul_rne" and c["label"] == "bf16"]
    (fp8,) = [c for c in configurations() if c["kind"] == "mul_exact" and c["label"] == "fp8_e4m3fn -> fp32"]
    pe = {"group": "c", "kind": "pe", "label": "MXU PE m0a0", "exp": "", "man": ""}
    _csv(tmp_path / "synth.csv", [
        _row(fp8, design=design(fp8), transistors="978", sky130_um2="741.0", ice40_lut4="67", ecp5_lut4="33",
             ecp5_dsp="1"),
        _row(bare, design=design(bare), ice40_fmax_mhz="67.36", ecp5_fmax_mhz="156.96"),
        _row(rne, design="0" * 16, sky130_um2="999"),
        _row(bf16, design=design(bf16), gates="558", transistors="3858", sky130_um2="2865.0"),
        {**_row(configuration_of(pe), design="0" * 16), "module": "mxu_pe_bf16_fp32_m0a0"}])
    for name in ("timing.csv", "mxu-pnr.csv"):         # no rows: their tables are empty
        (tmp_path / name).write_text("arch\n")
    generated = tables(tmp_path)
    assert generated["area-widths"] == (
        "| m | bare (m+1)^2 | RNE e8 | RNE e5 | exact e8 | RNE e8 / bare | Fmax MHz iCE40 / ECP5: bare; RNE e8 |\n"
        "|---|---|---|---|---|---|---|\n"
        "| 2 | 141 (13) | - | - | - | - | 67.36 / 156.96; - |\n")
    assert "| bf16 x bf16 -> bf16 (RNE) | `fpmul_bf16_bf16_rne_s0` | 558 | 3858 | 2,865 | 13 / - / - |" \
        in generated["area-units"] and "mxu_pe" not in generated["area-units"]
    assert generated["area-elements"] == NO_CURRENT
    assert generated["area-fp8"].splitlines()[2:] == ["| fp8_e4m3fn x fp8_e4m3fn -> fp32 (exact) | 978 | 741 | 67 | 33 (+1) |"]
    page = "a\n<!-- table: area-elements (python -m synth.tables) -->\n| old |\n<!-- end table -->\n"
    assert render(page, generated, "p") == f"a\n<!-- table: area-elements (python -m synth.tables) -->\n{NO_CURRENT}" \
        "<!-- end table -->\n"

