"""Random inputs from a stable seed: the same case gives the same numbers in every process.

`hash()` of a tuple with strings changes with PYTHONHASHSEED, so a failure seen once could
not be reproduced by its test id; zlib.crc32 of the case's repr does not change.

    rng = rng_for(case)            # one parametrized case
    rng = rng_for(request.node.nodeid)
"""

from __future__ import annotations

import zlib

import numpy as np


def seed_for(*parts: object) -> int:
    """A 32-bit seed from the repr of `parts` (stable across processes and machines)."""
    key = parts[0] if len(parts) == 1 else parts
    return zlib.crc32(repr(key).encode())


def rng_for(*parts: object) -> np.random.Generator:
    """numpy's generator seeded with seed_for(*parts)."""
    return np.random.default_rng(seed_for(*parts))
