"""engine-fetch: download the models and make the sample media, where the engine looks.

    engine-fetch models [--core] [--only NAME]   # the MediaPipe .tflite files, checksummed
    engine-fetch samples                         # astronaut.png and sample.mp4
    engine-fetch where                           # print the folders (engine/catalog/paths.py)

Run from a source checkout, the files go into its models/ and assets/; installed from a
wheel, into the user cache dir (ENGINE_DATA_DIR overrides both).
"""

from __future__ import annotations

import argparse
import sys

from engine.catalog import fetch, paths, samples

PROG = "engine-fetch"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.split("\n")[2:]))  # fmt: skip
    sub = p.add_subparsers(dest="what", required=True)
    fetch.add_arguments(sub.add_parser("models", help="fetch and verify the .tflite models"))
    samples.add_arguments(sub.add_parser("samples", help="make astronaut.png and sample.mp4"))
    sub.add_parser("where", help="print the models, assets and manifest paths")
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    if a.what == "models":
        return fetch.run(a, f"{PROG} models")
    if a.what == "samples":
        return samples.run(a, f"{PROG} samples")
    print(f"models:   {paths.models_dir()}\nassets:   {paths.assets_dir()}\n"
          f"manifest: {paths.manifest_path()}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
