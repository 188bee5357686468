"""The import graph keeps the layers (docs/architecture.md): golden.tools <- golden <- hdl <-
sim, synth; sim and synth never import each other; no import circle, lazy imports included."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("golden", "hdl", "sim", "synth")
#: Layer -> the layers it may import (its own included).
ALLOWED = {
    "golden.tools": {"golden.tools"},
    "golden": {"golden.tools", "golden"},
    "hdl": {"golden.tools", "golden", "hdl"},
    "sim": {"golden.tools", "golden", "hdl", "sim"},
    "synth": {"golden.tools", "golden", "hdl", "synth"},
}


def layer(module: str) -> str:
    return "golden.tools" if module == "golden.tools" or module.startswith("golden.tools.") else module.split(".")[0]


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def imports(name: str, path: Path, known: dict) -> set[str]:
    """The project modules ``name`` imports anywhere in its body (a ``from P import x`` of
    a submodule ``P.x`` counts as importing ``P.x``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known]
            out |= set(subs) if len(subs) == len(node.names) else {target, *subs}
    return {m for m in out if m.split(".")[0] in PACKAGES}


GRAPH = {name: imports(name, path, modules()) for name, path in modules().items()}


def test_graph_is_read():
    # A parser that finds nothing would pass every check below.
    assert "hdl.mxu" in GRAPH["hdl.build"] and "golden.tools.cli" in GRAPH["synth.timing.cli"]
    assert len(GRAPH) > 80


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_no_import_up_a_layer(name):
    wrong = sorted(m for m in GRAPH[name] if layer(m) not in ALLOWED[layer(name)])
    assert not wrong, f"{name} ({layer(name)}) imports {wrong}: only {sorted(ALLOWED[layer(name)])} are allowed"


def cycles(graph: dict) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circle():
    assert cycles(GRAPH) == []


def test_old_entry_points_say_where_they_moved_and_run():
    import subprocess
    import sys

    import sim

    proc = subprocess.run([sys.executable, "-m", "sim.exhaustive", "--help"], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.returncode == 0 and "usage: python -m sim.compiled.exhaustive" in proc.stdout
    assert proc.stderr.splitlines()[0] == "python -m sim.exhaustive moved to python -m sim.compiled.exhaustive"
    with pytest.raises(ImportError, match="sim.host moved to hdl.board.host"):
        import sim.host  # noqa: F401
    assert all(new in modules() for new in sim.MOVED.values()), "a pointer to a module that is not there"


#: The longest function hdl/ and synth/ keep (lines, its def and docstring included).
MAX_FUNCTION_LINES = 60


def test_functions_are_short():
    long = []
    for package in ("hdl", "synth"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > MAX_FUNCTION_LINES:
                        long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_array_is_generic():
    """The MXU's array, element, control and output side, and hdl.build, know the ways of
    summing a column only through hdl.mxu.accumulation's interface: they import none of its
    implementations (a new way is a new file there, not a branch here); the array stays small."""
    generic = ["hdl.mxu.array", "hdl.mxu.element", "hdl.mxu.control", "hdl.mxu.output", "hdl.build"]
    implementations = {m for m in GRAPH if m.startswith("hdl.mxu.accumulation.")} - {"hdl.mxu.accumulation.base"}
    assert implementations >= {"hdl.mxu.accumulation.bound", "hdl.mxu.accumulation.sequential"}
    for name in generic[:-1]:
        assert not GRAPH[name] & implementations, f"{name} imports {sorted(GRAPH[name] & implementations)}"
    # hdl.build names the column units (window adder, rounder, point) as units of their own,
    # never the ways of summing.
    ways = {f"hdl.mxu.accumulation.{m}" for m in ("sequential", "windowed", "running", "bound")}
    assert not GRAPH["hdl.build"] & ways
    assert len((ROOT / "hdl" / "mxu" / "array.py").read_text().splitlines()) < 300
