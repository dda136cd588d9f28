"""LETI's XGBoost baseline on its 58 features: FLOPs, peak memory, the 7x7 adjacency
flattened (zero padded for smaller cells) and the 7 ops (0 absent, 1 input, 2 conv3x3,
3 conv1x1, 4 maxpool3x3, 5 output). Saved in XGBoost's own JSON model format (the
booster's save_model), never pickled. Needs `pip install xgboost` (extra "latency")."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.latency.cell import INPUT, MAX_VERTICES, OPS, OUTPUT
from engine.latency.predictors.base import Predictor, Sample

OP_CODES = {INPUT: 1, OPS[0]: 2, OPS[1]: 3, OPS[2]: 4, OUTPUT: 5}
HYPER = {"max_depth": 6, "eta": 0.05, "subsample": 0.9, "colsample_bytree": 0.9, "seed": 0,
         "nthread": 1, "objective": "reg:squarederror"}  # fmt: skip
ROUNDS = 400


def features(s: Sample) -> np.ndarray:
    """The 58 LETI features of a cell sample."""
    adj = np.zeros((MAX_VERTICES, MAX_VERTICES))
    m = np.asarray(s.adjacency)
    adj[: m.shape[0], : m.shape[1]] = m
    ops = np.zeros(MAX_VERTICES)
    ops[: len(s.ops)] = [OP_CODES[o] for o in s.ops]
    return np.concatenate([[s.flops, s.peak_memory], adj.ravel(), ops])


class XGBoost(Predictor):
    kind = "xgboost"
    needs_cell = True

    def __init__(self, params=None, meta=None):
        super().__init__(params, meta)
        self.model = None

    def fit(self, samples: list[Sample]) -> XGBoost:
        import xgboost

        x = np.stack([features(s) for s in samples])
        data = xgboost.DMatrix(x, label=np.array([s.y for s in samples]))
        self.model = xgboost.train(HYPER, data, num_boost_round=ROUNDS)
        self.params = {"hyper": HYPER, "rounds": ROUNDS, "features": 58}
        return self

    def predict_many(self, samples: list[Sample]) -> list[float]:
        import xgboost

        x = xgboost.DMatrix(np.stack([features(s) for s in samples]))
        return self.model.predict(x).tolist()

    def predict(self, sample: Sample) -> float:
        return self.predict_many([sample])[0]

    def save(self, path) -> Path:
        path = Path(path)
        model_path = path.with_name(path.stem + ".model.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        self.model.save_model(str(model_path))
        self.params["model_file"] = model_path.name
        return super().save(path)

    def load_model(self, path: Path) -> None:
        import xgboost

        self.model = xgboost.Booster()
        self.model.load_model(str(path.with_name(self.params["model_file"])))
