"""Simulation and proof of the generated RTL against golden, one job per folder:
``testbenches`` (cocotb), ``compiled`` (Verilator C++ driven from NumPy), ``formal`` (proofs),
``experiments`` (experiments on the RTL); ``configs``: the unit configurations the
testbenches and the compiled path share.

The commands that lived directly in ``sim`` before the folders (``python -m sim.exhaustive``
and friends) still run for one release: each says where it moved, then runs there.
"""

import importlib.abc
import importlib.machinery
import sys

#: Old ``python -m`` names -> their modules now (remove in the release after 0.1).
MOVED = {
    "sim.exhaustive": "sim.compiled.exhaustive", "sim.compiled_matmul": "sim.compiled.matmul",
    "sim.compiled_mxu": "sim.compiled.mxu", "sim.compiled_bench": "sim.compiled.bench",
    "sim.mxu_bench": "sim.compiled.mxu_bench", "sim.bench": "sim.testbenches.bench",
    "sim.multipass_rtl": "sim.experiments.multipass_rtl", "sim.sr_rtl": "sim.experiments.sr_rtl",
    "sim.mxu_waves": "sim.experiments.mxu_waves", "sim.host": "hdl.board.host",
}


class _Pointer(importlib.abc.MetaPathFinder, importlib.abc.InspectLoader):
    """Runs an old ``python -m sim.NAME`` as its new module after one line on stderr; an
    import of the old name fails naming the new one."""

    def find_spec(self, name, path=None, target=None):
        return importlib.machinery.ModuleSpec(name, self) if name in MOVED else None

    def get_source(self, name):
        return (f"import runpy, sys\nprint('python -m {name} moved to python -m {MOVED[name]}', file=sys.stderr)\n"
                f"runpy.run_module({MOVED[name]!r}, run_name='__main__', alter_sys=True)\n")

    def exec_module(self, module):
        raise ImportError(f"{module.__name__} moved to {MOVED[module.__name__]}")


sys.meta_path.append(_Pointer())
