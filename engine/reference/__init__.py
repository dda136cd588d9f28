"""Numpy reference interpreter: the oracle for GPU kernels and the CPU fallback.

The public face: `Interpreter`, `supported_ops`, `register`; `run_model(path, feeds,
backend)` runs a .tflite on the reference or on LiteRT, one of `ORACLES`.
"""

from engine.reference.interpreter import Interpreter, supported_ops
from engine.reference.oracle import BACKENDS as ORACLES
from engine.reference.oracle import run_model
from engine.reference.registry import register

__all__ = ["ORACLES", "Interpreter", "register", "run_model", "supported_ops"]
