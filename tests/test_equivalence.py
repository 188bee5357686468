"""``synth.equivalence`` proves a regrouped design equal to the original and fails on a
planted difference: a register moved into a component of its own, then its compare changed."""

from __future__ import annotations

import pytest
from amaranth.back import verilog
from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from synth.equivalence import prove, renames

_PORTS = {"en": In(1), "hit": Out(1)}


class _Counter(wiring.Component):
    """A 4-bit count of ``en``; ``hit`` when it equals ``at``."""

    def __init__(self, at: int):
        self.at = at
        super().__init__(_PORTS)

    def elaborate(self, platform):
        m = Module()
        count = Signal(4, name="count")
        m.d.sync += count.eq(count + self.en)
        m.d.comb += self.hit.eq(count == self.at)
        return m


class _Inline(wiring.Component):
    """The count in the top module itself (the design before)."""

    def __init__(self):
        super().__init__(_PORTS)

    def elaborate(self, platform):
        m = Module()
        count = Signal(4, name="count")
        m.d.sync += count.eq(count + self.en)
        flag = Signal(name="flag")
        m.d.sync += flag.eq(count == 3)
        m.d.comb += self.hit.eq(flag)
        return m


class _Grouped(wiring.Component):
    """The count in a component (the design after; ``at`` != 3: a planted difference)."""

    def __init__(self, at: int = 3):
        self.at = at
        super().__init__(_PORTS)

    def elaborate(self, platform):
        m = Module()
        m.submodules.counter = counter = _Counter(self.at)
        flag = Signal(name="flag")
        m.d.comb += counter.en.eq(self.en)
        m.d.sync += flag.eq(counter.hit)
        m.d.comb += self.hit.eq(flag)
        return m


def _write(folder, design):
    folder.mkdir()
    path = folder / "pair.v"
    path.write_text(verilog.convert(design, name="pair"))
    return path


def test_renames_strip_a_new_instance_name_only_where_unambiguous():
    gold = {"count", "flag", "a.b", "d"}
    gate = {"counter.count", "flag", "x.y", "a.c.b", "p.d", "q.d"}
    # a.c.b: "a" is the gold's instance, not a new one; d: two gate names would take it.
    assert renames(gold, gate) == {"counter.count": "count"}


@pytest.mark.parametrize("at, proved", [(3, True), (2, False)])
def test_regrouped_design_is_proved_and_a_changed_one_is_not(tmp_path, at, proved):
    gold = _write(tmp_path / "gold", _Inline())
    gate = _write(tmp_path / "gate", _Grouped(at))
    result = prove(gold, gate)
    assert result["proven"] > 0
    assert (result["unproven"] == []) == proved, result
    if not proved:
        assert {"hit", "flag"} & set(result["unproven"]), result
