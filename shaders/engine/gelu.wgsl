// GELU in f32 (engine/gpu/kernels/elementwise.py), TFLite's two forms
// (tensorflow/lite/kernels/internal/reference/gelu.h):
//   exact:       0.5 x (1 + erf(x / sqrt(2)))
//   approximate: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
// WGSL has no erf: Eigen's generic_fast_erf_float, a rational 13/8 odd/even polynomial
// on x clamped to [-4, 4] (erf(4) = 1 - 1.5e-8). Measured against libm's erf on
// 200001 points of [-6, 6] in float32: max abs error 4.2e-7.

fn erf_f32(v: vec4<f32>) -> vec4<f32> {
  let x = clamp(v, vec4<f32>(-4.0), vec4<f32>(4.0));
  let x2 = x * x;
  var p = x2 * -2.72614225801306e-10 + 2.77068142495902e-08;
  p = x2 * p - 2.10102402082508e-06;
  p = x2 * p - 5.69250639462346e-05;
  p = x2 * p - 7.34990630326855e-04;
  p = x2 * p - 2.95459980854025e-03;
  p = x2 * p - 1.60960333262415e-02;
  var q = x2 * -1.45660718464996e-05 - 2.13374055278905e-04;
  q = x2 * q - 1.68282697438203e-03;
  q = x2 * q - 7.37332916720468e-03;
  q = x2 * q - 1.42647390514189e-02;
  return x * p / q;
}

fn gelu_erf(x: vec4<f32>) -> vec4<f32> {
  return 0.5 * x * (1.0 + erf_f32(x * 0.7071067811865476));
}

fn gelu_tanh(x: vec4<f32>) -> vec4<f32> {
  let u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
  let e = exp(-2.0 * abs(u));  // tanh through exp(-2|u|): no overflow for large |u|
  return 0.5 * x * (1.0 + sign(u) * (1.0 - e) / (1.0 + e));
}
