"""MediaPipe 0.10.14's own Python solutions on the sample clip: the fidelity reference.

- input: assets/sample.mp4 (engine/catalog/samples.py: 300 frames, 640x480)
- output: tests/data/mediapipe/sample_clip.npz (about 2 MB), the arrays below, and
  image_to_tensor.npz: MediaPipe's ImageToTensorCalculator's own tensors for the cases
  in TENSOR_CASES (the clip's first frame), as 8-bit levels
- runs: in a side venv with mediapipe==0.10.14 (made like benchmarks/app/mediapipe_compare.py
  makes its own, or given with --mp-python); MediaPipe is never a dependency of this project
- usage: python -m tests.data.mediapipe.make_reference [--frames 300] [--mp-python PATH]

The solutions, as a MediaPipe user calls them, one frame at a time in clip order (RGB):
- mp.solutions.face_detection.FaceDetection(model_selection=0): every detection;
- mp.solutions.face_mesh.FaceMesh(static_image_mode=False, max_num_faces=1,
  refine_landmarks=False): tracking as in a video (ROI from the previous landmarks);
- mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=0): the mask.

Arrays (coordinates normalised by the frame size, as MediaPipe reports them; float32):
- frame_crc32 [F] (zlib.crc32 of each decoded BGR frame: the comparison checks it decodes
  the same clip), size (w, h), mediapipe_version;
- fd_count [F]; fd_frame [D], fd_score [D], fd_box [D, 4] (xmin, ymin, xmax, ymax),
  fd_keypoints [D, 6, 2];
- fm_present [F] bool; fm_landmarks [P, 468, 3] for the frames with a face, in order;
- ss_mask_bits [F, H * W / 8] (np.packbits of mask > 0.5, row-major), ss_mask_mean [F].
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent  # tests/data/mediapipe
OUT = DATA / "sample_clip.npz"
TENSORS_OUT = DATA / "image_to_tensor.npz"

# ImageToTensorCalculator cases on the clip's first frame: name -> (tensor w, h, keep aspect,
# range lo, hi, border, ROI (x centre, y centre, width, height, rotation) normalised or None)
TENSOR_CASES = {
    "detection": (128, 128, True, -1.0, 1.0, "BORDER_ZERO", None),
    "segmentation": (256, 256, False, 0.0, 1.0, "BORDER_ZERO", None),
    "landmark": (192, 192, False, 0.0, 1.0, "BORDER_REPLICATE", (0.55, 0.45, 0.5, 0.66, 0.5)),
    "edge_replicate": (192, 192, False, 0.0, 1.0, "BORDER_REPLICATE",
                       (0.12, 0.85, 0.4, 0.5, -2.4)),
    "edge_zero": (192, 192, False, 0.0, 1.0, "BORDER_ZERO", (0.12, 0.85, 0.4, 0.5, -2.4)),
    "letterbox_roi": (96, 64, True, -1.0, 1.0, "BORDER_ZERO", (0.5, 0.5, 0.3, 0.6, 1.0)),
}  # fmt: skip


def worker(clip: str, out: str, frames: int) -> None:
    """Runs inside the MediaPipe venv (imports nothing of this project)."""
    import zlib

    import cv2
    import mediapipe as mp
    import numpy as np

    fd = mp.solutions.face_detection.FaceDetection(model_selection=0)
    fm = mp.solutions.face_mesh.FaceMesh(
        static_image_mode=False, max_num_faces=1, refine_landmarks=False
    )
    ss = mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=0)
    cap = cv2.VideoCapture(clip)
    crc, fd_count, fd_frame, fd_score, fd_box, fd_kp = [], [], [], [], [], []
    fm_present, fm_lm, bits, means = [], [], [], []
    size = None
    while len(crc) < frames:
        ok, bgr = cap.read()
        if not ok:
            break
        i = len(crc)
        size = (bgr.shape[1], bgr.shape[0])
        crc.append(zlib.crc32(np.ascontiguousarray(bgr).tobytes()))
        rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
        dets = fd.process(rgb).detections or []
        fd_count.append(len(dets))
        for d in dets:
            b = d.location_data.relative_bounding_box
            fd_frame.append(i)
            fd_score.append(d.score[0])
            fd_box.append([b.xmin, b.ymin, b.xmin + b.width, b.ymin + b.height])
            fd_kp.append([[k.x, k.y] for k in d.location_data.relative_keypoints])
        faces = fm.process(rgb).multi_face_landmarks or []
        fm_present.append(bool(faces))
        if faces:
            fm_lm.append([[p.x, p.y, p.z] for p in faces[0].landmark])
        mask = ss.process(rgb).segmentation_mask
        bits.append(np.packbits((mask > 0.5).reshape(-1)))
        means.append(float(mask.mean()))
    cap.release()
    f32 = np.float32
    np.savez_compressed(
        out,
        mediapipe_version=np.array(mp.__version__),
        size=np.array(size, np.int32),
        frame_crc32=np.array(crc, np.uint32),
        fd_count=np.array(fd_count, np.int32),
        fd_frame=np.array(fd_frame, np.int32),
        fd_score=np.array(fd_score, f32),
        fd_box=np.array(fd_box, f32).reshape(-1, 4),
        fd_keypoints=np.array(fd_kp, f32).reshape(-1, 6, 2),
        fm_present=np.array(fm_present, bool),
        fm_landmarks=np.array(fm_lm, f32).reshape(-1, 468, 3),
        ss_mask_bits=np.array(bits, np.uint8),
        ss_mask_mean=np.array(means, f32),
    )
    print(f"{len(crc)} frames -> {out}")


def tensors_worker(clip: str, out: str) -> None:
    """MediaPipe's own ImageToTensorCalculator (its CPU converter) on the clip's first frame,
    read out through TensorsToFloatsCalculator; runs inside the MediaPipe venv."""
    import cv2
    import mediapipe as mp
    import mediapipe.calculators.tensor.image_to_tensor_calculator_pb2  # noqa: F401 (options)
    import numpy as np
    from google.protobuf import text_format
    from mediapipe.framework import calculator_pb2
    from mediapipe.framework.formats import rect_pb2
    from mediapipe.python import packet_creator, packet_getter
    from mediapipe.python._framework_bindings import calculator_graph, image_frame

    cap = cv2.VideoCapture(clip)
    ok, bgr = cap.read()
    cap.release()
    rgb = np.ascontiguousarray(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
    arrays = {"mediapipe_version": np.array(mp.__version__), "frame_size": [640, 480]}
    for name, (w, h, keep, lo, hi, border, roi) in TENSOR_CASES.items():
        config = text_format.Parse(
            f"""
            input_stream: "image" {'input_stream: "roi"' if roi else ""} output_stream: "floats"
            node {{ calculator: "ImageToTensorCalculator" input_stream: "IMAGE:image"
              {'input_stream: "NORM_RECT:roi"' if roi else ""} output_stream: "TENSORS:tensors"
              options {{ [mediapipe.ImageToTensorCalculatorOptions.ext] {{
                output_tensor_width: {w} output_tensor_height: {h}
                keep_aspect_ratio: {str(keep).lower()}
                output_tensor_float_range {{ min: {lo} max: {hi} }} border_mode: {border} }} }} }}
            node {{ calculator: "TensorsToFloatsCalculator" input_stream: "TENSORS:tensors"
              output_stream: "FLOATS:floats" }}""",
            calculator_pb2.CalculatorGraphConfig(),
        )
        graph = calculator_graph.CalculatorGraph(graph_config=config)
        got = []
        graph.observe_output_stream(
            "floats", lambda _s, p, got=got: got.append(np.array(packet_getter.get_float_list(p)))
        )
        graph.start_run()
        image = packet_creator.create_image_frame(image_format=image_frame.ImageFormat.SRGB,
                                                  data=rgb)  # fmt: skip
        graph.add_packet_to_input_stream("image", image.at(0))
        if roi:
            rect = rect_pb2.NormalizedRect(x_center=roi[0], y_center=roi[1], width=roi[2],
                                           height=roi[3], rotation=roi[4])  # fmt: skip
            graph.add_packet_to_input_stream("roi", packet_creator.create_proto(rect).at(0))
        graph.close()
        levels = np.rint((got[0] - lo) / (hi - lo) * 255.0)  # 8-bit values, exactly
        arrays[name] = levels.astype(np.uint8).reshape(h, w, 3)
    np.savez_compressed(out, **arrays)
    print(f"{len(TENSOR_CASES)} image-to-tensor cases -> {out}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--clip", default=None, help="default: the sample clip (assets/sample.mp4)")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--mp-python", default=None, help="python of a venv with mediapipe==0.10.14")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.clip, args.out, args.frames)
        tensors_worker(args.clip, str(Path(args.out).parent / TENSORS_OUT.name))
        return 0
    from benchmarks.app.mediapipe_compare import mediapipe_python
    from engine.catalog.paths import assets_dir

    clip = args.clip or str(assets_dir() / "sample.mp4")
    if not Path(clip).is_file():
        print(f"{clip} missing: run `engine-fetch samples`", file=sys.stderr)
        return 2
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    cmd = [mediapipe_python(args.mp_python), __file__, "--worker", "--clip", clip,
           "--out", args.out, "--frames", str(args.frames)]  # fmt: skip
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
