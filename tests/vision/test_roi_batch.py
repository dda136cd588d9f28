"""The crops of one frame as one batch (engine/vision/roi_model.py): the batch-n model
gives each crop what the model gives it alone, bit for bit, so swapping it in mid-stream
changes no result; a model that cannot take a batch stays crop by crop and says why."""

from __future__ import annotations

import numpy as np
import pytest

from engine.gpu import Engine, FrameInput
from engine.model.builder import GraphBuilder
from engine.vision import FaceMesh
from engine.vision.roi import Rect
from engine.vision.roi_model import RoiModel
from tests.helpers.files import model_file
from tests.helpers.gpu import gpu_context
from tests.helpers.media import people_clip, read_video

CTX = gpu_context()
RECTS = [Rect(0.35, 0.3, 0.3, 0.35, 0.0), Rect(0.6, 0.55, 0.25, 0.2, 0.4),
         Rect(0.5, 0.5, 0.9, 0.8, -0.3)]  # fmt: skip


@pytest.fixture(scope="module")
def frame():
    rgb = np.ascontiguousarray(read_video(people_clip(), 1)[0][:, :, ::-1])
    return FrameInput(CTX.device)(rgb)


def roi_models(name: str):
    engine = Engine.from_tflite(model_file(name), context=CTX)
    args = (engine, (0.0, 1.0), "replicate", False)
    return RoiModel(*args, batch=False), RoiModel(*args, batch_after=0)


def run_batched(crops: RoiModel, view, size, rects):
    crops.run(view, size, rects)  # starts the build
    crops.wait_batches()  # a hang: pytest-timeout
    return crops.run(view, size, rects)


@pytest.mark.parametrize("n", [2, 3])
def test_a_batch_gives_each_crop_its_own_outputs_bit_for_bit(frame, n):
    view, size = frame
    alone, together = roi_models("face_landmark")
    want = alone.run(view, size, RECTS[:n])
    got = run_batched(together, view, size, RECTS[:n])
    assert together.batched_runs == 1 and together.batch_errors == {}
    for (w, w_pad), (g, g_pad) in zip(want, got, strict=True):
        assert w_pad == g_pad and w.keys() == g.keys()
        for name in w:
            assert g[name].shape == w[name].shape and np.array_equal(g[name], w[name]), name
    buffers = together.owned_buffers()
    assert len(buffers) == n + len(together.slots)  # a pre-process uniform per image
    together.destroy()  # the batch engine's memory; the shared weights stay
    again = alone.run(view, size, RECTS[:n])
    other = RECTS[: 5 - n]  # 2 or 3 crops: a batch size not built yet
    together.run(view, size, other)
    together.run(view, size, other)
    assert together.builds.keys() == {n} and together.batches == {n: None}  # none after
    together.destroy()
    assert all(
        np.array_equal(a[k], b[k]) for (a, _), (b, _) in zip(again, want, strict=True) for k in a
    )


def fixed_batch_model() -> Engine:
    """A 1x1 conv whose output is reshaped to a constant [1, 256] (as
    face_landmark_with_attention's [1, 468, 3]): it takes no batch."""
    b = GraphBuilder("fixed_batch")
    x = b.tensor((1, 8, 8, 3), name="image")
    w = b.const(np.random.default_rng(0).standard_normal((4, 1, 1, 3)).astype(np.float32))
    y = b.op("CONV_2D", (x, w, b.const(np.zeros(4, np.float32))), padding="VALID",
             stride_w=1, stride_h=1, fused_activation_function="NONE")  # fmt: skip
    r = b.op("RESHAPE", (y, b.const(np.array([1, 256], np.int32))), (1, 256))
    return Engine(b.graph([x], [r]), context=CTX)


def test_a_model_without_a_batch_stays_crop_by_crop(frame):
    view, size = frame
    engine = fixed_batch_model()
    alone = RoiModel(engine, (0.0, 1.0), "replicate", False, batch=False)
    together = RoiModel(engine, (0.0, 1.0), "replicate", False, batch_after=0)
    want = alone.run(view, size, RECTS[:2])
    got = run_batched(together, view, size, RECTS[:2])
    assert together.batched_runs == 0
    assert "RESHAPE" in together.batch_errors[2]
    assert all(
        np.array_equal(a[k], b[k]) for (a, _), (b, _) in zip(got, want, strict=True) for k in a
    )


def test_face_mesh_swaps_in_the_batch_mid_shot_with_the_same_results():
    # the two-face shot of the people clip (frames 190-219): crop by crop, then batched
    frames = [np.ascontiguousarray(f[:, :, ::-1]) for f in read_video(people_clip(), 220)[190:]]
    runs = []
    for batch in (False, True):
        mesh = FaceMesh(max_num_faces=2, context=CTX, backend="webgpu")
        mesh.prepare((frames[0].shape[1], frames[0].shape[0]))
        mesh.stage.crops.batch, mesh.stage.crops.batch_after = batch, 3
        results = []
        for i, rgb in enumerate(frames):
            results.append(mesh.process(rgb, timestamp_ms=33 * i))
            if i == 10:
                mesh.stage.crops.wait_batches()  # the swap at a known frame
        runs.append((results, mesh.stage.crops.batched_runs, mesh.stage.crops.batch_errors))
        mesh.close()
    (alone, none, _), (together, batched, errors) = runs
    assert none == 0 and errors == {} and batched > 0
    assert sum(len(r.faces) == 2 for r in alone) > 10
    for a, b in zip(alone, together, strict=True):
        assert len(a.faces) == len(b.faces)
        for fa, fb in zip(a.faces, b.faces, strict=True):
            assert np.array_equal(fa.landmarks, fb.landmarks)
