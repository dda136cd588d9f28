"""A model run on several crops of one frame, in one submit (hands, faces, ...).

- input: a frame view (engine.gpu.FrameInput), its size, and the crops as
  MediaPipe NormalizedRects (engine/vision/roi.Rect)
- output: per crop, every model output as a float32 array of its model shape, and the
  crop's letterbox padding (left, top, right, bottom) for LandmarkLetterboxRemoval
- options: `value_range`, `border` ("zero" | "replicate") and `keep_aspect` (PadRoi), as
  the model's ImageToTensorCalculator sets them
- semantics: per crop, in one encoder: the pre-process (engine/vision/preprocess.py, a
  Preprocessor of its own: each crop has its own ROI uniform), the engine's dispatches,
  then copies of the outputs into one read-back buffer; one submit, one wait for all
- batches (`batch=True`, the default): once n crops have come in `batch_after` runs (2 <=
  n <= MAX_BATCH; a second hand seen for a moment builds nothing), the model at batch n
  (Engine.with_batch) is built on a worker thread and its outputs checked equal to the
  crop-by-crop ones bit for bit (BatchBuild); from then on n crops are n pre-processes into
  the images of one input and one run (fewer, larger dispatches). So when the swap happens
  changes no result (tests/vision/test_roi_batch.py); a model that does not carry a batch,
  or rounds otherwise at one, stays crop by crop (`batch_errors` says why)
- usage:
    crops = RoiModel(hand_engine, (0.0, 1.0), "replicate", keep_aspect=True)
    for outputs, padding in crops.run(view, (640, 480), rects): ...
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from engine.gpu import QueueCounts, Readback, release_engine
from engine.precision import precision as precision_of
from engine.vision.image_to_tensor import letterbox_padding, pad_roi
from engine.vision.preprocess import Preprocessor
from engine.vision.roi import Rect, rect_matrix

NO_PADDING = (0.0, 0.0, 0.0, 0.0)
# Crops run as one batch up to this many (a batch-n model is one more engine: its memory
# and compile); more crops run one by one.
MAX_BATCH = 4
# Runs with n crops before the batch-n engine is built: a second of video at 30 frames/s.
# The build costs seconds of compiling on a CPU adapter (hand_landmark at batch 2 on
# lavapipe with an empty Mesa cache: 12 s on the worker), not worth it for a hand that
# shows for a moment.
BATCH_AFTER = 30


def unpack(layout, raw: bytes) -> np.ndarray:
    """A graph output's PHWC4 bytes (engine TensorLayout) -> float32 in its model shape."""
    b, h, w, c = layout.phwc4
    dtype = precision_of(layout.precision).dtype
    s = layout.slices
    stored = np.frombuffer(raw, dtype, s * b * h * w * 4).reshape(s, b * h, w, 4)
    hwc = stored.transpose(1, 2, 0, 3).reshape(b * h, w, s * 4)[:, :, :c]
    return hwc.astype(np.float32).reshape(layout.shape)


def crop_matrix(rect: Rect, frame_size, size: tuple[int, int],
                keep_aspect: bool) -> tuple[np.ndarray, tuple[float, ...]]:  # fmt: skip
    """A crop's frame_from_tensor and letterbox padding for a model input of `size` (w, h):
    the rect as it is, or grown to the input's aspect (PadRoi) when `keep_aspect`."""
    fw, fh = frame_size
    w, h = rect.width * fw, rect.height * fh
    if not keep_aspect:
        return rect_matrix(rect, frame_size), NO_PADDING
    pw, ph = pad_roi(w, h, size)
    padded = Rect(rect.x_center, rect.y_center, pw / fw, ph / fh, rect.rotation)
    return rect_matrix(padded, frame_size), letterbox_padding(w, h, size)


class BatchBuild:
    """The batch-n engine of a model, built on a worker thread (Engine.with_batch) and
    taken only where it computes what the model does crop by crop, bit for bit: on a
    scratch device of the same adapter (as the staged start's warm-up: the caller's queue
    is not shared, and on lavapipe Mesa's disk cache then holds the shaders), the batch-n
    model and the model itself run on the same random images first. Kernels that a batch
    gives other work shapes could round differently; then the crops stay one by one."""

    def __init__(self, engine, n: int):
        self.result = None
        self.error: str | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._build, args=(engine, n), daemon=True,
                                        name=f"batch {n}: {engine.graph.name}")  # fmt: skip
        self._thread.start()

    def _build(self, engine, n: int) -> None:
        from engine.gpu.warmup import scratch_context

        try:
            check_batch(engine, n, scratch_context(engine.ctx))
            batched = engine.with_batch(n)
        except Exception as exc:  # the crops run one by one: right, only slower
            self.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            return
        with self._lock:
            if self._closed:
                release_engine(batched)
            else:
                self.result = batched

    def take(self):
        """The built engine once it is ready (then None: it is the caller's), else None."""
        if self._thread.is_alive():
            return None
        result, self.result = self.result, None
        return result

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def close(self) -> None:
        """Release the engine if one is built and not taken, now or when the build ends."""
        with self._lock:
            self._closed = True
            if self.result is not None:
                release_engine(self.result)
                self.result = None


def check_batch(engine, n: int, ctx) -> None:
    """ValueError unless `engine`'s model at batch n, on `ctx`, gives n random images the
    outputs the model gives each of them alone, bit for bit."""
    many = engine.with_batch(n, ctx)  # first: a model without a batch fails at once
    one = None
    try:
        one = engine.with_batch(1, ctx)
        g = one.graph
        x = g.tensors[g.inputs[0]]
        images = np.random.default_rng(n).random((n, *x.shape[1:]), dtype=np.float32)
        together = many.run({x.name: images})
        for i in range(n):
            alone = one.run({x.name: images[i : i + 1]})
            for name, y in alone.items():
                if not np.array_equal(y, together[name][i : i + 1]):
                    diff = np.abs(y - together[name][i : i + 1]).max()
                    raise ValueError(f"output {name!r} at a batch of {n} differs from one "
                                     f"image at a time by up to {diff:.3g}")  # fmt: skip
    finally:
        for built in (many, one):
            if built is not None:
                release_engine(built)


@dataclass
class Batch:
    """A ready batch-n engine, its n pre-processes, its outputs' layouts and their names in
    the read-back."""

    engine: object
    slots: list
    outputs: list
    names: dict  # output name -> read-back name


class RoiModel:
    """One engine, any number of crops per frame (see the module docstring)."""

    def __init__(self, engine, value_range: tuple[float, float], border: str,
                 keep_aspect: bool, sync: str = "sleep", batch: bool = True,
                 batch_after: int = BATCH_AFTER, counts: QueueCounts | None = None):  # fmt: skip
        g = engine.graph
        self.counts = counts if counts is not None else QueueCounts()
        self.engine = engine
        self.input_name = g.tensors[g.inputs[0]].name
        self.outputs = [engine.tensor_layout(g.tensors[t].name) for t in g.outputs]
        self.value_range, self.border, self.keep_aspect = value_range, border, keep_aspect
        self.slots: list[Preprocessor] = []
        self.readback = Readback(engine.ctx.device, sync, self.counts)
        _, h, w, _ = engine.tensor_layout(self.input_name).phwc4
        self.size = (w, h)  # the model input's
        self.batch, self.batch_after = batch, batch_after
        self.seen: dict[int, int] = {}  # runs with n crops so far
        self.builds: dict[int, BatchBuild] = {}
        self.batches: dict[int, Batch | None] = {}  # None: batch n stays crop by crop
        self.batch_errors: dict[int, str] = {}
        self.batched_runs = 0  # runs that took a batch engine
        self._destroyed = False

    def crop(self, rect: Rect, frame_size) -> tuple[np.ndarray, tuple[float, ...]]:
        """The crop's frame_from_tensor and letterbox padding (ImageToTensorCalculator)."""
        return crop_matrix(rect, frame_size, self.size, self.keep_aspect)

    def run(self, view, frame_size, rects: list[Rect]) -> list[tuple[dict, tuple]]:
        """Every crop's outputs {name: array} and padding, in the order of `rects`."""
        if not rects:
            return []
        batch = self._batch(len(rects))
        if batch is not None:
            return self._run_batch(batch, view, frame_size, rects)
        self._ensure_slots(len(rects))
        device = self.engine.ctx.device
        encoder = device.create_command_encoder()
        paddings = []
        for i, rect in enumerate(rects):
            m, padding = self.crop(rect, frame_size)
            paddings.append(padding)
            self.slots[i].set_roi(m)
            self.slots[i].encode(encoder, view)
            self.engine.encode(encoder)
            self.readback.encode(encoder, names=self._names(i))
        self.counts.submit(device, encoder)
        data = self.readback.read()
        return [
            ({o.name: unpack(o, data[f"{i}:{o.name}"]) for o in self.outputs}, paddings[i])
            for i in range(len(rects))
        ]

    def _run_batch(self, batch: Batch, view, frame_size, rects) -> list[tuple[dict, tuple]]:
        """The crops as images of one batched input, one run, one read-back."""
        device = batch.engine.ctx.device
        encoder = device.create_command_encoder()
        paddings = []
        for pre, rect in zip(batch.slots, rects, strict=True):
            m, padding = self.crop(rect, frame_size)
            paddings.append(padding)
            pre.set_roi(m)
            pre.encode(encoder, view)
        batch.engine.encode(encoder)
        self.readback.encode(encoder, names=batch.names.values())
        self.counts.submit(device, encoder)
        data = self.readback.read()
        self.batched_runs += 1
        out = {o.name: unpack(o, data[batch.names[o.name]]) for o in batch.outputs}
        return [({k: v[i : i + 1] for k, v in out.items()}, pad) for i, pad in enumerate(paddings)]

    def _batch(self, n: int) -> Batch | None:
        """The ready batch-n engine, else None (and its build started the first time)."""
        if not self.batch or self._destroyed or not 2 <= n <= MAX_BATCH:
            return None
        if n in self.batches:
            return self.batches[n]
        build = self.builds.get(n)
        if build is None:
            self.seen[n] = self.seen.get(n, 0) + 1
            if self.seen[n] > self.batch_after:
                self.builds[n] = BatchBuild(self.engine, n)
            return None
        engine = build.take()
        if engine is None:
            if build.error is not None:
                self.batches[n], self.batch_errors[n] = None, build.error
            return None
        try:
            self.batches[n] = self._ready(engine, n)
        except Exception as exc:  # e.g. an image not aligned in the input: crop by crop
            release_engine(engine)
            self.batches[n], self.batch_errors[n] = None, f"{type(exc).__name__}: {exc}"
        return self.batches[n]

    def _ready(self, engine, n: int) -> Batch:
        outputs = [engine.tensor_layout(o.name) for o in self.outputs]
        for one, many in zip(self.outputs, outputs, strict=True):
            if one.shape[:1] != (1,) or many.shape != (n, *one.shape[1:]):
                raise ValueError(f"output {one.name!r}: {list(many.shape)} at a batch of {n}, "
                                 f"{list(one.shape)} at 1")  # fmt: skip
        slots = [Preprocessor(engine, self.input_name, self.value_range, border=self.border,
                              image=i) for i in range(n)]  # fmt: skip
        names = {o.name: f"b{n}:{o.name}" for o in outputs}
        for o in outputs:
            self.readback.add(names[o.name], o.buffer, o.offset, o.size)
        return Batch(engine, slots, outputs, names)

    def wait_batches(self, timeout: float | None = None) -> bool:
        """Block until every batch build started so far has ended (tests, benchmarks)."""
        return all(b.wait(timeout) for b in self.builds.values())

    def _names(self, slot: int) -> set[str]:
        return {f"{slot}:{o.name}" for o in self.outputs}

    def _ensure_slots(self, count: int) -> None:
        while len(self.slots) < count:
            i = len(self.slots)
            pre = Preprocessor(self.engine, self.input_name, self.value_range, border=self.border)
            self.slots.append(pre)
            for o in self.outputs:
                self.readback.add(f"{i}:{o.name}", o.buffer, o.offset, o.size)

    def owned_buffers(self) -> list:
        """The pre-process uniforms it made: one per crop slot and per batched image."""
        batch_slots = [pre for b in self.batches.values() if b is not None for pre in b.slots]
        return [pre.roi for pre in self.slots + batch_slots]

    def destroy(self) -> None:
        """Free the read-back buffer, the pre-process uniforms and the batches (their
        engines, built or when their build ends); no batch is built after."""
        self._destroyed = True
        self.readback.destroy()
        for pre in self.slots:
            pre.roi.destroy()
        self.slots = []
        for build in self.builds.values():
            build.close()
        for batch in self.batches.values():
            if batch is not None:
                release_engine(batch.engine)
                for pre in batch.slots:
                    pre.roi.destroy()
        self.batches = {n: None for n in self.batches}
