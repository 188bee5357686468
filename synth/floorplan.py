"""DSP floorplan for the MXU on the LFE5U-85F: each PE's multiplier pinned to a DSP site that
keeps the array's neighbours neighbours on the die.

nextpnr places a cell whose ``BEL`` attribute names a site there and nowhere else; its
analytical placer then pulls each PE's logic towards its pinned multiplier. Without pins the
placer assigns the 64 multipliers of an 8x8 array to DSP sites in any order, so a PE's
registers end up tens of columns from its multiplier (the 8x8's critical paths,
docs/timing.md). The plan: the 85F's 156 MULT18X18D sites lie in three die rows (``DSP_ROWS``),
52 each; the array's rows are split into up to three bands of consecutive rows, one per DSP
row, and inside a band PE ``(k, j)`` takes site ``j * band_rows + (k - first_row)`` of an
evenly spread subset, so a partial sum goes to the next site and an activation ``band_rows``
sites on, and a column continues at the same place in the next band.
"""

from __future__ import annotations

__all__ = ["DSP_ROWS", "DSP_COLUMNS", "SITES", "mxu_plan", "yosys_script"]

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
    """Yosys commands (after ``synth_ecp5``) setting each PE multiplier's ``BEL``."""
    return "\n".join(f'setattr -set BEL "{bel}" t:MULT18X18D n:unit.pe_{k}_{j}.* %i'
                     for (k, j), bel in sorted(plan.items()))
