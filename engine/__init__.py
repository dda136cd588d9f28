"""webgpu-ar inference engine: TFLite models on WebGPU, with a numpy reference."""

from engine.errors import DeviceError, EngineError, ModelError

__all__ = ["DeviceError", "EngineError", "ModelError"]
