"""MediaPipe's result messages as protobuf classes, and their construction from arrays.

- what: the messages of mediapipe/framework/formats/ (landmark, classification, detection,
  location_data, annotation/rasterization .proto; MediaPipe 0.10.14, Apache License 2.0),
  declared below in .proto syntax and built at import into a descriptor pool of their own
  (no generated code, no protoc; no clash with an installed mediapipe, whose classes live
  in the default pool): NormalizedLandmarkList, LandmarkList, ClassificationList,
  Detection, LocationData, ... with MediaPipe's names, fields and numbers
- semantics: they are protobuf messages, so print() gives MediaPipe's text form and
  HasField, ListFields, ==, CopyFrom, SerializeToString and google.protobuf.json_format
  (MessageToDict) work as on MediaPipe's; MediaPipe's bytes parse into them and back
- cost (measured on this project's 2-core CPU machine, protobuf 7.36 with upb; one frame's
  worth: 478 face, 2 x 21 hand and 2 x 21 hand world, 33 pose and 33 pose world
  landmarks): a landmark at a time with `.landmark.add(x=..)`, 1.06 ms; the wire bytes
  assembled with numpy and parsed in one call (what `landmark_list` does), 0.16-0.21 ms,
  about 1 % of a 60 frames/s frame (in the drop-in: 0.1 % of a Hands or Holistic frame on
  XNNPACK, 1 % of a two-face FaceMesh frame). Light Python classes made lazily cost
  0.007 ms until read, but 1.0 ms to read every landmark once, against 0.35 ms for these
  messages, and they would not be MediaPipe's messages (json_format, CopyFrom). Needs
  protobuf >= 4.22.
- usage: normalized_landmark_list(points, visibility=v); classification_list(0, s, "Left");
  detection(score, box, keypoints)
"""

from __future__ import annotations

import re

import numpy as np

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError as exc:  # the drop-in's one extra dependency
    raise ImportError("engine.vision.mediapipe returns MediaPipe's protobuf messages and "
                      "needs protobuf: pip install 'protobuf>=4.22'") from exc  # fmt: skip

# file -> (its imports, its declarations), dependencies first, as MediaPipe's .proto files
# declare them (comments and Java/C++ options left out)
_RASTERIZATION = "mediapipe/framework/formats/annotation/rasterization.proto"
_LOCATION_DATA = "mediapipe/framework/formats/location_data.proto"
PROTOS = {
    _RASTERIZATION: (
        (),
        """
        message Rasterization {
          message Interval {
            required int32 y = 1;
            required int32 left_x = 2;
            required int32 right_x = 3;
          }
          repeated Interval interval = 1;
        }""",
    ),
    _LOCATION_DATA: (
        (_RASTERIZATION,),
        """
        message LocationData {
          enum Format { GLOBAL = 0; BOUNDING_BOX = 1; RELATIVE_BOUNDING_BOX = 2; MASK = 3; }
          optional Format format = 1;
          message BoundingBox {
            optional int32 xmin = 1;
            optional int32 ymin = 2;
            optional int32 width = 3;
            optional int32 height = 4;
          }
          optional BoundingBox bounding_box = 2;
          message RelativeBoundingBox {
            optional float xmin = 1;
            optional float ymin = 2;
            optional float width = 3;
            optional float height = 4;
          }
          optional RelativeBoundingBox relative_bounding_box = 3;
          message BinaryMask {
            optional int32 width = 1;
            optional int32 height = 2;
            optional Rasterization rasterization = 3;
          }
          optional BinaryMask mask = 4;
          message RelativeKeypoint {
            optional float x = 1;
            optional float y = 2;
            optional string keypoint_label = 3;
            optional float score = 4;
          }
          repeated RelativeKeypoint relative_keypoints = 5;
        }""",
    ),
    "mediapipe/framework/formats/detection.proto": (
        (_LOCATION_DATA,),
        """
        message Detection {
          repeated string label = 1;
          repeated int32 label_id = 2 [packed = true];
          repeated float score = 3 [packed = true];
          optional LocationData location_data = 4;
          optional string feature_tag = 5;
          optional string track_id = 6;
          optional int64 detection_id = 7;
          message AssociatedDetection {
            optional int32 id = 1;
            optional float confidence = 2;
          }
          repeated AssociatedDetection associated_detections = 8;
          repeated string display_name = 9;
          optional int64 timestamp_usec = 10;
        }
        message DetectionList { repeated Detection detection = 1; }""",
    ),
    "mediapipe/framework/formats/landmark.proto": (
        (),
        """
        message Landmark {
          optional float x = 1;
          optional float y = 2;
          optional float z = 3;
          optional float visibility = 4;
          optional float presence = 5;
        }
        message LandmarkList { repeated Landmark landmark = 1; }
        message LandmarkListCollection { repeated LandmarkList landmark_list = 1; }
        message NormalizedLandmark {
          optional float x = 1;
          optional float y = 2;
          optional float z = 3;
          optional float visibility = 4;
          optional float presence = 5;
        }
        message NormalizedLandmarkList { repeated NormalizedLandmark landmark = 1; }
        message NormalizedLandmarkListCollection {
          repeated NormalizedLandmarkList landmark_list = 1;
        }""",
    ),
    "mediapipe/framework/formats/classification.proto": (
        (),
        """
        message Classification {
          optional int32 index = 1;
          optional float score = 2;
          optional string label = 3;
          optional string display_name = 4;
        }
        message ClassificationList { repeated Classification classification = 1; }
        message ClassificationListCollection {
          repeated ClassificationList classification_list = 1;
        }""",
    ),
}
PACKAGE = "mediapipe"
_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {"float": _F.TYPE_FLOAT, "int32": _F.TYPE_INT32, "int64": _F.TYPE_INT64,
            "string": _F.TYPE_STRING}  # fmt: skip
_LABELS = {"optional": _F.LABEL_OPTIONAL, "required": _F.LABEL_REQUIRED,
           "repeated": _F.LABEL_REPEATED}  # fmt: skip


def _parse(text: str, out, scope: str, types: dict) -> None:
    """The declarations of `text` (the subset of .proto PROTOS uses) into `out`, a
    FileDescriptorProto or DescriptorProto; `types`: full name -> "message" / "enum"."""
    tokens = re.findall(r"[A-Za-z_][\w.]*|-?\d+|[{}=;\[\]]", text)
    _block(tokens, 0, out, scope, types)


def _block(tokens: list[str], i: int, out, scope: str, types: dict) -> int:
    nested = "nested_type" if isinstance(out, descriptor_pb2.DescriptorProto) else "message_type"
    while i < len(tokens) and tokens[i] != "}":
        word = tokens[i]
        if word == "message":
            msg = getattr(out, nested).add(name=tokens[i + 1])
            types[f"{scope}.{msg.name}"] = "message"
            i = _block(tokens, i + 3, msg, f"{scope}.{msg.name}", types) + 1
        elif word == "enum":
            enum = out.enum_type.add(name=tokens[i + 1])
            types[f"{scope}.{enum.name}"] = "enum"
            i += 3
            while tokens[i] != "}":  # NAME = NUMBER ;
                enum.value.add(name=tokens[i], number=int(tokens[i + 2]))
                i += 4
            i += 1
        else:  # LABEL TYPE NAME = NUMBER [packed = true]? ;
            field = out.field.add(name=tokens[i + 2], number=int(tokens[i + 4]),
                                  label=_LABELS[word])  # fmt: skip
            field.type_name = tokens[i + 1]  # resolved once every type is known
            i += 5
            if tokens[i] == "[":
                field.options.packed = tokens[i + 3] == "true"
                i += 5
            i += 1
    return i


def _resolve(message, scope: str, types: dict) -> None:
    """Each field's type: a scalar, or the declaration it names, looked up from the
    innermost scope out (.proto's rule), written fully qualified."""
    for field in message.field:
        name = field.type_name
        if name in _SCALARS:
            field.type = _SCALARS[name]
            field.ClearField("type_name")
            continue
        parts = scope.split(".")
        while f"{'.'.join(parts)}.{name}" not in types:
            parts.pop()
        full = f"{'.'.join(parts)}.{name}"
        field.type_name = "." + full
        field.type = _F.TYPE_MESSAGE if types[full] == "message" else _F.TYPE_ENUM
    for nested in message.nested_type:
        _resolve(nested, f"{scope}.{nested.name}", types)


def _build_pool() -> descriptor_pool.DescriptorPool:
    pool, types = descriptor_pool.DescriptorPool(), {}
    for name, (imports, text) in PROTOS.items():
        fd = descriptor_pb2.FileDescriptorProto(name=name, package=PACKAGE, dependency=imports)
        _parse(text, fd, PACKAGE, types)
        for message in fd.message_type:
            _resolve(message, f"{PACKAGE}.{message.name}", types)
        pool.Add(fd)
    return pool


POOL = _build_pool()


def message_class(full_name: str) -> type:
    """The message class of `full_name` ("mediapipe.NormalizedLandmarkList")."""
    return message_factory.GetMessageClass(POOL.FindMessageTypeByName(full_name))


Landmark = message_class("mediapipe.Landmark")
LandmarkList = message_class("mediapipe.LandmarkList")
LandmarkListCollection = message_class("mediapipe.LandmarkListCollection")
NormalizedLandmark = message_class("mediapipe.NormalizedLandmark")
NormalizedLandmarkList = message_class("mediapipe.NormalizedLandmarkList")
NormalizedLandmarkListCollection = message_class("mediapipe.NormalizedLandmarkListCollection")
Classification = message_class("mediapipe.Classification")
ClassificationList = message_class("mediapipe.ClassificationList")
ClassificationListCollection = message_class("mediapipe.ClassificationListCollection")
Detection = message_class("mediapipe.Detection")
DetectionList = message_class("mediapipe.DetectionList")
LocationData = message_class("mediapipe.LocationData")
Rasterization = message_class("mediapipe.Rasterization")

_FLOAT = 5  # the wire type of a 32-bit float


def _landmarks_bytes(points, visibility, presence) -> bytes:
    """The wire form of a (Normalized)LandmarkList: each landmark a length-delimited field 1
    holding x, y, z (fields 1-3) and visibility, presence (4, 5) when given, as float32."""
    columns = [np.asarray(points, np.float32).reshape(-1, 3)]
    numbers = [1, 2, 3]
    for number, values in ((4, visibility), (5, presence)):
        if values is not None:
            columns.append(np.asarray(values, np.float32).reshape(-1, 1))
            numbers.append(number)
    values = np.ascontiguousarray(np.concatenate(columns, axis=1), "<f4")
    n, k = values.shape
    record = np.empty((n, 2 + 5 * k), np.uint8)
    record[:, 0] = 1 << 3 | 2  # field 1, length-delimited
    record[:, 1] = 5 * k  # < 128: a one-byte length
    fields = record[:, 2:].reshape(n, k, 5)
    fields[:, :, 0] = [number << 3 | _FLOAT for number in numbers]
    fields[:, :, 1:] = values.view(np.uint8).reshape(n, k, 4)
    return record.tobytes()


def normalized_landmark_list(points, visibility=None, presence=None):
    """A NormalizedLandmarkList from `points` (N, 3) normalised x, y, z; `visibility` and
    `presence` (N,) set those fields on every landmark when given."""
    return NormalizedLandmarkList.FromString(_landmarks_bytes(points, visibility, presence))


def landmark_list(points, visibility=None, presence=None):
    """A LandmarkList (world landmarks, metres) from `points` (N, 3); as above."""
    return LandmarkList.FromString(_landmarks_bytes(points, visibility, presence))


def classification_list(index: int, score: float, label: str):
    """A ClassificationList of one Classification (a hand's handedness)."""
    return ClassificationList(
        classification=[Classification(index=int(index), score=float(score), label=label)]
    )


def detection(score: float, box, keypoints, label_id: int = 0):
    """A Detection as MediaPipe's detectors give it: label_id, score, and location data in
    RELATIVE_BOUNDING_BOX format from `box` (xmin, ymin, xmax, ymax) and `keypoints` (K, 2),
    all normalised."""
    xmin, ymin, xmax, ymax = (float(v) for v in np.asarray(box, np.float32))
    message = Detection(label_id=[label_id], score=[float(score)])
    location = message.location_data
    location.format = LocationData.RELATIVE_BOUNDING_BOX
    relative = location.relative_bounding_box
    relative.xmin, relative.ymin = xmin, ymin
    relative.width, relative.height = xmax - xmin, ymax - ymin
    for x, y in np.asarray(keypoints, np.float32).reshape(-1, 2).tolist():
        location.relative_keypoints.add(x=x, y=y)
    return message
