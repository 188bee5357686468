"""DSP floorplan for the MXU on the LFE5U-85F: each PE's multiplier pinned to a DSP site that
keeps the array's neighbours neighbours on the die.

nextpnr places a cell whose ``BEL`` attribute names a site there and nowhere else; its
analytical placer then pulls each PE's logic towards its pinned multiplier. Without pins the
placer assigns an array's multipliers (the 64 of an 8x8 array) to DSP sites in any order, so
a PE's registers end up tens of columns from its multiplier, and those routes become the
array's longest paths (docs/history.md). The plan: the 85F's 156 MULT18X18D sites
lie in three die rows (``DSP_ROWS``), 52 each; the array's rows are split into up to three
bands of consecutive rows, one per DSP row, and inside a band PE ``(k, j)`` takes site
``j * band_rows + (k - first_row)`` of an evenly spread subset, so a partial sum goes to the
next site and an activation ``band_rows`` sites on, and a column continues at the same place
in the next band.

``python -m hdl.build mxu`` writes the plan as a Yosys script beside an array's Verilog
(``write_scripts``; docs/mxu-timing.md, "The placement help ships with the Verilog"),
``NAME_lfe5u85f.ys``, run after ``synth_ecp5``. The array figures of docs/mxu-pnr.csv are
placed with exactly it.
"""

from __future__ import annotations

from pathlib import Path

from golden.tools.cli import write_text

__all__ = ["DSP_ROWS", "DSP_COLUMNS", "SITES", "mxu_plan", "yosys_script", "script_paths", "write_scripts"]

#: Die rows (nextpnr's Y) of the LFE5U-85F's DSP rows.
DSP_ROWS = (10, 34, 58)
#: First column of each 9-tile DSP block in a DSP row; its MULT18X18D sites are at offsets 0, 1, 4, 5.
DSP_COLUMNS = (4, 13, 22, 31, 40, 49, 58, 69, 78, 87, 96, 105, 114)
#: Multiplier sites per DSP row, left to right: (column, BEL name).
SITES = [(c + i, f"MULT18_{i}") for c in DSP_COLUMNS for i in (0, 1, 4, 5)]
#: PEs per band above which a band holds more than about a third of the die's logic.
_BAND_PES = 24


def mxu_plan(rows: int, cols: int) -> dict[tuple[int, int], str]:
    """PE ``(k, j)`` -> nextpnr BEL name (``X<col>/Y<row>/MULT18_<i>``) for a ``rows`` x
    ``cols`` array; a ``ValueError`` when it has more PEs than the part has sites, or more in
    a band than one DSP row has."""
    if rows * cols > len(DSP_ROWS) * len(SITES):
        raise ValueError(f"a {rows}x{cols} MXU needs {rows * cols} DSP sites; the LFE5U-85F has "
                         f"{len(DSP_ROWS) * len(SITES)}")
    bands = min(len(DSP_ROWS), rows, -(-rows * cols // _BAND_PES))
    # Array rows per band, as even as possible; rows of cols PEs must fit a DSP row's sites.
    sizes = [rows // bands + (b < rows % bands) for b in range(bands)]
    if max(sizes) * cols > len(SITES):
        raise ValueError(f"a {rows}x{cols} MXU has rows of {cols} PEs: {max(sizes)} of them do not "
                         f"fit one DSP row's {len(SITES)} sites")
    die_rows = {1: DSP_ROWS[1:2], 2: DSP_ROWS[1:], 3: DSP_ROWS}[bands]
    plan, first = {}, 0
    for size, y in zip(sizes, die_rows):
        n = size * cols
        step = min(len(SITES) // n, 2)       # every other site at most: a PE fills ~5 columns
        start = (len(SITES) - step * (n - 1)) // 2
        for k in range(first, first + size):
            for j in range(cols):
                column, bel = SITES[start + step * (j * size + k - first)]
                plan[(k, j)] = f"X{column}/Y{y}/{bel}"
        first += size
    return plan


def yosys_script(plan: dict[tuple[int, int], str]) -> str:
    """Yosys commands (after ``synth_ecp5``) setting each PE multiplier's ``BEL``: the
    multiplier of the array's instance ``pe_K_J``, whatever the array's own instance name."""
    return "\n".join(f'setattr -set BEL "{bel}" t:MULT18X18D n:*pe_{k}_{j}.* %i'
                     for (k, j), bel in sorted(plan.items()))


def script_paths(rows: int, cols: int, name: str, out_dir: Path) -> list[Path]:
    """The synthesis script ``write_scripts`` writes for a ``rows x cols`` array ``name``:
    ``NAME_lfe5u85f.ys`` when the array has a DSP plan on that part, else none."""
    try:
        mxu_plan(rows, cols)
    except ValueError:
        return []
    return [out_dir / f"{name}_lfe5u85f.ys"]


def write_scripts(rows: int, cols: int, name: str, out_dir: Path) -> list[Path]:
    """Write the script of ``script_paths`` into ``out_dir``; its paths."""
    how = (f"# Yosys, for the MXU module {name} (python -m hdl.build; docs/mxu.md):\n"
           f"#   read_verilog YOUR_TOP.v {name}.v; hierarchy -top YOUR_TOP\n"
           f"#   synth_ecp5 -top YOUR_TOP; script {name}_lfe5u85f.ys")
    paths = script_paths(rows, cols, name, out_dir)
    for path in paths:
        write_text(path, f"{how}\n# LFE5U-85F: each PE's multiplier on a DSP site that keeps the array's "
                         f"neighbours near.\n{yosys_script(mxu_plan(rows, cols))}\n")
    return paths
