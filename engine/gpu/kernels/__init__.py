"""GPU kernels, one module per op family; importing a module registers its kernels."""

import importlib
import pkgutil

_loaded = False


def load_all() -> None:
    """Import every kernel module once (their @register decorators fill the registry)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for info in pkgutil.iter_modules(__path__):
        if info.name != "base":
            importlib.import_module(f"{__name__}.{info.name}")
