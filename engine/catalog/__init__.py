"""The published models and the sample media: the manifest, where they live, fetching.

The public face (what the app and other programs import): `load_manifest`, `model_path`,
`models_dir`, `assets_dir`; the modules behind them: manifest.py, paths.py, fetch.py,
samples.py, people.py, cli.py (engine-fetch).
"""

from engine.catalog.manifest import load_manifest, model_path
from engine.catalog.paths import assets_dir, models_dir

__all__ = ["assets_dir", "load_manifest", "model_path", "models_dir"]
