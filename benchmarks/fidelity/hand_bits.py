"""Where Hands on xnnpack parts from MediaPipe 0.10.14 bit by bit: the crop, the model's
runtime, and the tracking loop that carries a difference from frame to frame.

- input: the people clip (tests/data/mediapipe/people.mp4, each frame checked against
  people_clip.npz's CRC, benchmarks/fidelity/people.py load_frames); MediaPipe 0.10.14 in
  its side venv (made if absent, benchmarks/app/mediapipe_compare.py), run by this module's
  `--worker mediapipe`: its Hands over the frames as a video (hand_landmark_tracking_cpu
  with the ROIs each crop was made from, `hand_rects`, as an output), then its own
  ImageToTensorCalculator on every one of those ROIs (the 8-bit levels of the tensor its
  landmark model saw)
- output: markdown under the stamp line (benchmarks/common.py), JSON with --json:
  - crop: engine.vision's crop of MediaPipe's ROI (backends/cpu_stages.py CpuCrops: the
    ROI's matrix in float64, image_to_tensor.warp_to_tensor) against MediaPipe's tensor:
    crops equal, values that differ; and MediaPipe's converter written out in float32 and
    OpenCV's own arithmetic (`opencv_crop`), crops equal;
  - model: the landmark model on MediaPipe's own tensor, in this venv's LiteRT and in
    each `--runtime-python` (a venv with ai_edge_litert or tflite_runtime), against
    MediaPipe's landmarks: z values equal (z = raw / 224 / 0.4 * ROI width, float32 as
    MediaPipe's calculators: a function of the model's raw output alone), hands whose 21
    z values all are, and the largest |x, y| apart in px (the x, y decoding here is
    float64);
  - run: engine.vision's Hands over the clip as a video, ROIs and landmarks against
    MediaPipe's where both have the same hands (landmark px median / p95, ROI centre px);
    with --run-both also with its crops made by `opencv_crop` (a lab check: does an exact
    crop alone bring the run to MediaPipe's?)
- usage: python -m benchmarks.fidelity.hand_bits [--model-complexity 0] [--frames 300]
         [--runtime-python PY ...] [--run-both] [--json out/fidelity_hand_bits.json]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

TENSOR = 224  # hand_landmark's input side
NORMALIZE_Z = 0.4  # hand_landmark_cpu.pbtxt


def mediapipe_worker(frames_file: str, out: str, complexity: int) -> None:
    """Runs inside the MediaPipe venv (imports nothing of this project): MediaPipe's Hands
    with its ROIs, then its ImageToTensorCalculator on each ROI."""
    import mediapipe as mp
    import mediapipe.calculators.tensor.image_to_tensor_calculator_pb2  # noqa: F401 (options)
    from google.protobuf import text_format
    from mediapipe.framework import calculator_pb2
    from mediapipe.framework.formats import rect_pb2
    from mediapipe.python import packet_creator, packet_getter
    from mediapipe.python._framework_bindings import calculator_graph, image_frame
    from mediapipe.python.solution_base import SolutionBase

    frames = np.load(frames_file)["rgb"]
    graph = Path(mp.__file__).parent / "modules/hand_landmark/hand_landmark_tracking_cpu.binarypb"
    config = calculator_pb2.CalculatorGraphConfig()
    config.ParseFromString(graph.read_bytes())
    config.output_stream.append("hand_rects")
    hands = SolutionBase(graph_config=config, side_inputs={
        "num_hands": 2, "model_complexity": complexity, "use_prev_landmarks": True,
    }, calculator_params={  # mp.solutions.hands' defaults
        "palmdetectioncpu__TensorsToDetectionsCalculator.min_score_thresh": 0.5,
        "handlandmarkcpu__ThresholdingCalculator.threshold": 0.5,
    }, outputs=["multi_hand_landmarks", "hand_rects"])  # fmt: skip
    rois, roi_frame, landmarks, lm_frame = [], [], [], []
    for i, frame in enumerate(frames):
        r = hands.process(frame)
        for rect in r.hand_rects or []:
            rois.append([rect.x_center, rect.y_center, rect.width, rect.height, rect.rotation])
            roi_frame.append(i)
        for hand in r.multi_hand_landmarks or []:
            landmarks.append([[p.x, p.y, p.z] for p in hand.landmark])
            lm_frame.append(i)
    hands.close()
    config = text_format.Parse(f"""
        input_stream: "image" input_stream: "roi" output_stream: "floats"
        node {{ calculator: "ImageToTensorCalculator" input_stream: "IMAGE:image"
          input_stream: "NORM_RECT:roi" output_stream: "TENSORS:tensors"
          options {{ [mediapipe.ImageToTensorCalculatorOptions.ext] {{
            output_tensor_width: {TENSOR} output_tensor_height: {TENSOR} keep_aspect_ratio: true
            output_tensor_float_range {{ min: 0 max: 255 }} }} }} }}
        node {{ calculator: "TensorsToFloatsCalculator" input_stream: "TENSORS:tensors"
          output_stream: "FLOATS:floats" }}""", calculator_pb2.CalculatorGraphConfig())  # fmt: skip
    crop = calculator_graph.CalculatorGraph(graph_config=config)
    got = []
    crop.observe_output_stream("floats", lambda _s, p: got.append(packet_getter.get_float_list(p)))
    crop.start_run()
    for t, (i, roi) in enumerate(zip(roi_frame, rois, strict=True)):
        image = packet_creator.create_image_frame(image_format=image_frame.ImageFormat.SRGB,
                                                  data=frames[i])  # fmt: skip
        crop.add_packet_to_input_stream("image", image.at(t))
        rect = rect_pb2.NormalizedRect(x_center=roi[0], y_center=roi[1], width=roi[2],
                                       height=roi[3], rotation=roi[4])  # fmt: skip
        crop.add_packet_to_input_stream("roi", packet_creator.create_proto(rect).at(t))
    crop.close()
    levels = np.rint(np.array(got, np.float32)).astype(np.uint8)  # the [0, 255] range: exact
    np.savez_compressed(out, rois=np.array(rois, np.float32), roi_frame=np.array(roi_frame),
                        landmarks=np.array(landmarks, np.float32).reshape(-1, 21, 3),
                        lm_frame=np.array(lm_frame),
                        tensors=levels.reshape(len(rois), TENSOR, TENSOR, 3))  # fmt: skip


def runtime_worker(model: str, tensors_file: str, out: str) -> None:
    """Runs inside any venv with a TFLite interpreter: the model's raw outputs (landmarks,
    flag) on each tensor (levels * float32(1 / 255), as MediaPipe's converter scales)."""
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        from tflite_runtime.interpreter import Interpreter
    it = Interpreter(model_path=model, num_threads=1)
    it.allocate_tensors()
    index = it.get_input_details()[0]["index"]
    outputs = [o["index"] for o in it.get_output_details()]
    raw, flags = [], []
    for levels in np.load(tensors_file)["tensors"]:
        it.set_tensor(index, (levels.astype(np.float32) * np.float32(1.0 / 255.0))[None])
        it.invoke()
        raw.append(it.get_tensor(outputs[0]).reshape(21, 3))
        flags.append(float(it.get_tensor(outputs[1]).reshape(-1)[0]))
    from importlib.metadata import PackageNotFoundError, version

    name = Interpreter.__module__.split(".")[0].replace("_", "-")
    try:
        name = f"{name} {version(name)}"
    except PackageNotFoundError:
        pass
    np.savez(out, raw=np.array(raw, np.float32), flags=np.array(flags, np.float32),
             runtime=np.array(name))  # fmt: skip


def matched(mp: dict, t: int, xy) -> int | None:
    """MediaPipe's landmark set of ROI t's frame nearest `xy` (21 x 2 normalised), or None:
    its landmarks list only the hands whose flag passed, so ROIs and hands are paired by
    place."""
    candidates = np.flatnonzero(mp["lm_frame"] == mp["roi_frame"][t])
    if not len(candidates):
        return None
    return int(min(candidates, key=lambda k: np.abs(mp["landmarks"][k][:, :2] - xy).sum()))


def model_rows(mp: dict, raw: np.ndarray, flags: np.ndarray, size) -> dict:
    """z equal, hands with every z equal and the largest x, y apart (px) of one runtime's
    raw outputs on MediaPipe's tensors, against MediaPipe's landmarks."""
    from engine.vision.landmarks import crop_landmarks, project_to_frame, remove_letterbox
    from engine.vision.roi import Rect
    from engine.vision.roi_model import crop_matrix

    w, h = size
    z_equal = z_total = hands_equal = hands = 0
    apart = []
    for t, roi in enumerate(mp["rois"]):
        if not flags[t] > 0.5:
            continue
        rect = Rect(*(float(v) for v in roi))
        _, padding = crop_matrix(rect, size, (TENSOR, TENSOR), True)
        lm = crop_landmarks(raw[t], (TENSOR, TENSOR), 3, NORMALIZE_Z)
        lm = project_to_frame(remove_letterbox(lm, padding), rect)
        k = matched(mp, t, lm[:, :2])
        if k is None:
            continue
        want = mp["landmarks"][k]
        f32 = np.float32
        # TensorsToLandmarks, LandmarkLetterboxRemoval (1 - left - right: 1, a hand's ROI
        # is square), LandmarkProjection, in float32 as MediaPipe's calculators
        z = raw[t][:, 2] / f32(TENSOR) / f32(NORMALIZE_Z) / f32(1.0) * f32(roi[2])
        z_equal += int(np.sum(z == want[:, 2]))
        z_total += 21
        hands += 1
        hands_equal += bool(np.all(z == want[:, 2]))
        apart.append(float(np.abs((lm[:, :2] - want[:, :2]) * (w, h)).max()))
    return {"hands": hands, "z_equal": z_equal, "z_values": z_total, "hands_all_z_equal": hands_equal,
            "xy_px_max_median": float(np.median(apart)) if apart else None}  # fmt: skip


def box_points(cx, cy, w, h, degrees) -> np.ndarray:
    """cv::RotatedRect::points in float32, as OpenCV computes them (4 x 2)."""
    f32 = np.float32
    radians = float(degrees) * np.pi / 180.0
    b, a = f32(f32(np.cos(radians)) * f32(0.5)), f32(f32(np.sin(radians)) * f32(0.5))
    p0 = (f32(f32(cx - f32(a * h)) - f32(b * w)), f32(f32(cy + f32(b * h)) - f32(a * w)))
    p1 = (f32(f32(cx + f32(a * h)) - f32(b * w)), f32(f32(cy - f32(b * h)) - f32(a * w)))
    p2 = (f32(f32(2) * cx - p0[0]), f32(f32(2) * cy - p0[1]))
    p3 = (f32(f32(2) * cx - p1[0]), f32(f32(2) * cy - p1[1]))
    return np.array([p0, p1, p2, p3], np.float32)


def opencv_crop(image: np.ndarray, roi, size: int = TENSOR) -> np.ndarray:
    """MediaPipe 0.10.14's CPU crop written out: its ROI in float32 (GetRoi, PadRoi with
    the aspect kept), cv::boxPoints, getPerspectiveTransform onto the tensor's corners (LU),
    and warpPerspective's own per-pixel double arithmetic (the inverse matrix, 64 columns a
    block, coordinates rounded to 1/32 px) into cv2.remap's fixed-point maps, the border
    replicated: a lab check of where the engine's crop parts from MediaPipe's."""
    import cv2

    f32 = np.float32
    fh, fw = image.shape[:2]
    cx, cy = f32(roi[0]) * f32(fw), f32(roi[1]) * f32(fh)
    w, h = f32(roi[2]) * f32(fw), f32(roi[3]) * f32(fh)
    if f32(1) > h / w:  # PadRoi: the tensor is square
        h = w
    else:
        w = h
    degrees = f32(float(f32(roi[4]) * f32(180.0)) / np.pi)
    corners = np.array([[0, size], [0, 0], [size, 0], [size, size]], np.float32)
    forward = cv2.getPerspectiveTransform(box_points(cx, cy, w, h, degrees), corners,
                                          solveMethod=cv2.DECOMP_LU)  # fmt: skip
    m = cv2.invert(forward, flags=cv2.DECOMP_LU)[1].ravel()
    x = np.arange(size)
    start = (x // 64 * 64).astype(np.float64)  # the block's first column
    x1 = (x - x // 64 * 64).astype(np.float64)
    y = np.arange(size, dtype=np.float64)[:, None]
    x0 = m[0] * start + m[1] * y + m[2]
    y0 = m[3] * start + m[4] * y + m[5]
    w0 = m[6] * start + m[7] * y + m[8] + m[6] * x1
    scale = np.divide(32.0, w0, out=np.zeros_like(w0), where=w0 != 0)
    sx = np.rint(np.clip((x0 + m[0] * x1) * scale, -(2**31), 2**31 - 1)).astype(np.int64)
    sy = np.rint(np.clip((y0 + m[3] * x1) * scale, -(2**31), 2**31 - 1)).astype(np.int64)
    whole = np.stack([np.clip(sx >> 5, -32768, 32767), np.clip(sy >> 5, -32768, 32767)], -1)
    fraction = ((sy & 31) * 32 + (sx & 31)).astype(np.uint16)
    return cv2.remap(image, whole.astype(np.int16), fraction, cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE)  # fmt: skip


def crop_rows(mp: dict, frames, size) -> dict:
    """engine.vision's crop of each of MediaPipe's ROIs against MediaPipe's tensor."""
    from engine.vision.image_to_tensor import warp_to_tensor
    from engine.vision.roi import Rect
    from engine.vision.roi_model import crop_matrix

    differing, written_out = [], 0
    for t, roi in enumerate(mp["rois"]):
        frame = frames[mp["roi_frame"][t]]
        m, _ = crop_matrix(Rect(*(float(v) for v in roi)), size, (TENSOR, TENSOR), True)
        ours = warp_to_tensor(frame, m, (TENSOR, TENSOR), (0.0, 255.0))
        differing.append(int(np.sum(np.rint(ours[0]).astype(np.uint8) != mp["tensors"][t])))
        written_out += bool(np.array_equal(opencv_crop(frame, roi), mp["tensors"][t]))
    d = np.array(differing)
    return {"crops": len(d), "crops_equal": int(np.sum(d == 0)), "written_out_equal": written_out,
            "values_differing_median": float(np.median(d)), "values_differing_max": int(d.max()),
            "values_per_crop": TENSOR * TENSOR * 3}  # fmt: skip


def opencv_crops(crops):
    """A CpuCrops' `run` with its crops made by `opencv_crop` (the lab check of --run-both)."""

    def run(image, frame_size, rects):
        out = []
        for rect in rects:
            roi = (rect.x_center, rect.y_center, rect.width, rect.height, rect.rotation)
            levels = opencv_crop(image, roi, crops.size[0]).astype(np.float32)
            lo, hi = crops.value_range
            tensor = levels * np.float32((hi - lo) / 255.0) + np.float32(lo)
            out.append((crops.engine.run(tensor[None]), crops.crop(rect, frame_size)[1]))
        return out

    return run


def run_rows(mp: dict, frames, size, complexity: int, crop: str = "engine") -> dict:
    """engine.vision's Hands (xnnpack) over the frames as a video against MediaPipe's run;
    crop "opencv": its crops made by `opencv_crop` instead of the engine's."""
    from engine.vision.solutions.hands import Hands

    w, h = size
    px, centre = [], []
    with Hands(model_complexity=complexity, max_num_hands=2, backend="xnnpack") as hands:
        if crop == "opencv":
            hands.stage.crops.run = opencv_crops(hands.stage.crops)
        for i, frame in enumerate(frames):
            ours = hands.process(frame).hands or ()
            theirs = np.flatnonzero(mp["lm_frame"] == i)
            if len(ours) != len(theirs):
                continue
            for k in theirs:
                want = mp["landmarks"][k]
                hand = min(ours, key=lambda o: np.abs(o.landmarks[:, :2] - want[:, :2]).sum())
                px.append(np.hypot(*((hand.landmarks[:, :2] - want[:, :2]) * (w, h)).T))
                rois = mp["rois"][mp["roi_frame"] == i]
                roi = min(
                    rois,
                    key=lambda r: abs(r[0] - hand.roi.x_center) + abs(r[1] - hand.roi.y_center),
                )
                centre.append(float(np.hypot((roi[0] - hand.roi.x_center) * w,
                                             (roi[1] - hand.roi.y_center) * h)))  # fmt: skip
    px = np.concatenate(px) if px else np.zeros(0)
    return {"hands": len(centre), "landmark_px_median": float(np.median(px)),
            "landmark_px_p95": float(np.percentile(px, 95)),
            "roi_centre_px_median": float(np.median(centre)),
            "roi_centre_px_p95": float(np.percentile(centre, 95))}  # fmt: skip


def markdown(doc: dict) -> str:
    from benchmarks.common import table

    c = doc["crop"]
    lines = [f"Crops of MediaPipe's ROIs: {c['crops_equal']} of {c['crops']} equal to its tensor; "
             f"values differing per crop median {c['values_differing_median']:.0f}, max "
             f"{c['values_differing_max']} (of {c['values_per_crop']}); MediaPipe's crop "
             f"written out (opencv_crop): {c['written_out_equal']} of {c['crops']} equal", ""]  # fmt: skip
    rows = [[name, r["hands"], f"{r['z_equal']} / {r['z_values']}",
             f"{r['hands_all_z_equal']} / {r['hands']}", f"{r['xy_px_max_median']:.2g}"]
            for name, r in doc["model"].items()]  # fmt: skip
    header = ["runtime", "hands", "z equal", "hands with every z equal",
              "x, y px apart (max per hand, median)"]  # fmt: skip
    lines += [
        "The landmark model on MediaPipe's own tensors:",
        "",
        *table(header, rows, "lrrrr"),
        "",
    ]
    for crop, r in doc["run"].items():
        lines += [f"Hands over the clip as a video (xnnpack, the {crop} crop) against "
                  f"MediaPipe's run: {r['hands']} hands, landmarks "
                  f"{r['landmark_px_median']:.3f} / {r['landmark_px_p95']:.2f} px median / "
                  f"p95, ROI centres {r['roi_centre_px_median']:.2f} / "
                  f"{r['roi_centre_px_p95']:.2f} px", ""]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.fidelity.hand_bits",
                                 description=__doc__.split("\n\n")[0])  # fmt: skip
    ap.add_argument("--model-complexity", type=int, choices=(0, 1), default=0)
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--mp-python", default=None, help="the side venv's python (made if absent)")
    ap.add_argument("--runtime-python", action="append", default=[], metavar="PY",
                    help="another venv's python with ai_edge_litert or tflite_runtime: the "
                    "model check there too (repeatable)")  # fmt: skip
    ap.add_argument("--run-both", action="store_true",
                    help="run Hands over the clip twice: with the engine's crops and with "
                    "MediaPipe's written out (opencv_crop)")  # fmt: skip
    ap.add_argument("--json", metavar="OUT.json")
    ap.add_argument("--worker", choices=("mediapipe", "runtime"), help=argparse.SUPPRESS)
    ap.add_argument("--given", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker == "mediapipe":
        mediapipe_worker(args.given, args.out, args.model_complexity)
        return 0
    if args.worker == "runtime":
        runtime_worker(args.model, args.given, args.out)
        return 0

    from benchmarks.app.mediapipe_compare import mediapipe_python
    from benchmarks.common import Bench
    from benchmarks.fidelity.people import load_frames
    from engine.catalog.paths import models_dir
    from engine.vision.solutions.hands import LANDMARKS

    bench = Bench(__spec__.name, argv)
    _, frames = load_frames(0, args.frames)
    frames = np.stack(frames)
    size = (frames.shape[2], frames.shape[1])
    model = str(models_dir() / f"{LANDMARKS[args.model_complexity].model}.tflite")
    with tempfile.TemporaryDirectory() as tmp:
        given, out = Path(tmp) / "frames.npz", Path(tmp) / "mediapipe.npz"
        np.savez(given, rgb=frames)
        print(f"MediaPipe's Hands and crops over {len(frames)} frames ...", file=sys.stderr)
        subprocess.run([mediapipe_python(args.mp_python), __file__, "--worker", "mediapipe",
                        "--given", str(given), "--out", str(out),
                        "--model-complexity", str(args.model_complexity)], check=True)  # fmt: skip
        mp = dict(np.load(out))
        doc = {"model_complexity": args.model_complexity, "frames": len(frames),
               "crop": crop_rows(mp, frames, size), "model": {}}  # fmt: skip
        for python in [sys.executable, *args.runtime_python]:
            raw = Path(tmp) / "raw.npz"
            subprocess.run([python, __file__, "--worker", "runtime", "--model", model,
                            "--given", str(out), "--out", str(raw)], check=True)  # fmt: skip
            r = dict(np.load(raw))
            doc["model"][str(r["runtime"])] = model_rows(mp, r["raw"], r["flags"], size)
    crops = ("engine", "opencv") if args.run_both else ("engine",)
    doc["run"] = {c: run_rows(mp, frames, size, args.model_complexity, c) for c in crops}
    bench.report(markdown(doc), doc, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
