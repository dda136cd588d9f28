"""One exception type per layer; messages name the file/op/tensor and what to do."""


class EngineError(Exception):
    """Base class for errors the engine raises on purpose."""


class ModelError(EngineError):
    """A model file cannot be read, or uses something the engine cannot run."""


class DeviceError(EngineError):
    """No usable WebGPU adapter/device, or the device failed."""


class DeviceLostError(DeviceError):
    """The WebGPU device was lost (driver reset, device.destroy(), GPU removed): nothing made
    on it works again. Make a new Engine: shared_context() gives a new device."""


class PublishedModelWarning(UserWarning):
    """A file named like a model of the manifest is not the published file (its sha256
    differs): its outputs may differ from the published model's."""
