"""The xnnpack backend's stages: frames, the detector and the crop model on the CPU.

- `CpuFrames`: any frame a solution takes -> RGB (H, W, 3) uint8, contiguous, and its
  (width, height): RGB as it is, BGR (bgr=True) and 4-channel images converted
  (cv2.cvtColor, into one array kept for the next frame), a caller's GPUTexture /
  GPUTextureView read back (one submit and one wait, counted: the models of the xnnpack
  backend read the adapter's frame that way when the caller holds only a texture)
- `CpuDetector`: the detector stage (engine/vision/detector.py) in numpy: the frame
  through the matrix of `configure` (the letterbox) or `set_transform` (a crop) by
  image_to_tensor.warp_to_tensor, the model, then engine/vision/ssd.py (anchor decode,
  sigmoid scores >= min_score, weighted NMS, boxes and keypoints mapped back)
- `CpuCrops`: a model on several crops of one frame (RoiModel's twin): per crop the crop
  matrix (roi_model.crop_matrix), warp_to_tensor, the model; nothing touches a GPU
- usage:
    det = CpuDetector(model, spec, 16, (-1.0, 1.0), "zero"); det.configure((640, 480))
    crops = CpuCrops(model, (0.0, 1.0), "replicate", keep_aspect=True)
    for outputs, padding in crops.run(rgb, (640, 480), rects): ...
"""

from __future__ import annotations

import numpy as np

from engine.gpu import QueueCounts, check_image, is_texture
from engine.vision import ssd
from engine.vision.detector import detections_from_pixels, ssd_outputs
from engine.vision.image_to_tensor import WarpBuffers, letterbox_matrix, warp_to_tensor
from engine.vision.roi import Rect
from engine.vision.roi_model import crop_matrix
from engine.vision.ssd_spec import SsdSpec, ssd_anchors


class CpuFrames:
    """Frames as numpy RGB (see the module docstring); `device` only for textures."""

    def __init__(self, device=None, bgr: bool = False, counts: QueueCounts | None = None):
        self.device, self.bgr = device, bgr
        self.counts = counts if counts is not None else QueueCounts()
        self.readbacks = 0  # textures read back (counted in `counts` too)
        self._buffer = None
        self._kept: np.ndarray | None = None  # the converted frame (_rgb)

    def __call__(self, frame) -> tuple[np.ndarray, tuple[int, int]]:
        import cv2

        if is_texture(frame):
            image = self._read_texture(frame)
            return image, (image.shape[1], image.shape[0])
        image = check_image(frame)
        if image.shape[2] == 4:
            image = self._rgb(image, cv2.COLOR_BGRA2RGB if self.bgr else cv2.COLOR_RGBA2RGB)
        elif self.bgr:
            image = self._rgb(image, cv2.COLOR_BGR2RGB)
        image = np.ascontiguousarray(image)
        return image, (image.shape[1], image.shape[0])

    def _rgb(self, image: np.ndarray, code: int) -> np.ndarray:
        """cv2.cvtColor into an RGB array kept from frame to frame (the solutions read a
        frame's image within its process() only). Why: a new 0.9 MB array a 640x480 frame,
        allocated and freed on glibc's heap, fragments it over a long run."""
        import cv2

        h, w = image.shape[:2]
        if self._kept is None or self._kept.shape[:2] != (h, w):
            self._kept = np.empty((h, w, 3), np.uint8)
        return cv2.cvtColor(image, code, dst=self._kept)

    def _read_texture(self, frame) -> np.ndarray:
        """The texture's pixels as RGB uint8 (a BGRA texture's swapped)."""
        import cv2
        import wgpu

        if self.device is None:
            raise ValueError("a GPU texture frame needs the solution's context (context=...)")
        texture = frame.texture if isinstance(frame, wgpu.GPUTextureView) else frame
        fmt = str(texture.format)
        if not fmt.startswith(("rgba8unorm", "bgra8unorm")):
            raise ValueError(f"texture format {fmt}: expected rgba8unorm or bgra8unorm")
        w, h = texture.size[0], texture.size[1]
        row = -(-w * 4 // 256) * 256  # copies align rows to 256 bytes
        if self._buffer is None or self._buffer.size < row * h:
            self.destroy()
            usage = wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
            self._buffer = self.device.create_buffer(size=row * h, usage=usage)
        encoder = self.device.create_command_encoder()
        encoder.copy_texture_to_buffer(
            {"texture": texture}, {"buffer": self._buffer, "bytes_per_row": row,
                                   "rows_per_image": h}, (w, h, 1),
        )  # fmt: skip
        self.counts.submit(self.device, encoder)
        self._buffer.map_sync(wgpu.MapMode.READ, 0, row * h)
        self.counts.reads += 1
        self.readbacks += 1
        data = np.frombuffer(self._buffer.read_mapped(0, row * h), np.uint8)
        rgba = data.reshape(h, row)[:, : w * 4].reshape(h, w, 4)
        code = cv2.COLOR_BGRA2RGB if fmt.startswith("bgra") else cv2.COLOR_RGBA2RGB
        image = self._rgb(rgba, code)  # a copy: the mapping is released next
        self._buffer.unmap()
        return image

    def destroy(self) -> None:
        if self._buffer is not None:
            self._buffer.destroy()
            self._buffer = None


class CpuDetector:
    """One SSD detector on numpy frames (see the module docstring)."""

    def __init__(self, model, spec: SsdSpec, max_detections: int,
                 value_range: tuple[float, float], border: str):  # fmt: skip
        self.engine, self.spec, self.max_detections = model, spec, max_detections
        self.value_range, self.border = value_range, border
        self.names = ssd_outputs(model.graph)  # (boxes, scores)
        self.anchors = ssd_anchors(spec)
        self.matrix: np.ndarray | None = None
        self.frame_size: tuple[int, int] | None = None
        self.buffers = WarpBuffers(repeating=True)  # the input tensor, not a new one a frame

    def configure(self, frame_size: tuple[int, int]) -> None:
        self.set_transform(letterbox_matrix(frame_size, self.spec.input_size), frame_size)

    def set_transform(self, frame_from_tensor: np.ndarray, frame_size) -> None:
        """The crop the detector sees (normalised tensor -> frame pixels) and the frame size."""
        self.matrix, self.frame_size = np.asarray(frame_from_tensor, np.float64), frame_size

    def detect(self, image: np.ndarray) -> tuple:
        """The frame's detections, best first."""
        spec = self.spec
        tensor = warp_to_tensor(image, self.matrix, spec.input_size, self.value_range,
                                self.border, self.buffers)  # fmt: skip
        out = self.engine.run(tensor)
        boxes_name, scores_name = self.names
        boxes, keypoints = ssd.decode_boxes(out[boxes_name], self.anchors, spec)
        scores = ssd.scores_from_logits(out[scores_name], spec.score_clip)
        kept = ssd.threshold(boxes, keypoints, scores, spec.min_score)
        found = ssd.project(ssd.weighted_nms(kept, spec.iou_threshold), self.matrix)
        return detections_from_pixels(found.boxes, found.keypoints, found.scores,
                                      self.frame_size, self.max_detections)  # fmt: skip


class CpuCrops:
    """One XnnpackModel, any number of crops per frame (see the module docstring)."""

    def __init__(self, model, value_range: tuple[float, float], border: str,
                 keep_aspect: bool):  # fmt: skip
        self.engine = model
        self.value_range, self.border, self.keep_aspect = value_range, border, keep_aspect
        self.size = model.input_size
        self.buffers = WarpBuffers()  # a crop's matrix changes every frame: no cache, no new arrays
        g = model.graph
        self.output_names = [g.tensors[t].name for t in g.outputs]

    def crop(self, rect: Rect, frame_size) -> tuple[np.ndarray, tuple[float, ...]]:
        """The crop's frame_from_tensor and letterbox padding (ImageToTensorCalculator)."""
        return crop_matrix(rect, frame_size, self.size, self.keep_aspect)

    def run(self, image: np.ndarray, frame_size, rects: list[Rect]) -> list[tuple[dict, tuple]]:
        """Every crop's outputs {name: array} and padding, in the order of `rects`."""
        out = []
        for rect in rects:
            m, padding = self.crop(rect, frame_size)
            tensor = warp_to_tensor(image, m, self.size, self.value_range, self.border,
                                    self.buffers)  # fmt: skip
            out.append((self.engine.run(tensor), padding))
        return out

    def destroy(self) -> None:
        pass
