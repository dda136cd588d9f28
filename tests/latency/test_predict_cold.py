"""What a first `engine-latency predict` loads: no GPU binding, no templates, no XGBoost;
the shipped work-group memo is current and preloaded; a stale one is ignored."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from engine.latency import wgmemo
from engine.latency.dispatches import AdapterProfile
from engine.latency.predict import predictor_path
from engine.latency.predictors import load
from tests.helpers.latency import PROFILE, tiny_cell_model

ROOT = Path(__file__).resolve().parents[2]  # this checkout: its engine is the one tested

CHECK = """
import sys
from engine.latency.cli import main
assert main(["predict", sys.argv[1]]) == 0
print("imported:", [m for m in ("wgpu", "jinja2", "xgboost") if m in sys.modules])
"""


def test_first_predict_imports_no_wgpu_jinja2_or_xgboost(tmp_path):
    model = tiny_cell_model(tmp_path)
    env = {"ENGINE_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-c", CHECK, str(model)], cwd=ROOT, env=env,
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "imported: []"


def _installed_profile() -> AdapterProfile:
    return AdapterProfile.from_dict(load(predictor_path(None, "fp32")).meta["profile"])


def test_shipped_memo_is_current_for_the_installed_predictor():
    from engine.gpu.workgroups import memo

    profile = _installed_profile()
    doc = json.loads(wgmemo.memo_path(profile).read_text())
    assert doc["code"] == memo.code_hash(), (
        "the work-group rules changed: engine-latency memo models/face_detection_short_range"
        ".tflite models/face_landmark.tflite models/selfie_segmentation.tflite"
    )
    assert doc["limits"] == profile.limits
    assert wgmemo.preload(profile) == len(doc["choices"]) > 0


def test_stale_memo_is_ignored(tmp_path):
    path = tmp_path / "memo.json"
    path.write_text(json.dumps({"code": "old rules", "limits": PROFILE.limits,
                                "choices": {"k": [[1, 1, 1], [1, 1, 1]]}}))  # fmt: skip
    assert wgmemo.preload(PROFILE, path) == 0
    assert wgmemo.preload(PROFILE, tmp_path / "missing.json") == 0
