"""Formal proofs, ``python -m sim.formal`` (``cli``): pipelining changes no bit (``pipelining``:
bounded model checking of a ``miter``; ``structural``: path depths and the netlist with wires
for registers), the fused PE equals the generic one (``pipelining.check_pe``, ``equiv``), and
the MXU's stream contract (``stream_proof``, on the harnesses of ``stream_fifo`` and
``stream_mxu``; k-induction with SymbiYosys: ``sby``)."""
