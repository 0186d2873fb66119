"""Benchmarks (not tests): run with `make bench`; results and commands in docs/benchmarks.md."""
