"""The solutions against MediaPipe 0.10.14's own outputs on real footage."""
