"""ar-demo harnesses: start-up, planner switches, soak, damaged video, MediaPipe speed."""
