"""Region of interest of a landmark model from a detection (MediaPipe's face-mesh ROI).

MediaPipe's face_detection_front_detection_to_roi.pbtxt, written from its definition:
1. DetectionsToRectsCalculator: the rect around the relative bounding box (centre =
   xmin + width / 2, ymin + height / 2), rotation = NormalizeRadians(target_angle -
   atan2(-(y1 - y0), x1 - x0)) with (x0, y0), (x1, y1) the rotation keypoints (0 and 1: the
   eyes) in pixels (normalised * image size); target angle 0;
2. RectTransformationCalculator: shift (0 here) along the rotated axes, square_long (both
   sides = the longer one in pixels), scale 1.5 x 1.5;
3. ImageToTensorCalculator crops that rotated rect: a normalised crop coordinate (u, v) is
   the frame pixel centre + R(rotation) ((u - 0.5) width_px, (v - 0.5) height_px),
   R = [[cos, -sin], [sin, cos]] (y down: a positive rotation turns clockwise on screen);
   sampled as engine/vision/image_to_tensor.py says.

- numpy oracle: `roi_from_detection(box, keypoints, frame_size) -> Rect` (normalised, as
  MediaPipe), `rect_matrix(rect, frame_size)` -> 2x3 frame_from_tensor (frame pixels)
- GPU: `DetectionRoi(decoder, preprocessor=None)`: reads the SsdDecoder's best detection,
  writes `buffer` (96 bytes, layout in shaders/engine/roi_rect.wgsl: frame_from_tensor rows,
  their inverse, rect, (rotation, valid, frame w, h)) and, when given a Preprocessor,
  copies the first 32 bytes (frame_from_tensor) into its `roi` uniform: the crop of the next
  model follows the detection without leaving the GPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.gpu import Binding, bind_group, compute_pipeline, dispatch, render_shader, wgsl_float
from engine.vision.image_to_tensor import subrect_matrix

ROI_BYTES = 96
# postprocess_roi.wgsl's group 0, its declarations generated from these: the decoder's
# records, status and frame uniform, then the ROI record written
BINDINGS = (
    Binding("in", name="detections", type="array<f32>"),
    Binding("in", name="det_status", type="array<u32>"),
    Binding("const", space="uniform", name="params", type="Params"),
    Binding("out", name="roi", type="array<vec4<f32>>"),
)


@dataclass(frozen=True)
class RoiOptions:
    """DetectionsToRects + RectTransformation options (defaults: face mesh from BlazeFace)."""

    start_keypoint: int = 0
    end_keypoint: int = 1
    target_angle_degrees: float = 0.0
    scale_x: float = 1.5
    scale_y: float = 1.5
    shift_x: float = 0.0
    shift_y: float = 0.0
    square_long: bool = True
    square_short: bool = False


FACE_MESH_ROI = RoiOptions()


@dataclass(frozen=True)
class Rect:
    """MediaPipe's NormalizedRect: centre and size relative to the frame, rotation in radians
    (clockwise on screen)."""

    x_center: float
    y_center: float
    width: float
    height: float
    rotation: float


def normalize_radians(angle: float) -> float:
    """MediaPipe's NormalizeRadians: into [-pi, pi)."""
    return angle - 2 * math.pi * math.floor((angle - (-math.pi)) / (2 * math.pi))


def roi_from_detection(box, keypoints, frame_size, options: RoiOptions = FACE_MESH_ROI) -> Rect:
    """The ROI of a detection given in normalised frame coords (float64 throughout).

    box: (xmin, ymin, xmax, ymax); keypoints [K, 2]; frame_size (width, height) in pixels.
    """
    return transform_rect(detection_rect(box, keypoints, frame_size, options), frame_size,
                          options)  # fmt: skip


def detection_rect(box, keypoints, frame_size, options: RoiOptions = FACE_MESH_ROI) -> Rect:
    """DetectionsToRectsCalculator: the box's rect, rotated by the keypoints' vector."""
    fw, fh = (float(v) for v in frame_size)
    xmin, ymin, xmax, ymax = (float(v) for v in box)
    kps = np.asarray(keypoints, np.float64)
    width, height = xmax - xmin, ymax - ymin
    x0, y0 = kps[options.start_keypoint] * (fw, fh)
    x1, y1 = kps[options.end_keypoint] * (fw, fh)
    target = math.radians(options.target_angle_degrees)
    rotation = normalize_radians(target - math.atan2(-(y1 - y0), x1 - x0))
    return Rect(xmin + width / 2, ymin + height / 2, width, height, rotation)


def alignment_rect(keypoints, frame_size, options: RoiOptions) -> Rect:
    """AlignmentPointsRectsCalculator: a square (in pixels) centred on the start keypoint,
    its side twice the distance to the end keypoint, rotated as detection_rect."""
    fw, fh = (float(v) for v in frame_size)
    kps = np.asarray(keypoints, np.float64)
    x0, y0 = kps[options.start_keypoint] * (fw, fh)
    x1, y1 = kps[options.end_keypoint] * (fw, fh)
    side = 2 * math.hypot(x1 - x0, y1 - y0)
    target = math.radians(options.target_angle_degrees)
    rotation = normalize_radians(target - math.atan2(-(y1 - y0), x1 - x0))
    return Rect(x0 / fw, y0 / fh, side / fw, side / fh, rotation)


def transform_rect(rect: Rect, frame_size, options: RoiOptions) -> Rect:
    """RectTransformationCalculator: shift along the rotated axes (by the original size),
    square on the long or short side in pixels, then scale."""
    fw, fh = (float(v) for v in frame_size)
    x_center, y_center, width, height = rect.x_center, rect.y_center, rect.width, rect.height
    rotation = rect.rotation
    if rotation == 0.0:
        x_center += width * options.shift_x
        y_center += height * options.shift_y
    else:
        c, s = math.cos(rotation), math.sin(rotation)
        x_center += (fw * width * options.shift_x * c - fh * height * options.shift_y * s) / fw
        y_center += (fw * width * options.shift_x * s + fh * height * options.shift_y * c) / fh
    if options.square_long:
        side = max(width * fw, height * fh)
        width, height = side / fw, side / fh
    elif options.square_short:
        side = min(width * fw, height * fh)
        width, height = side / fw, side / fh
    return Rect(x_center, y_center, width * options.scale_x, height * options.scale_y, rotation)


# hand_landmark_tracking_cpu: palm_detection_detection_to_roi.pbtxt (wrist -> middle finger
# MCP upright, the palm box grown to the whole hand) and hand_landmark_landmarks_to_roi.pbtxt
PALM_ROI = RoiOptions(start_keypoint=0, end_keypoint=2, target_angle_degrees=90.0,
                      scale_x=2.6, scale_y=2.6, shift_y=-0.5)  # fmt: skip
HAND_LANDMARKS_ROI = RoiOptions(scale_x=2.0, scale_y=2.0, shift_y=-0.1)
# pose_detection_to_roi.pbtxt and pose_landmarks_to_roi.pbtxt: hips' centre -> the full
# body's size/rotation point upright (AlignmentPointsRects), x1.25
POSE_ROI = RoiOptions(start_keypoint=0, end_keypoint=1, target_angle_degrees=90.0,
                      scale_x=1.25, scale_y=1.25)  # fmt: skip
# HandLandmarksToRectCalculator's partial set: wrist, thumb CMC/MCP/IP, each finger's MCP and
# PIP (no DIPs, no tips); rotation from the wrist to the mean of the index/ring MCPs and
# the middle MCP
HAND_RECT_POINTS = (0, 1, 2, 3, 5, 6, 9, 10, 13, 14, 17, 18)
FLOAT_MIN = float(np.finfo(np.float32).tiny)  # std::numeric_limits<float>::min()


def hand_rect_from_landmarks(landmarks, frame_size) -> Rect:
    """HandLandmarksToRectCalculator: the rotated box of the hand's partial set (of 21
    landmarks [21, >= 2] in normalised frame coords), before RectTransformation."""
    fw, fh = (float(v) for v in frame_size)
    lm = np.asarray(landmarks, np.float64)[:, :2]
    pts = lm[list(HAND_RECT_POINTS)]
    x0, y0 = lm[0, 0] * fw, lm[0, 1] * fh
    x1 = ((lm[5, 0] + lm[13, 0]) / 2 + lm[9, 0]) / 2 * fw
    y1 = ((lm[5, 1] + lm[13, 1]) / 2 + lm[9, 1]) / 2 * fh
    rotation = normalize_radians(math.pi / 2 - math.atan2(-(y1 - y0), x1 - x0))
    reverse = normalize_radians(-rotation)
    # the maxima start at the smallest positive float, as the C++ does (not at -inf)
    acx = (pts[:, 0].min() + max(pts[:, 0].max(), FLOAT_MIN)) / 2
    acy = (pts[:, 1].min() + max(pts[:, 1].max(), FLOAT_MIN)) / 2
    ox, oy = (pts[:, 0] - acx) * fw, (pts[:, 1] - acy) * fh
    c, s = math.cos(reverse), math.sin(reverse)
    px, py = ox * c - oy * s, ox * s + oy * c
    minx, maxx = px.min(), max(px.max(), FLOAT_MIN)
    miny, maxy = py.min(), max(py.max(), FLOAT_MIN)
    pcx, pcy = (maxx + minx) / 2, (maxy + miny) / 2
    c, s = math.cos(rotation), math.sin(rotation)
    cx = pcx * c - pcy * s + fw * acx
    cy = pcx * s + pcy * c + fh * acy
    return Rect(cx / fw, cy / fh, (maxx - minx) / fw, (maxy - miny) / fh, rotation)


# holistic_landmark: hand_landmarks_from_pose_to_recrop_roi.pbtxt (from the pose's wrist,
# pinky and index: x2.7), hand_recrop_by_roi_cpu.pbtxt (the re-crop model's two points,
# upright the other way: -90 degrees), face_landmarks_from_pose_to_recrop_roi.pbtxt (the
# pose's face points, right eye -> left eye, x3) and face_detection_front_detections_to_roi
# (a face detection's keypoints, x2 shifted up)
HAND_FROM_POSE_ROI = RoiOptions(target_angle_degrees=90.0, scale_x=2.7, scale_y=2.7, shift_y=-0.1)
HAND_RECROP_ROI = RoiOptions(start_keypoint=0, end_keypoint=1, target_angle_degrees=-90.0,
                             scale_x=1.0, scale_y=1.0, shift_y=-0.1)  # fmt: skip
FACE_FROM_POSE_ROI = RoiOptions(start_keypoint=5, end_keypoint=2, scale_x=3.0, scale_y=3.0)
FACE_FROM_DETECTION_ROI = RoiOptions(scale_x=2.0, scale_y=2.0, shift_y=-0.1)


def hand_rect_from_pose(wrist, pinky, index, frame_size) -> Rect:
    """HandDetectionsFromPoseToRectsCalculator: centred on (2 index + pinky) / 3, side twice
    its distance to the wrist, upright along wrist -> that point (normalised points in)."""
    fw, fh = (float(v) for v in frame_size)
    xw, yw = wrist[0] * fw, wrist[1] * fh
    xm = (2.0 * index[0] * fw + pinky[0] * fw) / 3.0
    ym = (2.0 * index[1] * fh + pinky[1] * fh) / 3.0
    side = 2.0 * math.hypot(xm - xw, ym - yw)
    rotation = normalize_radians(math.pi / 2 - math.atan2(-(ym - yw), xm - xw))
    return Rect(xm / fw, ym / fh, side / fw, side / fh, rotation)


def landmarks_box(points) -> tuple[float, float, float, float]:
    """LandmarksToDetectionCalculator's box (xmin, ymin, xmax, ymax) of normalised points:
    its maxima start at the smallest positive float, as the C++ does."""
    pts = np.asarray(points, np.float64)[:, :2]
    return (pts[:, 0].min(), pts[:, 1].min(), max(pts[:, 0].max(), FLOAT_MIN),
            max(pts[:, 1].max(), FLOAT_MIN))  # fmt: skip


def rect_matrix(rect: Rect, frame_size) -> np.ndarray:
    """2x3 frame_from_tensor of the crop of `rect`: normalised crop (u, v) -> frame pixels
    (ImageToTensorCalculator's GetRotatedSubRectToRectTransformMatrix, in pixels)."""
    fw, fh = (float(v) for v in frame_size)
    return subrect_matrix(rect.x_center * fw, rect.y_center * fh, rect.width * fw,
                          rect.height * fh, rect.rotation)  # fmt: skip


def invert_affine(m: np.ndarray) -> np.ndarray:
    """Inverse of a 2x3 affine."""
    a = np.linalg.inv(np.asarray(m, np.float64)[:, :2])
    return np.hstack([a, -(a @ np.asarray(m, np.float64)[:, 2])[:, None]])


def rect_params(options: RoiOptions) -> dict:
    """roi_rect.wgsl's template variables for `options`."""
    if options.square_long and options.square_short:
        raise ValueError("square_long and square_short are exclusive")
    target = math.radians(options.target_angle_degrees)
    return {
        "target": wgsl_float(target),
        "cos_t": wgsl_float(math.cos(target)),
        "sin_t": wgsl_float(math.sin(target)),
        "scale_x": wgsl_float(options.scale_x),
        "scale_y": wgsl_float(options.scale_y),
        "shift_x": wgsl_float(options.shift_x),
        "shift_y": wgsl_float(options.shift_y),
        "square": 1 if options.square_long else 2 if options.square_short else 0,
        "start": options.start_keypoint,
        "end": options.end_keypoint,
    }


@dataclass(frozen=True)
class GpuRoi:
    """`DetectionRoi.buffer` read back (tests and debugging)."""

    frame_from_tensor: np.ndarray  # 2x3
    tensor_from_frame: np.ndarray  # 2x3
    centre: np.ndarray  # (x, y) frame pixels
    size: np.ndarray  # (width, height) frame pixels
    rotation: float
    valid: bool
    frame_size: tuple[float, float]


class DetectionRoi:
    """Best detection of an SsdDecoder -> rotated crop ROI, recorded into a caller's encoder.

    `preprocessor`: an engine.vision.preprocess.Preprocessor whose `roi` uniform receives
    frame_from_tensor (a 32-byte buffer copy after the dispatch). With no detection in the
    frame, the previous ROI stays and `valid` (word 21) is 0.
    """

    def __init__(self, decoder, preprocessor=None, options: RoiOptions = FACE_MESH_ROI):
        import wgpu

        k = decoder.record.num_keypoints
        if not (0 <= options.start_keypoint < k and 0 <= options.end_keypoint < k):
            raise ValueError(f"rotation keypoints out of range for {k} keypoints")
        self.ctx, self.decoder = decoder.ctx, decoder
        self.preprocessor = preprocessor
        source = render_shader("postprocess_roi.wgsl", BINDINGS, frame_px=decoder.record.frame_px,
                               **rect_params(options))  # fmt: skip
        dev = self.ctx.device
        self.pipeline = compute_pipeline(self.ctx, source, "postprocess_roi")
        usage = wgpu.BufferUsage
        self.buffer = dev.create_buffer(
            size=ROI_BYTES,
            usage=usage.STORAGE | usage.UNIFORM | usage.COPY_SRC | usage.COPY_DST,
        )
        resources = {"detections": decoder.detections, "det_status": decoder.status,
                     "params": decoder.params, "roi": self.buffer}  # fmt: skip
        self.group = bind_group(dev, self.pipeline, BINDINGS, resources)
        iw, ih = decoder.spec.input_size
        self.set(np.array([[iw, 0, 0], [0, ih, 0]], np.float64), (iw, ih), valid=False)

    def set(self, frame_from_tensor: np.ndarray, frame_size, valid: bool = True) -> None:
        """Write a ROI from the CPU (start-up, tests, a fixed crop)."""
        m = np.asarray(frame_from_tensor, np.float64).reshape(2, 3)
        inv = invert_affine(m)
        data = np.zeros((6, 4), np.float32)
        data[0:2, :3], data[2:4, :3] = m, inv
        centre = m @ (0.5, 0.5, 1.0)
        size = np.hypot(m[0, :2], m[1, :2])  # column lengths
        data[4] = (*centre, *size)
        data[5] = (math.atan2(m[1, 0], m[0, 0]), float(valid), *frame_size)
        self.ctx.device.queue.write_buffer(self.buffer, 0, data)
        if self.preprocessor is not None:
            self.preprocessor.set_roi(m)

    def encode(self, encoder) -> None:
        """Record the ROI dispatch (and the copy into the preprocessor's uniform)."""
        dispatch(encoder, self.pipeline, self.group, (1, 1, 1))
        if self.preprocessor is not None:
            encoder.copy_buffer_to_buffer(self.buffer, 0, self.preprocessor.roi, 0, 32)

    def read(self) -> GpuRoi:
        """Read the ROI back (blocks; tests and debugging)."""
        raw = np.frombuffer(self.ctx.device.queue.read_buffer(self.buffer), np.float32)
        d = raw.reshape(6, 4).astype(np.float64)
        return GpuRoi(d[0:2, :3], d[2:4, :3], d[4, :2], d[4, 2:], float(d[5, 0]),
                      bool(d[5, 1] > 0.5), (float(d[5, 2]), float(d[5, 3])))  # fmt: skip
