"""Benchmarks, run from the project root as ``python -m bench.NAME``: each reproduces a paper
table or measures speed side by side and prints markdown."""
