{% include "common.wgsl" %}
// SSD post-process in one work group: decode + sigmoid score + threshold + weighted NMS.
// Mirrors engine/vision/ssd.py (decode_boxes, scores_from_logits, threshold, weighted_nms):
// 1. every anchor: score = sigmoid(clamp(raw, -CLIP, CLIP)); score >= MIN_SCORE -> candidate,
//    compacted into workgroup memory with an atomic counter (at most CAP);
// 2. bitonic sort of the candidates: score descending, anchor index ascending (numpy's
//    stable argsort of -score);
// 3. repeat: best = first remaining candidate; its group = best + every remaining candidate
//    with IoU > IOU; one detection = score-weighted average of the group's box and keypoints
//    (summed in rank order) with the best's score; the group is consumed. Remaining and
//    group members are bit sets over sorted positions.
// Boxes and keypoints are decoded from the raw regressors where needed (cheap), so only the
// sort keys (8 bytes per candidate) and two bit sets live in workgroup memory.
//
// Output record d (f32 words from d * STRIDE): header (score, group size, anchor index, 0),
// then 3 sections of P words: tensor-normalised, frame pixels, normalised frame coords;
// each section: xmin, ymin, xmax, ymax, keypoint 0 (x, y), ..., zero padding.

struct Params {
  row0: vec4<f32>,   // frame_from_tensor: (m00, m01, m02, _)
  row1: vec4<f32>,   // (m10, m11, m12, _)
  frame: vec4<f32>,  // (frame width, height, 1 / width, 1 / height) in pixels
};

{{ bindings.regressors }}
{{ bindings.classificators }}
{{ bindings.anchors }}  // cx, cy, w, h
{{ bindings.params }}
{{ bindings.detections }}
{{ bindings.status }}
{{ bindings.args }}

const N_ANCHORS: u32 = {{ n_anchors }}u;
const ROWS: u32 = {{ rows }}u;  // vec4s per PHWC4 slice of the regressors
const K: u32 = {{ num_keypoints }}u;
const NPAIRS: u32 = 2u + K;  // (xmin, ymin), (xmax, ymax), keypoints
const SCALE: f32 = {{ scale }};
const CLIP: f32 = {{ clip }};
const MIN_SCORE: f32 = {{ min_score }};
const IOU: f32 = {{ iou }};
const MAX_DET: u32 = {{ max_detections }}u;
const CAP: u32 = {{ cap }}u;  // power of two >= 32
const WG: u32 = {{ workgroup }}u;
const P: u32 = {{ section }}u;
const STRIDE: u32 = {{ stride }}u;
const VERTEX_COUNT: u32 = {{ vertex_count }}u;

const WORDS: u32 = CAP / 32u;  // bit-set words over sorted positions
const NONE: u32 = 0xffffffffu;

var<workgroup> key_score: array<f32, CAP>;
var<workgroup> key_idx: array<u32, CAP>;
var<workgroup> alive: array<atomic<u32>, WORDS>;  // candidates not yet in a detection
var<workgroup> group: array<atomic<u32>, WORDS>;  // the current detection's group
var<workgroup> found: atomic<u32>;
var<workgroup> sh_n: u32;
var<workgroup> sh_best: u32;
var<workgroup> sh_cursor: u32;

fn score_of(i: u32) -> f32 {
  let x = clamp(f32(classificators[i].x), -CLIP, CLIP);
  if (x < -80.0) { return 0.0; }  // exp(-x) would overflow f32; numpy gets 1 / inf = 0
  return 1.0 / (1.0 + exp(-x));
}

fn decode_box(i: u32) -> vec4<f32> {  // xmin, ymin, xmax, ymax
  let r = vec4<f32>(regressors[i]);
  let a = anchors[i];
  let cx = r.x / SCALE * a.z + a.x;
  let cy = r.y / SCALE * a.w + a.y;
  let w = r.z / SCALE * a.z;
  let h = r.w / SCALE * a.w;
  return vec4<f32>(cx - w / 2.0, cy - h / 2.0, cx + w / 2.0, cy + h / 2.0);
}

fn decode_pair(i: u32, q: u32) -> vec2<f32> {  // q: 0 (xmin, ymin), 1 (xmax, ymax), 2 + j
  if (q < 2u) {
    let b = decode_box(i);
    return select(b.zw, b.xy, q == 0u);
  }
  let c = 4u + 2u * (q - 2u);
  let r = vec4<f32>(regressors[(c / 4u) * ROWS + i]);
  let raw = select(r.zw, r.xy, c % 4u == 0u);
  let a = anchors[i];
  return raw / SCALE * a.zw + a.xy;
}

fn iou(a: vec4<f32>, b: vec4<f32>) -> f32 {  // as engine.vision.ssd.iou (float32)
  let ix = min(a.z, b.z) - max(a.x, b.x);
  let iy = min(a.w, b.w) - max(a.y, b.y);
  let inter = max(ix, 0.0) * max(iy, 0.0);
  let area_a = (a.z - a.x) * (a.w - a.y);
  let area_b = (b.z - b.x) * (b.w - b.y);
  let uni = area_a + area_b - inter;
  if (inter > 0.0 && uni > 0.0) { return inter / uni; }
  return 0.0;
}

fn ranks_before(a: u32, b: u32) -> bool {
  let sa = key_score[a];
  let sb = key_score[b];
  return sa > sb || (sa == sb && key_idx[a] < key_idx[b]);
}

fn write_pair(d: u32, q: u32, v: vec2<f32>) {
  let base = d * STRIDE + 4u + 2u * q;
  let px = vec2<f32>(dot(params.row0.xyz, vec3<f32>(v, 1.0)),
                     dot(params.row1.xyz, vec3<f32>(v, 1.0)));
  let nv = px * params.frame.zw;
  detections[base] = v.x;
  detections[base + 1u] = v.y;
  detections[base + P] = px.x;
  detections[base + P + 1u] = px.y;
  detections[base + 2u * P] = nv.x;
  detections[base + 2u * P + 1u] = nv.y;
}

@compute @workgroup_size({{ workgroup }})
fn main(@builtin(local_invocation_index) lid: u32) {
  // Workgroup memory is explicitly reset: not every driver zero-initialises it per dispatch
  // (lavapipe kept the previous dispatch's values).
  if (lid == 0u) {
    atomicStore(&found, 0u);
    sh_cursor = 0u;
  }
  workgroupBarrier();
  // 1. scores, threshold, compaction
  for (var i = lid; i < N_ANCHORS; i += WG) {
    let s = score_of(i);
    if (s >= MIN_SCORE) {
      let slot = atomicAdd(&found, 1u);
      if (slot < CAP) {
        key_score[slot] = s;
        key_idx[slot] = i;
      }
    }
  }
  workgroupBarrier();
  if (lid == 0u) {
    sh_n = min(atomicLoad(&found), CAP);
  }
  let n = workgroupUniformLoad(&sh_n);

  // 2. bitonic sort of the first `size` (power of two >= n) keys; sentinels sort last
  var size = 2u;
  while (size < n) { size = size << 1u; }
  for (var p = n + lid; p < size; p += WG) {
    key_score[p] = -1.0;
    key_idx[p] = 0xffffffffu;
  }
  workgroupBarrier();
  for (var k = 2u; k <= size; k = k << 1u) {
    for (var j = k >> 1u; j > 0u; j = j >> 1u) {
      for (var t = lid; t < size / 2u; t += WG) {
        let a = (t / j) * 2u * j + t % j;
        let b = a + j;
        if (ranks_before(b, a) == ((a & k) == 0u)) {
          let s = key_score[a];
          key_score[a] = key_score[b];
          key_score[b] = s;
          let x = key_idx[a];
          key_idx[a] = key_idx[b];
          key_idx[b] = x;
        }
      }
      workgroupBarrier();
    }
  }

    // 3. weighted NMS over bit sets of sorted positions (few loop iterations per invocation:
  //    lavapipe caps an invocation at 65535 loop iterations in total)
  for (var w = lid; w < WORDS; w += WG) {
    var bits = 0u;
    if (w * 32u + 32u <= n) {
      bits = 0xffffffffu;
    } else if (w * 32u < n) {
      bits = (1u << (n - w * 32u)) - 1u;
    }
    atomicStore(&alive[w], bits);
    atomicStore(&group[w], 0u);
  }
  workgroupBarrier();
  var count = 0u;
  for (var d = 0u; d < MAX_DET; d++) {
    if (lid == 0u) {
      var w = sh_cursor;
      while (w < WORDS && atomicLoad(&alive[w]) == 0u) { w++; }
      sh_cursor = w;
      sh_best = NONE;
      if (w < WORDS) {
        let b = countTrailingZeros(atomicLoad(&alive[w]));
        sh_best = w * 32u + b;
        // The best is always in its group: numpy's group is either all boxes with IoU > IOU
        // (the best included, IoU 1) or, for a zero-area best box, the best alone.
        atomicOr(&group[w], 1u << b);
      }
    }
    let best = workgroupUniformLoad(&sh_best);
    if (best >= n) { break; }
    let best_box = decode_box(key_idx[best]);
    for (var p = best + 1u + lid; p < n; p += WG) {
      let bit = 1u << (p % 32u);
      if ((atomicLoad(&alive[p / 32u]) & bit) != 0u &&
          iou(best_box, decode_box(key_idx[p])) > IOU) {
        atomicOr(&group[p / 32u], bit);
      }
    }
    workgroupBarrier();
    if (lid < NPAIRS) {  // score-weighted average of pair `lid`, summed in rank order
      var acc = vec2<f32>(0.0);
      var wsum = 0.0;
      var members = 0u;
      for (var w = best / 32u; w < WORDS; w++) {
        var bits = atomicLoad(&group[w]);
        while (bits != 0u) {
          let p = w * 32u + countTrailingZeros(bits);
          bits = bits & (bits - 1u);
          let wt = key_score[p];
          acc += wt * decode_pair(key_idx[p], lid);
          wsum += wt;
          members++;
        }
      }
      write_pair(d, lid, acc / wsum);
      if (lid == 0u) {
        detections[d * STRIDE] = key_score[best];
        detections[d * STRIDE + 1u] = f32(members);
        detections[d * STRIDE + 2u] = f32(key_idx[best]);
        detections[d * STRIDE + 3u] = 0.0;
      }
    }
    workgroupBarrier();
    for (var w = best / 32u + lid; w < WORDS; w += WG) {  // consume the group
      let g = atomicExchange(&group[w], 0u);
      atomicAnd(&alive[w], ~g);
    }
    workgroupBarrier();
    count = d + 1u;
  }

  if (lid == 0u) {
    var left = 0u;  // candidates no detection took (MAX_DET reached)
    for (var w = sh_cursor; w < WORDS; w++) { left += countOneBits(atomicLoad(&alive[w])); }
    let total = atomicLoad(&found);
    status[0] = count;
    status[1] = total;
    status[2] = left;
    status[3] = total - min(total, CAP);  // candidates dropped by the CAP compaction
    args[0] = VERTEX_COUNT;
    args[1] = count;
    args[2] = 0u;
    args[3] = 0u;
  }
}
