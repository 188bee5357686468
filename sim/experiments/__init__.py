"""Experiments run on the RTL and the figures drawn from it: multi-pass fp32 products on the
compiled MXU (``multipass_rtl``), stochastic rounding on the SR unit (``sr_rtl``), and the
MXU's timing diagrams for docs/mxu-timing.md (``mxu_waves``)."""
