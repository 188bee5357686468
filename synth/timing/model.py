"""The delay model's fit to ``synth.timing``'s measured periods (``hdl.timing``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from golden.tools.cli import write_text
from hdl import timing

from .designs import FABRIC_ADD_WIDTH, design_plan

def fit(rows, model: dict) -> dict:
    """Least-squares fit of each architecture's coefficients to the measured periods; the
    critical segment is re-chosen under the new coefficients until it settles. With fewer
    runs than coefficients only ``t0`` moves (the slopes keep their values)."""
    from scipy.optimize import nnls
    new = {}
    for arch in model:
        # SB_MAC16 runs are left out: the iCE40 units' multiplies are LUTs; so are the runs of
        # another synthesis flow (_nosr) and the column accumulator's designs (measured after
        # the committed fit; a refit with them is a change of the model of its own). The references are one segment each, the adder's
        # ``sum`` segment for the add/subtract alone.
        reference = {"bare": [timing.Delay(mul=1)], "fabric_add": [timing.Delay(1, FABRIC_ADD_WIDTH)]}
        designs = [(reference.get(r["kind"]) or design_plan(r["kind"], r["stages"]).segments,
                    1000 / r["fmax_mhz"]) for r in rows
                   if r["arch"] == arch and not r["kind"].endswith(("_dsp", "_nosr"))
                   and not r["kind"].startswith(("pe_col", "colround"))]
        if not designs:
            new[arch] = model[arch]
            continue
        coeffs = dict(model[arch])
        full = len(designs) >= 2 * len(timing.COEFFICIENTS)
        for _ in range(10):
            a, y = [], []
            for delays, period in designs:
                worst = max(delays, key=lambda d: timing.period_ns([d], coeffs))
                a.append([1, worst.levels, worst.carry, worst.mul])
                y.append(period)
            a, y = np.array(a, float), np.array(y, float)
            if full:
                x, _ = nnls(a, y)
            else:
                slopes = np.array([coeffs[k] for k in timing.COEFFICIENTS[1:]])
                x = [max(0.0, float(np.mean(y - a[:, 1:] @ slopes))), *slopes]
            coeffs = {**coeffs, **dict(zip(timing.COEFFICIENTS, (round(float(v), 4) for v in x)))}
        err = [timing.period_ns(d, coeffs) / p - 1 for d, p in designs]
        coeffs.update(source=f"{'fitted' if full else 't0 fitted (slopes prior)'} to {len(designs)} nextpnr runs "
                             "in docs/timing.csv",
                      rms_error_pct=round(100 * float(np.sqrt(np.mean(np.square(err)))), 1))
        new[arch] = coeffs
    return new


def write_model(model: dict, path: Path) -> None:
    write_text(path, json.dumps(model, indent=2) + "\n")
    for arch, c in model.items():
        print(f"{arch}: " + ", ".join(f"{k} {c[k]}" for k in timing.COEFFICIENTS) + f" ({c['source']}, "
              f"rms error {c['rms_error_pct']} %)")
    if path.resolve() == timing.MODEL_PATH.resolve():
        print(f"wrote {path}: published")
    else:
        same = model == timing.load_model()
        print(f"wrote {path}: " + ("the same as hdl/timing_model.json" if same else
                                   "differs from hdl/timing_model.json (--model-out hdl/timing_model.json publishes)"))
