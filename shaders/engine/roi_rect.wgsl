// Box + rotation keypoints -> MediaPipe's rotated ROI (DetectionsToRectsCalculator +
// RectTransformationCalculator), written as the 96-byte ROI record into `roi` (declared by
// the including shader). Worked in frame pixels, where MediaPipe's normalised formulas
// (x * image width) become plain pixel arithmetic.
//
// roi[0], roi[1]: frame_from_tensor rows (m00, m01, m02, source): frame px = M (u, v, 1),
//                 (u, v) normalised crop coords -- the layout engine.vision.preprocess reads;
//                 source (roi[0].w): 0 from a detection, 1 from landmarks (tracking);
// roi[2], roi[3]: tensor_from_frame rows (the inverse);
// roi[4]:         (centre x, centre y, width, height) in frame pixels;
// roi[5]:         (rotation in radians, valid 1 / 0, frame width, frame height).

const TARGET: f32 = {{ target }};       // target angle (radians) and its cos / sin
const COS_T: f32 = {{ cos_t }};
const SIN_T: f32 = {{ sin_t }};
const SCALE: vec2<f32> = vec2<f32>({{ scale_x }}, {{ scale_y }});
const SHIFT: vec2<f32> = vec2<f32>({{ shift_x }}, {{ shift_y }});
const SQUARE: u32 = {{ square }}u;      // 0 keep, 1 long side, 2 short side
const PI: f32 = 3.14159265358979;

// box: (xmin, ymin, xmax, ymax) and the rotation vector k0 -> k1, all in frame pixels.
fn write_rect_roi(box: vec4<f32>, k0: vec2<f32>, k1: vec2<f32>, frame: vec2<f32>, source: f32) {
  var size = box.zw - box.xy;
  var centre = box.xy + size / 2.0;
  // rotation = TARGET - atan2(-(y1 - y0), x1 - x0), normalised to [-pi, pi); its cos and
  // sin come from the rotation vector directly (no trigonometry: exact to f32 rounding).
  let v = k1 - k0;
  let r = length(v);
  var cp = 1.0;  // cos, sin of phi = atan2(-vy, vx)
  var sp = 0.0;
  if (r > 0.0) {
    cp = v.x / r;
    sp = -v.y / r;
  }
  let c = COS_T * cp + SIN_T * sp;  // cos(TARGET - phi)
  let s = SIN_T * cp - COS_T * sp;  // sin(TARGET - phi)
  var rotation = TARGET - atan2(-v.y, v.x);
  rotation = rotation - 2.0 * PI * floor((rotation + PI) / (2.0 * PI));
  // RectTransformationCalculator: shift along the rotated axes, square, scale
  centre += vec2<f32>(size.x * SHIFT.x * c - size.y * SHIFT.y * s,
                      size.x * SHIFT.x * s + size.y * SHIFT.y * c);
  if (SQUARE == 1u) {
    size = vec2<f32>(max(size.x, size.y));
  } else if (SQUARE == 2u) {
    size = vec2<f32>(min(size.x, size.y));
  }
  size *= SCALE;
  let w = size.x;
  let h = size.y;
  roi[0] = vec4<f32>(w * c, -h * s, centre.x - 0.5 * w * c + 0.5 * h * s, source);
  roi[1] = vec4<f32>(w * s, h * c, centre.y - 0.5 * w * s - 0.5 * h * c, 0.0);
  roi[2] = vec4<f32>(c / w, s / w, 0.5 - (c * centre.x + s * centre.y) / w, 0.0);
  roi[3] = vec4<f32>(-s / h, c / h, 0.5 - (c * centre.y - s * centre.x) / h, 0.0);
  roi[4] = vec4<f32>(centre, w, h);
  roi[5] = vec4<f32>(rotation, 1.0, frame);
}
