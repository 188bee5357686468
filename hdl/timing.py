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

__all__ = ["ARCHES", "MODEL_PATH", "load_model", "segments", "period_ns", "predict_mhz", "unused"]

ARCHES = ("ecp5", "ice40")
MODEL_PATH = Path(__file__).with_name("timing_model.json")
COEFFICIENTS = ("t0", "levels", "carry", "mul")


def load_model(path: Path = MODEL_PATH) -> dict:
    """``{arch: {"t0", "levels", "carry", "mul": ns, ...}}``."""
    return json.loads(path.read_text())


def segments(component) -> list[Delay]:
    """Delays between consecutive registers of a unit, or of a ``ProcessingElement``: its
    weight-select mux before the multiplier, the multiplier's last segment running into
    the adder's first."""
    if hasattr(component, "mul") and hasattr(component, "add"):
        mul, add = component.mul.segments, component.add.segments
        mul = [mul[0] + Delay(1), *mul[1:]]
        return [*mul[:-1], mul[-1] + add[0], *add[1:]]
    return component.segments


def period_ns(delays: list[Delay], coefficients: dict) -> float:
    c = coefficients
    return max(c["t0"] + c["levels"] * d.levels + c["carry"] * d.carry + c["mul"] * d.mul for d in delays)


def predict_mhz(component, arch: str, model: dict | None = None) -> float:
    """Predicted Fmax of ``component`` on ``arch`` (``ecp5`` or ``ice40``)."""
    choice_param("arch", arch, ARCHES)
    model = model or load_model()
    return 1000 / period_ns(segments(component), model[arch])


def unused(*components) -> None:
    """Mark designs built only to be measured or predicted (and their parts) as unused on
    purpose, so Amaranth does not warn that they were never elaborated."""
    for c in components:
        for part in (c, *(getattr(c, name, None) for name in ("mul", "add", "rounder", "adder"))):
            if part is not None:
                part._MustUse__silence = True
