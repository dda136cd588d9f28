"""Tests of engine.catalog: the manifest, fetching, sample media."""
