"""The sections of BENCHMARKS.md, one module per benchmark (see ``benchmarks/report.py``)."""
