{% include "common.wgsl" %}
// One hand crop's outputs -> the hand, in the slot's record (engine/vision/gpu_hands.py;
// hands.decode_hand and landmarks.py are its numpy twin): MediaPipe's hand_landmark_cpu
// graph: TensorsToLandmarks (x / W, y / H, z / W / NORMALIZE_Z), LandmarkLetterboxRemoval
// (the slot's padding), LandmarkProjection (the slot's rect), WorldLandmarkProjection
// (rotation only); the hand is kept when its flag > THRESHOLD (strict).
// hands record (HAND_VEC4 vec4 per slot): [0] (kept 1 / 0, flag, handedness p, tracked);
// [1 .. N] landmarks normalised (x, y, z, 1); [1 + N .. 2N] world landmarks (x, y, z, 0).

struct Slot { index: vec4<u32> };

{{ bindings.landmarks }}
{{ bindings.presence }}
{{ bindings.handedness }}
{{ bindings.world }}
{{ bindings.slots }}
{{ bindings.slot }}
{{ bindings.hands }}

const N: u32 = {{ n }}u;
const IN_W: f32 = {{ in_w }};
const IN_H: f32 = {{ in_h }};
const NORMALIZE_Z: f32 = {{ normalize_z }};
const THRESHOLD: f32 = {{ threshold }};
const SLOT_VEC4: u32 = 6u;
const HAND_VEC4: u32 = 1u + 2u * N;

fn lane(v: vec4<T>, c: u32) -> f32 {
  return f32(v[c % 4u]);
}

@compute @workgroup_size(32)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  let k = slot.index.x;
  let at = k * SLOT_VEC4;
  let rect = slots[at + 2u];    // centre, size (px)
  let rot = slots[at + 3u];     // rotation, cos, sin, valid
  let pad = slots[at + 4u];     // left, top, right, bottom
  let frame = slots[at + 5u].yz;
  let out = k * HAND_VEC4;
  if (i == 0u) {
    let flag = lane(presence[0], 0u);
    let kept = rot.w > 0.5 && flag > THRESHOLD;
    hands[out] = vec4<f32>(select(0.0, 1.0, kept), flag, lane(handedness[0], 0u),
                           slots[at + 5u].x);
  }
  if (i >= N) {
    return;
  }
  let c = rot.y;
  let s = rot.z;
  let size = rect.zw / frame;      // the rect, normalised
  let centre = rect.xy / frame;
  let v = 3u * i;
  var p = vec3<f32>(lane(landmarks[v / 4u], v), lane(landmarks[(v + 1u) / 4u], v + 1u),
                    lane(landmarks[(v + 2u) / 4u], v + 2u));
  p = p / vec3<f32>(IN_W, IN_H, IN_W * NORMALIZE_Z);
  let sx = 1.0 - pad.x - pad.z;
  p = vec3<f32>((p.x - pad.x) / sx, (p.y - pad.y) / (1.0 - pad.y - pad.w), p.z / sx);
  let x = p.x - 0.5;
  let y = p.y - 0.5;
  hands[out + 1u + i] = vec4<f32>((c * x - s * y) * size.x + centre.x,
                                  (s * x + c * y) * size.y + centre.y, p.z * size.x, 1.0);
  let w = vec3<f32>(lane(world[v / 4u], v), lane(world[(v + 1u) / 4u], v + 1u),
                    lane(world[(v + 2u) / 4u], v + 2u));
  hands[out + 1u + N + i] = vec4<f32>(c * w.x - s * w.y, s * w.x + c * w.y, w.z, 0.0);
}
