"""What every package shares and none of it numeric: the command-line conventions
(``cli``: errors in one line, output paths checked before work, files written whole, the
``build/`` folder, progress bars) and parallel jobs on processes or Dask (``executor``).

The base layer: it imports nothing from the project, so golden, hdl, sim and synth can all
use it. It sits inside ``golden/`` only because the top-level folders are fixed.
"""
