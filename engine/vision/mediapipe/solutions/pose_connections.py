"""MediaPipe Pose connections (mp.solutions.pose_connections): engine.vision.connections'."""

from engine.vision.connections import POSE_CONNECTIONS

__all__ = ["POSE_CONNECTIONS"]
