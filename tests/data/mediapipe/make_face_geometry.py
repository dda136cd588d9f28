"""MediaPipe 0.10.14's own face geometry on its own face mesh landmarks: the reference of
engine/vision/face_geometry.py.

- input: the face mesh landmarks MediaPipe gave on the clips, as stored here: people_clip.npz
  `fm_landmarks` (468) and `fmr_landmarks` (478, refined), sample_clip.npz `fm_landmarks`
  (468); both clips 640x480
- output: tests/data/mediapipe/face_geometry.npz (about 4 MB), the arrays below
- runs: in a side venv with mediapipe==0.10.14 (made as make_reference.py makes it, or
  --mp-python); MediaPipe is never a dependency of this project
- usage: python -m tests.data.mediapipe.make_face_geometry [--mp-python PATH]

What runs: MediaPipe's own calculators from its wheel's binary, in one CalculatorGraph, as
its FaceGeometryFromLandmarksGraph (mediapipe/tasks/cc/vision/face_geometry, the face
landmarker's) wires them: FaceGeometryEnvGeneratorCalculator with that graph's default
environment (top-left origin, vertical FOV 63 degrees, near 1, far 10000),
SplitNormalizedLandmarkListCalculator (the first 468 landmarks), then
FaceGeometryPipelineCalculator with the vendored geometry_pipeline_metadata_landmarks.pbtxt
encoded as the binary proto it reads. The wheel registers the tasks' calculators
(mediapipe.tasks.vision.face_geometry.*), not those of mediapipe/modules/face_geometry
(the same code and data). Each face is one packet on the calculator's FACE_LANDMARKS
stream (the Python API cannot make the std::vector<NormalizedLandmarkList> its
MULTI_FACE_LANDMARKS stream takes: create_proto_vector raises NotImplementedError; the
calculator treats the faces of a vector one by one anyway); IMAGE_SIZE comes from
ImagePropertiesCalculator on a blank 640x480 frame (no Python packet holds a
std::pair<int, int>).

Arrays (K = people_fm, people_fmr, sample_fm, one entry per stored face, in order):
- K_matrix [N, 4, 4] float32: FaceGeometry.pose_transform_matrix (MatrixData, column-major,
  made row-major here: M @ [x, y, z, 1]);
- K_mesh [N, 468, 3] float32: the x, y, z of FaceGeometry.mesh's vertex buffer (cm);
- K_input_crc32: zlib.crc32 of the landmark array fed (float32 bytes), so a test knows the
  references belong to the landmarks stored now;
- uv [468, 2] float32 and index_buffer [898, 3] int32: the mesh's texture coordinates and
  triangles (the same for every face), vertex_type, primitive_type (Mesh3d enums);
- env_vertical_fov_degrees, env_near, env_far, env_origin ("top_left"): the environment
  the env generator made; mediapipe_version, size (w, h).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent  # tests/data/mediapipe
OUT = DATA / "face_geometry.npz"
METADATA = (DATA.parents[2] / "engine" / "vision" / "data" / "face_geometry"
            / "geometry_pipeline_metadata_landmarks.pbtxt")  # fmt: skip
# the faces fed: name -> (file, array)
SOURCES = {
    "people_fm": ("people_clip.npz", "fm_landmarks"),
    "people_fmr": ("people_clip.npz", "fmr_landmarks"),
    "sample_fm": ("sample_clip.npz", "fm_landmarks"),
}
# face_geometry_from_landmarks_graph.cc ConfigureFaceGeometryEnvGeneratorCalculator
GRAPH = """
input_stream: "image"
input_stream: "landmarks"
output_stream: "geometry"
output_side_packet: "environment"
node {
  calculator: "ImagePropertiesCalculator"
  input_stream: "IMAGE:image"
  output_stream: "SIZE:image_size"
}
node {
  calculator: "mediapipe.tasks.vision.face_geometry.FaceGeometryEnvGeneratorCalculator"
  output_side_packet: "ENVIRONMENT:environment"
  options {
    [mediapipe.tasks.vision.face_geometry.FaceGeometryEnvGeneratorCalculatorOptions.ext] {
      environment {
        origin_point_location: TOP_LEFT_CORNER
        perspective_camera { vertical_fov_degrees: 63.0 near: 1.0 far: 10000.0 }
      }
    }
  }
}
node {
  calculator: "SplitNormalizedLandmarkListCalculator"
  input_stream: "landmarks"
  output_stream: "landmarks_468"
  options { [mediapipe.SplitVectorCalculatorOptions.ext] { ranges { begin: 0 end: 468 } } }
}
node {
  calculator: "mediapipe.tasks.vision.face_geometry.FaceGeometryPipelineCalculator"
  input_side_packet: "ENVIRONMENT:environment"
  input_stream: "IMAGE_SIZE:image_size"
  input_stream: "FACE_LANDMARKS:landmarks_468"
  output_stream: "FACE_GEOMETRY:geometry"
}
"""


def worker(data: str, out: str) -> None:
    """Runs inside the MediaPipe venv (imports nothing of this project)."""
    import zlib

    import mediapipe as mp
    import numpy as np
    from google.protobuf import text_format
    from mediapipe.calculators.core import split_vector_calculator_pb2  # noqa: F401 (ext)
    from mediapipe.framework import calculator_pb2
    from mediapipe.framework.formats import landmark_pb2, matrix_data_pb2
    from mediapipe.python import packet_creator, packet_getter
    from mediapipe.python._framework_bindings import calculator_graph, image_frame
    from mediapipe.tasks.cc.vision.face_geometry.calculators import (
        env_generator_calculator_pb2,  # noqa: F401 (its options extension)
        geometry_pipeline_calculator_pb2,
    )
    from mediapipe.tasks.cc.vision.face_geometry.proto import (
        environment_pb2,
        geometry_pipeline_metadata_pb2,
    )

    metadata = text_format.Parse(METADATA.read_text(),
                                 geometry_pipeline_metadata_pb2.GeometryPipelineMetadata())  # fmt: skip
    config = text_format.Parse(GRAPH, calculator_pb2.CalculatorGraphConfig())
    ext = geometry_pipeline_calculator_pb2.FaceGeometryPipelineCalculatorOptions.ext
    config.node[3].options.Extensions[ext].metadata_file.file_content = metadata.SerializeToString()
    arrays = {"mediapipe_version": np.array(mp.__version__)}
    size = None
    for name, (file, key) in SOURCES.items():
        with np.load(Path(data) / file) as ref:
            faces, size = ref[key], tuple(int(v) for v in ref["size"])
        w, h = size
        graph = calculator_graph.CalculatorGraph(graph_config=config)
        got = []
        graph.observe_output_stream("geometry",
                                    lambda _, p, got=got: got.append(packet_getter.get_proto(p)))  # fmt: skip
        graph.start_run()
        blank = packet_creator.create_image_frame(image_format=image_frame.ImageFormat.SRGB,
                                                  data=np.zeros((h, w, 3), np.uint8))  # fmt: skip
        for ts, face in enumerate(faces):
            msg = landmark_pb2.NormalizedLandmarkList()
            for x, y, z in face.tolist():
                msg.landmark.add(x=x, y=y, z=z)
            graph.add_packet_to_input_stream("image", blank.at(ts))
            graph.add_packet_to_input_stream("landmarks", packet_creator.create_proto(msg).at(ts))
        graph.wait_until_idle()
        env = packet_getter.get_proto(graph.get_output_side_packet("environment"))
        graph.close()
        if len(got) != len(faces):
            raise SystemExit(f"{name}: {len(got)} geometries for {len(faces)} faces")
        matrices, meshes = [], []
        for g in got:
            m = g.pose_transform_matrix
            packed = np.array(m.packed_data, np.float32).reshape(m.cols, m.rows)
            column_major = m.layout == matrix_data_pb2.MatrixData.COLUMN_MAJOR
            matrices.append(packed.T if column_major else packed.reshape(m.rows, m.cols))
            meshes.append(np.array(g.mesh.vertex_buffer, np.float32).reshape(-1, 5)[:, :3])
        mesh = got[0].mesh
        arrays |= {f"{name}_matrix": np.stack(matrices), f"{name}_mesh": np.stack(meshes),
                   f"{name}_input_crc32": np.array(zlib.crc32(faces.tobytes()), np.uint32)}  # fmt: skip
        cam = env.perspective_camera
        origin = environment_pb2.OriginPointLocation.Name(env.origin_point_location)
        arrays |= {
            "uv": np.array(mesh.vertex_buffer, np.float32).reshape(-1, 5)[:, 3:],
            "index_buffer": np.array(mesh.index_buffer, np.int32).reshape(-1, 3),
            "vertex_type": np.array(mesh.vertex_type, np.int32),
            "primitive_type": np.array(mesh.primitive_type, np.int32),
            "env_vertical_fov_degrees": np.array(cam.vertical_fov_degrees, np.float32),
            "env_near": np.array(cam.near, np.float32),
            "env_far": np.array(cam.far, np.float32),
            "env_origin": np.array(origin.removesuffix("_CORNER").lower()),
        }
        print(f"{name}: {len(got)} faces")
    arrays["size"] = np.array(size, np.int32)
    np.savez_compressed(out, **arrays)
    print(f"-> {out}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--mp-python", default=None, help="python of a venv with mediapipe==0.10.14")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(str(DATA), args.out)
        return 0
    from benchmarks.app.mediapipe_compare import mediapipe_python

    cmd = [mediapipe_python(args.mp_python), __file__, "--worker", "--out", args.out]
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
