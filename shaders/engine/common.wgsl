// Shared header: storage type T, stable activations.
{% if precision == "fp16" %}
enable f16;
{% endif %}
alias T = {{ "f16" if precision == "fp16" else "f32" }};

fn sigmoid(v: vec4<T>) -> vec4<T> {
  // exp of a clamped argument: no inf for large |v|.
  return vec4<T>(1.0) / (vec4<T>(1.0) + exp(-clamp(v, vec4<T>(-80.0), vec4<T>(80.0))));
}

fn stable_tanh(v: vec4<T>) -> vec4<T> {
  // tanh(x) = sign(x) * (1 - e) / (1 + e), e = exp(-2|x|) in (0, 1]: never overflows.
  let e = exp(-2.0 * abs(v));
  return sign(v) * (vec4<T>(1.0) - e) / (vec4<T>(1.0) + e);
}
