"""Test helpers shared across tiers (imported by tests; never a conftest or test_ file)."""
