"""Build the quantization test fixtures: tests/data/quant/*.tflite.

Two small keras models with seeded random weights (tests/data/quant/keras_convert.py:
`convnet` 32x32 classifier, `unet` 32x32 segmenter) in each TFLiteConverter variant
(fp32, fp16, dynamic, int8, int8_float_io). Needs tensorflow: it runs the converter in
a side venv, not the project's.

usage: python tests/data/quant/make_fixtures.py [--tf-python /work/venvs/tf/bin/python]
       [--out tests/data/quant] [--force]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CONVERT = Path(__file__).with_name("keras_convert.py")
MODELS = ("convnet:32", "unet:32")
DEFAULT_TF_PYTHON = "/work/venvs/tf/bin/python"


def build(tf_python: str, out: Path, models: tuple[str, ...], force: bool = False) -> None:
    """Convert `models` (NAME:SIZE) in every variant into `out` (existing files kept)."""
    out.mkdir(parents=True, exist_ok=True)
    if force:
        for f in out.glob("*.tflite"):
            f.unlink()
    subprocess.run([tf_python, str(CONVERT), str(out), *models], check=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tf-python", default=DEFAULT_TF_PYTHON, help="python with tensorflow")
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "quant")
    ap.add_argument("--force", action="store_true", help="rebuild files that exist")
    args = ap.parse_args(argv)
    build(args.tf_python, args.out, MODELS, args.force)
    for f in sorted(args.out.glob("*.tflite")):
        print(f"{f.relative_to(ROOT) if f.is_relative_to(ROOT) else f}  {f.stat().st_size:,} B")
    return 0


if __name__ == "__main__":
    sys.exit(main())
