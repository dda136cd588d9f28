{% include "common.wgsl" %}
// One face crop's outputs -> the face in frame coordinates (one thread a landmark;
// engine/vision/gpu_holistic.py; face_mesh.face_landmarks and landmarks.py are its numpy
// twin): face_landmark's N landmarks, TensorsToLandmarks (x / W, y / H, z / W),
// LandmarkLetterboxRemoval (the slot's padding), LandmarkProjection (the slot's rect); the
// face is kept when the sigmoid of its flag > THRESHOLD (strict) and the slot is valid.
// face record (vec4): [0] (kept 1 / 0, presence, tracked, slot valid); [1 .. N] the
// landmarks normalised by the frame (x, y, z, 1).

{{ bindings.landmarks }}
{{ bindings.flag }}
{{ bindings.face_slot }}
{{ bindings.face }}

const N: u32 = {{ n }}u;
const IN_W: f32 = {{ in_w }};
const IN_H: f32 = {{ in_h }};
const THRESHOLD: f32 = {{ threshold }};

fn value(c: u32) -> f32 {
  return f32(landmarks[c / 4u][c % 4u]);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  let rect = face_slot[2];  // centre, size (px)
  let rot = face_slot[3];   // rotation, cos, sin, valid
  let pad = face_slot[4];   // left, top, right, bottom
  let frame = face_slot[5].yz;
  if (i == 0u) {
    // exp of a clamped argument: no inf for a large logit
    let presence = 1.0 / (1.0 + exp(-clamp(f32(flag[0].x), -80.0, 80.0)));
    let kept = rot.w > 0.5 && presence > THRESHOLD;
    face[0] = vec4<f32>(select(0.0, 1.0, kept), presence, face_slot[5].x, rot.w);
  }
  if (i >= N) {
    return;
  }
  let v = 3u * i;
  var p = vec3<f32>(value(v) / IN_W, value(v + 1u) / IN_H, value(v + 2u) / IN_W);
  let sx = 1.0 - pad.x - pad.z;
  p = vec3<f32>((p.x - pad.x) / sx, (p.y - pad.y) / (1.0 - pad.y - pad.w), p.z / sx);
  let x = p.x - 0.5;
  let y = p.y - 0.5;
  let size = rect.zw / frame;  // the rect, normalised
  let centre = rect.xy / frame;
  face[1u + i] = vec4<f32>((rot.y * x - rot.z * y) * size.x + centre.x,
                           (rot.z * x + rot.y * y) * size.y + centre.y, p.z * size.x, 1.0);
}
