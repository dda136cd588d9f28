"""ar-demo: the desktop application on top of the engine (cli, pipeline, window, HUD,
headless video mode, effects). Its WGSL templates are the "app/" shader namespace."""

from engine.gpu.codegen import REPO_ROOT, register_shaders, shader_loader

register_shaders("app", shader_loader("app", REPO_ROOT / "shaders" / "app"))
