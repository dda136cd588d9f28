"""engine-fetch: download the models and make the sample media, where the engine looks.

    engine-fetch models [--core] [--only NAME]   # the MediaPipe .tflite files, checksummed
    engine-fetch samples                         # astronaut.png, sample.mp4, people.mp4
    engine-fetch where                           # print the folders (engine/catalog/paths.py)

Run from a source checkout, the files go into its models/ and assets/; installed from a
wheel, into the user cache dir (ENGINE_DATA_DIR overrides both).
"""

from __future__ import annotations

import argparse
import sys

from engine.catalog import fetch, paths, people, samples

PROG = "engine-fetch"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.split("\n")[2:]))  # fmt: skip
    sub = p.add_subparsers(dest="what", required=True)
    fetch.add_arguments(sub.add_parser("models", help="fetch and verify the .tflite models"))
    help_samples = "make astronaut.png, sample.mp4 and people.mp4"
    samples.add_arguments(sub.add_parser("samples", help=help_samples))
    sub.add_parser("where", help="print the models, assets and manifest paths")
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    if a.what == "models":
        return fetch.run(a, f"{PROG} models")
    if a.what == "samples":  # the still and its clip, then the real footage
        return samples.run(a, f"{PROG} samples") or people.run(a, f"{PROG} samples")
    print(f"models:   {paths.models_dir()}\nassets:   {paths.assets_dir()}\n"
          f"manifest: {paths.manifest_path()}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
