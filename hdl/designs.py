"""Which design a published figure measured, and whether the generator still emits it.

Every result row (docs/timing.csv, docs/mxu-pnr.csv, docs/synth.csv) records in its
``design`` column the identity of the design it measured: the first 16 hex digits of the
SHA-256 of its generated text (an array: the ``NAME.v`` ``hdl.build`` writes; a unit or
element: Amaranth's Verilog of it under its module name; an area-sweep configuration: the
Verilog ``synth.sweep`` synthesises). A row is *current* when the generator, as the sources
stand, emits that same text for the row's configuration; otherwise it is history (*stale*:
another design now; *unrecorded*: measured before identities were recorded). ``hdl.build
--target-mhz`` reads only current rows; ``python -m synth.stale`` lists the others and
re-measures them.

Generating a large array takes seconds, so identities are cached under
``build/cache/designs.json`` by configuration and by a hash of the generator's sources
(hdl/, golden/ and Amaranth's version): a source change regenerates on the next check.
"""

from __future__ import annotations

import functools
import hashlib
import json
from importlib import metadata
from pathlib import Path
from typing import Callable

from golden.tools.cli import build_dir, write_text

__all__ = ["identity", "sources_hash", "cached_identity", "CURRENT", "STALE", "UNRECORDED", "status"]

ROOT = Path(__file__).resolve().parent.parent
CURRENT, STALE, UNRECORDED = "current", "stale", "unrecorded"


def identity(text: str | bytes) -> str:
    """A design's identity: the first 16 hex digits of its text's SHA-256."""
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()[:16]


@functools.cache
def sources_hash() -> str:
    """What every generated design depends on: the generator's sources (hdl/ and golden/,
    their Python files, the Verilog models and the delay model that places the registers)
    and Amaranth's version (its Yosys too)."""
    h = hashlib.sha256(metadata.version("amaranth").encode())
    for path in sorted([*(ROOT / "hdl").rglob("*.py"), *(ROOT / "hdl").rglob("*.v"), *(ROOT / "hdl").rglob("*.json"),
                        *(ROOT / "golden").rglob("*.py")]):
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _cache_path() -> Path:
    return build_dir("cache", "designs.json")


def cached_identity(kind: str, config: dict, generate: Callable[[], str]) -> str:
    """The identity of the design ``generate()`` returns (``kind`` and ``config`` name it),
    from the cache while the sources are unchanged, else generated and cached."""
    path = _cache_path()
    key = f"{sources_hash()} {kind} {json.dumps(config, sort_keys=True)}"
    try:
        known = json.loads(path.read_text())
    except (OSError, ValueError):
        known = {}
    if key not in known:
        known = {k: v for k, v in known.items() if k.startswith(sources_hash())}   # older sources' entries go
        known[key] = identity(generate())
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps(known, indent=1, sort_keys=True) + "\n")
    return known[key]


def status(recorded: str | None, current: Callable[[], str]) -> str:
    """A row's status from its recorded identity and ``current()``, the identity the
    generator gives its configuration now (not called for a row with none recorded)."""
    if not recorded:
        return UNRECORDED
    return CURRENT if recorded == current() else STALE
