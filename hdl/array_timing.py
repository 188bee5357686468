"""The MXU's clock from measured arrays (docs/mxu-pnr.csv), for ``hdl.build mxu --target-mhz``.

A lone element places and routes faster than the same element in an array (longer routes
between neighbours, a denser die, the output FIFO), so an array's figure comes from arrays:
the median over seeds of the runs of exactly this design (rows of the design the generator
emits now: ``hdl.designs``), or, for a size or depth not
measured, the element's delay model (``hdl.timing``) times the ratio the nearest measured
sizes show between their median and the model at their depth, never above the fastest of
those arrays. The CSV is read by its header: a column named like one of the design's
parameters (``rows``, ``cols``, ``mul_stages``, ``add_stages``, and any added later) must
hold the design's value, ``pe`` its element kind; other columns are ignored.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path
from typing import Callable

from golden.column import SEQUENTIAL

__all__ = ["MXU_PNR_CSV", "FLOW", "SIZE_AND_DEPTH", "array_mhz"]

ROOT = Path(__file__).resolve().parent.parent
MXU_PNR_CSV = ROOT / "docs" / "mxu-pnr.csv"
#: The runs that count: ``hdl.build``'s Verilog (its replicated registers kept, ``hdl.keep``)
#: with, on ECP5, the DSP floorplan it writes beside it (``NAME_lfe5u85f.ys``), plain
#: ``synth_*`` (the synchronous resets it infers left in), inside ``synth.pnr``'s harness with
#: scrambled inputs (``synth.mxu_pnr``'s defaults).
FLOW = {"source": "verilog", "harness": "scrambled", "keep": "weight path, tag", "sync_resets": "inferred"}
FLOORPLAN = {"ecp5": "dsp", "ice40": "none"}
#: The design parameters that the derating bridges (the other recorded ones must be equal).
SIZE_AND_DEPTH = ("rows", "cols", "mul_stages", "add_stages")


def _label(rows, cols, mul_stages, add_stages) -> str:
    return f"{rows}x{cols} m{mul_stages}a{add_stages}"


def _runs(arch: str, design: dict, path: Path, current: Callable[[dict], bool]) -> tuple[dict, dict, list]:
    """This kind of array's current runs (``current(row)``) in the flow above: ``{(rows, cols,
    m, a): [(seed, fmax)]}`` of the runs that fit, ``{(rows, cols, m, a): note}`` of the sizes
    that did not, and the CSV's columns."""
    fitted, unfit = {}, {}
    if not path.exists():
        return fitted, unfit, []
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        same = {c: str(v) for c, v in design.items() if c in reader.fieldnames and c not in SIZE_AND_DEPTH}
        wanted = {"arch": arch, "floorplan": FLOORPLAN[arch], **FLOW, **same}
        for row in reader:
            if any(row.get(c) != v for c, v in wanted.items()) or not current(row):
                continue
            key = tuple(int(row[c]) for c in SIZE_AND_DEPTH)
            if row["fits"] == "True":
                fitted.setdefault(key, []).append((int(row["seed"]), float(row["fmax_mhz"])))
            else:
                unfit[key] = row.get("note", "")
    return fitted, unfit, reader.fieldnames


def _where(path: Path) -> str:
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _measured(key: tuple, runs: list, path: Path, pe: str) -> dict:
    seeds, mhz = zip(*sorted(runs))
    spread = f" ({min(mhz):g}-{max(mhz):g} MHz)" if len(mhz) > 1 else ""
    return {"mhz": round(statistics.median(mhz), 2), "slowest_mhz": min(mhz),
            "measured": f"median of seeds {', '.join(map(str, seeds))}{spread}",
            "design": f"{_label(*key)} {pe}", "source": _where(path)}


def _between(n: int, points: list[tuple[int, float]]) -> float:
    """Linear interpolation in ``n`` over ``(n, value)`` points sorted by ``n``, the end
    values outside them."""
    if n <= points[0][0]:
        return points[0][1]
    for (n0, v0), (n1, v1) in zip(points, points[1:]):
        if n <= n1:
            return v0 + (v1 - v0) * (n - n0) / (n1 - n0)
    return points[-1][1]


def array_mhz(arch: str, design: dict, defaults: dict, element_mhz: Callable[[int, int], float],
              path: Path = MXU_PNR_CSV, element_measured: Callable[[int, int], float | None] = lambda m, a: None,
              current: Callable[[dict], bool] = lambda row: True) -> dict:
    """What ``path`` says of the array ``design`` (its parameters as the manifest spells
    them, ``pe`` included) on ``arch``: ``{"mhz", "slowest_mhz", "measured", "design",
    "source"}`` from its own runs (the median and the slowest of its seeds), or ``{"mhz",
    "predicted"}`` with the model that predicted it (``element_mhz(m, a)``: the element's
    delay model at a depth), never above the element's own place and route at that depth
    (``element_measured(m, a)``, None where none was made): an array is no faster than its
    element. A parameter the CSV does not record is taken to have its value in ``defaults``
    in every run, so a design with another value is predicted. A size recorded only as not
    fitting gives ``mhz`` None. Only the rows ``current(row)`` accepts count: a row whose
    design the generator no longer emits is history (``hdl.designs``)."""
    predicted = _predicted(arch, design, defaults, element_mhz, path, current)
    if "predicted" not in predicted:
        return predicted
    alone = element_measured(design["mul_stages"], design["add_stages"])
    if alone is not None and alone < predicted["mhz"]:
        return {"mhz": round(alone, 2), "predicted": f"at most the element's own {alone:g} MHz placed alone at "
                f"m{design['mul_stages']}a{design['add_stages']} (docs/timing.csv), below {predicted['predicted']}"}
    return predicted


def _predicted(arch: str, design: dict, defaults: dict, element_mhz: Callable[[int, int], float],
               path: Path, current: Callable[[dict], bool]) -> dict:
    """``array_mhz`` before the element's own figure caps a prediction."""
    fitted, unfit, columns = _runs(arch, design, path, current)
    other = [f"{k}={v}" for k, v in design.items() if k not in columns and k != "pe" and v != defaults.get(k)]
    exact = not other
    key = tuple(design[c] for c in SIZE_AND_DEPTH)
    if exact and key in fitted:
        return _measured(key, fitted[key], path, design["pe"])
    if exact and key in unfit:
        return {"mhz": None, "measured": f"does not fit: {unfit[key]}", "design": f"{_label(*key)} {design['pe']}",
                "source": _where(path)}
    model = element_mhz(design["mul_stages"], design["add_stages"])
    if not fitted:
        return {"mhz": round(model, 1), "predicted": f"the element's delay model (hdl/timing_model.json); no "
                f"{design['pe']} array measured with the {design.get('accumulation', SEQUENTIAL)} accumulation on "
                f"{arch} in {_where(path)}, so no derating: an upper bound"}
    best = {}          # per measured size, its fastest depth: (PEs, slowest seed, ratio to the model, label)
    for (rows, cols, m, a), runs in fitted.items():
        median, slowest = statistics.median(f for _, f in runs), min(f for _, f in runs)
        if (rows, cols) not in best or slowest > best[rows, cols][1]:
            best[rows, cols] = (rows * cols, slowest, median / element_mhz(m, a), _label(rows, cols, m, a))
    points = sorted(best.values())
    n = design["rows"] * design["cols"]
    below = [p for p in points if p[0] <= n][-1:]
    above = [p for p in points if p[0] > n][:1]
    near = below if below and below[0][0] == n else below + above
    ratio = _between(n, [(p[0], p[2]) for p in points])
    cap = _between(n, [(p[0], p[1]) for p in points])
    # Rounded, a prediction never passes what the measured arrays reached on every seed (so
    # a measured figure wins).
    return {"mhz": min(round(model * ratio, 1), round(cap, 2)),
            "predicted": f"the element's delay model at m{design['mul_stages']}a{design['add_stages']} "
                         f"({model:.1f} MHz) x {ratio:.3f}, the ratio of the measured "
                         f"{' and '.join(p[3] for p in near)} arrays' medians to the model at their depth"
                         f"{' (interpolated in PEs)' if len(near) == 2 else ''}, at most {cap:.1f} MHz, what "
                         f"they reached on every seed ({_where(path)})"
                         + (f"; measured only without this design's {', '.join(other)}" if other else "")}
