"""(a) The per-layer look-up table: latency = sum of the single-op latencies of the
model's layers (engine.latency.lut measures them). Nothing to fit; a model with a layer
missing from the table has no prediction (NaN)."""

from __future__ import annotations

import math

from engine.latency.predictors.base import Predictor, Sample


class LookupTable(Predictor):
    kind = "lut"
    needs_cell = True

    def fit(self, samples: list[Sample]) -> LookupTable:
        self.params.setdefault("table", {})
        return self

    def predict(self, sample: Sample) -> float:
        table = self.params["table"]
        if not sample.layers or any(k not in table for k in sample.layers):
            return math.nan
        return sum(table[k] for k in sample.layers)
