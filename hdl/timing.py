"""Per-architecture delay model: a unit's predicted Fmax from its pipeline's segments.

A segment's delay is ``t0 + t_level * levels + t_carry * carry + t_mul * mul`` (ns) with the
features of ``pipeline.Delay``; the unit's period is its slowest segment's. The
coefficients per architecture live in ``hdl/timing_model.json``, fitted by
``python -m synth.timing --fit`` from the place-and-route results in ``docs/timing.csv``
(method: docs/timing.md).
"""

from __future__ import annotations

import json
from pathlib import Path

from .params import choice_param
from .pipeline import Delay

__all__ = ["ARCHES", "MODEL_PATH", "load_model", "period_ns", "predict_mhz"]

ARCHES = ("ecp5", "ice40")
MODEL_PATH = Path(__file__).with_name("timing_model.json")
COEFFICIENTS = ("t0", "levels", "carry", "mul")


def load_model(path: Path = MODEL_PATH) -> dict:
    """``{arch: {"t0", "levels", "carry", "mul": ns, ...}}``."""
    return json.loads(path.read_text())


def period_ns(delays: list[Delay], coefficients: dict) -> float:
    c = coefficients
    return max(c["t0"] + c["levels"] * d.levels + c["carry"] * d.carry + c["mul"] * d.mul for d in delays)


def predict_mhz(plan, arch: str, model: dict | None = None) -> float:
    """Predicted Fmax on ``arch`` (``ecp5`` or ``ice40``) of a unit, a processing element or
    their plan (``UnitPlan``, ``ElementPlan``: anything with ``segments``)."""
    choice_param("arch", arch, ARCHES)
    model = model or load_model()
    return 1000 / period_ns(plan.segments, model[arch])
