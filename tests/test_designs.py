"""A figure names the design it measured (hdl.designs): rows of a design the generator no
longer emits are history to ``--target-mhz``, and ``python -m synth.stale`` says which."""

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest

from hdl import designs
from hdl.array_timing import array_mhz
from hdl.designs import STALE
from hdl.target import _current_array, achieved_mhz, mxu_identity, mxu_row_config, unit_identity
from hdl.units import UNITS, module_name, to_verilog

ROOT = Path(__file__).parent.parent
#: A small array and its docs/mxu-pnr.csv columns.
ARRAY = {"arch": "ecp5", "rows": "2", "cols": "2", "mul_stages": "1", "add_stages": "1", "pe": "fused",
         "accumulation": "sequential", "mul_dsp": "inferred", "fifo_ram": "block", "source": "verilog",
         "clock_mhz": "300", "floorplan": "dsp", "harness": "scrambled", "keep": "weight path, tag",
         "sync_resets": "inferred", "fits": "True", "fmax_mhz": "130.0", "seed": "1"}


def _array_text(config: dict) -> str:
    component, _ = UNITS["mxu"].build(**config)
    return to_verilog(component, module_name(UNITS["mxu"], component))


def test_an_arrays_identity_is_the_hash_of_the_verilog_hdl_build_writes(tmp_path):
    """Computed from the file a user generates, not from the code under test's cache."""
    import hashlib
    proc = subprocess.run([sys.executable, "-m", "hdl.build", "mxu", "--rows", "2", "--cols", "2", "--mul-stages", "1",
                           "--add-stages", "1", "-o", str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    (v,) = (p.with_suffix(".v") for p in tmp_path.glob("*.json"))
    assert mxu_identity(mxu_row_config(ARRAY)) == hashlib.sha256(v.read_bytes()).hexdigest()[:16]


def test_identities_are_cached_per_sources(monkeypatch, tmp_path):
    """Generated once while the sources stand; a change of the sources generates again."""
    monkeypatch.setenv("ARITH_BUILD", str(tmp_path))
    calls = []

    def generate():
        calls.append(1)
        return "module m; endmodule\n"
    assert designs.cached_identity("t", {"a": 1}, generate) == designs.identity("module m; endmodule\n")
    designs.cached_identity("t", {"a": 1}, generate)
    assert len(calls) == 1
    monkeypatch.setattr(designs, "sources_hash", lambda: "changed")
    designs.cached_identity("t", {"a": 1}, generate)
    assert len(calls) == 2


def test_a_row_is_current_only_with_the_design_the_generator_emits():
    config = mxu_row_config(ARRAY)
    now = designs.identity(_array_text(config))
    assert _current_array({**ARRAY, "design": now})
    assert not _current_array({**ARRAY, "design": "0" * 16})
    assert not _current_array({**ARRAY, "design": ""}) and not _current_array(ARRAY)


def _csv(path: Path, rows: list[dict]) -> Path:
    out = io.StringIO()
    writer = csv.DictWriter(out, list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(out.getvalue())
    return path


def test_target_mhz_reads_only_current_arrays(tmp_path):
    """A measured figure counts only where its design is today's: a stale or unrecorded row
    leaves the array predicted."""
    now = designs.identity(_array_text(mxu_row_config(ARRAY)))
    defaults = {"rows": 4, "cols": 4, "mul_stages": 0, "add_stages": 0}
    design = {"rows": 2, "cols": 2, "mul_stages": 1, "add_stages": 1, "pe": "fused", "accumulation": "sequential",
              "mul_dsp": "inferred", "fifo_ram": "block"}
    for recorded, measured in ((now, True), ("0" * 16, False), ("", False)):
        path = _csv(tmp_path / "mxu-pnr.csv", [{**ARRAY, "design": recorded}])
        figure = array_mhz("ecp5", design, defaults, lambda m, a: 100.0, path, current=_current_array)
        assert ("measured" in figure) == measured, (recorded, figure)
        assert figure["mhz"] == (130.0 if measured else 100.0)


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")     # its identity may come from the cache
def test_a_units_figure_counts_only_for_its_current_design(tmp_path):
    component, _ = UNITS["add"].build(stages=2)
    module = module_name(UNITS["add"], component)
    now = unit_identity(module, lambda: component)
    from amaranth.back import verilog
    assert now == designs.identity(verilog.convert(component, name=module, emit_src=False))
    row = {"arch": "ecp5", "kind": "add", "module": module, "fmax_mhz": "99.5"}
    for recorded, expected in ((now, 99.5), ("0" * 16, None), ("", None)):
        path = _csv(tmp_path / "timing.csv", [{**row, "design": recorded}])
        assert achieved_mhz("ecp5", module, lambda: component, path) == expected


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
def test_stale_lists_every_row_that_is_not_current(tmp_path):
    """``synth.stale`` counts current, stale and unrecorded rows of both tables and prints the
    command that re-measures each configuration that is not current; ``--archive`` moves the
    array rows that are not current into mxu-pnr-earlier.csv."""
    from synth.timing.designs import component
    unit, module = component("add", 7)
    now = unit_identity(module, lambda: unit)
    timing = {"arch": "ecp5", "kind": "add", "label": "add", "module": module, "stages": "7", "fmax_mhz": "120"}
    _csv(tmp_path / "timing.csv", [{**timing, "design": now}, {**timing, "design": "0" * 16},
                                   {**timing, "design": ""}])
    array_now = designs.identity(_array_text(mxu_row_config(ARRAY)))
    _csv(tmp_path / "mxu-pnr.csv", [{**ARRAY, "design": array_now}, {**ARRAY, "seed": "2", "design": "1" * 16},
                                    {**ARRAY, "seed": "3", "design": ""}])
    with (ROOT / "docs" / "synth.csv").open() as published:          # an area row (bare 3x3) of another design
        _csv(tmp_path / "synth.csv", [{**next(csv.DictReader(published)), "design": "2" * 16}])
    stale = lambda *args: subprocess.run([sys.executable, "-m", "synth.stale", "--published", str(tmp_path), *args],  # noqa: E731
                                         capture_output=True, text=True, cwd=ROOT)
    proc = stale("--archive")
    assert proc.returncode == 0, proc.stderr
    assert "synth.csv: 0 current, 1 stale, 0 unrecorded of 1 rows" in proc.stdout
    assert "synth.sweep --modules sigmul_3x3" in proc.stdout
    assert "timing.csv: 1 current, 1 stale, 1 unrecorded of 3 rows" in proc.stdout
    assert "mxu-pnr.csv: 1 current, 1 stale, 1 unrecorded of 3 rows" in proc.stdout
    assert "--only add:7" in proc.stdout and "--seeds 2,3" in proc.stdout
    assert f"{STALE:<10} ecp5 {module}" in proc.stderr + proc.stdout
    seeds = lambda name: [r["seed"] for r in csv.DictReader((tmp_path / name).open())]      # noqa: E731
    assert seeds("mxu-pnr.csv") == ["1"] and seeds("mxu-pnr-earlier.csv") == ["2", "3"]
    again = stale("--tables", "mxu-pnr", "--archive")                  # nothing left to move
    assert "mxu-pnr.csv: 1 current, 0 stale, 0 unrecorded of 1 rows" in again.stdout and "moved" not in again.stdout
    assert seeds("mxu-pnr.csv") == ["1"] and seeds("mxu-pnr-earlier.csv") == ["2", "3"]
    refused = stale("--tables", "timing", "--archive")
    assert refused.returncode == 2 and "--archive moves mxu-pnr.csv's rows" in refused.stderr
    unnamed = subprocess.run([sys.executable, "-m", "synth.stale", "--archive"], capture_output=True, text=True, cwd=ROOT)
    assert unnamed.returncode == 2 and "name it, e.g. --published docs" in unnamed.stderr
    bad = subprocess.run([sys.executable, "-m", "synth.stale", "--tables", "area"], capture_output=True, text=True,
                         cwd=ROOT)
    assert bad.returncode == 2 and "--tables area: unknown table 'area'" in bad.stderr


def test_an_array_is_re_measured_in_the_flow_it_was_placed_in():
    """``synth.stale``'s command for an array row keeps its flow: its floorplan; none for a
    flow no command runs any more (the weight path alone kept, or nothing kept: the keep
    script before the Verilog carried it)."""
    from synth.stale import _array_commands
    placed, plain = (_array_commands({**ARRAY, "floorplan": floorplan}, ["1"])[1] for floorplan in ("dsp", "none"))
    assert placed[placed.index("--floorplan") + 1] == "dsp" and plain[plain.index("--floorplan") + 1] == "none"
    assert _array_commands({**ARRAY, "keep": "weight path"}, ["1"]) is None
    assert _array_commands({**ARRAY, "keep": "none"}, ["1"]) is None


def _units_shown() -> set[tuple[str, str, str]]:
    """The (part, label, stages) of each row docs/timing.md's units table shows (each design's
    fastest depth)."""
    block = (ROOT / "docs/timing.md").read_text().split("<!-- table: units")[1].split("<!-- end table -->")[0]
    return {tuple(line.split(" | ")[:3]) for line in block.splitlines() if line.startswith("| ") and "---" not in line}


@pytest.mark.parametrize("units", ["shown", pytest.param("all", marks=pytest.mark.thorough)])
def test_every_pages_table_is_its_csvs(units):
    """README.md's and the measurement pages' tables are what ``python -m synth.tables``
    generates from the CSVs' current rows (run it after publishing). By default docs/timing.csv's
    rows the units table does not show are taken as not current without generating their
    designs (38 of 60: each design's slower depths, half a CPU minute); every row the tables
    show is checked current.
    ``--thorough`` generates them all (a current row missing from the table then fails)."""
    from synth.stale import timing_status
    from synth.tables import PAGES, render, tables
    shown = _units_shown()

    def unit_status(row):
        if units == "all" or (f"| {row['arch']}", row["label"], row["stages"]) in shown:
            return timing_status(row)
        return STALE
    generated = tables(ROOT / "docs", unit_status)
    for page in PAGES:
        text = (ROOT / page).read_text()
        assert "<!-- table: " in text, page
        assert render(text, generated, page) == text, f"{page}: its tables differ from the CSVs (python -m synth.tables --publish)"


def test_a_generated_table_shows_current_rows_only(tmp_path):
    from synth.tables import render, tables
    from synth.timing.designs import component
    from synth.timing.report import COLUMNS
    unit, module = component("add", 7)
    unit_row = {"arch": "ecp5", "kind": "add", "label": "fp32 adder", "module": module, "stages": "7", "latency": "7",
                "fmax_mhz": "120", "ratio_to_bare": "", "lut": "900", "ff": "400", "dsp": "0",
                "design": unit_identity(module, lambda: unit)}
    shallower, shallower_module = component("add", 5)     # current too, slower: the table shows the faster
    _csv(tmp_path / "timing.csv", [{k: unit_row.get(k, "") for k in COLUMNS},
                                   {**{k: unit_row.get(k, "") for k in COLUMNS}, "stages": "7", "module": module + "x",
                                    "fmax_mhz": "999", "design": "0" * 16},
                                   {**{k: unit_row.get(k, "") for k in COLUMNS}, "stages": "5", "latency": "5",
                                    "module": shallower_module, "fmax_mhz": "110",
                                    "design": unit_identity(shallower_module, lambda: shallower)}])
    now = designs.identity(_array_text(mxu_row_config(ARRAY)))
    figures = {"lut": "3000", "util_pct": "3.6", "ff": "2000", "dsp": "4", "latency": "20", "note": ""}
    _csv(tmp_path / "mxu-pnr.csv", [{**ARRAY, **figures, "design": now},
                                    {**ARRAY, **figures, "seed": "2", "fmax_mhz": "140.0", "design": now},
                                    {**ARRAY, **figures, "seed": "3", "fmax_mhz": "999", "design": "1" * 16}])
    from synth.sweep.report import COLUMNS as SWEEP_COLUMNS
    (tmp_path / "synth.csv").write_text(",".join(SWEEP_COLUMNS) + "\n")      # the area tables: tests/test_sweep_design.py
    generated = tables(tmp_path)
    assert "| 2x2 `sequential`, `m1a1` | **135.0** (130.0-140.0) | 0.5 | 3,000 (4 %) | 2,000 | 4 |" \
        in generated["arrays-short"]
    assert "999" not in generated["arrays"] and "999" not in generated["units"] and "| 120.0 |" in generated["units"]
    assert "| 110.0 |" not in generated["units"]
    from synth.tables import NO_CURRENT_BENCH
    assert generated["throughput"] == NO_CURRENT_BENCH                          # no docs/mxu-bench.csv
    from sim.compiled.mxu_bench import COLUMNS as BENCH_COLUMNS, publish
    bench = {"array": "2x2 m1a1", "rows": 2, "cols": 2, "mul_stages": 1, "add_stages": 1, "cycles": 80,
             "macs_per_cycle": 3.2, "utilisation": 0.8, "latency": 16, "latency_formula": 16, "cycles_per_s": 12345}
    publish(tmp_path / "mxu-bench.csv", [{**bench, "M": 64, "design": now}, {**bench, "M": 4096, "design": "3" * 16}])
    publish(tmp_path / "mxu-bench.csv", [{**bench, "M": 64, "cycles": 81, "design": now}])     # replaces its row
    assert len((tmp_path / "mxu-bench.csv").read_text().splitlines()) == 3
    assert list(csv.DictReader((tmp_path / "mxu-bench.csv").open()))[0].keys() == set(BENCH_COLUMNS)
    assert tables(tmp_path)["throughput"].splitlines()[2:] == ["| 2x2 m1a1 | 64 | 81 | 3.20 | 0.800 | 16 | 16 | 12,345 |"]
    _csv(tmp_path / "stale" / "mxu-pnr.csv", [{**ARRAY, **figures, "seed": "3", "fmax_mhz": "999", "design": "1" * 16}])
    for name in ("timing.csv", "synth.csv"):
        (tmp_path / "stale" / name).write_text((tmp_path / name).read_text())
    from synth.tables import NO_CURRENT_ARRAY
    assert tables(tmp_path / "stale")["arrays-short"] == NO_CURRENT_ARRAY      # a line, not an empty table
    page = "a\n<!-- table: units (python -m synth.tables) -->\nold\n<!-- end table -->\nb\n"
    assert render(page, generated, "p") == "a\n<!-- table: units (python -m synth.tables) -->\n" + \
        generated["units"] + "<!-- end table -->\nb\n"
    # The command writes under build/ by default; only --publish rewrites the pages.
    from synth.tables import PAGES, main
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    for name in ("timing.csv", "mxu-pnr.csv", "synth.csv"):
        (root / "docs" / name).write_text((tmp_path / name).read_text())
    for name in PAGES:
        (root / name).write_text(page)
    out = tmp_path / "out"
    assert main(["--root", str(root), "--out", str(out)]) == 0
    assert (root / "README.md").read_text() == page and (out / "units.md").read_text() == generated["units"]
    assert main(["--root", str(root), "--check"]) == 1
    assert main(["--root", str(root), "--publish"]) == 0 and main(["--root", str(root), "--check"]) == 0
    assert (root / "README.md").read_text() == render(page, generated, "p")





def test_a_sweep_modules_name_is_the_one_it_published():
    """``synth.stale`` and ``synth.sweep`` name a configuration's module from its plan
    (``configs.module``), without building it: the name docs/synth.csv recorded for it."""
    from synth.sweep.configs import configuration_of, module
    with (ROOT / "docs" / "synth.csv").open() as published:
        rows = [row for row in csv.DictReader(published) if configuration_of(row)]
    assert len({row["kind"] for row in rows}) > 15
    assert [module(configuration_of(row)) for row in rows] == [row["module"] for row in rows]


def test_the_published_area_breakdown_is_of_todays_multipliers():
    """docs/area-breakdown.csv names the design each row measured, the one the generator emits
    now (else rerun ``python -m synth.area_breakdown --out docs/area-breakdown.csv``), and
    docs/area.md quotes its sub-blocks."""
    from synth.area_breakdown import UNITS, unit_verilog
    from synth.significand import SignificandMultiplier
    from hdl.units import to_verilog

    with (ROOT / "docs" / "area-breakdown.csv").open() as published:
        rows = list(csv.DictReader(published))
    now = {label: designs.identity(verilog) for label, _, verilog in map(unit_verilog, UNITS)}
    bare = designs.identity(to_verilog(SignificandMultiplier(width=8), "sigmul_8x8"))
    for row in rows:
        assert row["design"] == (bare if row["block"].startswith("significand product") else now[row["unit"]]), row
    page = " ".join((ROOT / "docs" / "area.md").read_text().split())
    for row in rows:
        if row["block"].startswith(("significand", "classification", "rounder", "whole")):
            assert f"{int(row['transistors']):,} T" in page, row
