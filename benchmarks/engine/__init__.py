"""Engine harnesses: kernels, tile and submit sweeps, dispatch cost, start-up, memory."""
