"""What native libraries print on fd 2, captured so it can be filtered or reported.

- `captured_fd2()`: a context manager that points fd 2 at a temp file for its block and
  yields a list holding the captured text afterwards (C/C++ libraries such as LiteRT write
  to the file descriptor, not to sys.stderr, so redirecting sys.stderr cannot catch them)
- `without_info(text)`: the captured text less LiteRT's INFO lines (its "Created TensorFlow
  Lite XNNPACK delegate for CPU." notice), for re-printing: a CLI's errors stay one line
- usage:
    with captured_fd2() as log:
        interpreter = Interpreter(model_path=path)
    sys.stderr.write(without_info(log[0]))
"""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager


@contextmanager
def captured_fd2():
    """Redirect fd 2 to a temp file for the block; yields a list that holds the captured
    text (one string) after the block, whether or not the block raised."""
    sys.stderr.flush()
    saved = os.dup(2)
    box: list[str] = []
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield box
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            box.append(tmp.read().decode(errors="replace"))


def without_info(text: str) -> str:
    """The lines of `text` that are not LiteRT's INFO notices (newline-terminated)."""
    kept = [line for line in text.splitlines() if not line.startswith("INFO: ")]
    return "".join(line + "\n" for line in kept)
