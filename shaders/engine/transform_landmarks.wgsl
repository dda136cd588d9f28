{% include "common.wgsl" %}
// MediaPipe's TransformLandmarks V2 (engine/gpu/kernels/transform_landmarks.py): landmark
// i (vec4 i, {{ dims }} values) -> (m0 . (x, y, 0, 1), m1 . (x, y, 0, 1){{ ", z" if dims == 3 else "" }}), in f32.

{{ bindings.landmarks }}
{{ bindings.matrix }}
{{ bindings.dst }}

@compute @workgroup_size({{ workgroup_size[0] }})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= {{ n }}u) { return; }
  let p = vec4<f32>(landmarks[i]);
  let v = vec4<f32>(p.xy, 0.0, 1.0);
  let x = dot(vec4<f32>(matrix[0]), v);
  let y = dot(vec4<f32>(matrix[1]), v);
  dst[i] = vec4<T>(vec4<f32>(x, y, {{ "p.z" if dims == 3 else "0.0" }}, 0.0));
}
