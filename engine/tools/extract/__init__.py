"""engine-extract's parts: one solution over many videos, one Parquet file per video.

- options: the solutions by name and their constructor options as flags;
- video: a video file's frames (PyAV), RGB with timestamps;
- table: the Parquet schema from the solutions' declared fields, the atomic write;
- job: one video -> one result file (skipped when it exists), and what came of it;
- progress: the overall and per-file bars, one line per skipped or failed file;
- cluster: the same jobs as Ray tasks (`--ray`).
"""
