"""The process's heap from glibc's side: how much is resident, how much is in use, and
giving its free pages back.

- anon_mb(): anonymous resident memory + swap (Linux's /proc/self/status), the heap,
  where a leak lands (RSS also counts file pages the kernel drops at will)
- malloc_mb(): glibc's own count (mallinfo2): bytes in use and free bytes kept
- trim_heap(): malloc_trim(0), the free pages of every heap back to the kernel
- HeapTrim: the headless loop's bound on the free heap kept resident (app/headless.py)
- share_heaps(): the threads started after it allocate from the heaps there already are
  (glibc's M_ARENA_MAX), where the trim reaches all of their free memory
- map_large_blocks(): blocks of 256 KiB and more mapped and unmapped on their own, never
  on the heaps (glibc's M_MMAP_THRESHOLD, fixed; its M_TRIM_THRESHOLD at 1 MiB)
Each is None / {} / False where the C library has no such function (musl, macOS).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import time

TRIM_CHECK = 256  # frames between two looks at the heap (HeapTrim): ~5 s at 50 FPS
# free heap kept resident before a trim, under a frame's 0.9 MB: with 8 MB, one frame-sized
# step of kept heap in the second half of a 15,000-frame hands soak read as 0.28 MB/min
TRIM_SLACK_MB = 0.5
M_ARENA_MAX = -8  # glibc's mallopt parameters (malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 256 * 1024  # glibc's own start value is 128 KiB; a 192x192 8-bit crop is 108
# the heap's free top kept before glibc gives it back by itself: its default, 128 KiB, gave
# back and faulted in again every frame the top's smaller blocks (hands headless 49.1 fps
# against 53.0 with 4 MiB and 54.4 with the dynamic thresholds, four interleaved rounds);
# glibc's own rule had kept twice the frame-sized threshold (~1.8 MB). HeapTrim bounds
# what stays.
TRIM_THRESHOLD = 1024 * 1024


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]  # fmt: skip


@functools.cache
def _libc_function(name: str):
    """glibc's `name` with its signature set (looked up once), or None."""
    try:
        fn = getattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), name)
    except (OSError, AttributeError):
        return None
    if name == "malloc_trim":
        fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
    elif name == "mallinfo2":
        fn.argtypes, fn.restype = [], _Mallinfo2
    elif name == "mallopt":
        fn.argtypes, fn.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return fn


def share_heaps() -> bool:
    """glibc's mallopt(M_ARENA_MAX, 1): a thread started after this call allocates from
    the heaps that exist (the main one, or one an earlier thread made) instead of a heap
    of its own; False where there is no mallopt or it refused.

    Why: threads that allocate and free frame-sized blocks every frame (the headless
    loop's decoder and encoder workers, the Vulkan driver's queue thread) each got a heap
    of their own (a glibc "arena"), where the free memory at the heap's top stays
    resident up to the trim threshold (twice the mmap threshold, which rises to a frame's
    size) and malloc_trim gives back only the main heap's top: over 15,000 frames one
    thread's heap grew 3.5-6.9 MB while the bytes in use stayed flat (face mesh 1.09
    MB/min in the second half; sharing the heaps 0.01, benchmarks/app/soak.py --smaps).
    ar-demo calls it first thing (app/cli.py), before the adapter's threads start."""
    fn = _libc_function("mallopt")
    return bool(fn(M_ARENA_MAX, 1)) if fn is not None else False


def map_large_blocks(threshold: int = MMAP_THRESHOLD, trim: int = TRIM_THRESHOLD) -> bool:
    """glibc's mallopt(M_MMAP_THRESHOLD, threshold): every block of `threshold` bytes or
    more is mapped when allocated and unmapped when freed, never carved out of a heap; and
    mallopt(M_TRIM_THRESHOLD, trim), which fixing the first leaves at 128 KiB. False where
    there is no mallopt, it refused, or the environment already set the threshold
    (glibc's MALLOC_MMAP_THRESHOLD_, which is then kept; MALLOC_TRIM_THRESHOLD_ likewise).

    Why: glibc raises its threshold above each mapped block that is freed, so after the
    first frame the frame-sized blocks that libraries allocate and free every frame (PyAV's
    0.9 MB decoded frame, OpenCV's encoder's 0.45 MB copy, LiteRT's output copies of 0.25
    and 0.6 MB) come from the heap. Allocated and freed on three threads in an order that
    varies, they leave holes that other blocks pin: glibc's free bytes grew 7.6 -> 10.7 MB
    over a 15,000-frame holistic run with its bytes in use flat (0.28 MB/min of anonymous
    memory in the second half; with the fixed threshold -0.09, benchmarks/app/soak.py).
    What the engine and the app allocate per frame they keep instead (WarpBuffers,
    CpuFrames, ImagePool); these libraries' blocks cannot be kept. The cost: a mapped
    block's pages are faulted in and unmapped every frame (1.3 MB a frame for hands, 2.2
    for holistic): headless hands and holistic about 6% fewer frames/s on a 2-core
    machine (docs/benchmarks.md, "Soak")."""
    fn = _libc_function("mallopt")
    if fn is None or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    if "MALLOC_TRIM_THRESHOLD_" not in os.environ and not fn(M_TRIM_THRESHOLD, trim):
        return False
    return bool(fn(M_MMAP_THRESHOLD, threshold))


def trim_heap() -> bool:
    """glibc's malloc_trim(0); False where there is none or nothing was released."""
    fn = _libc_function("malloc_trim")
    return bool(fn(0)) if fn is not None else False


def malloc_mb() -> dict:
    """glibc's own count (mallinfo2, every arena): `malloc_used_mb`, the bytes handed out
    and not freed (heap blocks + mapped ones), `malloc_free_mb`, the free bytes the heaps
    keep; {} without glibc 2.33+. Used growing: something allocates and keeps; free (or
    anonymous memory) growing with used flat: the allocator keeps what was freed."""
    fn = _libc_function("mallinfo2")
    if fn is None:
        return {}
    m = fn()
    return {"malloc_used_mb": (m.uordblks + m.hblkhd) / 2**20, "malloc_free_mb": m.fordblks / 2**20}


def anon_mb() -> float | None:
    """Anonymous resident memory + swap of this process in MiB (Linux; else None)."""
    try:
        with open("/proc/self/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        kb = int(fields["RssAnon"].split()[0]) + int(fields.get("VmSwap", "0 kB").split()[0])
        return kb / 1024
    except (OSError, KeyError, ValueError):
        return None


class HeapTrim:
    """The free heap kept resident, bounded: call `step()` once a frame; every `check`
    frames it reads anonymous memory, and when that is more than `slack_mb` above its
    lowest reading since the last trim, malloc_trim(0) gives the heaps' free pages back
    (where memory cannot be read: a trim every `check` frames). A trim gives back free
    pages only, so a leak still shows; it took 1-6 ms, a few times per 10,000 frames.

    Why: each frame allocates and frees several MB in blocks of 0.2-4 MB (the decoded
    frame, the frame read back, the models' input tensors, the crops' sample maps) on
    three threads. Once such a block is freed, glibc raises its mmap threshold above it,
    so the next ones come from the heaps, which keep their free holes resident: anonymous
    memory rose in steps of about a frame (hands: 150 -> 161 MB over 4,000 frames on a
    busy machine) while glibc's count of bytes in use (mallinfo2) and what Python holds
    (tracemalloc) stayed flat. ar-demo now keeps its own blocks and maps the libraries'
    (map_large_blocks); the trim bounds what is left (Python's and the drivers' blocks
    freed among live ones)."""

    def __init__(self, check: int | None = None, slack_mb: float | None = None):
        self.check = TRIM_CHECK if check is None else check  # 0: never
        self.slack_mb = TRIM_SLACK_MB if slack_mb is None else slack_mb
        self.frames, self.trims, self.ms = 0, 0, 0.0
        self._trim = _libc_function("malloc_trim") if self.check > 0 else None
        self._low: float | None = None  # the lowest reading since the last trim

    def step(self) -> None:
        self.frames += 1
        if self._trim is None or self.frames % self.check:
            return
        mb = anon_mb()
        if mb is not None and (self._low is None or mb < self._low + self.slack_mb):
            self._low = mb if self._low is None else min(self._low, mb)
            return
        t = time.perf_counter()
        self._trim(0)
        self.trims += 1
        self.ms += (time.perf_counter() - t) * 1e3
        self._low = None  # the next reading, with the pages in use faulted back in

    def summary(self) -> dict:
        return {"check_frames": self.check, "slack_mb": self.slack_mb, "trims": self.trims,
                "ms": round(self.ms, 3), "available": self._trim is not None}  # fmt: skip
