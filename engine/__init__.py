"""webgpu-ar inference engine: TFLite models on WebGPU, with a numpy reference.

from engine import Engine
engine = Engine.from_tflite("models/face_landmark.tflite")
outputs = engine.run({"input_1": frame})
"""

from engine.errors import DeviceError, DeviceLostError, EngineError, ModelError

__all__ = ["DeviceError", "DeviceLostError", "Engine", "EngineError", "ModelError", "load_tflite"]


def __getattr__(name: str):
    # Lazy: `import engine` stays light (no wgpu) for the importer, reference and CLIs.
    if name == "Engine":
        from engine.gpu.engine import Engine

        return Engine
    if name == "load_tflite":
        from engine.model.importer import load_tflite

        return load_tflite
    raise AttributeError(f"module 'engine' has no attribute {name!r}")
