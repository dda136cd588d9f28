"""The app's one exception type: a one-line message for the person at the terminal."""


class AppError(Exception):
    """A user-facing error (missing file, no camera, no effect fits); the CLI exits 2."""
