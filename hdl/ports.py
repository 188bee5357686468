"""A generated module's ports as a user connects them: the order its signature declares,
each port's direction and width, the fields packed in struct and array payloads, and a
Verilog instantiation template. Everything is derived from the component's signature, so a
new port or payload field appears without changes here."""

from __future__ import annotations

import re

from amaranth.hdl import ValueCastable
from amaranth.lib import data, wiring

__all__ = ["signature_ports", "order_ports", "unindexed_names", "ports_of", "escaped_ports", "instantiation_template"]

#: Ports Amaranth adds for the ``sync`` clock domain, first in every module that has one.
CLOCK_PORTS = {"clk": "clock, rising edge", "rst": "synchronous reset, active high"}

# Yosys escapes names that are SystemVerilog keywords: ``\rand `` is the identifier ``rand``.
_PORT = re.compile(r"^\s*(input|output)\s+(?:\[(\d+):0\]\s+)?\\?(\w+)\s*;", re.M)


def _fields(layout, prefix: str = "", base: int = 0) -> list[dict]:
    """Leaf fields of a ``lib.data`` layout: name (``[2]`` for array elements, ``.a`` for
    struct members, nested as ``[2].a``), bit offset in the port and width."""
    out = []
    for key, field in layout:
        name = f"{prefix}[{key}]" if isinstance(layout, data.ArrayLayout) else f"{prefix}.{key}"
        shape = field.shape
        if isinstance(shape, data.Layout):
            out += _fields(shape, name, base + field.offset)
        else:
            out.append({"name": name.lstrip("."), "offset": base + field.offset, "width": field.width})
    return out


def signature_ports(component, clocked: bool) -> list[dict]:
    """Every top-level port in declaration order (``clk``, ``rst`` first when ``clocked``):
    name, direction, width, and ``fields`` for payloads with a struct or array layout."""
    ports = [{"name": n, "direction": "input", "width": 1} for n in CLOCK_PORTS] if clocked else []
    for path, member, value in component.signature.flatten(component):
        port = {"name": "__".join(map(str, path)),
                "direction": "input" if member.flow == wiring.In else "output",
                "width": len(value.as_value() if isinstance(value, ValueCastable) else value)}
        if isinstance(member.shape, data.Layout):
            port["fields"] = _fields(member.shape)
        ports.append(port)
    return ports


def ports_of(text: str, name: str) -> list[dict]:
    """The module's ports as its Verilog declares them (declaration order)."""
    start = text.index(f"module {name}(")
    body = text[start:text.index("endmodule", start)]
    return [{"name": n, "direction": d, "width": int(msb) + 1 if msb else 1}
            for d, msb, n in _PORT.findall(body)]


def _header(text: str, name: str):
    return re.compile(rf"^module {re.escape(name)}\((.*?)\);", re.M | re.S).search(text)


def escaped_ports(text: str, name: str) -> set[str]:
    """Ports the Verilog names as escaped identifiers (SystemVerilog keywords such as ``rand``)."""
    return {p.strip()[1:] for p in _header(text, name)[1].split(",") if p.strip().startswith("\\")}


#: An escaped identifier ending in a bit index, ``\\flags[0] ``: Amaranth names each element
#: of an array-shaped signal so. Yosys's ABC9 (``synth_ecp5``, ``synth_ice40``) names the bits
#: of the wire ``flags`` the same way and stops on the clash ("Assert count_id(wire->name) ==
#: 0", a known Yosys bug).
_INDEXED_NAME = re.compile(r"\\([A-Za-z_][\w.$]*)\[(\d+)\] ")


def unindexed_names(text: str) -> str:
    """``text`` with every escaped identifier ``\\NAME[I] `` renamed ``\\NAME.I `` (an
    element of an array-shaped signal), so that no wire's name looks like another's bit;
    a ``ValueError`` if a new name is taken."""
    renamed = _INDEXED_NAME.sub(lambda m: f"\\{m[1]}.{m[2]} ", text)
    taken = {f"{m[1]}.{m[2]}" for m in _INDEXED_NAME.finditer(text)} & set(re.findall(r"\\(\S+) ", text))
    if taken:
        raise ValueError(f"cannot rename array elements: {sorted(taken)[:3]} already exist")
    return renamed


def order_ports(text: str, name: str, order: list[str]) -> str:
    """``text`` with module ``name``'s port list (which fixes positional connection order)
    rewritten in ``order``; declarations are by name and stay as they are."""
    match = _header(text, name)
    # An escaped identifier (``\\rand``) ends at white space, which it keeps.
    listed = {p.strip().lstrip("\\"): p.strip() + (" " if p.strip().startswith("\\") else "")
              for p in match[1].split(",")}
    if set(listed) != set(order):
        raise AssertionError(f"{name}: Verilog ports {sorted(listed)} differ from the signature's {sorted(order)}")
    return text[:match.start(1)] + ", ".join(listed[p] for p in order) + text[match.end(1):]


def _describe(port: dict) -> str:
    width = f" [{port['width'] - 1}:0]" if port["width"] > 1 else ""
    text = f"{port['direction']}{width}"
    if port["name"] in CLOCK_PORTS:
        return f"{text}, {CLOCK_PORTS[port['name']]}"
    fields = port.get("fields")
    if fields:
        parts = [f"{f['name']} bit {f['offset']}" if f["width"] == 1 else
                 f"{f['name']} bits {f['offset'] + f['width'] - 1}:{f['offset']}" for f in fields]
        text += ": " + ", ".join(parts)
    return text


def instantiation_template(name: str, ports: list[dict], facts: dict, escaped: set[str] = frozenset()) -> str:
    """Verilog that instantiates module ``name``, one port per line with a comment giving its
    direction, width and payload fields; ``facts`` (latency, ...) head the template.
    Names in ``escaped`` are written as escaped identifiers, as the module declares them."""
    names = {p["name"]: f"\\{p['name']} " if p["name"] in escaped else p["name"] for p in ports}
    width = max(map(len, names.values()))
    about = ", ".join(f"{k} {v}" for k, v in facts.items())
    lines = [f"// Instantiation template for {name} ({about}).",
             "// Generated by python -m hdl.build next to the module; rename u_" + name + " and the nets.",
             f"{name} u_{name} ("]
    for i, port in enumerate(ports):
        comma = "," if i < len(ports) - 1 else " "
        net = names[port["name"]]
        lines.append(f"    .{net:<{width}} ({net:<{width}}){comma}  // {_describe(port)}")
    lines.append(");")
    return "\n".join(lines) + "\n"
