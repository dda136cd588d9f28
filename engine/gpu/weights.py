"""The weights cache: one GPU buffer per distinct constant, shared by every engine on a device.

As XNNPACK's shared weights cache: a second engine of the same model (or a model sharing
layers with one already loaded) uploads nothing again. Constants are the kernels' packed
weights, biases and small parameter blocks (`Binding(role="const")`).

- key: a hash of the bytes as uploaded (so the storage precision and the packing layout
  are part of it) plus the buffer usage (uniform or storage);
- reference counted: an engine acquires each buffer it binds and releases them all when
  closed (`Engine.close()`, its context manager, or when it is garbage collected); a
  buffer with no engine left is dropped from the cache (and freed by wgpu with it);
- `stats()`: buffers and bytes held, and how many acquisitions were hits.

    cache = WeightsCache(device)
    buf = cache.acquire(binding, precision); ...; cache.release(buf)
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

import numpy as np

from engine.gpu.kernels.base import FIXED_DTYPES, Binding
from engine.precision import Precision


@dataclass
class _Entry:
    buffer: object
    nbytes: int
    users: int = 0


def constant_bytes(b: Binding, precision: Precision) -> np.ndarray:
    """A const binding's data as uploaded: the storage precision (or the fixed type the
    binding names, FIXED_DTYPES), zero padded to a multiple of 16 bytes (binding sizes)."""
    dtype = FIXED_DTYPES.get(b.dtype, precision.dtype)
    data = np.ascontiguousarray(b.data, dtype=dtype).reshape(-1)
    padded = np.zeros(max(16, -(-data.nbytes // 16) * 16) // data.itemsize, data.dtype)
    padded[: data.size] = data
    return padded


class WeightsCache:
    """Constant buffers of one device by content (see the module docstring)."""

    def __init__(self, device):
        self.device = device
        self._entries: dict[tuple[bytes, str], _Entry] = {}
        self._keys: dict[int, tuple[bytes, str]] = {}  # id(buffer) -> key
        # reentrant: a garbage collection inside acquire() can run an unreachable Engine's
        # __del__, whose release() comes back here on the same thread (a Lock deadlocked CI)
        self._lock = threading.RLock()
        self.hits = self.misses = 0

    def acquire(self, b: Binding, precision: Precision):
        """The buffer holding `b`'s constants (uploaded on first use); one more user."""
        import wgpu

        data = constant_bytes(b, precision)
        space = "uniform" if b.space == "uniform" else "storage"
        key = (hashlib.blake2b(data.tobytes(), digest_size=20).digest(), space)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                usage = wgpu.BufferUsage.UNIFORM if space == "uniform" else wgpu.BufferUsage.STORAGE
                buf = self.device.create_buffer_with_data(data=data, usage=usage)
                entry = self._entries[key] = _Entry(buf, data.nbytes)
                self._keys[id(buf)] = key
                self.misses += 1
            else:
                self.hits += 1
            entry.users += 1
            return entry.buffer

    def release(self, buffer) -> None:
        """One user fewer; the buffer leaves the cache with its last user."""
        with self._lock:
            key = self._keys.get(id(buffer))
            if key is None:
                return
            entry = self._entries[key]
            entry.users -= 1
            if entry.users <= 0:
                del self._entries[key], self._keys[id(buffer)]

    def stats(self) -> dict:
        with self._lock:
            return {
                "buffers": len(self._entries),
                "bytes": sum(e.nbytes for e in self._entries.values()),
                "hits": self.hits,
                "misses": self.misses,
            }
