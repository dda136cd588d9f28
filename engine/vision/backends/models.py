"""Which file a solution's model is: the caller's path or Graph, else the manifest's."""

from __future__ import annotations

from pathlib import Path

from engine.errors import ModelError


def resolve_model(model, default: str):
    """A Graph, or the path of `model` (None: the manifest's `default`), checked to exist."""
    from engine.model.ir import Graph

    if isinstance(model, Graph):
        return model
    if model is None:
        from engine.catalog.manifest import model_path

        path = model_path(default)
        if not path.is_file():
            raise ModelError(
                f"{path}: the {default} model is not fetched yet; run `engine-fetch models` "
                f"(or `make models` in a checkout) to fetch MediaPipe's models"
            )
        return path
    path = Path(model)
    if not path.is_file():
        raise ModelError(f"{path}: no such model file")
    return path
