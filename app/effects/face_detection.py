"""Face detection effect: boxes and 6 keypoints, decoded and drawn without leaving the GPU.

- input: the frame texture; an SSD face detector ([1, N, 4 + 2K] boxes, [1, N, 1] logits;
  BlazeFace short range by default, options from the manifest when it knows the file)
- output: the camera frame with each face's box outline and keypoints
- options: style (`e`): box+keypoints, keypoints, box
- usage: `FaceDetectionEffect(ctx, [spec], (640, 480), "bgra8unorm")`

Steps per frame: pre-process (letterbox into the input, [-1, 1]) -> inference -> post-process
(engine.vision.SsdDecoder: decode, threshold, weighted NMS into detection records
plus DrawIndirect args). The draw is `draw_indirect`: instance i is detection i, 4 box edge
quads + K keypoint quads (shaders/app/detections.wgsl), count written by the GPU.
"""

from __future__ import annotations

from app.effects import EFFECTS
from app.effects.base import Effect, buffer_entry, overlay_params, render_pipeline
from engine.vision import SsdDecoder
from engine.vision.blazeface import SsdSpec, letterbox_matrix
from engine.vision.preprocess import Preprocessor


def ssd_spec(spec) -> SsdSpec:
    """The detector's SSD options: the manifest's when it has them, else BlazeFace's."""
    if spec.postprocess.get("kind") == "ssd":
        return SsdSpec.from_manifest(spec.postprocess)
    _, h, w, _ = spec.graph.tensors[spec.graph.inputs[0]].shape
    return SsdSpec(input_size=(w, h))


def build_detector(effect: Effect, spec, vertex_count: int):
    """Pre-process + decoder for the detection model of `effect` (shared with face mesh)."""
    engine = effect.engines["detection"]
    ssd = ssd_spec(spec)
    pre = Preprocessor(engine, spec.input_name, value_range=spec.value_range)
    frame_from_tensor = letterbox_matrix(effect.frame_size, ssd.input_size)
    pre.set_roi(frame_from_tensor)
    regressors, scores = _ssd_outputs(spec)
    decoder = SsdDecoder(engine, ssd, names=(regressors, scores), vertex_count=vertex_count)
    decoder.set_frame_transform(frame_from_tensor, effect.frame_size)
    return pre, decoder


def _ssd_outputs(spec) -> tuple[str, str]:
    boxes = [n for n, s in spec.outputs.items() if len(s) == 3 and s[2] >= 4]
    scores = [n for n, s in spec.outputs.items() if len(s) == 3 and s[2] == 1]
    return boxes[0], scores[0]


class FaceDetectionEffect(Effect):
    name = "face-detection"
    styles = EFFECTS["face-detection"].styles

    def build(self) -> None:
        import wgpu

        spec = next(s for s in self.specs if s.role == "detection")
        k = ssd_spec(spec).num_keypoints
        self.pre, self.decoder = build_detector(self, spec, vertex_count=6 * (4 + k))
        rec = self.decoder.record
        self.pipeline = render_pipeline(
            self.device, "app/detections.wgsl", self.target_format, blend=True,
            num_keypoints=k, stride=rec.stride, frame_px=rec.frame_px,
        )  # fmt: skip
        self.params = self.device.create_buffer(
            size=16, usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST
        )
        self.group = self.device.create_bind_group(
            layout=self.pipeline.get_bind_group_layout(0),
            entries=[
                buffer_entry(0, _Whole(self.decoder.detections)),
                buffer_entry(1, _Whole(self.params)),
            ],
        )
        self.on_style()

    def on_style(self) -> None:
        self.device.queue.write_buffer(self.params, 0, overlay_params(self.frame_size, self.style))

    def steps(self, frame_view):
        return [
            ("preprocess", lambda enc: self.pre.encode(enc, frame_view)),
            ("inference", self.engines["detection"].encode),
            ("postprocess", self.decoder.encode),
        ]

    def draw(self, render_pass, frame_view) -> None:
        self.draw_frame(render_pass, frame_view)
        render_pass.set_pipeline(self.pipeline)
        render_pass.set_bind_group(0, self.group)
        render_pass.draw_indirect(self.decoder.args, 0)


class _Whole:
    """A whole buffer as a (buffer, offset, size) binding."""

    def __init__(self, buffer):
        self.buffer, self.offset, self.size = buffer, 0, buffer.size
