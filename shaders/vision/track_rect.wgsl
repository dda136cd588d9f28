// Rects of the detect-then-track stage on the GPU (engine/vision/gpu_tracking.py), in frame
// pixels: MediaPipe's NormalizedRect times the frame size. The formulas are those of
// engine/vision/roi.py (its numpy twin, float64 there, float32 here).

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
