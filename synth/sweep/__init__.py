"""Area across mantissa widths and formats: ``python -m synth.sweep`` (``--help``, ``cli``).

``configs``: what is synthesised; ``cache``: one configuration through Yosys (and nextpnr),
cached; ``report``: fits, claims, CSV, Markdown and plots.
"""
