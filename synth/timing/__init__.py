"""Fmax against pipeline depth on real parts: ``python -m synth.timing`` (``--help``, ``cli``).

Places and routes (nextpnr, seed ``pnr.SEED``) the bare registered 8x8 significand multiply
and, at increasing ``stages``, the bf16 exact and RNE multipliers, the fp32 adder, the fp32 ->
bf16 SR unit and the MXU processing element, each in ``pnr.FmaxHarness`` (on iCE40 also the
fp32 adder's 28-bit significand add/subtract alone, the fabric's reference). One run at a time
(``--lock`` takes a file lock around each); every result is cached under ``--cache`` as it
comes, and ``docs/timing.csv`` / ``docs/timing-fmax-vs-stages.png`` are rewritten after each.
``--fit`` refits the delay model from the runs, ``--fit-only`` from docs/timing.csv: the model
goes to ``--model-out`` (under build/; ``--model-out hdl/timing_model.json`` publishes it).

``designs``: the plan and each run's design; ``runs``: one place and route, cached;
``report``: the CSV, the plot and the tables; ``model``: the delay model's fit.
"""
