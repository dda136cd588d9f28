"""ar-demo: the desktop application on top of the engine (cli, pipeline, window, HUD,
headless video mode, effects). Its WGSL templates are the "app/" shader namespace."""

from pathlib import Path

from engine.gpu import register_shaders, shader_loader

# shaders/app in a source checkout; the wheel carries them as the package's app/shaders
_SOURCE_SHADERS = Path(__file__).resolve().parents[1] / "shaders" / "app"
register_shaders("app", shader_loader("app", _SOURCE_SHADERS))
