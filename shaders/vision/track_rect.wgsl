// Rects of the GPU frames' tracking (engine/vision/gpu_hands.py, gpu_pose.py,
// gpu_holistic.py), in frame pixels: MediaPipe's NormalizedRect times the frame size. The
// formulas are those of engine/vision/roi.py and tracking.py (their numpy twins, float64
// there, float32 here).

const PI: f32 = 3.14159265358979;
const FLOAT_MIN: f32 = 1.17549435e-38;  // std::numeric_limits<float>::min()

struct Rect {
  centre: vec2<f32>,  // pixels
  size: vec2<f32>,    // pixels
  rotation: f32,      // radians, clockwise on screen
};

fn normalize_radians(a: f32) -> f32 {
  return a - 2.0 * PI * floor((a + PI) / (2.0 * PI));
}

// RectTransformationCalculator: shift along the rotated axes (by the original size),
// square on the long (1) or short (2) side, scale.
fn transform_rect(r: Rect, scale: vec2<f32>, shift: vec2<f32>, square: u32) -> Rect {
  let c = cos(r.rotation);
  let s = sin(r.rotation);
  var out = r;
  out.centre += vec2<f32>(r.size.x * shift.x * c - r.size.y * shift.y * s,
                          r.size.x * shift.x * s + r.size.y * shift.y * c);
  if (square == 1u) {
    out.size = vec2<f32>(max(r.size.x, r.size.y));
  } else if (square == 2u) {
    out.size = vec2<f32>(min(r.size.x, r.size.y));
  }
  out.size *= scale;
  return out;
}

// DetectionsToRectsCalculator: the box's rect, rotated by the keypoints' vector k0 -> k1.
fn detection_rect(box: vec4<f32>, k0: vec2<f32>, k1: vec2<f32>, angle: f32) -> Rect {
  let size = box.zw - box.xy;
  let v = k1 - k0;
  return Rect(box.xy + size / 2.0, size, normalize_radians(angle - atan2(-v.y, v.x)));
}

// CalculateIou of the rects' axis-aligned boxes (rotation ignored, as MediaPipe's); the
// pixel scale of both axes cancels in the ratio.
fn rect_iou(a: Rect, b: Rect) -> f32 {
  let lo = max(a.centre - a.size / 2.0, b.centre - b.size / 2.0);
  let hi = min(a.centre + a.size / 2.0, b.centre + b.size / 2.0);
  let inter = hi - lo;
  if (inter.x < 0.0 || inter.y < 0.0) {
    return 0.0;
  }
  let area = inter.x * inter.y;
  let total = a.size.x * a.size.y + b.size.x * b.size.y - area;
  return select(0.0, area / total, total > 0.0);
}

// AlignmentPointsRectsCalculator: a square centred on k0, its side twice |k1 - k0|, rotated
// as detection_rect (roi.alignment_rect).
fn alignment_rect(k0: vec2<f32>, k1: vec2<f32>, angle: f32) -> Rect {
  let v = k1 - k0;
  return Rect(k0, vec2<f32>(2.0 * length(v)), normalize_radians(angle - atan2(-v.y, v.x)));
}

// PadRoi (keep_aspect_ratio): a rect's size grown to the model input's aspect (height /
// width), and the letterbox padding (left, top, right, bottom) that leaves in the input
// (image_to_tensor.pad_roi and letterbox_padding).
struct Crop {
  size: vec2<f32>,
  padding: vec4<f32>,
};

fn pad_roi(size: vec2<f32>, input_aspect: f32) -> Crop {
  let roi_aspect = size.y / size.x;
  if (input_aspect > roi_aspect) {
    let v = (1.0 - roi_aspect / input_aspect) / 2.0;
    return Crop(vec2<f32>(size.x, size.x * input_aspect), vec4<f32>(0.0, v, 0.0, v));
  }
  let h = (1.0 - input_aspect / roi_aspect) / 2.0;
  return Crop(vec2<f32>(size.y / input_aspect, size.y), vec4<f32>(h, 0.0, h, 0.0));
}

// A crop's slot record (track_associate.wgsl's layout, 6 vec4): [0], [1] frame_from_tensor
// rows of the rect, grown to the model input's aspect when `keep_aspect` (PadRoi); [2]
// centre, size (px); [3] rotation, cos, sin, valid (1); [4] the letterbox padding; [5]
// tracked (1) or not, frame w, h, 0.
fn crop_record(r: Rect, keep_aspect: bool, input_aspect: f32, tracked: bool,
               frame: vec2<f32>) -> array<vec4<f32>, 6> {
  var crop = Crop(r.size, vec4<f32>(0.0));
  if (keep_aspect) {
    crop = pad_roi(r.size, input_aspect);
  }
  let c = cos(r.rotation);
  let s = sin(r.rotation);
  let w = crop.size.x;
  let h = crop.size.y;
  return array<vec4<f32>, 6>(
    vec4<f32>(w * c, -h * s, r.centre.x - 0.5 * w * c + 0.5 * h * s, 0.0),
    vec4<f32>(w * s, h * c, r.centre.y - 0.5 * w * s - 0.5 * h * c, 0.0),
    vec4<f32>(r.centre, r.size),
    vec4<f32>(r.rotation, c, s, 1.0),
    crop.padding,
    vec4<f32>(select(0.0, 1.0, tracked), frame, 0.0),
  );
}

// HandLandmarksToRectCalculator's partial set: wrist, thumb CMC/MCP/IP, each finger's MCP
// and PIP (roi.HAND_RECT_POINTS)
const HAND_PARTIAL = array<u32, 12>(0u, 1u, 2u, 3u, 5u, 6u, 9u, 10u, 13u, 14u, 17u, 18u);

// roi.hand_rect_from_landmarks of a hand's 21 landmarks in pixels (its maxima start at the
// smallest positive float), before RectTransformation
fn hand_rect(landmarks: array<vec2<f32>, 21>, frame: vec2<f32>) -> Rect {
  var p = landmarks;  // a variable: indexed by loop counters below
  let p0 = p[0];
  let p1 = ((p[5] + p[13]) / 2.0 + p[9]) / 2.0;
  let rotation = normalize_radians(PI / 2.0 - atan2(-(p1.y - p0.y), p1.x - p0.x));
  var lo = p[HAND_PARTIAL[0]];
  var hi = lo;
  for (var j = 1u; j < 12u; j++) {
    let q = p[HAND_PARTIAL[j]];
    lo = min(lo, q);
    hi = max(hi, q);
  }
  hi = max(hi, vec2<f32>(FLOAT_MIN) * frame);
  let axis = (lo + hi) / 2.0;
  let reverse = normalize_radians(-rotation);
  let cr = cos(reverse);
  let sr = sin(reverse);
  var plo = vec2<f32>(3.4e38);
  var phi = vec2<f32>(-3.4e38);
  for (var j = 0u; j < 12u; j++) {
    let o = p[HAND_PARTIAL[j]] - axis;
    let q = vec2<f32>(o.x * cr - o.y * sr, o.x * sr + o.y * cr);
    plo = min(plo, q);
    phi = max(phi, q);
  }
  phi = max(phi, vec2<f32>(FLOAT_MIN));
  let pc = (phi + plo) / 2.0;
  let c = cos(rotation);
  let s = sin(rotation);
  let centre = vec2<f32>(pc.x * c - pc.y * s, pc.x * s + pc.y * c) + axis;
  return Rect(centre, phi - plo, rotation);
}

// RoiTrackingCalculator (tracking.keep_tracking), in pixels, with `req` the
// TrackingRequirements (rotation degrees, translation, scale, margin): the previous ROI
// stays when its rotation, centre and size are close enough to the re-crop's ...
fn rotate_by(v: vec2<f32>, a: f32) -> vec2<f32> {
  let c = cos(a);
  let s = sin(a);
  return vec2<f32>(v.x * c - v.y * s, v.x * s + v.y * c);
}

fn tracking_rects_agree(prev: Rect, recrop: Rect, req: vec4<f32>) -> bool {
  let angle = -recrop.rotation;
  let moved = abs(rotate_by(prev.centre, angle) - rotate_by(recrop.centre, angle));
  var diff = degrees(prev.rotation) - degrees(recrop.rotation);
  if (diff > 180.0) {
    diff -= 360.0;
  } else if (diff < -180.0) {
    diff += 360.0;
  }
  let r = recrop.size;
  return abs(diff) <= req.x && all(moved <= r * req.y)
         && all(abs(prev.size - r) <= r * req.z);
}

// ... and every previous landmark (pixels) lies inside the re-crop shrunk by the margin
// (compared in the re-crop's rotated frame)
fn tracking_contains(recrop: Rect, p: vec2<f32>, req: vec4<f32>) -> bool {
  let half = recrop.size * (1.0 + req.w) / 2.0;
  let centre = rotate_by(recrop.centre, -recrop.rotation);
  let q = rotate_by(p, -recrop.rotation);
  return all(q > centre - half) && all(q < centre + half);
}
