"""Sparse constant tensors (TFLite SparsityParameters) -> dense numpy arrays.

The format (schema.fbs, "SparsityParameters"):
- the tensor is traversed in `traversal_order`, a permutation of the original
  dims followed by block dims; block dim k splits original dim block_map[k];
- each traversal level is DENSE (a size) or SPARSE_CSR (array_segments +
  array_indices, indexed by the position reached at the previous level);
- the stored values are the leaves in traversal order.

Same walk as TFLite's FormatConverter::Populate, done level by level with
numpy instead of recursion: each level maps the positions reached so far to
the positions (and indices) of the next level.
"""

from __future__ import annotations

import numpy as np
from tflite import Int32Vector, Uint8Vector, Uint16Vector
from tflite.DimensionType import DimensionType
from tflite.SparseIndexVector import SparseIndexVector


def _index_vector(kind: int, table) -> np.ndarray:
    vec_cls = {
        SparseIndexVector.Int32Vector: Int32Vector,
        SparseIndexVector.Uint16Vector: Uint16Vector,
        SparseIndexVector.Uint8Vector: Uint8Vector,
    }.get(kind)
    if vec_cls is None or table is None:
        raise ValueError(f"unsupported sparse index vector type {kind}")
    vec = vec_cls()
    vec.Init(table.Bytes, table.Pos)
    return vec.ValuesAsNumpy().astype(np.int64)


def densify(values: np.ndarray, dense_shape: tuple[int, ...], sparsity) -> np.ndarray:
    """Expand the stored values of a sparse tensor into its dense shape."""
    rank = len(dense_shape)
    order = [int(v) for v in sparsity.TraversalOrderAsNumpy()]
    block_map = [] if sparsity.BlockMapIsNone() else [int(v) for v in sparsity.BlockMapAsNumpy()]
    levels = len(order)
    if levels != rank + len(block_map) or sparsity.DimMetadataLength() != levels:
        raise ValueError("sparsity metadata does not match the tensor rank")

    positions = np.zeros(1, dtype=np.int64)  # position reached at the previous level
    indices = np.zeros((1, 0), dtype=np.int64)  # index chosen at each level so far
    block_sizes = []
    for level in range(levels):
        meta = sparsity.DimMetadata(level)
        if meta.Format() == DimensionType.DENSE:
            size = int(meta.DenseSize())
            step = np.arange(size, dtype=np.int64)
            positions = (positions[:, None] * size + step[None, :]).reshape(-1)
            chosen = np.tile(step, len(indices))
            indices = np.repeat(indices, size, axis=0)
        else:
            segments = _index_vector(meta.ArraySegmentsType(), meta.ArraySegments())
            array_indices = _index_vector(meta.ArrayIndicesType(), meta.ArrayIndices())
            starts, ends = segments[positions], segments[positions + 1]
            counts = ends - starts
            # positions of the next level: the concatenated ranges starts[i]..ends[i]
            offsets = np.repeat(ends - counts.cumsum(), counts)
            positions = np.arange(counts.sum(), dtype=np.int64) + offsets
            chosen = array_indices[positions]
            indices = np.repeat(indices, counts, axis=0)
        indices = np.concatenate([indices, chosen[:, None]], axis=1)
        if level >= rank:
            block_sizes.append(int(meta.DenseSize()))

    if len(indices) != values.size:
        raise ValueError(
            f"sparse tensor holds {values.size} values but its metadata has {len(indices)}"
        )
    coords = np.zeros((len(indices), rank), dtype=np.int64)
    for level in range(rank):
        coords[:, order[level]] = indices[:, level]
    for level in range(rank, levels):
        k = order[level] - rank
        dim = block_map[k]
        coords[:, dim] = coords[:, dim] * block_sizes[level - rank] + indices[:, level]
    dense = np.zeros(dense_shape, dtype=values.dtype)
    dense[tuple(coords.T)] = values.reshape(-1)
    return dense
