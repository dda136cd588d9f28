// Shared header: storage type T, arithmetic type E, stable activations.
{% if precision == "fp16" %}
enable f16;
{% endif %}
alias T = {{ "f16" if precision == "fp16" else "f32" }};
// E: the type of a kernel's arithmetic after its loads (the op's own expression, the
// epilogue, activations). Kernels that sum (convs, matmuls, reductions, element-wise,
// resize, softmax, layer norm) render epilogue_type="f32": at fp16 a value is rounded to
// T once, at the store, not after each step (a residual add of two rounded halves, then
// an activation, lost 2-9x more than storage rounding alone: docs/precision.md).
alias E = {{ epilogue_type | default("T") }};

fn sigmoid(v: vec4<E>) -> vec4<E> {
  // exp of a clamped argument: no inf for large |v|.
  return vec4<E>(1.0) / (vec4<E>(1.0) + exp(-clamp(v, vec4<E>(-80.0), vec4<E>(80.0))));
}

fn stable_tanh(v: vec4<E>) -> vec4<E> {
  // tanh(x) = sign(x) * (1 - e) / (1 + e), e = exp(-2|x|) in (0, 1]: never overflows.
  let e = exp(-2.0 * abs(v));
  return sign(v) * (vec4<E>(1.0) - e) / (vec4<E>(1.0) + e);
}
