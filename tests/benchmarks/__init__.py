"""Tests of the harnesses in benchmarks/."""
