"""Placing a unit's ``stages`` registers at its cut points."""

from __future__ import annotations

from amaranth.hdl import Signal, Value
from amaranth.lib import data

from .params import int_param

__all__ = ["check_stages", "Stages"]

MAX_STAGES = 16


def check_stages(stages) -> int:
    return int_param("stages", stages, 0, MAX_STAGES)


class Stages:
    """Distributes ``stages`` registers over a datapath's cut points.

    Parameters
    ----------
    stages : int
        Register stages in the datapath (its latency).
    preference : list of str
        The datapath's cut points, most useful first (the one that best splits the longest
        path). Stage ``i`` goes to ``preference[i % len(preference)]``: with more stages
        than cut points, the cut points get a second register each, and so on.
    """

    def __init__(self, stages: int, preference: list[str]):
        self.stages = check_stages(stages)
        self.count = {name: 0 for name in preference}
        for i in range(self.stages):
            self.count[preference[i % len(preference)]] += 1

    def cut(self, m, name: str, **values):
        """``values`` delayed by the registers at cut point ``name`` (a dict, same keys)."""
        out = {}
        for key, value in values.items():
            for i in range(self.count[name]):
                shape = value.shape() if isinstance(value, (Value, data.View)) else Value.cast(value).shape()
                reg = Signal(shape, name=f"{name}_{key}_r{i}")
                m.d.sync += reg.eq(value)
                value = reg
            out[key] = value
        return out
