"""Numpy reference interpreter: the oracle for GPU kernels and the CPU fallback."""

from engine.reference.interpreter import Interpreter, supported_ops
from engine.reference.registry import register

__all__ = ["Interpreter", "register", "supported_ops"]
