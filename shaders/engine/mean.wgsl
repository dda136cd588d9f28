{% import "epilogue.wgsl" as ep %}
{% import "tensor.wgsl" as tensor %}
{% include "common.wgsl" %}
{% set wg = workgroup_size[0] %}
// Reduction over all H*W pixels of one (batch, slice): MEAN over H,W, global pools.
// tree: one work group per (slice, batch); each invocation folds a strided share of
//       the pixels (f32 accumulators), then a tree in workgroup memory.
// else: one invocation per (slice, batch) folds every pixel (small H*W: barriers
//       cost more than the loop on lavapipe).
// Input and output: buffers or textures (shaders/engine/tensor.wgsl).

{{ bindings.src }}
{{ bindings.dst }}
{{ ep.declare(steps, bindings) }}

const HW: u32 = {{ hw }}u;
{% if tree %}
var<workgroup> part: array<vec4<f32>, {{ wg }}>;
{% endif %}

const IN_W: u32 = {{ in_w }}u;

// Pixel p (of H*W) of (slice s, image batch).
fn pixel(s: u32, batch: u32, base: u32, p: u32) -> vec4<T> {
{% if src.kind == "texture" %}
  return {{ tensor.load(src, "", "p % IN_W", "batch * " ~ in_h ~ "u + p / IN_W", "s") }};
{% else %}
  return src[base + p];
{% endif %}
}

fn fold(acc: vec4<f32>, t: vec4<T>) -> vec4<f32> {
{% if reduce == "max" %}
  return max(acc, vec4<f32>(t));
{% else %}
  return acc + vec4<f32>(t);
{% endif %}
}

@compute @workgroup_size({{ wg }})
{% if tree %}
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let s = wid.x;
  let batch = wid.y;
  let base = s * {{ in_plane }}u + batch * HW;
  var acc = vec4<f32>({{ "%s" % lowest if reduce == "max" else "0.0" }});
  for (var p = lid.x; p < HW; p += {{ wg }}u) { acc = fold(acc, pixel(s, batch, base, p)); }
  part[lid.x] = acc;
  workgroupBarrier();
  for (var k = {{ wg // 2 }}u; k > 0u; k >>= 1u) {
    if (lid.x < k) {
{% if reduce == "max" %}
      part[lid.x] = max(part[lid.x], part[lid.x + k]);
{% else %}
      part[lid.x] = part[lid.x] + part[lid.x + k];
{% endif %}
    }
    workgroupBarrier();
  }
  if (lid.x != 0u) { return; }
  acc = part[0];
{% else %}
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let s = gid.x;
  let batch = gid.y;
  if (s >= {{ slices }}u) { return; }
  let base = s * {{ in_plane }}u + batch * HW;
  var acc = vec4<f32>({{ "%s" % lowest if reduce == "max" else "0.0" }});
  for (var p = 0u; p < HW; p++) { acc = fold(acc, pixel(s, batch, base, p)); }
{% endif %}
{% if reduce == "max" %}
  var v = acc;
{% else %}
  var v = acc * {{ scale }};
{% endif %}
  // Output (batch, 1, 1, C) or (batch, C): both store pixel `batch` of slice s.
{% if out_w == 1 %}
  let row = batch;
  let x = 0u;
{% else %}
  let row = 0u;
  let x = batch;
{% endif %}
{{ ep.apply(steps) }}
{% if mask %}
  if (s == {{ slices - 1 }}u) { v = select(vec4<E>(0.0), v, {{ mask }}); }
{% endif %}
  {{ tensor.store(dst, "s * " ~ batch ~ "u + batch", "x", "row", "s", "vec4<T>(v)") }}
}
