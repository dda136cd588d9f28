"""engine.vision solutions measured beside MediaPipe 0.10.14's own."""
