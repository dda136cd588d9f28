"""Quantized test models and the scripts that make them (TensorFlow, side venv)."""
