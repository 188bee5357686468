"""Delay-directed pipelining: the leading-zero tree, stage placement per unit, the delay
model and ``python -m hdl.build --target-mhz``."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from hdl import timing
from hdl.adder import FPAdder
from hdl.shift import leading_zeros
from hdl.multiplier import FPMultiplier
from hdl.stochastic_rounder import StochasticRounder


@pytest.mark.parametrize("width", [1, 2, 3, 5, 8, 9])
def test_leading_zero_tree_counts_every_value(width):
    m = Module()
    value = Signal(width)
    count = Signal(range(width + 1))
    m.d.comb += count.eq(leading_zeros(value))
    sim = Simulator(m)

    async def bench(ctx):
        for x in range(1 << width):
            ctx.set(value, x)
            assert ctx.get(count) == width - x.bit_length(), x
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("make", [lambda n: FPAdder.plan(stages=n), lambda n: FPMultiplier.plan(out_fmt="bf16", stages=n),
                                  lambda n: FPMultiplier.plan(stages=n), lambda n: StochasticRounder.plan(stages=n)])
def test_every_interior_stage_shortens_the_estimated_critical_path(make):
    probe = make(0)
    interior = probe.max_stages - 2
    worst = []
    for n in range(interior + 1):
        unit = make(n)
        assert unit.latency == n
        worst.append(max(d.cost for d in unit.segments))
    # Non-increasing, and down to the largest single segment.
    assert all(b <= a for a, b in zip(worst, worst[1:]))
    assert worst[-1] < worst[0]


def test_multiplier_product_sits_alone_between_registers():
    mul = FPMultiplier.plan(stages=2)
    assert mul._stages.count["product"] == 1
    assert timing.Delay(mul=1) in mul.segments


def test_multiplier_route_registers_come_after_one_per_cut_point():
    """Stages 8 and 9 add a second register at the significands, then after the product
    (the DSP's wires): each a wire-only segment; 10 is refused."""
    full = FPMultiplier.plan(stages=7)
    assert set(full.cut_registers.values()) == {1}
    for stages, doubled in ((8, {"operands"}), (9, {"operands", "product"})):
        mul = FPMultiplier.plan(stages=stages)
        assert {name for name, n in mul.cut_registers.items() if n == 2} == doubled
        assert mul.segments.count(timing.Delay()) == full.segments.count(timing.Delay()) + len(doubled)
        assert max(d.cost for d in mul.segments) == max(d.cost for d in full.segments)
    with pytest.raises(ValueError, match="stages must be in 0..9, not 10"):
        FPMultiplier.plan(stages=10)


def test_adder_fine_cut_points_come_after_every_coarse_one():
    """Up to 12 stages the adder places its registers as if the fine cut points (operand
    classes, inside the shifters and the leading-zero tree) were not there; past that they
    take one register each, by delay; 22 is refused."""
    from hdl.pipeline import Delay, Stages

    probe = FPAdder.plan(stages=0)
    cuts = list(zip(probe._stages.names, [Delay(), *probe._stages.delays]))
    fine = probe._stages.fine
    coarse, run = [], Delay()
    for name, delay in cuts:              # the same datapath without the fine cut points
        run = run + delay
        if name not in fine:
            coarse.append((name, run))
            run = Delay()
    for n in range(13):
        adder = FPAdder.plan(stages=n)
        registers = {k: c for k, c in adder.cut_registers.items() if c}
        assert registers == {k: c for k, c in Stages(n, coarse).count.items() if c}, n
    for n in range(13, 22):
        adder = FPAdder.plan(stages=n)
        assert all(adder.cut_registers[name] == 1 for name, _ in coarse)
        assert sum(adder.cut_registers[name] for name in fine) == n - 12
    with pytest.raises(ValueError, match="stages must be in 0..21, not 22"):
        FPAdder.plan(stages=22)


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "hdl.build", *args], cwd=cwd, capture_output=True, text=True)


def test_target_mhz_picks_the_smallest_predicted_depth(tmp_path):
    model = timing.load_model()
    proc = _cli("add", "--target-mhz", "100", "--arch", "ecp5", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (path,) = (tmp_path / "out").glob("*.json")
    manifest = json.loads(path.read_text())
    n = manifest["parameters"]["stages"]
    assert manifest["latency"] == n and manifest["timing"]["target_mhz"] == 100
    assert manifest["timing"]["predicted_mhz"] >= 100
    shallower = FPAdder.plan(stages=n - 1)
    assert timing.predict_mhz(shallower, "ecp5", model) < 100


@pytest.mark.parametrize("args, message", [
    (["add", "--target-mhz", "100", "--stages", "2"], "give it or --stages, not both"),
    (["mxu", "--target-mhz", "100", "--add-stages", "1"], "give it or --add-stages, not both"),
    (["mul", "--target-mhz", "5000"], "target_mhz must be in 1..1000 MHz, not 5000"),
    (["add", "--target-mhz", "900"], "target_mhz 900 is out of reach on ecp5"),
    (["add", "--arch", "xilinx"], "invalid choice: 'xilinx'"),
])
def test_target_mhz_errors(args, message, tmp_path, monkeypatch, refused):
    from hdl.build import main
    monkeypatch.chdir(tmp_path)
    assert message in refused(main, args)


def _tables(tmp_path, monkeypatch, timing_rows=(), array_rows=()):
    """docs/timing.csv and docs/mxu-pnr.csv, as ``hdl.target`` reads them, replaced by these
    rows (dicts; the ``design`` of each as the test gives it)."""
    import csv
    from hdl import array_timing, target
    for name, rows, attr in (("timing.csv", timing_rows, (target, "TIMING_CSV")),
                             ("mxu-pnr.csv", array_rows, (array_timing, "MXU_PNR_CSV"))):
        path = tmp_path / name
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, sorted({k for r in rows for k in r}) or ["arch"])
            writer.writeheader()
            writer.writerows(rows)
        monkeypatch.setattr(*attr, path)


def _unit_row(unit_key: str, fmax: float, current: bool = True, **params) -> dict:
    """A docs/timing.csv row of ``hdl.build``'s ``unit_key`` design, its design today's or not."""
    from hdl.target import unit_identity
    from hdl.units import UNITS, module_name
    component, _ = UNITS[unit_key].build(**params)
    module = module_name(UNITS[unit_key], component)
    return {"arch": "ecp5", "kind": unit_key, "module": module, "fmax_mhz": fmax,
            "design": unit_identity(module, lambda: component) if current else "0" * 16}


def test_a_measured_target_is_never_refused(tmp_path, monkeypatch):
    """A current Fmax docs/timing.csv measured for a unit is a target ``--target-mhz`` accepts,
    whatever the model predicts (the model is refused to have the last word); a stale one
    is not a measurement."""
    from hdl.target import build_for
    from hdl.units import UNITS
    predicted = timing.predict_mhz(UNITS["mul"].plan(stages=2)[0], "ecp5")
    fast = predicted + 30          # above every depth's prediction: only the measurement reaches it
    for current in (True, False):
        _tables(tmp_path, monkeypatch, [_unit_row("mul", fast, current, stages=2)])
        if current:
            _, values, facts = build_for(UNITS["mul"], {}, "ecp5", fast)
            assert values["stages"] == 2 and facts["achieved_mhz"] == fast
        else:
            with pytest.raises(ValueError, match="out of reach"):
                build_for(UNITS["mul"], {}, "ecp5", fast)


def test_target_mhz_prints_predicted_and_measured(tmp_path, monkeypatch, capsys):
    import hdl.build
    _tables(tmp_path, monkeypatch, [_unit_row("mul", 141.62, stages=2)])
    from hdl.units import UNITS
    model = timing.predict_mhz(UNITS["mul"].plan(stages=2)[0], "ecp5")
    assert hdl.build.main(["mul", "--stages", "2", "--arch", "ecp5", "-o", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert f"predicted {round(model, 1)} MHz" in out and "measured 141.62 MHz (docs/timing.csv)" in out


_HEADER = ("arch,rows,cols,mul_stages,add_stages,pe,accumulation,source,floorplan,harness,keep,sync_resets,fits,"
           "fmax_mhz,seed,extra,note")
_FLOW = "verilog,dsp,scrambled,\"weight path, tag\",inferred"


def _row(size, depth, fmax, seed=1, pe="fused", accumulation="output", flow=_FLOW, fits=True, note=""):
    (rows, cols), (m, a) = size, depth
    return f"ecp5,{rows},{cols},{m},{a},{pe},{accumulation},{flow},{fits},{fmax},{seed},x,{note}"


def _figure(tmp_path, rows, design, model=lambda m, a: 100.0):
    from hdl.array_timing import array_mhz
    path = tmp_path / "mxu-pnr.csv"
    path.write_text("\n".join([_HEADER, *rows]) + "\n")
    defaults = {"rows": 4, "cols": 4, "mul_stages": 0, "add_stages": 0, "accumulation": "output", "axi_stream": False}
    return array_mhz("ecp5", {**defaults, "pe": "fused", **design}, defaults, model, path)


def test_array_figure_is_the_median_of_its_own_runs(tmp_path):
    """Exactly this design in the shipped flow: the median of its seeds, never another flow's,
    element kind's or accumulation's runs (a column named like a parameter selects)."""
    runs = [_row((4, 4), (4, 6), f, seed) for f, seed in ((120.0, 1), (110.0, 2), (125.0, 3))]
    others = [_row((4, 4), (4, 6), 150.0, 4, pe="generic"), _row((4, 4), (4, 6), 150.0, 5, accumulation="column"),
              _row((4, 4), (4, 6), 150.0, 6, flow="verilog,dsp,scrambled,\"weight path, tag\",none")]
    figure = _figure(tmp_path, runs + others, dict(mul_stages=4, add_stages=6))
    assert figure["mhz"] == 120.0 and figure["design"] == "4x4 m4a6 fused"
    assert figure["measured"] == "median of seeds 1, 2, 3 (110-125 MHz)"
    assert _figure(tmp_path, runs, dict(mul_stages=4, add_stages=6, accumulation="column"))["mhz"] == 100.0
    assert _figure(tmp_path, [_row((9, 9), (4, 6), 0, fits=False, note="needs 89k LUTs")],
                   dict(rows=9, cols=9, mul_stages=4, add_stages=6))["mhz"] is None


def test_array_figure_elsewhere_is_the_model_derated_by_the_nearest_sizes(tmp_path):
    """An unmeasured size or depth: the model times the ratio the nearest measured sizes show
    (interpolated in PEs), never above what they reached; a design the CSV cannot tell from
    a measured one in an unrecorded parameter is predicted."""
    runs = [_row((2, 2), (4, 6), 130.0), _row((8, 8), (4, 6), 110.0), _row((8, 8), (2, 2), 60.0)]
    model = {(4, 6): 100.0, (2, 2): 50.0, (4, 7): 120.0}.get
    mid = _figure(tmp_path, runs, dict(rows=6, cols=6, mul_stages=2, add_stages=2), lambda m, a: model((m, a)))
    ratio = 1.3 + (1.1 - 1.3) * (36 - 4) / (64 - 4)
    assert mid["mhz"] == round(50.0 * ratio, 1) and "model at m2a2 (50.0 MHz)" in mid["predicted"]
    assert "2x2 m4a6 and 8x8 m4a6" in mid["predicted"]
    deeper = _figure(tmp_path, runs, dict(rows=8, cols=8, mul_stages=4, add_stages=7), lambda m, a: model((m, a)))
    assert deeper["mhz"] == 110.0 and "at most 110.0 MHz" in deeper["predicted"]
    # Rounded to 0.1 MHz the cap would read 110.0, past the array measured at 109.96.
    capped = _figure(tmp_path, [_row((8, 8), (4, 6), 109.96)], dict(rows=8, cols=8, mul_stages=4, add_stages=7),
                     lambda m, a: model((m, a)))
    assert capped["mhz"] == 109.96
    renamed = _figure(tmp_path, runs, dict(rows=8, cols=8, mul_stages=4, add_stages=6, axi_stream=True),
                      lambda m, a: model((m, a)))
    assert "predicted" in renamed and "axi_stream=True" in renamed["predicted"]
    assert "no fused array measured" in _figure(tmp_path, [], dict(rows=8, cols=8))["predicted"]


def test_a_predicted_array_is_never_faster_than_its_element(tmp_path):
    """A prediction above the element's own place and route at that depth is that figure
    (an array is no faster than its element); a measured array keeps its own runs."""
    from hdl.array_timing import array_mhz
    path = tmp_path / "mxu-pnr.csv"
    path.write_text("\n".join([_HEADER, _row((2, 2), (4, 6), 130.0)]) + "\n")
    defaults = {"rows": 4, "cols": 4, "mul_stages": 0, "add_stages": 0, "accumulation": "output", "axi_stream": False}
    design = {**defaults, "pe": "fused", "rows": 2, "cols": 2, "mul_stages": 3, "add_stages": 5}
    alone = {(3, 5): 113.0, (4, 6): 100.0}.get
    figure = array_mhz("ecp5", design, defaults, lambda m, a: 125.0, path, lambda m, a: alone((m, a)))
    assert figure["mhz"] == 113.0 and figure["predicted"].startswith("at most the element's own 113 MHz placed alone")
    measured = array_mhz("ecp5", {**design, "mul_stages": 4, "add_stages": 6}, defaults, lambda m, a: 125.0, path,
                         lambda m, a: alone((m, a)))
    assert measured["mhz"] == 130.0 and "measured" in measured
    unmeasured = array_mhz("ecp5", {**design, "mul_stages": 2, "add_stages": 2}, defaults, lambda m, a: 125.0,
                           path, lambda m, a: alone((m, a)))
    assert "element's own" not in unmeasured["predicted"]


#: A 2x2 array at m1a1 as docs/mxu-pnr.csv records it, in the shipped flow.
_ARRAY = {"arch": "ecp5", "rows": "2", "cols": "2", "mul_stages": "1", "add_stages": "1", "pe": "fused",
          "accumulation": "sequential", "mul_dsp": "inferred", "fifo_ram": "block", "source": "verilog",
          "floorplan": "dsp", "harness": "scrambled", "keep": "weight path, tag", "sync_resets": "inferred",
          "fits": "True"}


def _array_rows(seeds: dict, current: bool = True, **design) -> list[dict]:
    """docs/mxu-pnr.csv rows of one array, ``{seed: fmax}``, its design today's or not."""
    from hdl.target import mxu_identity, mxu_row_config
    row = {**_ARRAY, **{k: str(v) for k, v in design.items()}}
    identity = mxu_identity(mxu_row_config(row)) if current else "0" * 16
    return [{**row, "seed": seed, "fmax_mhz": fmax, "design": identity} for seed, fmax in seeds.items()]


def _mxu(capsys, *args):
    import hdl.build
    assert hdl.build.main(["mxu", "--rows", "2", "--cols", "2", *args]) == 0
    return capsys.readouterr().out


def test_mxu_target_mhz_comes_from_measured_arrays(tmp_path, monkeypatch, capsys):
    """A measured array: --arch records its median over seeds; --target-mhz at its slowest
    seed picks it; its median, above every seed of its size, is refused with the measured
    figure, in one line; the same runs of a design the generator no longer emits are not a
    measurement."""
    _tables(tmp_path, monkeypatch, array_rows=_array_rows({1: 120.0, 2: 110.0, 3: 125.0}))
    _mxu(capsys, "--mul-stages", "1", "--add-stages", "1", "--arch", "ecp5", "-o", str(tmp_path / "out"))
    (path,) = (tmp_path / "out").glob("*.json")
    figure = json.loads(path.read_text())["timing"]["achieved_mhz"]
    assert figure["mhz"] == 120.0 and figure["slowest_mhz"] == 110.0 and figure["design"] == "2x2 m1a1 fused"
    assert figure["measured"] == "median of seeds 1, 2, 3 (110-125 MHz)"
    out = _mxu(capsys, "--target-mhz", "110", "-o", str(tmp_path / "picked"))
    assert "120 MHz measured (2x2 m1a1" in out
    with pytest.raises(SystemExit) as stop:
        _mxu(capsys, "--target-mhz", "120", "-o", str(tmp_path / "refused"))
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1, err
    assert "out of reach on ecp5 for a 2x2 array: arrays measured 110 MHz at best on every seed" in err
    _tables(tmp_path, monkeypatch, array_rows=_array_rows({1: 120.0, 2: 110.0, 3: 125.0}, current=False))
    _mxu(capsys, "--mul-stages", "1", "--add-stages", "1", "--arch", "ecp5", "-o", str(tmp_path / "stale"))
    (path,) = (tmp_path / "stale").glob("*.json")
    assert "predicted" in json.loads(path.read_text())["timing"]["achieved_mhz"]


def test_mxu_of_an_unmeasured_size_is_predicted(tmp_path, monkeypatch, capsys):
    """Another size than the measured one: the element's model derated by it, never above
    what it reached."""
    _tables(tmp_path, monkeypatch, array_rows=_array_rows({1: 120.0, 2: 110.0, 3: 125.0}))
    import hdl.build
    assert hdl.build.main(["mxu", "--rows", "3", "--cols", "3", "--mul-stages", "1", "--add-stages", "1", "--arch",
                           "ecp5", "-o", str(tmp_path / "out")]) == 0
    (path,) = (tmp_path / "out").glob("*.json")
    figure = json.loads(path.read_text())["timing"]["achieved_mhz"]
    assert "measured" not in figure and figure["predicted"].startswith("the element's delay model at m1a1")
    assert figure["mhz"] <= 110.0 and "2x2 m1a1" in figure["predicted"]
    assert "MHz predicted: the element's delay model" in capsys.readouterr().out


