"""MediaPipe 0.10.14 reference outputs and the script that makes them."""
