"""LETI's FLOPs baselines.

- FlopsLinear: latency = a + b x FLOPs, least squares over the training models;
- BetterFlops ("Better FLOPs"): models clustered by peak memory (1-D k-means on log
  bytes, `clusters` centres), one FLOPs regression per cluster; a test model takes the
  nearest centre's regression (the global one when that cluster had < 3 models).
"""

from __future__ import annotations

import math

from engine.latency.predictors.base import Predictor, Sample


def _line(x, y) -> list[float]:
    import numpy as np

    a = np.stack([np.ones(len(x)), np.asarray(x, float)], axis=1)
    coef, *_ = np.linalg.lstsq(a, np.asarray(y, float), rcond=None)
    return [float(c) for c in coef]


class FlopsLinear(Predictor):
    kind = "flops"

    def fit(self, samples: list[Sample]) -> FlopsLinear:
        self.params = {"coef": _line([s.flops for s in samples], [s.y for s in samples])}
        return self

    def predict(self, sample: Sample) -> float:
        a, b = self.params["coef"]
        return a + b * sample.flops


def kmeans_1d(x, k: int, iters: int = 50):
    """Centres of a 1-D k-means (initialised at quantiles; deterministic)."""
    import numpy as np

    centres = np.unique(np.quantile(x, np.linspace(0, 1, k)))
    for _ in range(iters):
        labels = np.abs(x[:, None] - centres[None, :]).argmin(axis=1)
        new = np.array([x[labels == j].mean() if (labels == j).any() else c
                        for j, c in enumerate(centres)])  # fmt: skip
        if np.allclose(new, centres):
            break
        centres = new
    return centres


class BetterFlops(Predictor):
    kind = "better_flops"

    def __init__(self, params=None, meta=None, clusters: int = 8):
        super().__init__(params, meta)
        self.clusters = clusters

    def fit(self, samples: list[Sample]) -> BetterFlops:
        import numpy as np

        mem = np.log([max(s.peak_memory, 1) for s in samples])
        centres = kmeans_1d(mem, min(self.clusters, len(set(mem.tolist()))))
        labels = np.abs(mem[:, None] - centres[None, :]).argmin(axis=1)
        fallback = _line([s.flops for s in samples], [s.y for s in samples])
        lines = []
        for j in range(len(centres)):
            members = [s for s, lab in zip(samples, labels, strict=True) if lab == j]
            if len(members) >= 3 and len({m.flops for m in members}) > 1:
                lines.append(_line([m.flops for m in members], [m.y for m in members]))
            else:
                lines.append(fallback)
        self.params = {"centres": centres.tolist(), "lines": lines}
        return self

    def predict(self, sample: Sample) -> float:
        m = math.log(max(sample.peak_memory, 1))
        j = min(
            range(len(self.params["centres"])), key=lambda i: abs(self.params["centres"][i] - m)
        )
        a, b = self.params["lines"][j]
        return a + b * sample.flops
